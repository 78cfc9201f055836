/**
 * Polling as BullMQ jobs (src/poller/queue.ts) on the real Redis and PostgreSQL (REDIS_URL and
 * DATABASE_URL, as in CI; each world under its own key prefix and schema, removed after):
 *   - two job workers on separate connections: every due poll runs once — no duplicate, no miss —
 *     and once more an interval later; the queue is rebuilt from the durable schedule when Redis
 *     loses it; depth, lag and outcomes show in /metrics;
 *   - `starr serve --role worker` processes: one SIGKILLed mid-job, its jobs are taken over by the
 *     other; SIGTERM of every worker loses nothing, and a restarted worker picks up the rest.
 * Upstream calls are counted by a recording proxy in front of the sim (a request held back while
 * its worker was killed never reaches upstream, and is not counted). Nothing waits on the clock:
 * completions come from BullMQ's own event stream; the waits have hang guards only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/http/metrics.ts';
import { ManualSleeper, Poller } from '../src/poller/index.ts';
import { PollQueue } from '../src/poller/queue.ts';
import type { RedisTarget } from '../src/store/redis.ts';
import { PollEvents } from './support/poll-events.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { startWorld, type TestWorld } from './support/world.ts';
import { IN_CI } from './support/stores.ts';

const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);
const MIN = 60_000;
const HANG_GUARD_MS = 200_000;
const shared = Boolean(process.env.REDIS_URL && process.env.DATABASE_URL) || IN_CI;

if (!shared && process.env.CI === 'true') {
  it('needs Redis and PostgreSQL on CI', () => {
    expect(shared, 'set REDIS_URL and DATABASE_URL').toBe(true);
  });
}

/** Rejects when `p` has not settled after `ms`: a guard against a hang, not a timing assertion. */
function guard<T>(p: Promise<T>, what: string, ms = HANG_GUARD_MS): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`hang guard: ${what} did not happen within ${ms / 1000} s`)), ms);
    }),
  ]);
}

/** Resolves once a poll job of every player id has completed (other than those in `before`). */
function polled(events: PollEvents, ids: number[], before: Set<string> = new Set()): Promise<void> {
  return events.until(() => ids.every((id) => [...events.completed].some((j) => j.startsWith(`player:${id}:`) && !before.has(j))));
}

/** Profile requests that reached upstream, per tag (a held-back request of a killed worker did not). */
function profileCalls(proxy: RecordingProxy, tags: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tag of tags) {
    const path = `/v1/players/${encodeURIComponent(tag)}`;
    out[tag] = proxy.requests.filter((r) => r.path === path && !r.abandoned).length;
  }
  return out;
}

const each = (tags: string[], n: number) => Object.fromEntries(tags.map((t) => [t, n]));

async function openWorld(opts: { startMs?: number }): Promise<{ w: TestWorld; proxy: RecordingProxy; redis: RedisTarget }> {
  let proxy: RecordingProxy | undefined;
  const w = await startWorld({
    ...opts,
    postgres: true,
    redis: true,
    players: 300,
    clubs: 30,
    through: async (sim) => (proxy = await startRecordingProxy(sim.url)).url,
    env: { REDIS_URL: process.env.REDIS_URL!, RANKING_COUNTRIES: '' },
  });
  const redis = w.core.coordination.redis;
  if (!redis || !proxy) throw new Error('the world has no Redis coordination');
  return { w, proxy, redis };
}

async function track(w: TestWorld, tags: string[]): Promise<number[]> {
  for (const tag of tags) await w.historyStore.track('player', tag, w.now() + 14 * 24 * 60 * MIN, w.now());
  return Promise.all(tags.map(async (t) => (await w.historyStore.idOf('player', t))!));
}

