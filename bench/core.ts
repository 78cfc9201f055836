/**
 * The service core under a Zipf workload: StatsService (SQLite keyv + memory layer, single-flight)
 * over the simulated world, which runs in a child process (`starr sim`) so its CPU work does not
 * sit in the core's event loop. Prints upstream calls per 1,000 requests and per distinct key,
 * latency of warm reads (p50/p99), and RSS. No assertions.
 *
 *   npm run bench:core [-- --tags 1000 --requests 10000 --concurrency 16 --zipf 1.0]
 *
 * Rounds: 1) cold start, a mix of misses and hits; 2) the same workload again, every key warm;
 * 3) the virtual clock moved past the TTL, so each key is refreshed once more.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { StatsService } from '../src/core/service.ts';
import { openKeyvStores } from '../src/store/keyv.ts';
import { UpstreamClient } from '../src/upstream/client.ts';

const { values } = parseArgs({
  options: {
    tags: { type: 'string', default: '1000' },
    requests: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '16' },
    zipf: { type: 'string', default: '1.0' },
    players: { type: 'string', default: '5000' },
    ttl: { type: 'string', default: '120' },
  },
});
const TAGS = Number(values.tags);
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ZIPF_S = Number(values.zipf);
const PLAYERS = Number(values.players);
const TTL_SECONDS = Number(values.ttl);
/** Upstream latency the sim adds (ms), so concurrent misses overlap as they would in production. */
const LATENCY = { minMs: 20, maxMs: 60 };
/** The sim is local: the request budget must not be what the figures measure. */
const RPS = 2000;
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

// ---------------------------------------------------------------- the simulated world, out of process

interface Sim {
  url: string;
  token: string;
  control(path: string, body: unknown): Promise<void>;
  stop(): void;
}

async function startSimProcess(): Promise<Sim> {
  const child = spawn(process.execPath, ['bin/starr.js', 'sim', '--seed', 'bench', '--players', String(PLAYERS), '--clubs', String(Math.max(1, PLAYERS / 10))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  let url = '';
  let token = '';
  for await (const line of lines) {
    const at = /\bat (http:\/\/\S+)$/.exec(line);
    if (at) url = at[1]!;
    const tok = /^Token: (\S+)$/.exec(line);
    if (tok) token = tok[1]!;
    if (url && token) break;
  }
  if (!url || !token) throw new Error('the simulated world did not start');
  const base = url.replace(/\/v1$/, '');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    url,
    token,
    async control(path, body) {
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    },
    stop: () => child.kill('SIGTERM'),
  };
}

// ---------------------------------------------------------------- workload

/** mulberry32: a small seeded PRNG, so every run asks the same questions. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ranks 0..n-1 drawn with probability proportional to 1/(rank+1)^s. */
function zipfSampler(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1) ** s;
  return () => {
    const u = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (v: number) => (v < 1 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(2)} ms`);
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;

/** A full GC, so heap figures show what is kept rather than garbage not yet collected. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
function memory(): { rss: number; heap: number } {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

// ---------------------------------------------------------------- run

const sim = await startSimProcess();
await sim.control('/_sim/clock', { set: T0 });
await sim.control('/_sim/faults', { latency: LATENCY });

let now = T0;
const dir = mkdtempSync(join(tmpdir(), 'starr-bench-core-'));
const stores = await openKeyvStores(`sqlite://${join(dir, 'cache.sqlite')}`);
let httpAttempts = 0;
const upstream = new UpstreamClient({
  baseUrl: sim.url,
  tokens: [sim.token],
  kind: 'simulated',
  rps: RPS,
  onAttempt: () => void httpAttempts++,
});
const stats = new StatsService({ upstream, cache: stores.namespace('cache'), ttlSeconds: TTL_SECONDS, now: () => now });

// Player tags are derived from the seed the same way in this process and in the sim's.
const { World } = await import('../src/sim/world.ts');
const world = new World({ seed: 'bench', players: PLAYERS, clubs: Math.max(1, PLAYERS / 10) });
const tags = Array.from({ length: TAGS }, (_, i) => world.playerTag(Math.floor((i * PLAYERS) / TAGS)));
const draw = zipfSampler(TAGS, ZIPF_S, rng(42));
const workload = Array.from({ length: REQUESTS }, () => tags[draw()]!);
const distinct = new Set(workload).size;
const baseline = memory();

interface Round {
  name: string;
  wallMs: number;
  upstreamCalls: number;
  httpAttempts: number;
  warm: number[];
  cold: number[];
  errors: number;
}

/** `done`: keys with a completed read in this TTL window; later reads of them are warm. */
async function round(name: string, done: Set<string>): Promise<Round> {
  const before = stats.stats().upstreamCalls;
  const attemptsBefore = httpAttempts;
  const warm: number[] = [];
  const cold: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < workload.length) {
        const tag = workload[next++]!;
        const wasDone = done.has(tag);
        const t = performance.now();
        try {
          await stats.player(tag);
        } catch {
          errors++;
        }
        (wasDone ? warm : cold).push(performance.now() - t);
        done.add(tag);
      }
    }),
  );
  return {
    name,
    wallMs: performance.now() - t0,
    upstreamCalls: stats.stats().upstreamCalls - before,
    httpAttempts: httpAttempts - attemptsBefore,
    warm,
    cold,
    errors,
  };
}

