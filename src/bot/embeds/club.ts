/**
 * Club embeds: overview and members (paged). Pure functions of the official club body.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { Club } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { clampPage, dataFooter, gameName, pageCount } from './common.ts';
import { enumName } from './names.ts';

export const MEMBERS_PER_PAGE = 10;
import { CLUB_SIZE } from '../../render/catalogue.ts';

export { CLUB_SIZE };

/** Club roles, highest first. */
export const ROLE_ORDER = ['president', 'vicePresident', 'senior', 'member'] as const;


/** A club role in the game's words of the reader's language; a role the game adds later as the API names it. */
export function clubRole(role: string, fmt: Format): string {
  return (ROLE_ORDER as readonly string[]).includes(role) ? fmt.t(`club.role.${role}`) : enumName(role);
}

/** open / inviteOnly / closed as the game's club settings call them. */
export function clubType(type: string, fmt: Format): string {
  return ['open', 'inviteOnly', 'closed'].includes(type) ? fmt.t(`club.kind.${type}`) : enumName(type);
}

export function clubEmbed(c: Club, fmt: Format, o: { image?: string; fetchedAt?: number } = {}): APIEmbed {
  const president = c.members.find((m) => m.role === 'president');
  const average = c.members.length ? c.trophies / c.members.length : 0;
  const roles = ROLE_ORDER.map((r) => [r, c.members.filter((m) => m.role === r).length] as const).filter(([, n]) => n > 0);
  return {
    title: `${gameName(c.name)} ${c.tag}`,
    color: Colour.brand,
    ...(c.description?.trim() ? { description: gameName(c.description) } : {}),
    fields: [
      { name: `🏆 ${fmt.t('club.trophies')}`, value: fmt.int(c.trophies), inline: true },
      { name: `👥 ${fmt.t('club.members')}`, value: `${fmt.int(c.members.length)} / ${CLUB_SIZE}`, inline: true },
      { name: `🎯 ${fmt.t('club.required')}`, value: fmt.int(c.requiredTrophies), inline: true },
      { name: `🚪 ${fmt.t('club.type')}`, value: clubType(c.type, fmt), inline: true },
      { name: `📊 ${fmt.t('club.average')}`, value: fmt.int(average), inline: true },
      { name: `👑 ${fmt.t('club.role.president')}`, value: president ? gameName(president.name) : '—', inline: true },
      ...(roles.length ? [{ name: fmt.t('club.roles'), value: roles.map(([r, n]) => `${clubRole(r, fmt)}: ${fmt.int(n)}`).join(' · ') }] : []),
    ],
    ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
    ...dataFooter(fmt, o.fetchedAt),
  };
}

export function membersEmbed(c: Club, fmt: Format, o: { page?: number; fetchedAt?: number } = {}): { embed: APIEmbed; page: number; pages: number } {
  const sorted = [...c.members].sort((a, b) => b.trophies - a.trophies);
  const pages = pageCount(sorted.length, MEMBERS_PER_PAGE);
  const page = clampPage(o.page, pages);
  const first = (page - 1) * MEMBERS_PER_PAGE;
  const lines = sorted
    .slice(first, first + MEMBERS_PER_PAGE)
    .map((m, i) => `\`${String(first + i + 1).padStart(2, ' ')}\` **${gameName(m.name)}** ${m.tag} · ${clubRole(m.role, fmt)} · 🏆 ${fmt.int(m.trophies)}`);
  return {
    page,
    pages,
    embed: {
      title: `${gameName(c.name)} ${c.tag} · ${fmt.t('view.club.members')}`,
      color: Colour.brand,
      description: lines.length ? lines.join('\n') : `_${fmt.t('club.empty')}_`,
      ...dataFooter(fmt, o.fetchedAt),
    },
  };
}

export function clubImageEmbed(c: Club, fmt: Format, o: { heading: string; image: string; note?: string; fetchedAt?: number }): APIEmbed {
  return {
    title: `${gameName(c.name)} ${c.tag} · ${o.heading}`,
    color: Colour.brand,
    ...(o.note ? { description: o.note } : {}),
    image: { url: `attachment://${o.image}` },
    ...dataFooter(fmt, o.fetchedAt),
  };
}
