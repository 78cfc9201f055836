/**
 * UpstreamClient over real HTTP against the simulated world: every endpoint, paging, every error
 * reason, retries, Retry-After, token rotation, malformed bodies, timeouts, dropped connections.
 * A recording proxy in front of the sim counts the requests that reach upstream and shows which
 * token each used. Back-off and budget waits run on a virtual clock, so nothing sleeps for real.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import type { UpstreamClock } from '../src/upstream/budget.ts';
import { UpstreamClient, ipFromMessage, parseRetryAfter, type UpstreamClientOptions } from '../src/upstream/client.ts';
import {
  AccessDeniedError,
  BadRequestError,
  MaintenanceError,
  MalformedResponseError,
  NotFoundError,
  ThrottledError,
  UnavailableError,
} from '../src/upstream/errors.ts';
import * as S from '../src/upstream/schemas.ts';
import { InvalidTagError } from '../src/upstream/tags.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';

const T0 = Date.UTC(2026, 10, 20, 18, 30, 0);
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

let sim: SimServer;
let proxy: RecordingProxy;
const clients: UpstreamClient[] = [];

/** Virtual time for back-off and budget waits; `onSleep` runs before a sleep returns. */
function virtualClock(onSleep?: (ms: number) => void): UpstreamClock & { t: number; slept: number[] } {
  const c = {
    t: T0,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number) => {
      c.slept.push(ms);
      c.t += ms;
      onSleep?.(ms);
    },
  };
  return c;
}

function client(opts: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const c = new UpstreamClient({ baseUrl: proxy.url, tokens: [sim.token], kind: 'simulated', rps: 1000, clock: virtualClock(), ...opts });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  sim = await startSim({ seed: 'client', players: 400, clubs: 40, clock: new SimClock(T0) });
  proxy = await startRecordingProxy(sim.url);
});

