/**
 * Steady under trouble: what an HTTP client sees when the game's API misbehaves, one fault kind of
 * the simulated world at a time (429 with Retry-After, a hang, dropped connections, 500s,
 * maintenance). A player with a last good copy comes back as that copy, marked stale (X-Cache,
 * Warning, Age), JSON and picture alike; one without gets a 503 with Retry-After. No clocks are
 * read: the tests count the requests that reached the world, and the hang is held by the test, so
 * "the stale answer came before upstream answered" is a fact, not a measurement.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import type { FaultConfig } from '../src/sim/index.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { serve, type HttpAnswer, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const TTL_MS = 120_000;

let w: TestWorld;
let http: HttpClient;
let bot: BotHarness;

beforeAll(async () => {
  // the production waits (startWorld relaxes them for other suites)
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '1000000', UPSTREAM_STALE_WAIT_MS: '1000', UPSTREAM_USER_BUDGET_MS: '2500' } });
  http = await serve(createHttpServer(w.core, { now: w.now }));
  bot = await startBotHarness(w.core, { transport: 'http', config: { STARR_SECRET: 'trouble-test-secret-value' } });
});

afterEach(async () => {
  w.sim.faults.reset();
  // a refresh the test left hanging ends when the hang is lifted; let it land before the next test
  await vi.waitFor(() => expect(w.stats.stats().refreshing).toBe(0), { timeout: 10_000 });
  // past the core's memory of failures (virtual time) and the token's Retry-After (real time)
  w.clock.advance(60_000);
  await vi.waitFor(() => expect(w.upstream.budgetState().tokens.every((t) => t.penaltyUntil <= Date.now())).toBe(true), { timeout: 10_000 });
});

afterAll(async () => {
  await bot?.close();
  await http?.close();
  await w?.close();
});

let nextPlayer = 0;
const newTag = () => encodeURIComponent(w.sim.world.playerTag(nextPlayer++));
/**
 * Until the refreshes that outlived their reads have landed. A hang guard, not a speed check:
 * vi.waitFor's default 1 s is shorter than a refresh's real back-offs take on a busy machine.
 */
const refreshesDone = () => vi.waitFor(() => expect(w.stats.stats().refreshing).toBe(0), { timeout: 60_000 });

/** requests of the official paths that reached the simulated world so far */
const reached = () => w.sim.faults.requests;

function expectStale(r: HttpAnswer, ageSeconds: number, reasons: string[]): void {
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(r.headers['x-cache']).toBe('STALE');
  expect(r.headers.warning).toBe('110 - "Response is Stale"');
  expect(r.headers.age).toBe(String(ageSeconds));
  expect(r.headers['cache-control']).toBe('public, max-age=0');
  expect(reasons).toContain(r.headers['x-stale-reason']);
}

/** A player looked up once while upstream was well, then left to go out of date. */
async function cachedThenOutdated(): Promise<{ tag: string; body: string }> {
  const tag = newTag();
  const first = await http.get(`/players/${tag}`);
  expect(first.status).toBe(200);
  expect(first.headers['x-cache']).toBeUndefined();
  // the picture too, drawn once while the copy is fresh
  const picture = await http.get(`/players/${tag}/image?option=1&quality=low`);
  expect(picture.status).toBe(200);
  expect(picture.headers['x-cache']).toBeUndefined();
  w.clock.advance(TTL_MS + 1_000);
  return { tag, body: first.text };
}

interface Case {
  fault: Partial<FaultConfig>;
  /** X-Stale-Reason when upstream's failure arrives before the stale wait ends ('slow' after it) */
  reason: string;
  /** requests that reach the world for one user's read: retries included, a Retry-After too long to wait for not */
  attempts: number;
  /** and for the read of something never cached, after that */
  attemptsWithoutCopy: number;
  /** Retry-After of the 503 without a copy */
  retryAfter: RegExp;
}

const CASES: Record<string, Case> = {
  // the token sits out the 3 s upstream asked for: the read without a copy does not even ask
  '429 with Retry-After: 3': {
    fault: { throttleRate: 1, retryAfterSeconds: 3 },
    reason: 'throttled',
    attempts: 1,
    attemptsWithoutCopy: 0,
    retryAfter: /^[1-3]$/,
  },
  'dropped connections': { fault: { resetRate: 1 }, reason: 'unavailable', attempts: 3, attemptsWithoutCopy: 3, retryAfter: /^30$/ },
  '500 unknownException': { fault: { errorRate: 1 }, reason: 'unavailable', attempts: 3, attemptsWithoutCopy: 3, retryAfter: /^30$/ },
};