describe.runIf(shared)('poll jobs, two workers in one process (virtual time)', () => {
  let w: TestWorld;
  let proxy: RecordingProxy;
  let redis: RedisTarget;
  let done: PollEvents;
  const queues: PollQueue[] = [];
  const metrics = new MetricsRegistry();
  const sleepers: ManualSleeper[] = [];

  const queue = (opts: { work?: boolean; metrics?: MetricsRegistry } = {}) => {
    const sleeper = new ManualSleeper(w.now);
    sleepers.push(sleeper);
    const poller = new Poller({ stats: w.stats, history: w.history, config: w.config, clock: sleeper, pinTopPlayers: 0 });
    const q = new PollQueue({ poller, history: w.history, redis, lockMs: 5000, clock: sleeper, ...opts });
    queues.push(q);
    return q;
  };

  beforeAll(async () => {
    ({ w, proxy, redis } = await openWorld({ startMs: T0 }));
    done = await PollEvents.open(redis);
  });
  afterAll(async () => {
    for (const q of queues) await q.close();
    await done?.close();
    await w?.close();
    await proxy?.close();
  });

  const tags = () => Array.from({ length: 20 }, (_, i) => w.sim.world.playerTag(i));

  it('rebuilds the queue from the durable schedule when Redis loses it', async () => {
    const ids = await track(w, tags());
    const scanner = queue({ work: false });
    expect(await scanner.scanOnce()).toBe(20 + 4);
    expect(await scanner.queue.getWaitingCount()).toBe(24);
    // Redis flushed (or the queue deleted): the schedule in PostgreSQL still says what is due.
    await scanner.queue.obliterate({ force: true });
    expect(await scanner.queue.getWaitingCount()).toBe(0);

    const a = queue({ metrics });
    const b = queue({ metrics });
    a.start();
    b.start();
    await guard(polled(done, ids), 'every tracked player polled');
    await guard(Promise.all(['rotation', 'rankings', 'catalogue', 'prune'].map((n) => done.completedSome(`job:${n}:`))), 'the periodic jobs');
    expect(profileCalls(proxy, tags())).toEqual(each(tags(), 1));
  });

  it('runs each due poll once across two workers, and again an interval later', async () => {
    const ids = await Promise.all(tags().map(async (t) => (await w.historyStore.idOf('player', t))!));
    const [a, b] = queues.slice(1) as [PollQueue, PollQueue];
    // Both scan the same schedule again: nothing is due, nothing is added.
    await Promise.all([a.scanOnce(), b.scanOnce()]);
    expect(profileCalls(proxy, tags())).toEqual(each(tags(), 1));

    const before = new Set(done.completed);
    w.clock.advance(w.config.POLL_PLAYER_MINUTES * MIN);
    // Every scanner adds the same due polls (same ids): each runs once.
    await Promise.all([a.scanOnce(), b.scanOnce(), a.scanOnce()]);
    await guard(polled(done, ids, before), 'every tracked player polled again');
    expect(profileCalls(proxy, tags())).toEqual(each(tags(), 2));
    for (const tag of tags()) expect((await w.historyStore.tracking('player', tag, w.now())).lastPollMs).toBe(Math.floor(w.now() / 1000) * 1000);
  });

  it('shows queue depth, lag and outcomes in /metrics', async () => {
    await queues[1]!.scanOnce();
    const text = metrics.render();
    expect(text).toMatch(/^starr_poll_queue_jobs\{state="waiting"\} \d+$/m);
    expect(text).toMatch(/^starr_poll_queue_jobs\{state="failed"\} 0$/m);
    // Two workers, one registry: 20 players polled twice, every job's lag observed.
    expect(text).toMatch(/^starr_poll_jobs_total\{kind="player",outcome="ok"\} 40$/m);
    expect(text).toMatch(/^starr_poll_lag_seconds_count\{kind="player"\} 40$/m);
  });
});

// ---------------------------------------------------------------------------- worker processes

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  ready: Promise<void>;
  /** resolves when the worker says it takes no new job (after SIGTERM) */
  stopping: Promise<void>;
  output: () => string;
}