afterEach(async () => {
  sim.faults.reset();
  proxy.intercept = null;
  proxy.requests.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

/** A club with more than 10 members at T0, for paging. */
function bigClub(): string {
  for (let c = 0; c < sim.world.clubCount; c++) {
    const tag = sim.world.clubTag(c);
    if ((sim.world.clubMembers(tag, T0) ?? []).length > 10) return tag;
  }
  throw new Error('no club with more than 10 members');
}

describe('every endpoint', () => {
  it('player, battlelog and club match the world, whatever the tag spelling', async () => {
    const c = client();
    const tag = sim.world.playerTag(7);
    const typed = `%23${tag.slice(1).toLowerCase()}`;
    expect(plain(await c.player(typed))).toEqual(plain(S.Player.parse(sim.world.player(tag, T0))));
    expect(plain(await c.battlelog(tag.slice(1)))).toEqual(plain(S.BattleLog.parse(sim.world.battlelog(tag, T0))));
    const club = sim.world.clubTag(3);
    expect(plain(await c.club(club))).toEqual(plain(S.Club.parse(sim.world.club(club, T0))));
    expect(proxy.requests.map((r) => r.path)).toEqual([
      `/v1/players/%23${tag.slice(1)}`,
      `/v1/players/%23${tag.slice(1)}/battlelog`,
      `/v1/clubs/%23${club.slice(1)}`,
    ]);
  });

  it('rankings (players, clubs, brawlers) for global and a country', async () => {
    const c = client();
    const players = await c.playerRankings('global');
    expect(plain(players.items)).toEqual(plain(sim.world.playerRankings('global', T0)));
    expect(players.items).toHaveLength(200);
    const country = sim.world.countryCodes[0]!;
    expect(plain((await c.clubRankings(country)).items)).toEqual(plain(sim.world.clubRankings(country, T0)));
    const brawlerId = (sim.world.brawlers()[0] as { id: number }).id;
    expect(plain((await c.brawlerRankings(country, brawlerId)).items)).toEqual(plain(sim.world.brawlerRankings(country, brawlerId, T0)));
  });

  it('brawlers, one brawler, event rotation and game modes', async () => {
    const c = client();
    expect(plain((await c.brawlers()).items)).toEqual(plain(sim.world.brawlers().map((b) => S.Brawler.parse(b))));
    const id = (sim.world.brawlers()[5] as { id: number }).id;
    expect(plain(await c.brawler(id))).toEqual(plain(S.Brawler.parse(sim.world.brawler(id))));
    expect(plain(await c.eventRotation())).toEqual(plain(S.EventRotation.parse(sim.world.eventRotation(T0))));
    expect((await c.gameModes()).items.length).toBe(sim.world.gameModes().length);
  });

  it('rejects an invalid tag before calling upstream', async () => {
    const c = client();
    await expect(c.player('#ABC/../x')).rejects.toBeInstanceOf(InvalidTagError);
    expect(proxy.requests).toHaveLength(0);
  });

  it('tolerates the historical quirks of upstream bodies', async () => {
    sim.faults.set({ quirkRate: 1 });
    const c = client();
    const log = await c.battlelog(sim.world.playerTag(11));
    expect(log.items.some((i) => i.battle === undefined)).toBe(true);
    const names = log.items.flatMap((i) => [...(i.battle?.players ?? []), ...(i.battle?.teams ?? []).flat()].map((p) => p.brawler?.name));
    expect(names).toContain('');
  });
});

describe('paging', () => {
  it('walks club members with limit/after and back with before', async () => {
    const c = client();
    const tag = bigClub();
    const all = (await c.clubMembers(tag)).items;
    const pages: S.ClubMembers[] = [];
    let after: string | undefined;
    do {
      const p = await c.clubMembers(tag, { limit: 4, after });
      pages.push(p);
      after = p.paging.cursors.after;
    } while (after);
    expect(pages.flatMap((p) => p.items)).toEqual(all);
    expect(pages[0]!.paging.cursors.before).toBeUndefined();
    const back = await c.clubMembers(tag, { limit: 4, before: pages[1]!.paging.cursors.before });
    expect(back.items).toEqual(pages[0]!.items);
  });

  it('rankings pages continue where the previous ended', async () => {
    const c = client();
    const p1 = await c.playerRankings('global', { limit: 30 });
    const p2 = await c.playerRankings('global', { limit: 30, after: p1.paging.cursors.after });
    expect(p1.items.map((i) => i.rank)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(p2.items[0]!.rank).toBe(31);
  });
});

describe('error reasons', () => {
  it('404 notFound → NotFoundError, not retried', async () => {
    const c = client();
    const err = await c.player('#2PP2PP2PP2').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, reason: 'notFound' });
    expect(proxy.requests).toHaveLength(1);
  });

  it('400 badRequest (a hand-made cursor) → BadRequestError', async () => {
    const c = client();
    const err = await c.playerRankings('global', { after: '30' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, reason: 'badRequest' });
  });

  it('403 accessDenied for a bad token; accessDenied.invalidIp keeps the IP from the message', async () => {
    const bad = client({ tokens: ['not-a-token'] });
    await expect(bad.eventRotation()).rejects.toMatchObject({ constructor: AccessDeniedError, status: 403, reason: 'accessDenied', message: 'Invalid authorization' });
    const elsewhere = client({ tokens: [sim.issueToken({ ips: ['203.0.113.7'] })] });
    const err = (await elsewhere.eventRotation().catch((e: unknown) => e)) as AccessDeniedError;
    expect(err).toBeInstanceOf(AccessDeniedError);
    expect(err.reason).toBe('accessDenied.invalidIp');
    expect(err.ip).toBe('127.0.0.1');
    expect(proxy.requests).toHaveLength(2);
  });

  it('503 inMaintenance → MaintenanceError at once, never retried in a loop', async () => {
    sim.faults.set({ maintenance: true });
    const clock = virtualClock();
    const c = client({ retries: 5, clock });
    const err = await c.player(sim.world.playerTag(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MaintenanceError);
    expect(err).toMatchObject({ status: 503, reason: 'inMaintenance' });
    expect(proxy.requests).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('the overload body without a reason counts as throttled', async () => {
    sim.faults.set({ overloadRate: 1 });
    const c = client({ retries: 0 });
    const err = await c.eventRotation().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect(err).toMatchObject({ status: 503, reason: 'overloaded', message: 'API at maximum capacity, request throttled.' });
  });

  it('500 unknownException → retried, then UnavailableError', async () => {
    sim.faults.set({ errorRate: 1 });
    const clock = virtualClock();
    const c = client({ retries: 2, clock, random: () => 0.5 });
    const err = await c.brawlers().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ status: 500, reason: 'unknownException' });
    expect(proxy.requests).toHaveLength(3);
    // Exponential back-off with jitter: half the base plus a random share of the other half.
    expect(clock.slept).toEqual([187.5, 375]);
  });

  it('a 2xx body that is not JSON, or of the wrong shape → MalformedResponseError, not retried', async () => {
    const c = client({ retries: 3 });
    sim.faults.set({ malformedRate: 1, malformedKind: 'truncated' });
    await expect(c.player(sim.world.playerTag(2))).rejects.toMatchObject({ constructor: MalformedResponseError, reason: 'notJson' });
    sim.faults.set({ malformedKind: 'wrongShape' });
    await expect(c.player(sim.world.playerTag(2))).rejects.toMatchObject({ constructor: MalformedResponseError, reason: 'schema' });
    await expect(c.clubMembers(sim.world.clubTag(2))).rejects.toBeInstanceOf(MalformedResponseError);
    await expect(c.eventRotation()).rejects.toBeInstanceOf(MalformedResponseError);
    expect(proxy.requests).toHaveLength(4);
  });
});

describe('retries', () => {
  it('a 5xx then success: one back-off, two requests, the answer', async () => {
    sim.faults.set({ errorRate: 1 });
    const clock = virtualClock(() => sim.faults.reset());
    const c = client({ retries: 2, clock });
    const tag = sim.world.playerTag(4);
    expect((await c.player(tag)).tag).toBe(tag);
    expect(proxy.requests).toHaveLength(2);
    expect(clock.slept).toHaveLength(1);
  });

  it('a dropped connection is retried; with every connection dropped → UnavailableError(connection)', async () => {
    sim.faults.set({ resetRate: 1 });
    const c = client({ retries: 1 });
    await expect(c.eventRotation()).rejects.toMatchObject({ constructor: UnavailableError, status: 0, reason: 'connection' });
    expect(proxy.requests).toHaveLength(2);

    proxy.requests.length = 0;
    const healing = client({ retries: 1, clock: virtualClock(() => sim.faults.reset()) });
    sim.faults.set({ resetRate: 1 });
    expect(await healing.eventRotation()).toHaveLength(sim.world.eventRotation(T0).length);
    expect(proxy.requests).toHaveLength(2);
  });

  it('a timeout is retried; when every attempt times out → UnavailableError(timeout)', async () => {
    // Upstream never answers, and each attempt's timeout fires when the test says: a real 100 ms
    // timer let a busy machine time out the healed attempt too.
    const deadlines = new ManualSchedule();
    proxy.intercept = () => 'hold';
    const c = client({ retries: 1, timeoutMs: 100, schedule: deadlines.schedule });
    const failing = c.brawler(16000000);
    for (let n = 1; n <= 2; n++) {
      await proxy.received(n);
      expect(deadlines.pending).toEqual([100]);
      deadlines.fire();
    }
    await expect(failing).rejects.toMatchObject({ constructor: UnavailableError, status: 0, reason: 'timeout' });
    expect(proxy.requests).toHaveLength(2);

    proxy.requests.length = 0;
    const healing = client({ retries: 1, timeoutMs: 100, schedule: deadlines.schedule, clock: virtualClock(() => (proxy.intercept = null)) });
    proxy.intercept = () => 'hold';
    const healed = healing.brawler(16000000);
    await proxy.received(1);
    expect(deadlines.fire()).toBe(1);
    expect((await healed).id).toBe(16000000);
    expect(proxy.requests).toHaveLength(2);
    expect(deadlines.pending).toEqual([]);
  });
});

describe('a request with a time budget (a user waiting)', () => {
  it('does not wait out a Retry-After longer than its budget: one attempt, the throttle reported', async () => {
    sim.faults.set({ throttleRate: 1, retryAfterSeconds: 7 });
    const clock = virtualClock();
    const c = client({ retries: 2, clock });
    await expect(c.eventRotation({ budgetMs: 2_500 })).rejects.toMatchObject({ constructor: ThrottledError, retryAfterSeconds: 7 });
    expect(proxy.requests).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('retries only while a retry can start within the budget', async () => {
    sim.faults.set({ errorRate: 1 });
    // back-offs are 125–250 ms, then 250–500 ms: the first fits in 300 ms, the second does not
    const clock = virtualClock();
    const c = client({ retries: 2, clock, random: () => 0 });
    await expect(c.eventRotation({ budgetMs: 300 })).rejects.toMatchObject({ constructor: UnavailableError, status: 500 });
    expect(proxy.requests).toHaveLength(2);
    expect(clock.slept).toEqual([125]);

    proxy.requests.length = 0;
    await expect(client({ retries: 2, clock: virtualClock(), random: () => 0 }).eventRotation()).rejects.toMatchObject({ status: 500 });
    expect(proxy.requests).toHaveLength(3);
  });
});

describe('throttling and tokens', () => {
  it('429 waits out Retry-After on the virtual clock, then succeeds', async () => {
    sim.faults.set({ throttleRate: 1, retryAfterSeconds: 7 });
    const clock = virtualClock(() => sim.faults.reset());
    const c = client({ retries: 2, clock });
    const started = clock.t;
    expect((await c.eventRotation()).length).toBeGreaterThan(0);
    expect(proxy.requests).toHaveLength(2);
    expect(clock.t - started).toBeGreaterThanOrEqual(7_000);
    expect(c.budgetState().tokens[0]).toMatchObject({ throttled: 1 });
  });

  it('a Retry-After longer than a user can wait → ThrottledError with it, no second request', async () => {
    sim.faults.set({ throttleRate: 1, retryAfterSeconds: 120 });
    const c = client({ retries: 3, timeoutMs: 5_000 });
    const err = await c.eventRotation().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).retryAfterSeconds).toBe(120);
    expect(proxy.requests).toHaveLength(1);
  });

  it('spreads requests over the tokens round-robin', async () => {
    const tokens = [sim.token, sim.issueToken(), sim.issueToken()];
    const c = client({ tokens });
    for (let i = 0; i < 9; i++) await c.brawler(16000000);
    expect(proxy.requests.map((r) => tokens.indexOf(r.token))).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2]);
  });

  it('skips a token upstream throttled until its penalty ends', async () => {
    const tokens = [sim.token, sim.issueToken(), sim.issueToken()];
    const clock = virtualClock();
    const c = client({ tokens, clock });
    let throttledOnce = false;
    proxy.intercept = (r) => {
      if (r.token !== tokens[1] || throttledOnce) return undefined;
      throttledOnce = true;
      return { status: 429, headers: { 'retry-after': '30' }, body: { reason: 'requestThrottled' } };
    };
    for (let i = 0; i < 8; i++) await c.brawler(16000000);
    const used = proxy.requests.map((r) => tokens.indexOf(r.token));
    // The second request hit token 1, was throttled, and went out again on token 2.
    expect(used.slice(0, 3)).toEqual([0, 1, 2]);
    expect(used.slice(3)).not.toContain(1);
    expect(proxy.requests).toHaveLength(9);

    clock.t += 30_001;
    proxy.requests.length = 0;
    for (let i = 0; i < 3; i++) await c.brawler(16000000);
    expect(proxy.requests.map((r) => tokens.indexOf(r.token))).toContain(1);
  });
});

describe('connections', () => {
  it('keeps connections alive and never opens more than the pool allows', async () => {
    const before = proxy.connections();
    sim.faults.set({ latency: { minMs: 20, maxMs: 20 } });
    const c = client({ connections: 2 });
    await Promise.all(Array.from({ length: 12 }, () => c.brawler(16000000)));
    for (let i = 0; i < 6; i++) await c.brawler(16000000);
    expect(proxy.requests).toHaveLength(18);
    expect(proxy.connections() - before).toBeLessThanOrEqual(2);
  });
});

describe('helpers', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('finds the caller IP in an invalidIp message', () => {
    expect(ipFromMessage('Invalid authorization: API key does not allow access from IP 203.0.113.7')).toBe('203.0.113.7');
    expect(ipFromMessage('Invalid authorization: API key does not allow access from IP 2001:db8::1')).toBe('2001:db8::1');
    expect(ipFromMessage('Invalid authorization')).toBeUndefined();
  });
});
