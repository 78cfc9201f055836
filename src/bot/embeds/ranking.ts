/**
 * Ranking embeds (players, clubs, one brawler), paged. Pure functions of the ranking envelope.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { RankingResponse } from '../../core/types.ts';
import type { ClubRankingItem, PlayerRankingItem } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { clampPage, dataFooter, gameName, pageCount } from './common.ts';

export const RANKS_PER_PAGE = 20;

export type RankingKind = 'players' | 'clubs' | 'brawler';

export function rankingEmbed(
  kind: RankingKind,
  r: RankingResponse<PlayerRankingItem | ClubRankingItem>,
  fmt: Format,
  o: { regionName: string; brawlerName?: string; page?: number; fetchedAt?: number },
): { embed: APIEmbed; page: number; pages: number } {
  const pages = pageCount(r.items.length, RANKS_PER_PAGE);
  const page = clampPage(o.page, pages);
  const items = r.items.slice((page - 1) * RANKS_PER_PAGE, page * RANKS_PER_PAGE);
  const width = String(items.at(-1)?.rank ?? 1).length;
  const lines = items.map((it) => {
    const rank = `\`${String(it.rank).padStart(width, ' ')}.\``;
    if (kind === 'clubs') {
      const c = it as ClubRankingItem;
      return `${rank} **${gameName(c.name)}** · 🏆 ${fmt.int(c.trophies)} · 👥 ${fmt.int(c.memberCount)}`;
    }
    const p = it as PlayerRankingItem;
    const club = p.club?.name ? ` · ${gameName(p.club.name)}` : '';
    return `${rank} **${gameName(p.name)}** · 🏆 ${fmt.int(p.trophies)}${club}`;
  });
  const heading = kind === 'brawler' && o.brawlerName ? fmt.t('ranking.brawler', { brawler: o.brawlerName }) : fmt.t(kind === 'clubs' ? 'ranking.clubs' : 'ranking.players');
  return {
    page,
    pages,
    embed: {
      title: `${heading} · ${o.regionName}`,
      color: Colour.brand,
      description: lines.length ? lines.join('\n') : `_${fmt.t('ranking.empty')}_`,
      ...dataFooter(fmt, o.fetchedAt),
    },
  };
}
