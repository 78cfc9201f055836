/**
 * Backfill: replays the simulated world over the last N days into the history store, through the
 * polls the poller would have made (a profile every POLL_PLAYER_MINUTES, a club every
 * POLL_CLUB_MINUTES, the rotation every 5 minutes), reading the pure world model directly instead
 * of its HTTP server.
 *
 * Each player or club is one transaction that adds only what is older than everything recorded
 * for it, so a backfill is idempotent (a second run finds nothing to add) and resumable (an
 * interrupted run keeps the entities it finished; the next run does the rest).
 */
import type { HistoryStore, Observation } from '../store/history-store.ts';
import type { World } from '../sim/world.ts';
import { parseApiTime, type BattleLog, type Club, type EventRotation, type Player } from '../upstream/schemas.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** A battle log is read whenever trophies moved, and at least this often. */
const BATTLELOG_EVERY = 6 * 60 * MINUTE;
const ROTATION_EVERY = 5 * MINUTE;

export interface BackfillOptions {
  world: World;
  store: HistoryStore;
  /** days to replay, ending at `nowMs` */
  days: number;
  nowMs: number;
  playerTags: string[];
  clubTags: string[];
  playerEveryMs: number;
  clubEveryMs: number;
  /** also record the rotation (default true) */
  rotation?: boolean;
  /** called after each entity (and the rotation) is done */
  onProgress?(done: number, total: number, what: string): void;
  signal?: AbortSignal;
}

export interface BackfillReport {
  players: number;
  clubs: number;
  /** entities that already had everything (skipped) */
  skipped: number;
  /** polls replayed (profiles + clubs) */
  polls: number;
  /** bytes of snapshot diffs written */
  snapshotBytes: number;
  rotationPolls: number;
  ms: number;
}

/** Poll times on the grid of `every` (so reruns land on the same instants), in [from, to). */
export function pollTimes(fromMs: number, toMs: number, everyMs: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(fromMs / everyMs) * everyMs; t < toMs; t += everyMs) out.push(t);
  return out;
}

/** Battle log items newer than `afterMs`. */
function newerThan(log: BattleLog, afterMs: number): BattleLog {
  return { ...log, items: log.items.filter((i) => parseApiTime(i.battleTime) > afterMs) };
}

function trophyKey(p: Player): string {
  let s = `${p.trophies}`;
  for (const b of p.brawlers) s += `,${b.trophies}`;
  return s;
}

export async function backfill(opts: BackfillOptions): Promise<BackfillReport> {
  const started = Date.now();
  const { world, store } = opts;
  const end = opts.nowMs;
  const start = end - opts.days * DAY;
  const report: BackfillReport = { players: 0, clubs: 0, skipped: 0, polls: 0, snapshotBytes: 0, rotationPolls: 0, ms: 0 };
  const players = [...new Set(opts.playerTags)];
  const clubs = [...new Set(opts.clubTags)];
  const total = players.length + clubs.length + (opts.rotation === false ? 0 : 1);
  let done = 0;
  const step = (what: string) => opts.onProgress?.(++done, total, what);

  if (opts.rotation !== false) {
    const times = pollTimes(start, end, ROTATION_EVERY);
    let lastKey = '';
    let batch: Observation[] = [];
    for (const t of times) {
      const data = world.eventRotation(t) as unknown as EventRotation;
      // Only rotations that changed are worth a row; each is recorded once per (slot, start) anyway.
      const key = data.map((e) => `${e.slotId}:${e.startTime}:${e.event.id}`).join('|');
      if (key !== lastKey) batch.push({ kind: 'rotation', atMs: t, data });
      lastKey = key;
      report.rotationPolls++;
      if (batch.length >= 200) {
        await store.record(batch);
        batch = [];
      }
    }
    await store.record(batch);
    step('rotation');
  }

  for (const tag of players) {
    if (opts.signal?.aborted) break;
    const first = await store.firstRecorded('player', tag);
    const until = first === null ? end : Math.min(end, first * 1000);
    const times = pollTimes(start, until, opts.playerEveryMs);
    if (times.length === 0) {
      report.skipped++;
      step(tag);
      continue;
    }
    const states: { atMs: number; data: Player }[] = [];
    const logs: Observation[] = [];
    let lastTrophies = '';
    let lastLog = -Infinity;
    let newestBattle = -Infinity;
    for (const t of times) {
      const p = world.player(tag, t) as unknown as Player | null;
      if (!p) break;
      states.push({ atMs: t, data: p });
      const key = trophyKey(p);
      if (key !== lastTrophies || t - lastLog >= BATTLELOG_EVERY) {
        const log = world.battlelog(tag, t) as unknown as BattleLog;
        const fresh = newerThan(log, newestBattle);
        if (fresh.items.length > 0) {
          logs.push({ kind: 'battlelog', atMs: t, tag, data: fresh });
          newestBattle = Math.max(...fresh.items.map((i) => parseApiTime(i.battleTime)));
        }
        lastLog = t;
      }
      lastTrophies = key;
    }
    report.polls += states.length;
    report.snapshotBytes += await store.backfillEntity('player', tag, states, logs);
    report.players++;
    step(tag);
  }

  for (const tag of clubs) {
    if (opts.signal?.aborted) break;
    const first = await store.firstRecorded('club', tag);
    const until = first === null ? end : Math.min(end, first * 1000);
    const times = pollTimes(start, until, opts.clubEveryMs);
    if (times.length === 0) {
      report.skipped++;
      step(tag);
      continue;
    }
    const states: { atMs: number; data: Club }[] = [];
    for (const t of times) {
      const c = world.club(tag, t) as unknown as Club | null;
      if (!c) break;
      states.push({ atMs: t, data: c });
    }
    report.polls += states.length;
    report.snapshotBytes += await store.backfillEntity('club', tag, states);
    report.clubs++;
    step(tag);
  }
  report.ms = Date.now() - started;
  return report;
}

