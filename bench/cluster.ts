/**
 * Starr Stats as a cluster of processes (test/support/cluster.ts: `starr sim --latency 50`, `starr
 * serve --role …` processes on one PostgreSQL schema and one Redis prefix of the run). Prints:
 *
 * - upstream calls per distinct key per TTL with 2 api processes: clients ask both processes for a
 *   small set of players as fast as they can for several TTLs; the sim's request log counts what
 *   reached upstream (ideal: 1 per key per TTL; without shared single-flight each process would
 *   make its own, 2 or more);
 * - Redis round trips per cached HTTP request: every command under the run's prefix, seen through
 *   MONITOR (other users of the shared Redis are not counted; an EVAL is one, whatever its script
 *   runs), per request answered from the process's memory and per request answered from the shared
 *   cache in Redis.
 *
 * - polling as jobs: every player the global ranking lists (200, and the players their battle logs
 *   name) made tracked and due at once, then polled by 1 worker process, then by 2 (a profile and a
 *   battle log each: two upstream calls of 50 ms). Polls/s from the first job started to the last
 *   finished, the ratio of 2 workers to 1, and from the jobs' own timestamps in Redis the p99 of queue
 *   lag (added → started) and of due → started (which includes the worker's first scan).
 *
 *   npm run bench:cluster [-- --ttl 4 --ttls 5 --keys 8 --clients 16 --rounds 2 --part api|jobs]
 */
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { POLL_QUEUE, queuePrefix } from '../src/poller/queue.ts';
import { connectRedis } from '../src/store/redis.ts';
import { startCluster, type Cluster, type ClusterProcess } from '../test/support/cluster.ts';
import { PollEvents } from '../test/support/poll-events.ts';
import { percentile, pool } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    ttl: { type: 'string', default: '4' },
    ttls: { type: 'string', default: '5' },
    keys: { type: 'string', default: '8' },
    clients: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    part: { type: 'string', default: 'all' },
  },
});
const TTL_S = Number(values.ttl);
const TTLS = Number(values.ttls);
const KEYS = Number(values.keys);
const CLIENTS = Number(values.clients);
const ROUNDS = Math.max(1, Number(values.rounds));
const PART = values.part;

const fmt = (n: number, d = 2) => n.toFixed(d);

/** Counts the commands of this run (keys, channels under its prefix) while `run` goes. */
async function redisCommands(c: Cluster, run: () => Promise<void>): Promise<number> {
  const conn = new Redis(process.env.REDIS_URL!);
  const monitor = await conn.monitor();
  let n = 0;
  // Commands a Lua script runs are listed too (source "lua"): one EVAL is one round trip.
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && args.slice(1).some((a) => a.includes(c.redisPrefix))) n++;
  });
  try {
    await run();
    // MONITOR lines trail the replies a little: a PING through the same server marks the end.
    await c.redis.ping();
  } finally {
    monitor.disconnect();
    conn.disconnect();
  }
  return n;
}

async function main(): Promise<void> {
  console.log(`bench:cluster — ${new Date().toISOString()}; sim latency 50 ms; CACHE_TTL_SECONDS=${TTL_S}`);
  const c = await startCluster({
    api: 2,
    sim: { latencyMs: 50, players: 2000, clubs: 100 },
    env: { CACHE_TTL_SECONDS: String(TTL_S), RATE_LIMIT_FREE: '1000000', LOG_LEVEL: 'warn' },
  });
  try {
    const ranking = (await c.api[0]!.get('/rankings/global/players?limit=200')).json.items as { tag: string }[];
    // below the global top 100 the workers would keep polling (none run here; kept for comparability)
    const tags = ranking.slice(150, 150 + KEYS).map((p) => encodeURIComponent(p.tag));

    // ---- upstream calls per distinct key per TTL
    await c.sim.resetLog();
    const start = Date.now();
    const until = start + TTLS * TTL_S * 1000;
    let requests = 0;
    let failed = 0;
    await pool(
      Array.from({ length: CLIENTS }, (_, client) => async () => {
        for (let k = client; Date.now() < until; k++) {
          const r = await c.api[k % 2]!.get(`/players/${tags[k % tags.length]}`);
          requests++;
          if (r.status !== 200) failed++;
        }
      }),
      CLIENTS,
    );
    const elapsed = (Date.now() - start) / 1000;
    const log = await c.sim.log('/players/');
    const perKey = tags.map((t) => log.requests.filter((r) => r.path === `/v1/players/${t}`).length);
    const windows = elapsed / TTL_S;
    console.log(
      `upstream calls per distinct key per TTL, 2 api processes: ${fmt(perKey.reduce((a, b) => a + b, 0) / tags.length / windows)} ` +
        `(${requests} requests from ${CLIENTS} clients over ${fmt(elapsed, 1)} s = ${fmt(windows, 1)} TTLs, ${KEYS} keys; ` +
        `calls per key ${Math.min(...perKey)}–${Math.max(...perKey)}; ${failed} not 200)`,
    );

    // ---- Redis round trips per cached HTTP request
    const warm = tags[0]!;
    await c.api[0]!.get(`/players/${warm}`);
    const N = 200;
    const inMemory = await redisCommands(c, async () => {
      for (let i = 0; i < N; i++) await c.api[0]!.get(`/players/${warm}`);
    });
    // fetched through api-0, then asked once of api-1, whose memory never held them
    const fresh = ranking.slice(100, 112).map((p) => encodeURIComponent(p.tag));
    for (const t of fresh) await c.api[0]!.get(`/players/${t}`);
    const fromStore = await redisCommands(c, async () => {
      for (const t of fresh) await c.api[1]!.get(`/players/${t}`);
    });
    console.log(
      `Redis round trips per cached HTTP request: ${fmt(inMemory / N)} answered from the process's memory (${N} requests), ` +
        `${fmt(fromStore / fresh.length)} from the shared cache in Redis (${fresh.length} requests)`,
    );
  } finally {
    await c.close();
  }
}

