/**
 * One recorded history and every question a reader can ask of it, for comparing stores: the
 * contract suite records the same observations into each backend, the migration suite copies one
 * store into another, and both compare the answers.
 */
import { backfill, clubsOf } from '../../src/poller/backfill.ts';
import { World } from '../../src/sim/world.ts';
import type { HistoryStore } from '../../src/store/history-store.ts';
import { Brawler, EventRotation, PlayerRankingItem, type Club } from '../../src/upstream/schemas.ts';

export const T0 = Date.UTC(2026, 5, 10, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const world = new World({ seed: 'contract', players: 300, clubs: 30 });
const club = (() => {
  for (let i = 0; ; i++) {
    const c = clubsOf(world, [world.playerTag(i)], T0)[0];
    if (c) return c;
  }
})();
const members = (world.club(club, T0) as Club).members.map((m) => m.tag);
const loners = [world.playerTag(7), world.playerTag(150), world.playerTag(299)];
const playerTags = [...members, ...loners];

/** The same history, recorded the same way, into any store. */
export async function fill(store: HistoryStore): Promise<void> {
  await backfill({ world, store, days: 3, nowMs: T0, playerTags, clubTags: [club], playerEveryMs: 4 * HOUR, clubEveryMs: 8 * HOUR });
  for (let t = T0 - 2 * DAY; t <= T0; t += 12 * HOUR) {
    await store.record([
      { kind: 'rotation', atMs: t, data: EventRotation.parse(world.eventRotation(t)) },
      { kind: 'playerRanking', atMs: t, region: 'global', data: PlayerRankingItem.array().parse(world.playerRankings('global', t)) },
      { kind: 'brawlers', atMs: t, data: Brawler.array().parse(world.brawlers()) },
    ]);
  }
  await store.track('player', loners[0]!, T0 + DAY, T0 - HOUR);
  await store.track('club', club, T0 + 2 * DAY, T0);
  await store.pin('player', loners[1]!, 'link:1', T0);
  await store.replacePins('player', 'top', members.slice(0, 3), T0);
  await store.markPolled('player', [(await store.idOf('player', members[0]!))!], T0, T0 + HOUR);
}

/** Everything a reader can ask, without the backend's internal ids. */
export async function answers(store: HistoryStore, nowMs: number) {
  const noId = <T extends { id?: number; playerId?: number }>(x: T) => {
    const { id: _i, playerId: _p, ...rest } = x;
    return rest;
  };
  const out: Record<string, unknown> = {};
  for (const tag of playerTags) {
    out[`snapshots ${tag}`] = await store.snapshots('player', tag);
    out[`since ${tag}`] = await store.snapshots('player', tag, { sinceMs: T0 - DAY, includeBefore: true, limit: 5 });
    out[`battles ${tag}`] = await store.playerBattles(tag, { sinceMs: T0 - 2 * DAY });
    out[`first ${tag}`] = await store.firstRecorded('player', tag);
    out[`tracking ${tag}`] = await store.tracking('player', tag, nowMs);
    const e = await store.entity('player', tag);
    out[`entity ${tag}`] = e && noId(e);
  }
  out.club = await store.snapshots('club', club);
  out.clubEvents = await store.clubEvents(club, 100);
  const byKey = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1);
  out.clubJoins = [...(await store.clubJoins(club))].sort(byKey);
  out.battleSummary = [...(await store.battleSummary([...playerTags, '#NEVERSEEN'], T0 - DAY))].sort(byKey);
  out.clubTracking = await store.tracking('club', club, nowMs);
  const maps = await store.maps();
  out.maps = maps;
  for (const m of maps) out[`map ${m.id}`] = await store.mapBrawlerCounts(m.id, Math.floor((T0 - 2 * DAY) / DAY));
  out.rotation = await store.rotationHistory(T0 - 3 * DAY);
  const brawlers = Brawler.array().parse(world.brawlers());
  for (const b of brawlers.slice(0, 10)) out[`builds ${b.id}`] = (await store.topBuilds(b.id, 5)).map(noId);
  out.catalogue = await store.getMeta('catalogue.brawlers');
  for (const kind of ['player', 'club'] as const) {
    out[`due ${kind}`] = (await store.due(kind, nowMs, 100)).map((d) => d.tag);
    out[`nextDue ${kind}`] = await store.nextDue(kind, nowMs);
    out[`trackedCount ${kind}`] = await store.trackedCount(kind, nowMs);
  }
  out.tracked = await store.trackedTags(nowMs);
  const queries = [world.playerName(7), world.playerName(150).slice(0, 3), 'a', 'the', members[0]!.slice(1, 4)];
  for (const q of queries) {
    for (const [limit, offset] of [[10, 0], [5, 3]] as const) {
      const page = await store.search('player', q, limit, offset);
      out[`search ${q} ${limit}/${offset}`] = { total: page.total, items: page.items.map(noId) };
    }
  }
  out.clubSearch = (await store.search('club', (world.club(club, T0) as Club).name, 5, 0)).items.map(noId);
  out.counts = await store.counts();
  return out;
}

