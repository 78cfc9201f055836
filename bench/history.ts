/**
 * History benchmark (npm run bench:history). Prints figures, asserts nothing.
 *
 *   1. polling: tracked players polled by the real poller through the StatsService and the HTTP
 *      simulated world (no latency): players/s, and stored bytes: per player for its first poll,
 *      per player per poll from the end of the first round and in steady state (from the second)
 *   2. search: name search p50/p99 over N indexed names (default 1,000,000)
 *   3. backfill: 5,000-player world over 30 days (a sample of players, extrapolated, unless
 *      --backfill-players 5000)
 *
 * Options: --players N (polling, default 100) --hours H (polling, default 24)
 *          --names N (default 1000000) --queries N (default 1000)
 *          --backfill-players N (default 100) --backfill-days D (default 30)
 *          --only polling|search|backfill
 *          --store sqlite|postgres (default sqlite; postgres uses DATABASE_URL, default
 *            postgres://postgres@127.0.0.1:5432/test, in a schema of its own dropped at the end)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { HistoryService } from '../src/core/history.ts';
import { createStatsService } from '../src/core/service.ts';
import { silentLogger } from '../src/log.ts';
import { backfill } from '../src/poller/backfill.ts';
import { Poller } from '../src/poller/index.ts';
import { SimClock, startSim } from '../src/sim/index.ts';
import { World } from '../src/sim/world.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { openKeyvStores } from '../src/store/keyv.ts';
import { foldName, words } from '../src/store/search-fold.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';
import type { PlayerRankingItem } from '../src/upstream/schemas.ts';

const { values: args } = parseArgs({
  options: {
    players: { type: 'string', default: '100' },
    hours: { type: 'string', default: '24' },
    names: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '1000' },
    'backfill-players': { type: 'string', default: '100' },
    'backfill-days': { type: 'string', default: '30' },
    only: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
  },
});
if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error('--store is sqlite or postgres');
const PG_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A fresh, empty store of the chosen backend: a file in `dir`, or a new PostgreSQL schema.
 * `settle` stands in for the time between two real polls (30 minutes, here a few milliseconds): on
 * PostgreSQL, autovacuum runs many times in it, makes the space of replaced rows (every changed
 * newest state) reusable and gathers the planner's statistics; without it each poll would count a
 * dead copy of every state it replaced, and searches would be planned blind.
 */
