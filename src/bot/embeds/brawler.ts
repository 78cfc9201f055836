/**
 * Brawler catalogue embed: gadgets, star powers, hypercharges, gears, and the top players of the
 * brawler. Pure: catalogue and ranking bodies in, embed out.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { Brawler, PlayerRankingItem } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { CREDIT, gameName } from './common.ts';
import { titleCase } from './names.ts';

export const TOP_PLAYERS = 10;

function names(list: { name: string }[] | undefined): string {
  return list?.length ? list.map((x) => titleCase(x.name)).join('\n') : '—';
}

export function brawlerEmbed(b: Brawler, fmt: Format, top: PlayerRankingItem[] | undefined, fetchedAt?: number): APIEmbed {
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: '🔧 Gadgets', value: names(b.gadgets), inline: true },
    { name: '⭐ Star powers', value: names(b.starPowers), inline: true },
  ];
  if (b.hyperCharges) fields.push({ name: '💥 Hypercharges', value: names(b.hyperCharges), inline: true });
  if (b.gears?.length) {
    fields.push({
      name: '⚙️ Gears',
      value: b.gears.map((g) => `${titleCase(g.name)}${g.level ? ` (level ${g.level})` : ''}`).join(', '),
    });
  }
  if (top) {
    fields.push({
      name: '🏆 Top players (global)',
      value: top.length
        ? top
            .slice(0, TOP_PLAYERS)
            .map((p) => `\`${String(p.rank).padStart(2, ' ')}.\` **${gameName(p.name)}** · ${fmt.int(p.trophies)}`)
            .join('\n')
        : '_Nobody ranked yet._',
    });
  }
  return {
    title: titleCase(b.name),
    color: Colour.brand,
    description: `Brawler id ${b.id}`,
    fields,
    footer: { text: CREDIT },
    ...(fetchedAt ? { timestamp: new Date(fetchedAt).toISOString() } : {}),
  };
}
