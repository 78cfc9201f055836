/**
 * Club embeds: overview and members (paged). Pure functions of the official club body.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { Club } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { CREDIT, clampPage, gameName, pageCount } from './common.ts';
import { enumName } from './names.ts';

export const MEMBERS_PER_PAGE = 10;
/** A club holds at most this many members in the game. */
export const CLUB_SIZE = 30;

const ROLE_ORDER = ['president', 'vicePresident', 'senior', 'member'];

function footer(fetchedAt: number | undefined): Pick<APIEmbed, 'footer' | 'timestamp'> {
  return { footer: { text: CREDIT }, ...(fetchedAt ? { timestamp: new Date(fetchedAt).toISOString() } : {}) };
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
      { name: '🏆 Trophies', value: fmt.int(c.trophies), inline: true },
      { name: '👥 Members', value: `${fmt.int(c.members.length)} / ${CLUB_SIZE}`, inline: true },
      { name: '🎯 Required', value: fmt.int(c.requiredTrophies), inline: true },
      { name: '🚪 Type', value: enumName(c.type), inline: true },
      { name: '📊 Average', value: fmt.int(average), inline: true },
      { name: '👑 President', value: president ? gameName(president.name) : '—', inline: true },
      ...(roles.length ? [{ name: 'Roles', value: roles.map(([r, n]) => `${enumName(r)}: ${fmt.int(n)}`).join(' · ') }] : []),
    ],
    ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
    ...footer(o.fetchedAt),
  };
}

export function membersEmbed(c: Club, fmt: Format, o: { page?: number; fetchedAt?: number } = {}): { embed: APIEmbed; page: number; pages: number } {
  const sorted = [...c.members].sort((a, b) => b.trophies - a.trophies);
  const pages = pageCount(sorted.length, MEMBERS_PER_PAGE);
  const page = clampPage(o.page, pages);
  const first = (page - 1) * MEMBERS_PER_PAGE;
  const lines = sorted
    .slice(first, first + MEMBERS_PER_PAGE)
    .map((m, i) => `\`${String(first + i + 1).padStart(2, ' ')}\` **${gameName(m.name)}** ${m.tag} · ${enumName(m.role)} · 🏆 ${fmt.int(m.trophies)}`);
  return {
    page,
    pages,
    embed: {
      title: `${gameName(c.name)} ${c.tag} · members`,
      color: Colour.brand,
      description: lines.length ? lines.join('\n') : '_This club has no members._',
      ...footer(o.fetchedAt),
    },
  };
}

export function clubImageEmbed(c: Club, heading: string, image: string, note?: string, fetchedAt?: number): APIEmbed {
  return {
    title: `${gameName(c.name)} ${c.tag} · ${heading}`,
    color: Colour.brand,
    ...(note ? { description: note } : {}),
    image: { url: `attachment://${image}` },
    ...footer(fetchedAt),
  };
}
