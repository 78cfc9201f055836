/**
 * Brawler catalogue embed: gadgets, star powers, hypercharges, gears, and the top players of the
 * brawler. Pure: catalogue and ranking bodies in, embed out.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { Brawler, PlayerRankingItem } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { dataFooter, gameName } from './common.ts';
import { titleCase } from './names.ts';

export const TOP_PLAYERS = 10;

function names(list: { name: string }[] | undefined): string {
  return list?.length ? list.map((x) => titleCase(x.name)).join('\n') : '—';
}

export function brawlerEmbed(b: Brawler, fmt: Format, top: PlayerRankingItem[] | undefined, fetchedAt?: number): APIEmbed {
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: `🔧 ${fmt.t('brawler.gadgets')}`, value: names(b.gadgets), inline: true },
    { name: `⭐ ${fmt.t('brawler.starPowers')}`, value: names(b.starPowers), inline: true },
  ];
  if (b.hyperCharges) fields.push({ name: `💥 ${fmt.t('brawler.hypercharges')}`, value: names(b.hyperCharges), inline: true });
  if (b.gears?.length) {
    fields.push({
      name: `⚙️ ${fmt.t('brawler.gears')}`,
      value: fmt.list(b.gears.map((g) => (g.level ? fmt.t('brawler.gearLevel', { gear: titleCase(g.name), level: g.level }) : titleCase(g.name)))),
    });
  }
  if (top) {
    fields.push({
      name: `🏆 ${fmt.t('brawler.topPlayers')}`,
      value: top.length
        ? top
            .slice(0, TOP_PLAYERS)
            .map((p) => `\`${String(p.rank).padStart(2, ' ')}.\` **${gameName(p.name)}** · ${fmt.int(p.trophies)}`)
            .join('\n')
        : `_${fmt.t('brawler.nobodyRanked')}_`,
    });
  }
  return {
    title: titleCase(b.name),
    color: Colour.brand,
    description: fmt.t('brawler.summary', {
      gadgets: b.gadgets.length,
      starPowers: b.starPowers.length,
      gears: b.gears?.length ?? 0,
      hypercharges: b.hyperCharges?.length ?? 0,
    }),
    fields,
    ...dataFooter(fmt, fetchedAt),
  };
}