/** The players a default backfill covers: the world's strongest `count` (index order) plus `also`. */
export function samplePlayers(world: World, count: number, also: string[] = []): string[] {
  const n = Math.min(count, world.playerCount);
  return [...new Set([...Array.from({ length: n }, (_, i) => world.playerTag(i)), ...also])];
}

/** The clubs of some players at a time (the clubs a backfill of those players should cover). */
export function clubsOf(world: World, tags: string[], atMs: number): string[] {
  const out = new Set<string>();
  for (const tag of tags) {
    const p = world.player(tag, atMs) as { club?: { tag?: string } } | null;
    if (p?.club?.tag) out.add(p.club.tag);
  }
  return [...out];
}

export interface DemoBackfillOptions {
  world: World;
  store: HistoryStore;
  config: { POLL_PLAYER_MINUTES: number; POLL_CLUB_MINUTES: number; TRACK_DAYS: number };
  /** default Date.now() (the demo world follows real time) */
  nowMs?: number;
  /** default 3 */
  days?: number;
  /** the world's strongest players to include (default 20), plus everything already tracked */
  players?: number;
  logger?: { info(obj: object, msg: string): void };
}

/**
 * For demo mode at start-up (no official token): a few days of history for a small sample, so
 * that history, logs, charts, maps and predictions have something to show within a minute of
 * `npm start`. Takes a few seconds; a second start finds it done and costs next to nothing.
 * The sample stays tracked, so the poller carries its history on.
 */
export async function demoBackfill(opts: DemoBackfillOptions): Promise<BackfillReport> {
  const now = opts.nowMs ?? Date.now();
  const tracked = await opts.store.trackedTags(now);
  const players = samplePlayers(opts.world, opts.players ?? 20, tracked.player);
  const clubs = [...new Set([...clubsOf(opts.world, players, now), ...tracked.club])];
  const report = await backfill({
    world: opts.world,
    store: opts.store,
    days: opts.days ?? 3,
    nowMs: now,
    playerTags: players,
    clubTags: clubs,
    playerEveryMs: opts.config.POLL_PLAYER_MINUTES * MINUTE,
    clubEveryMs: opts.config.POLL_CLUB_MINUTES * MINUTE,
  });
  const until = now + opts.config.TRACK_DAYS * DAY;
  for (const tag of players) await opts.store.track('player', tag, until, now);
  for (const tag of clubs) await opts.store.track('club', tag, until, now);
  opts.logger?.info({ ...report }, `demo history: ${report.players} players and ${report.clubs} clubs backfilled`);
  return report;
}
