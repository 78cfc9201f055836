/**
 * Fault injection of the simulated world: each fault kind observable over real HTTP, set at start,
 * changed while running (in process and through POST /_sim/faults), and the maintenance window
 * ending on its own in virtual time.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import * as S from '../src/upstream/schemas.ts';
import { ManualSchedule } from './support/manual-schedule.ts';

const T0 = Date.UTC(2026, 10, 20, 18, 30, 0);
type Body = any;

let sim: SimServer;
let clock: SimClock;
const latencies = new ManualSchedule();
beforeAll(async () => {
  clock = new SimClock(T0);
  sim = await startSim({ seed: 'faults', players: 500, clubs: 30, clock, schedule: latencies.schedule });
});
afterAll(() => sim.close());
afterEach(() => {
  sim.faults.reset();
  clock.set(T0);
});

async function call(path: string) {
  const res = await fetch(sim.url + path, { headers: { authorization: `Bearer ${sim.token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const playerPath = () => `/players/${encodeURIComponent(sim.world.playerTag(1))}`;

describe('fault injection', () => {
  it('starts with the faults given to startSim', async () => {
    const faulty = await startSim({ seed: 'faults', players: 100, clubs: 5, faults: { errorRate: 1 } });
    try {
      const res = await fetch(`${faulty.url}/brawlers`, { headers: { authorization: `Bearer ${faulty.token}` } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ reason: 'unknownException' });
    } finally {
      await faulty.close();
    }
  });

  it('429 requestThrottled with Retry-After', async () => {
    sim.faults.set({ throttleRate: 1, retryAfterSeconds: 7 });
    const r = await call('/brawlers');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    // reference/upstream-api.md §9: a reason, no message; every error cacheable for 10 minutes (§10)
    expect(JSON.parse(r.text)).toEqual({ reason: 'requestThrottled' });
    expect(r.headers.get('cache-control')).toBe('public max-age=600');
  });

  it('a hang holds every request without an answer until turned off, then answers it', async () => {
    const before = sim.faults.requests;
    sim.faults.set({ hang: true });
    let answered = false;
    const pending = call('/brawlers').then((r) => {
      answered = true;
      return r;
    });
    await expect.poll(() => sim.faults.held).toBe(1);
    expect(answered).toBe(false);
    sim.faults.set({ hang: false });
    const r = await pending;
    expect(r.status).toBe(200);
    expect(S.BrawlerList.safeParse(JSON.parse(r.text)).success).toBe(true);
    expect(sim.faults.held).toBe(0);
    expect(sim.faults.requests - before).toBe(1);
  });

  it('503 inMaintenance until turned off', async () => {
    sim.faults.set({ maintenance: true });
    for (const path of ['/brawlers', playerPath(), '/events/rotation']) {
      const r = await call(path);
      expect(r.status).toBe(503);
      expect(JSON.parse(r.text)).toEqual({ reason: 'inMaintenance', message: 'API is currently in maintenance, please come back later' });
      expect(r.headers.get('retry-after')).toBeNull();
      expect(r.headers.get('cache-control')).toBe('public max-age=600');
    }
    sim.faults.set({ maintenance: false });
    expect((await call('/brawlers')).status).toBe(200);
  });

  it('a maintenance window ends by itself when virtual time passes its end', async () => {
    sim.faults.set({ maintenance: T0 + 30 * 60_000 });
    expect((await call('/brawlers')).status).toBe(503);
    clock.advance(29 * 60_000);
    expect((await call('/brawlers')).status).toBe(503);
    clock.advance(60_000);
    expect((await call('/brawlers')).status).toBe(200);
    expect(sim.faults.current().maintenance).toBe(false);
  });

  it('the overload body has no reason', async () => {
    sim.faults.set({ overloadRate: 1 });
    const r = await call('/brawlers');
    expect(r.status).toBe(503);
    expect(JSON.parse(r.text)).toEqual({ message: 'API at maximum capacity, request throttled.' });
  });

  it('error rates apply to a share of requests', async () => {
    sim.faults.set({ errorRate: 0.5 });
    const statuses = await Promise.all(Array.from({ length: 40 }, () => call('/gamemodes').then((r) => r.status)));
    const errors = statuses.filter((s) => s === 500).length;
    expect(errors).toBeGreaterThan(5);
    expect(errors).toBeLessThan(35);
    expect(statuses.every((s) => s === 200 || s === 500)).toBe(true);
    sim.faults.set({ errorRate: 1 });
    const r = await call('/gamemodes');
    expect([r.status, JSON.parse(r.text), r.headers.get('cache-control')]).toEqual([500, { reason: 'unknownException' }, 'public max-age=600']);
  });

  it('malformed bodies: truncated JSON and valid JSON of the wrong shape', async () => {
    sim.faults.set({ malformedRate: 1, malformedKind: 'truncated' });
    const cut = await call(playerPath());
    expect(cut.status).toBe(200);
    expect(() => JSON.parse(cut.text)).toThrow();
    sim.faults.set({ malformedKind: 'wrongShape' });
    const player = await call(playerPath());
    expect(S.Player.safeParse(JSON.parse(player.text)).success).toBe(false);
    const rotation = await call('/events/rotation');
    expect(S.EventRotation.safeParse(JSON.parse(rotation.text)).success).toBe(false);
    const list = await call('/brawlers');
    expect(S.BrawlerList.safeParse(JSON.parse(list.text)).success).toBe(false);
  });

  it('historical quirks the client must tolerate, still valid for the schemas', async () => {
    sim.faults.set({ quirkRate: 1 });
    const log = JSON.parse((await call(`${playerPath()}/battlelog`)).text);
    expect(log.items.some((x: Body) => !('battle' in x))).toBe(true);
    const everyone = log.items.flatMap((x: Body) => (x.battle ? [...(x.battle.players ?? []), ...(x.battle.teams ?? []).flat()] : []));
    expect(everyone.some((p: Body) => p.brawler?.power === -1 && p.brawler.trophies === -1 && p.brawler.name === null)).toBe(true);
    S.BattleLog.parse(log);
    const ranking = JSON.parse((await call('/rankings/global/players?limit=5')).text);
    S.PlayerRankings.parse(ranking);
    expect(ranking.items[0].trophies).toBe(1);
    sim.faults.set({ quirkRate: 0 });
    const clean = JSON.parse((await call(`${playerPath()}/battlelog`)).text);
    expect(clean.items.every((x: Body) => 'battle' in x)).toBe(true);
  });

  it('connection resets: the request fails without an answer', async () => {
    sim.faults.set({ resetRate: 1 });
    await expect(fetch(`${sim.url}/brawlers`, { headers: { authorization: `Bearer ${sim.token}` } })).rejects.toThrow();
    sim.faults.set({ resetRate: 0 });
    expect((await call('/brawlers')).status).toBe(200);
  });

  it('latency: answers wait the configured time', async () => {
    sim.faults.set({ latency: { minMs: 120, maxMs: 120 } });
    let answered = false;
    const res = call('/gamemodes').then((r) => ((answered = true), r));
    // the sim holds the answer on a 120 ms deadline, which ends when the test fires it
    await latencies.next();
    expect(latencies.pending).toEqual([120]);
    expect(answered).toBe(false);
    latencies.fire();
    expect((await res).status).toBe(200);
    expect(sim.faults.current().latency).toMatchObject({ minMs: 120, maxMs: 120 });
  });

  it('faults can be limited to some paths', async () => {
    sim.faults.set({ maintenance: true, match: '/players/' });
    expect((await call(playerPath())).status).toBe(503);
    expect((await call('/brawlers')).status).toBe(200);
  });

  it('faults are deterministic for the same settings and the same requests', async () => {
    const run = async () => {
      const other = await startSim({ seed: 'same', players: 100, clubs: 5, faults: { errorRate: 0.3, throttleRate: 0.2 } });
      try {
        const out: number[] = [];
        for (let n = 0; n < 20; n++) {
          out.push((await fetch(`${other.url}/gamemodes`, { headers: { authorization: `Bearer ${other.token}` } })).status);
        }
        return out;
      } finally {
        await other.close();
      }
    };
    const first = await run();
    expect(await run()).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('POST /_sim/faults changes faults on a running server and rejects bad settings', async () => {
    const base = sim.url.replace(/\/v1$/, '');
    const post = (body: unknown) =>
      fetch(`${base}/_sim/faults`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const set = await post({ maintenance: true });
    expect(set.status).toBe(200);
    expect(((await set.json()) as Body).maintenance).toBe(true);
    expect((await call('/brawlers')).status).toBe(503);
    const bad = await post({ errorRate: 2 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).reason).toBe('badRequest');
    const unknown = await post({ explode: true });
    expect(unknown.status).toBe(400);
    const cleared = await fetch(`${base}/_sim/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${sim.token}` } });
    expect(((await cleared.json()) as Body).maintenance).toBe(false);
    expect((await call('/brawlers')).status).toBe(200);
  });
});

describe('starr sim', () => {
  it('runs standalone, prints its URL, a token and a curl line, answers, and stops cleanly on SIGTERM', async () => {
    const bin = join(import.meta.dirname, '..', 'bin', 'starr.js');
    const child = spawn(process.execPath, [bin, 'sim', '--port', '0', '--seed', 'cli', '--players', '200', '--clubs', '10'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => out.includes('Try:') && resolve());
        child.on('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const url = /(http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out)![1]!;
      const token = /Token: (\S+)/.exec(out)![1]!;
      expect(out).toMatch(/curl -H "Authorization: Bearer \S+" http:\/\/127\.0\.0\.1:\d+\/v1\/players\/%23/);
      const res = await fetch(`${url}/events/rotation`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      S.EventRotation.parse(await res.json());
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('Simulated world stopped.');
  });
});