describe.runIf(shared)('poll jobs in `starr serve --role worker` processes', () => {
  let w: TestWorld;
  let proxy: RecordingProxy;
  let redis: RedisTarget;
  let done: PollEvents;
  let dataDir: string;
  const children: WorkerProcess[] = [];
  /** while set, every profile or battle log request waits for it */
  let gate: { open: () => void; promise: Promise<void> } | null = null;
  const held: string[] = [];
  let heldWaiter: { n: number; resolve: () => void } | null = null;

  const closeGate = () => {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    gate = { open, promise };
  };
  const openGate = () => {
    gate?.open();
    gate = null;
  };
  const heldAtLeast = (n: number) => (held.length >= n ? Promise.resolve() : new Promise<void>((resolve) => (heldWaiter = { n, resolve })));

  function startWorker(): WorkerProcess {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      DATABASE_URL: w.config.DATABASE_URL!,
      DATABASE_SCHEMA: w.config.DATABASE_SCHEMA!,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      BRAWLSTARS_API_TOKEN: w.sim.token,
      BRAWLSTARS_API_URL: proxy.url,
      UPSTREAM_RPS: '10000',
      // Held-back requests must not time out while the test arranges a kill. (It also bounds how long
      // a dead worker's claim on an upstream call — the cluster's single-flight — holds others back.)
      UPSTREAM_TIMEOUT_MS: '30000',
      // Long enough that a worker starved of CPU on a busy machine still renews its locks (a job
      // whose lock lapses is run again by the other worker); a killed worker's jobs still move on
      // within seconds.
      POLL_JOB_LOCK_SECONDS: '10',
      RANKING_COUNTRIES: '',
      LOG_LEVEL: 'info',
      // its health port (/healthz, /readyz, /metrics): any free one
      PORT: '0',
      HOST: '127.0.0.1',
    };
    const child = spawn(process.execPath, ['bin/starr.js', 'serve', '--role', 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let markReady: () => void;
    let markStopping: () => void;
    const ready = new Promise<void>((r) => (markReady = r));
    const stopping = new Promise<void>((r) => (markStopping = r));
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('polling as jobs on the shared queue')) markReady();
      if (out.includes('poll worker stopping')) markStopping();
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const p = { child, exited, ready, stopping, output: () => out };
    children.push(p);
    return p;
  }

  beforeAll(async () => {
    ({ w, proxy, redis } = await openWorld({}));
    done = await PollEvents.open(redis);
    dataDir = mkdtempSync(join(tmpdir(), 'starr-workers-'));
    proxy.intercept = (r) => {
      if (!gate || !r.path.startsWith('/v1/players/')) return undefined;
      held.push(r.path);
      if (heldWaiter && held.length >= heldWaiter.n) heldWaiter.resolve();
      return gate.promise;
    };
  });
  afterAll(async () => {
    openGate();
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await done?.close();
    await w?.close();
    await proxy?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Every tracked player's id, once the rankings job (which pins the global top) has run. */
  async function trackedIds(): Promise<{ tags: string[]; ids: number[] }> {
    await guard(done.completedSome('job:rankings:'), 'the rankings job');
    const tags = (await w.historyStore.trackedTags(w.now())).player;
    return { tags, ids: await Promise.all(tags.map(async (t) => (await w.historyStore.idOf('player', t))!)) };
  }

  it('takes over the jobs of a worker killed mid-job: every tracked player polled once', { timeout: 240_000 }, async () => {
    await track(w, Array.from({ length: 12 }, (_, i) => w.sim.world.playerTag(i)));
    closeGate();
    const one = startWorker();
    const two = startWorker();
    await guard(Promise.all([one.ready, two.ready]), 'two workers ready');
    // Both workers busy with held-back polls (8 at once each): one dies in the middle of its jobs.
    await guard(heldAtLeast(16), 'both workers mid-job');
    one.child.kill('SIGKILL');
    expect(await one.exited).toBeNull();
    openGate();
    const { tags, ids } = await trackedIds();
    await guard(polled(done, ids), 'every tracked player polled after the kill');
    expect(proxy.requests.some((r) => r.abandoned)).toBe(true);
    expect(profileCalls(proxy, tags)).toEqual(each(tags, 1));
    two.child.kill('SIGTERM');
    expect(await guard(two.exited, 'the second worker to stop')).toBe(0);
  });

  it('loses no job when every worker gets SIGTERM mid-run; a restarted worker picks up the rest', { timeout: 240_000 }, async () => {
    const tracked = new Set((await w.historyStore.trackedTags(w.now())).player);
    const fresh = Array.from({ length: 300 }, (_, i) => w.sim.world.playerTag(i))
      .filter((t) => !tracked.has(t))
      .slice(0, 30);
    held.length = 0;
    closeGate();
    const ids = await track(w, fresh);
    const workers = [startWorker(), startWorker()];
    await guard(Promise.all(workers.map((x) => x.ready)), 'two workers ready');
    await guard(heldAtLeast(16), 'both workers mid-job');
    for (const x of workers) x.child.kill('SIGTERM');
    await guard(Promise.all(workers.map((x) => x.stopping)), 'both workers stopping');
    // What was under way when both stopped taking jobs: at least the 16 seen before the signal.
    const underWay = new Set(held.map((path) => decodeURIComponent(path.split('/')[3]!)));
    expect(underWay.size).toBeGreaterThanOrEqual(16);
    // The polls under way finish and are recorded before the workers exit; no new one starts.
    openGate();
    for (const x of workers) expect(await guard(x.exited, 'a worker to stop after SIGTERM')).toBe(0);
    const recorded = [];
    for (const tag of fresh) if ((await w.historyStore.tracking('player', tag, w.now())).lastPollMs !== null) recorded.push(tag);
    expect(new Set(recorded)).toEqual(underWay);
    expect(recorded.length).toBeLessThan(fresh.length);

    const again = startWorker();
    await guard(again.ready, 'the restarted worker ready');
    await guard(polled(done, ids), 'every player polled after the restart');
    expect(profileCalls(proxy, fresh)).toEqual(each(fresh, 1));
    again.child.kill('SIGTERM');
    expect(await guard(again.exited, 'the restarted worker to stop')).toBe(0);
  });
});