describe('a user reading while upstream fails', () => {
  it.each(Object.entries(CASES))('%s: the last good copy, stale, JSON and picture; a 503 without one', async (_name, c) => {
    const { tag, body } = await cachedThenOutdated();
    w.sim.faults.set(c.fault);

    let before = reached();
    const stale = await http.get(`/players/${tag}`);
    expectStale(stale, 121, [c.reason, 'slow']);
    expect(stale.text).toBe(body);
    await refreshesDone();
    expect(reached() - before).toBe(c.attempts);

    // the failure is remembered for a while: the next readers get the copy without asking again
    before = reached();
    const again = await http.get(`/players/${tag}`);
    expectStale(again, 121, [c.reason]);
    const picture = await http.get(`/players/${tag}/image?option=1&quality=low`);
    expectStale(picture, 121, [c.reason]);
    expect(picture.headers['content-type']).toBe('image/png');
    expect(reached() - before).toBe(0);

    // nothing cached: a 503 that says when to come back, after the same attempts
    before = reached();
    const none = await http.get(`/players/${newTag()}`);
    expect(none.status).toBe(503);
    expect(none.json().detail).toMatch(/no cached copy/);
    expect(none.headers['retry-after']).toMatch(c.retryAfter);
    expect(reached() - before).toBe(c.attemptsWithoutCopy);
  });

  it('maintenance: the copy at once, and upstream is left alone while it lasts', async () => {
    const { tag, body } = await cachedThenOutdated();
    w.sim.faults.set({ maintenance: true });

    const before = reached();
    const stale = await http.get(`/players/${tag}`);
    expectStale(stale, 121, ['maintenance', 'slow']);
    expect(stale.text).toBe(body);
    const picture = await http.get(`/players/${tag}/image?option=1&quality=low`);
    expectStale(picture, 121, ['maintenance']);
    const none = await http.get(`/players/${newTag()}`);
    expect(none.status).toBe(503);
    expect(none.json().detail).toMatch(/maintenance/);
    expect(none.headers['retry-after']).toBe('120');
    // one request saw the maintenance; nobody asked again during it
    expect(reached() - before).toBe(1);
  });

  it('a hang: the copy comes while upstream still holds the request; one request for every reader', async () => {
    const { tag, body } = await cachedThenOutdated();
    w.sim.faults.set({ hang: true });

    const before = reached();
    const readers = await Promise.all([
      http.get(`/players/${tag}`),
      http.get(`/players/${tag}`),
      http.get(`/players/${tag}/image?option=1&quality=low`),
    ]);
    // "slow": the copy was served while the refresh had not settled, and the world had not
    // answered it (the hang is still on)
    expectStale(readers[0]!, 121, ['slow']);
    expect(w.sim.faults.current().hang).toBe(true);
    for (const r of readers) expectStale(r, 121, ['slow', 'unavailable']);
    expect(readers[0]!.text).toBe(body);
    expect(readers[2]!.headers['content-type']).toBe('image/png');
    // a reader after the stale answer, while the refresh still hangs, shares it too
    const later = await http.get(`/players/${tag}`);
    expectStale(later, 121, ['slow', 'unavailable']);
    expect(reached() - before).toBe(1);

    // upstream answers at last: the refresh lands, and the next read is fresh without asking again
    w.sim.faults.set({ hang: false });
    await refreshesDone();
    const settled = reached();
    const next = await http.get(`/players/${tag}`);
    expect(next.status).toBe(200);
    if (next.headers['x-cache'] === undefined) {
      // the held request was answered before the client's budget ran out: a fresh copy
      expect(next.headers.age).toBe('0');
    } else {
      // it gave up first: the failure is remembered and the copy served without a new request
      expectStale(next, 121, ['unavailable']);
    }
    expect(reached()).toBe(settled);
  });

  it('a hang with nothing cached: a 503 from one request the world never answered', async () => {
    w.sim.faults.set({ hang: true });
    const before = reached();
    const none = await http.get(`/players/${newTag()}`);
    expect(none.status).toBe(503);
    expect(none.json().detail).toMatch(/unavailable/);
    expect(none.headers['retry-after']).toBe('30');
    expect(reached() - before).toBe(1);
    // the world still had it: the answer did not wait for upstream
    expect(w.sim.faults.current().hang).toBe(true);
  });

  it('recovers: once the failure has passed, reads are fresh again', async () => {
    const { tag } = await cachedThenOutdated();
    w.sim.faults.set({ errorRate: 1 });
    expectStale(await http.get(`/players/${tag}`), 121, ['unavailable', 'slow']);
    await refreshesDone();
    w.sim.faults.reset();
    w.clock.advance(11_000);
    const before = reached();
    const fresh = await http.get(`/players/${tag}`);
    expect(fresh.status).toBe(200);
    expect(fresh.headers['x-cache']).toBeUndefined();
    expect(fresh.headers.age).toBe('0');
    expect(reached() - before).toBe(1);
  });
});

describe('a Discord member reading while upstream hangs', () => {
  it('/player answers with the saved copy and says so while the world still holds the request', async () => {
    const { tag, body } = await cachedThenOutdated();
    const name = JSON.parse(body).name as string;
    // the brawler catalogue the profile counts from is fresh: only the player is asked for
    await w.stats.brawlers();
    w.sim.faults.set({ hang: true });
    const before = reached();
    const rec = await bot.send(bot.fake.commandInteraction(`/player tag:${decodeURIComponent(tag)}`, { guild: bot.guild }));
    const m = bot.fake.answer(rec);
    expect(m.content).toMatch(/^⚠️ Saved copy from .*: the game's API is not answering\.$/);
    expect(m.embeds[0]!.title).toContain(name);
    expect(m.attachments).toHaveLength(1);
    expect(w.sim.faults.current().hang).toBe(true);
    expect(reached() - before).toBe(1);
  });

  it('/player of someone never seen gets a short reply, from one request the world never answered', async () => {
    w.sim.faults.set({ hang: true });
    const before = reached();
    const rec = await bot.send(bot.fake.commandInteraction(`/player tag:${decodeURIComponent(newTag())}`, { guild: bot.guild }));
    const m = bot.fake.answer(rec);
    expect(m.embeds[0]!.title).toBe('The game is not answering');
    expect(m.ephemeral).toBe(true);
    expect(reached() - before).toBe(1);
  });
});

describe('polling while upstream fails', () => {
  it('keeps its retries where a user would have been answered at once', async () => {
    const tag = decodeURIComponent(newTag());
    w.sim.faults.set({ throttleRate: 1, retryAfterSeconds: 1 });
    const before = reached();
    await expect(w.stats.player(tag, { fresh: true, priority: 'poll', viewed: false })).rejects.toMatchObject({ kind: 'throttled' });
    // the first attempt and both retries, each after the Retry-After a user is not made to wait for
    expect(reached() - before).toBe(3);
  });
});
