/**
 * Single-flight and failure holds across processes (src/core/peer-flights.ts): two cores built by
 * openCore as two processes of a cluster would build them — each its own memory, sharing one Redis
 * (REDIS_URL, under a prefix of this run, deleted after) — in front of one simulated world whose
 * request log counts what reached upstream. Runs when REDIS_URL is set; under CI=true it must be.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openCore, type OpenCore } from '../src/core/open.ts';
import { silentLogger } from '../src/log.ts';
import { SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import { connectRedis, type Redis } from '../src/store/redis.ts';

const REDIS_URL = process.env.REDIS_URL;
const inCi = process.env.CI === 'true' || process.env.CI === '1';

describe.skipIf(!REDIS_URL && !inCi)('two processes of a cluster in front of one game API', () => {
  const prefix = `starr_peers_${randomUUID().slice(0, 8)}:`;
  const clock = new SimClock(Date.UTC(2026, 5, 1, 12));
  const dirs: string[] = [];
  let sim: SimServer;
  let a: OpenCore;
  let b: OpenCore;
  let raw: Redis;

  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'starr-peers-'));
    dirs.push(dir);
    const config = loadConfig({
      DATA_DIR: dir,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      UPSTREAM_RPS: '10000',
      UPSTREAM_STALE_WAIT_MS: '60000',
      UPSTREAM_USER_BUDGET_MS: '60000',
    });
    return openCore(config, { logger: silentLogger, sim, now: () => clock.now(), renderWorkers: 1 });
  };

  beforeAll(async () => {
    if (!REDIS_URL) throw new Error('this suite needs Redis: set REDIS_URL');
    sim = await startSim({ seed: 'peers', players: 300, clubs: 20, clock, faults: { latency: { minMs: 30, maxMs: 30, spikeRate: 0, spikeMs: 0 } } });
    raw = connectRedis({ url: REDIS_URL, prefix: '' });
    a = await open();
    b = await open();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await sim?.close();
    if (raw) {
      const keys = await raw.keys(`${prefix}*`);
      if (keys.length > 0) await raw.del(...keys);
      await raw.quit();
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  beforeEach(() => {
    sim.faults.reset();
    sim.log.reset();
  });

  const calls = (path: string) => sim.log.view().requests.filter((r) => r.path === path).length;
  const playerPath = (tag: string) => `/v1/players/${encodeURIComponent(tag)}`;

  it('a concurrent burst on both makes one upstream call; both answer the same copy', async () => {
    const tag = sim.world.playerTag(150);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).core.stats.player(tag)));
    expect(calls(playerPath(tag))).toBe(1);
    expect(new Set(answers.map((f) => f.version)).size).toBe(1);
    expect(new Set(answers.map((f) => f.fetchedAt)).size).toBe(1);
    // one process called upstream (its callers share its flight); the other read what it wrote
    expect(new Set(answers.map((f) => f.source))).toEqual(new Set(['upstream', 'store']));
  });

  it('a tag that does not exist: one upstream call, the 404 shared', async () => {
    const tag = '#99999999Q';
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).core.stats.player(tag)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'rejected'));
    expect(results.map((r) => (r as PromiseRejectedResult).reason.kind)).toEqual(results.map(() => 'not_found'));
    expect(calls(playerPath(tag))).toBe(1);
  });

  it('a holder that died blocks the others only until its claim expires', async () => {
    const tag = sim.world.playerTag(151);
    // what a process killed between its claim and its answer leaves behind
    await raw.set(`${prefix}flight:player:${tag}`, 'a process that died', 'PX', 300);
    const f = await a.core.stats.player(tag);
    expect(f.source).toBe('upstream');
    expect(f.data.tag).toBe(tag);
    expect(calls(playerPath(tag))).toBe(1);
  });

  it('maintenance seen by one is respected by the other: stale copies, no second call', async () => {
    const tag = sim.world.playerTag(152);
    await a.core.stats.player(tag);
    clock.advance(3_600_000); // both copies out of date
    sim.faults.set({ maintenance: true });
    sim.log.reset();
    const first = await a.core.stats.player(tag);
    expect(first).toMatchObject({ stale: true, staleReason: 'maintenance' });
    expect(calls(playerPath(tag))).toBe(1);
    // b never saw the failure itself
    const second = await b.core.stats.player(tag);
    expect(second).toMatchObject({ stale: true, staleReason: 'maintenance' });
    const other = sim.world.playerTag(153);
    await expect(b.core.stats.player(other)).rejects.toMatchObject({ kind: 'maintenance' });
    expect(sim.log.view().total).toBe(1);
  });
});
