/**
 * The ImageService's view of recorded history (`ImageRecords`, src/core/images.ts) over the
 * HistoryService: chart series, per-brawler battle results and the season baseline. The measures
 * themselves (activity, mastery, fame...) are defined once in src/render/measures.ts; this only
 * feeds them what was recorded.
 */
import { battlesPer, brawlerRecordsOf, cumulativeWins, type BattleOutcome } from '../render/measures.ts';
import type { ChartSeries, Point, SeasonBaseline, SeriesLabel } from '../render/types.ts';
import { items } from '../store/snapshot.ts';
import type { HistoryService, PlayerMetric } from './history.ts';
import type { ImageRecords } from './images.ts';

const RESULT = { 1: 'W', 0: 'D', [-1]: 'L' } as const;

async function outcomes(history: HistoryService, tag: string, untilMs?: number): Promise<BattleOutcome[]> {
  const battles = await history.battles(tag, untilMs === undefined ? {} : { untilMs });
  const current = (await history.snapshots('player', tag, { limit: 1 }))[0];
  const names = current ? items(current.state, 'brawlers') : {};
  const out: BattleOutcome[] = [];
  for (const b of battles) {
    if (b.result === null || b.brawlerId === null) continue;
    const name = names[String(b.brawlerId)]?.name;
    out.push({ t: b.t * 1000, brawlerId: b.brawlerId, brawlerName: typeof name === 'string' ? name : '', result: RESULT[b.result] });
  }
  return out;
}

export function historyRecords(history: HistoryService): ImageRecords {
  const line = async (tag: string, metric: PlayerMetric, label: SeriesLabel, from: number, to: number): Promise<ChartSeries> => ({
    label,
    points: await history.series('player', tag, metric, from, to),
  });
  return {
    async firstRecorded(kind, tag) {
      const first = await history.firstRecorded(kind, tag);
      if (kind === 'club') return first;
      const battles = await history.battles(tag);
      const firstBattle = battles.length > 0 ? battles[battles.length - 1]!.t * 1000 : null;
      if (first === null) return firstBattle;
      return firstBattle === null ? first : Math.min(first, firstBattle);
    },

    async playerSeries(tag, metric, from, to) {
      switch (metric) {
        case 'battlesPerDay':
        case 'battlesPerMonth':
          return [{ label: 'battles', points: battlesPer(await outcomes(history, tag), metric === 'battlesPerDay' ? 'day' : 'month', from, to) }];
        case 'masteryWins':
          return [{ label: 'recordedVictories', points: cumulativeWins(await outcomes(history, tag), from, to) }];
        case 'records':
          return [await line(tag, 'highestTrophies', 'highestTrophies', from, to), await line(tag, 'bestBrawlerHighest', 'bestBrawler', from, to)];
        case 'fame':
          return [await line(tag, 'fame', 'fame', from, to)];
        case 'trophies':
          return [await line(tag, 'trophies', 'trophies', from, to)];
        case '3vs3Victories':
        case 'soloVictories':
        case 'duoVictories':
          return [await line(tag, metric, 'victories', from, to)];
      }
    },

    async clubSeries(tag, metric, from, to) {
      const label: SeriesLabel = metric === 'trophies' ? 'trophies' : metric === 'memberCount' ? 'members' : 'memberVictories';
      return [{ label, points: await history.series('club', tag, metric, from, to) }];
    },

    async brawlerRecords(tag) {
      return brawlerRecordsOf(await outcomes(history, tag));
    },

    async seasonBaseline(tag, startMs, endMs): Promise<SeasonBaseline | null> {
      const snaps = await history.snapshots('player', tag, { sinceMs: startMs });
      const first = snaps.filter((s) => s.t * 1000 < endMs).pop();
      if (!first) return null;
      return {
        at: first.t * 1000,
        trophies: typeof first.state.trophies === 'number' ? first.state.trophies : 0,
        brawlers: Object.values(items(first.state, 'brawlers')).map((b) => ({ id: Number(b.id), trophies: Number(b.trophies) })),
      };
    },

    async clubActivity(tag) {
      const a = (await history.clubActivity(tag)).data;
      return a.coverage.recordedFrom === null ? null : a;
    },
    async trophies(tag, startMs, endMs): Promise<Point[]> {
      return (await history.series('player', tag, 'trophies', startMs, endMs)).filter((p) => p.t < endMs);
    },
  };
}