const rounds: Round[] = [];
const window1 = new Set<string>();
rounds.push(await round('1 cold start', window1));
rounds.push(await round('2 all warm', window1));
now += (TTL_SECONDS + 1) * 1000;
await sim.control('/_sim/clock', { set: now });
rounds.push(await round('3 after the TTL', new Set()));
const mem = memory();

console.log(`bench:core  ${TAGS} tags, ${REQUESTS} requests per round, ${CONCURRENCY} concurrent, Zipf s=${ZIPF_S}, ${distinct} distinct keys`);
console.log(`            sim in a child process (${PLAYERS} players), upstream latency ${LATENCY.minMs}-${LATENCY.maxMs} ms, TTL ${TTL_SECONDS} s, SQLite keyv + memory layer`);
console.log('');
for (const r of rounds) {
  const all = [...r.warm, ...r.cold];
  console.log(`round ${r.name}: ${(r.wallMs / 1000).toFixed(2)} s, ${Math.round((REQUESTS / r.wallMs) * 1000)} req/s, errors ${r.errors}`);
  console.log(`  upstream calls: ${r.upstreamCalls} (${((r.upstreamCalls / REQUESTS) * 1000).toFixed(1)} per 1,000 requests, ${(r.upstreamCalls / distinct).toFixed(3)} per distinct key; HTTP attempts ${r.httpAttempts})`);
  console.log(`  warm reads (n=${r.warm.length}): p50 ${ms(pct(r.warm, 50))}  p99 ${ms(pct(r.warm, 99))}  max ${ms(Math.max(...r.warm))}`);
  if (r.cold.length > 0) console.log(`  reads before the key's first answer (n=${r.cold.length}): p50 ${ms(pct(r.cold, 50))}  p99 ${ms(pct(r.cold, 99))}`);
  console.log(`  all reads: p50 ${ms(pct(all, 50))}  p99 ${ms(pct(all, 99))}`);
}
console.log('');
const items = stats.stats().memoryItems;
console.log(`memory: RSS ${mb(mem.rss)} (${mb(baseline.rss)} before the first request), heap after GC ${mb(mem.heap)} (${mb(baseline.heap)} before)`);
console.log(`        in-memory cache ${items}/${stats.stats().memoryLimit} entries, about ${((mem.heap - baseline.heap) / items / 1024).toFixed(0)} KB of heap per cached player`);

await stats.close();
await upstream.close();
await stores.close();
sim.stop();
rmSync(dir, { recursive: true, force: true });