async function openBenchStore(dir: string): Promise<HistoryStore & { drop(): Promise<void>; settle(): Promise<void> }> {
  if (args.store === 'sqlite') return Object.assign(await HistoryStore.open({ dir }), { drop: async () => {}, settle: async () => {} });
  const schema = `starr_bench_${randomBytes(6).toString('hex')}`;
  const store = await HistoryStore.open({ url: PG_URL, schema });
  return Object.assign(store, {
    async settle() {
      await store.w.exec(`VACUUM ANALYZE ${Object.keys(await store.tableBytes()).join(', ')}`);
    },
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  });
}
const T0 = Date.UTC(2026, 5, 15, 0);
const MIN = 60_000;
const tmp = () => mkdtempSync(join(tmpdir(), 'starr-bench-history-'));
const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function polling(): Promise<void> {
  const players = Number(args.players);
  const hours = Number(args.hours);
  const dir = tmp();
  const config = loadConfig({ DATA_DIR: dir, UPSTREAM_RPS: '10000', RANKING_COUNTRIES: '', POLL_PLAYER_MINUTES: '30' });
  const clock = new SimClock(T0);
  const sim = await startSim({ seed: 'bench', players: 5000, clubs: 500, clock });
  const stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
  const upstream = createUpstreamClient(config, { baseUrl: sim.url, tokens: [sim.token], kind: 'simulated' }, { logger: silentLogger });
  const stats = createStatsService(config, { upstream, stores, now: () => clock.now(), logger: silentLogger });
  const store = await openBenchStore(dir);
  const history = new HistoryService({ store, stats, config, now: () => clock.now() });
  stats.observe(history.observer);
  const poller = new Poller({ stats, history, config, clock: { now: () => clock.now(), sleep: async () => {} }, pinTopPlayers: 0, concurrency: 16 });
  // Tracked players spread over the world's strength range.
  for (let i = 0; i < players; i++) await store.track('player', sim.world.playerTag(Math.floor((i * 5000) / players)), T0 + 30 * 86_400_000, T0);
  await store.settle();
  const emptyBytes = await store.tableBytes();
  const firstPolled = (await poller.runOnce()).players; // first poll: full states, jobs (rotation, catalogue, rankings)
  await store.settle();
  const roundBytes = [await store.tableBytes()];
  // Two figures per poll. "From the first round": every poll after a player's first, including
  // the first replacement of each newest state, which on PostgreSQL needs room for the new copy
  // beside the old one until vacuum (then the old copy's room is reused by the next replacement).
  // "Steady state", from the end of the second round: what each further poll adds once that
  // one-off room exists, the figure the 300 B target is about.
  let ms = 0;
  let polled = 0;
  let fromFirst = 0;
  let steady = 0;
  for (let t = T0 + 30 * MIN; t <= T0 + hours * 3_600_000; t += 30 * MIN) {
    clock.set(t);
    const started = performance.now();
    const r = await poller.runOnce();
    ms += performance.now() - started;
    polled += r.players;
    fromFirst += r.players;
    if (roundBytes.length > 1) steady += r.players;
    await store.settle();
    if (roundBytes.length === 1) roundBytes.push(await store.tableBytes());
  }
  const bytes = await store.tableBytes();
  const grew = (from: Record<string, number>, name: string) => (bytes[name] ?? 0) - (from[name] ?? 0);
  const [afterFirst, afterSecond] = roundBytes as [Record<string, number>, Record<string, number>];
  const everything = (from: Record<string, number>) => Object.keys(bytes).reduce((sum, k) => sum + grew(from, k), 0);
  const firstPoll = Object.keys(afterFirst).reduce((sum, k) => sum + (afterFirst[k] ?? 0) - (emptyBytes[k] ?? 0), 0);
  const snapBytes = grew(afterSecond, 'player_snap');
  const battleBytes = ['player_battle', 'battle', 'map_brawler_day', 'map_day'].reduce((sum, k) => sum + grew(afterSecond, k), 0);
  const counts = await store.counts();
  console.log(`polling: ${players} tracked players, ${hours} h at 30-minute polls (${firstPolled} first polls, then ${polled}; steady state over the last ${steady})`);
  console.log(`  throughput        ${fmt(polled / (ms / 1000))} players/s after the first poll (profile + battle log each, recorded)`);
  console.log(`  first poll        ${fmt(firstPoll / firstPolled / 1024)} KB per player (row, newest state, first battles, catalogue and rankings jobs)`);
  console.log(`  from 1st round    ${fmt(everything(afterFirst) / fromFirst)} B per player per poll (all tables and indexes; first replacement of each state included)`);
  console.log(`  steady state      ${fmt(everything(afterSecond) / steady)} B per player per poll (all tables and indexes, search index included)`);
  console.log(`    snapshots       ${fmt(snapBytes / steady)} B per player per poll (reverse diffs, table pages; ${counts.player_snap} snapshots)`);
  console.log(`    battles         ${fmt(battleBytes / steady)} B per player per poll (battles, per-player rows, map aggregates)`);
  console.log(`  newest states     ${fmt((bytes.player_state ?? 0) / players / 1024)} KB per player (kept once, replaced on change)`);
  await history.close();
  await store.close();
  await store.drop();
  await stats.close();
  await upstream.close();
  await sim.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}