const LATENCY_MS = 50;

interface Round {
  workers: number;
  polls: number;
  pollsPerSecond: number;
  queueLagMs: number[];
  dueLagMs: number[];
}

/** Every player the store knows made tracked and due now; returns the job id each due poll gets. */
async function allDue(c: Cluster): Promise<string[]> {
  const dueSec = Math.floor(Date.now() / 1000);
  const rows = await c.sql<{ id: number }>(
    `INSERT INTO tracked (kind, id, viewed_until, next_poll) SELECT 0, id, $1, $2 FROM player
     ON CONFLICT (kind, id) DO UPDATE SET viewed_until = excluded.viewed_until, next_poll = excluded.next_poll
     RETURNING id`,
    [dueSec + 86_400, dueSec],
  );
  return rows.map((r) => `player:${r.id}:${dueSec * 1000}`);
}

async function round(c: Cluster, queue: Queue, events: PollEvents, workers: number): Promise<Round> {
  // A clean start: no worker, an empty queue, every player due.
  await queue.obliterate({ force: true });
  const ids = await allDue(c);
  const started: ClusterProcess[] = [];
  for (let i = 0; i < workers; i++) started.push(await c.spawn('worker'));
  await events.completedAll(ids);
  const jobs = await Promise.all(ids.map((id) => queue.getJob(id)));
  for (const w of started) await w.stop();
  const first = Math.min(...jobs.map((j) => j!.processedOn!));
  const last = Math.max(...jobs.map((j) => j!.finishedOn!));
  return {
    workers,
    polls: ids.length,
    pollsPerSecond: ids.length / ((last - first) / 1000),
    queueLagMs: jobs.map((j) => j!.processedOn! - j!.timestamp),
    dueLagMs: jobs.map((j) => j!.processedOn! - (j!.data as { dueAt: number }).dueAt),
  };
}

async function polling(): Promise<void> {
  const c = await startCluster({
    worker: 1,
    sim: { latencyMs: LATENCY_MS },
    env: { RANKING_COUNTRIES: '', LOG_LEVEL: 'warn' },
  });
  try {
    const target = { url: process.env.REDIS_URL!, prefix: c.redisPrefix };
    const connection = connectRedis(target, { forQueues: true });
    const queue = new Queue(POLL_QUEUE, { connection, prefix: queuePrefix(c.redisPrefix) });
    const events = await PollEvents.open(target);
    // The first worker creates the schema and records the global ranking: the players to poll.
    await events.completedSome('job:rankings:');
    await c.worker[0]!.stop();

    const results: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) for (const n of [1, 2]) results.push(await round(c, queue, events, n));
    await events.close();
    await queue.close();
    connection.disconnect();

    const p99 = (ms: number[]) => percentile([...ms].sort((a, b) => a - b), 99);
    console.log(`bench:cluster — polling as jobs, sim latency ${LATENCY_MS} ms per request, ${new Date().toISOString()}`);
    for (const r of results) {
      console.log(
        `  ${r.workers} worker${r.workers > 1 ? 's' : ' '}: ${r.polls} polls, ${fmt(r.pollsPerSecond, 1)} polls/s; ` +
          `queue lag p99 ${fmt(p99(r.queueLagMs), 1)} ms, due → start p99 ${fmt(p99(r.dueLagMs), 1)} ms`,
      );
    }
    const best = (n: number) => Math.max(...results.filter((r) => r.workers === n).map((r) => r.pollsPerSecond));
    console.log(`  ratio 2 workers / 1 worker (best rounds): ${(best(2) / best(1)).toFixed(2)}`);
  } finally {
    await c.close();
  }
}

if (PART !== 'jobs') await main();
if (PART !== 'api') await polling();

