/**
 * GET /clubs/{tag}/activity over real HTTP on each backend (PostgreSQL when DATABASE_URL is set):
 * premium gating, validation like the rest of the API, the JSON shape, gains measured against the
 * simulated world, members whose battle log is not recorded shown as null, thresholds and sorting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClubActivity } from '../src/core/history-schemas.ts';
import { createHttpServer } from '../src/http/server.ts';
import { backfill, clubsOf } from '../src/poller/backfill.ts';
import type { Club } from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { backends } from './support/stores.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 3, 15, 0, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(backends().map((b) => b.name))('club activity API on %s', (backend) => {
  let w: TestWorld;
  let http: HttpClient;
  let key = '';
  let club = '';
  let polled: string[] = [];
  const path = () => `/clubs/${encodeURIComponent(club)}/activity`;

  beforeAll(async () => {
    w = await startWorld({ startMs: T0, players: 200, clubs: 10, postgres: backend === 'postgres', env: { RATE_LIMIT_KEY: '100000' } });
    for (let i = 0; !club; i++) club = clubsOf(w.sim.world, [w.sim.world.playerTag(i)], T0)[0] ?? '';
    const members = (w.sim.world.club(club, T0) as Club).members.map((m) => m.tag);
    polled = members.slice(0, 3);
    await backfill({ world: w.sim.world, store: w.historyStore, days: 10, nowMs: T0, playerTags: polled, clubTags: [club], playerEveryMs: HOUR, clubEveryMs: HOUR, rotation: false });
    http = await serve(createHttpServer(w.core, { now: w.now }));
    key = (await w.core.keys.issue({ email: 'activity@example.com', password: 'password1', ip: '127.0.0.1' })).key;
  }, 120_000);
  afterAll(async () => {
    await http?.close();
    await w?.close();
  });

  it('is premium: 422 on ["query","api_key"] without a key, 401 with an unknown one', async () => {
    const r = await http.get(path());
    expect(r.status).toBe(422);
    expect(r.json().detail).toEqual([{ type: 'missing', loc: ['query', 'api_key'], msg: 'Field required', input: null }]);
    expect((await http.get(`${path()}?api_key=${'0'.repeat(40)}`)).status).toBe(401);
  });

  it('validates days, sort and thresholds like the rest of the API, and 404s an unknown club', async () => {
    const r = await http.get(`${path()}?api_key=${key}&days=0&sort=name&maxIdleDays=91`);
    expect(r.status).toBe(422);
    expect(r.json().detail.map((d: { type: string; loc: string[] }) => [d.type, d.loc])).toEqual([
      ['greater_than_equal', ['query', 'days']],
      ['literal_error', ['query', 'sort']],
      ['less_than_equal', ['query', 'maxIdleDays']],
    ]);
    expect((await http.get(`${path()}?api_key=${key}&days=x`)).json().detail[0]).toMatchObject({ type: 'int_parsing', loc: ['query', 'days'] });
    const gone = await http.get(`/clubs/%23PPPPPPPPPPPP/activity?api_key=${key}`);
    expect(gone.status).toBe(404);
    expect(gone.json()).toEqual({ detail: 'Club not found' });
  });

  it('answers every member with gains from recorded history, battles where the battle log is recorded, inactivity first', async () => {
    const r = await http.get(`${path()}?api_key=${key}`);
    expect(r.status).toBe(200);
    const a = ClubActivity.parse(r.json());
    const recordedNow = (await w.historyStore.currentState('club', club))!;
    expect(a).toMatchObject({ tag: club, days: 7, to: Math.floor(T0 / 1000), from: Math.floor(T0 / 1000) - 7 * 86_400, sort: 'inactivity', tracked: true });
    expect(a.coverage).toMatchObject({ recordedFrom: Math.floor((T0 - 10 * DAY) / 1000), days: 7, share: 1, battlesRecorded: polled.length });
    expect(a.members.map((m) => m.tag).sort()).toEqual(Object.keys(recordedNow.state.members as object).sort());

    const before = new Map((w.sim.world.club(club, T0 - 7 * DAY) as Club).members.map((m) => [m.tag, m.trophies]));
    for (const m of a.members) {
      if (m.joined === null && before.has(m.tag)) expect(m.gained, m.tag).toBe(m.trophies - before.get(m.tag)!);
      expect(m.battles === null, m.tag).toBe(!polled.includes(m.tag));
    }
    const withBattles = a.members.filter((m) => m.battles !== null);
    expect(withBattles.reduce((n, m) => n + m.battles!, 0)).toBeGreaterThan(0);
    const idle = a.members.map((m) => m.inactiveDays ?? -1);
    expect(idle).toEqual([...idle].sort((x, y) => y - x));
  });

  it("measures linked players' gains and battles over a period from their own recordings (the members' gain boards)", async () => {
    const since = T0 - 3 * DAY;
    const gains = await w.core.history.playerGains([...polled, '#PPPPPPPPPPPP'], since, T0 - HOUR);
    expect(gains.map((g) => g.tag).sort()).toEqual([...polled].sort());
    for (const g of gains) {
      const then = w.sim.world.player(g.tag, since) as { trophies: number };
      const end = w.sim.world.player(g.tag, T0 - HOUR) as { trophies: number };
      expect(g.trophies, g.tag).toBe(end.trophies);
      expect(g.gained, g.tag).toBe(end.trophies - then.trophies);
      expect(g.battles, g.tag).toBe((await w.historyStore.playerBattles(g.tag, { sinceMs: since, untilMs: T0 - HOUR })).length);
    }
  });

  it('flags members below the thresholds asked for and sorts as asked', async () => {
    const a = ClubActivity.parse((await http.get(`${path()}?api_key=${key}&days=3&minGain=100000&maxIdleDays=1&sort=gain`)).json());
    expect(a.thresholds).toEqual({ minGain: 100000, maxIdleDays: 1 });
    expect(a.days).toBe(3);
    for (const m of a.members) {
      expect(m.flags.includes('lowGain'), m.tag).toBe(m.gained !== null);
      expect(m.flags.includes('inactive'), m.tag).toBe(m.inactiveDays !== null && m.inactiveDays >= 1);
    }
    const gains = a.members.filter((m) => m.gained !== null).map((m) => m.gained!);
    expect(gains.length).toBeGreaterThan(0);
    expect(gains).toEqual([...gains].sort((x, y) => y - x));
  });
});