async function search(): Promise<void> {
  const n = Number(args.names);
  const dir = tmp();
  const world = new World({ seed: 'bench', players: n, clubs: Math.max(1, Math.floor(n / 10)) });
  const store = await openBenchStore(dir);
  let started = performance.now();
  const batch = 5000;
  for (let i = 0; i < n; i += batch) {
    const items: PlayerRankingItem[] = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      // Trophies spread like a real ladder (strongest first).
      items.push({ tag: world.playerTag(j), name: world.playerName(j), trophies: Math.max(2, Math.round(120_000 * Math.pow(1 - j / n, 3))), rank: j + 1 });
    }
    await store.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: items }]);
  }
  await store.settle(); // the statistics autovacuum would have gathered on a live database
  const buildS = (performance.now() - started) / 1000;
  const size = Object.values(await store.tableBytes()).reduce((a, b) => a + b, 0);
  // Queries as people type them: whole names, prefixes, one word, and pieces from the middle.
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const queries: string[] = [];
  while (queries.length < Number(args.queries) + 200) {
    const name = world.playerName(Math.floor(rnd() * n));
    const f = [...foldName(name)];
    const kind = queries.length % 4;
    let q = name;
    if (kind === 1) q = f.slice(0, 2 + Math.floor(rnd() * 4)).join('');
    else if (kind === 2) {
      const ws = words(foldName(name));
      q = ws[Math.floor(rnd() * ws.length)] ?? name;
    } else if (kind === 3) {
      const a = Math.floor(rnd() * Math.max(1, f.length - 3));
      q = f.slice(a, a + 3 + Math.floor(rnd() * 3)).join('');
    }
    if ([...foldName(q)].length >= 2) queries.push(q);
  }
  for (const q of queries.slice(0, 200)) await store.search('player', q, 50, 0); // warm the page cache
  const times: number[] = [];
  started = performance.now();
  for (const q of queries.slice(200)) {
    const t = performance.now();
    await store.search('player', q, 50, 0);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`search: ${n.toLocaleString('en-US')} names indexed in ${fmt(buildS)} s (${fmt(size / 2 ** 20)} MB of tables and indexes), ${times.length} queries (exact, prefix, word, substring)`);
  console.log(`  latency           p50 ${fmt(pct(times, 0.5), 2)} ms, p99 ${fmt(pct(times, 0.99), 2)} ms, max ${fmt(times[times.length - 1]!, 2)} ms`);
  await store.close();
  await store.drop();
  rmSync(dir, { recursive: true, force: true });
}

async function backfillBench(): Promise<void> {
  const players = Number(args['backfill-players']);
  const days = Number(args['backfill-days']);
  const dir = tmp();
  const world = new World({ seed: 'bench', players: 5000, clubs: 500 });
  const store = await openBenchStore(dir);
  // A sample spread over the whole world, so strong and weak players weigh as they do in it.
  const tags = Array.from({ length: players }, (_, i) => world.playerTag(Math.floor((i * 5000) / players)));
  const started = performance.now();
  const r = await backfill({ world, store, days, nowMs: T0, playerTags: tags, clubTags: [], playerEveryMs: 30 * MIN, clubEveryMs: 30 * MIN });
  const s = (performance.now() - started) / 1000;
  const clubsStarted = performance.now();
  const clubs = Array.from({ length: Math.max(1, Math.round(players / 10)) }, (_, i) => world.clubTag(Math.floor((i * 500) / Math.max(1, Math.round(players / 10)))));
  await backfill({ world, store, days, nowMs: T0, playerTags: [], clubTags: clubs, playerEveryMs: 30 * MIN, clubEveryMs: 30 * MIN, rotation: false });
  const cs = (performance.now() - clubsStarted) / 1000;
  const perPlayer = s / players;
  const perClub = cs / clubs.length;
  console.log(`backfill: ${players} players of a 5,000-player world over ${days} days at 30-minute polls (${r.polls.toLocaleString('en-US')} polls) in ${fmt(s)} s; ${clubs.length} clubs in ${fmt(cs)} s`);
  console.log(`  rate              ${fmt(r.polls / s, 0)} polls/s, ${fmt(r.snapshotBytes / r.polls)} B of diffs per poll`);
  if (players < 5000) {
    const est = perPlayer * 5000 + perClub * 500;
    console.log(`  5,000 players + 500 clubs over ${days} days: ~${fmt(est / 60)} min (extrapolated from the sample; --backfill-players 5000 runs it)`);
  }
  await store.close();
  await store.drop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`history store: ${args.store}`);
const only = args.only;
if (!only || only === 'polling') await polling();
if (!only || only === 'search') await search();
if (!only || only === 'backfill') await backfillBench();
