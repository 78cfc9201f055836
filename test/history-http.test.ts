/**
 * The history endpoints over real HTTP: search (bounds, ranking, tags fetched from upstream),
 * premium gating (422 without a key, 401 with an invalid one), history of a player seen for the
 * first time, events with predictions, maps and their statistics, best builds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import { backfill, clubsOf, samplePlayers } from '../src/poller/backfill.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { foldName, matchClass } from '../src/store/search-fold.ts';
import type { Player } from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 3, 15, 0, 0);
const enc = (tag: string) => encodeURIComponent(tag);

describe('history endpoints', () => {
  let w: TestWorld;
  let store: HistoryStore;
  let http: HttpClient;
  let key = '';
  let sample: string[] = [];

  beforeAll(async () => {
    w = await startWorld({ startMs: T0, players: 300, clubs: 30, env: { RATE_LIMIT_FREE: '100000', RATE_LIMIT_KEY: '100000' } });
    store = w.historyStore;
    sample = samplePlayers(w.sim.world, 6);
    await backfill({
      world: w.sim.world,
      store,
      days: 2,
      nowMs: T0,
      playerTags: sample,
      clubTags: clubsOf(w.sim.world, sample, T0),
      playerEveryMs: 30 * 60_000,
      clubEveryMs: 60 * 60_000,
    });
    http = await serve(createHttpServer(w.core, { now: w.now }));
    key = (await w.core.keys.issue({ email: 'history@example.com', password: 'password1', ip: '127.0.0.1' })).key;
  });
  afterAll(async () => {
    await http?.close();
    await w?.close();
  });

  describe('search', () => {
    it('validates name, limit and offset like the interface says', async () => {
      const r = await http.get('/players/search?name=a&limit=0&offset=1001');
      expect(r.status).toBe(422);
      expect(r.json().detail.map((d: { type: string; loc: string[] }) => [d.type, d.loc])).toEqual([
        ['string_too_short', ['query', 'name']],
        ['greater_than_equal', ['query', 'limit']],
        ['less_than_equal', ['query', 'offset']],
      ]);
      expect((await http.get('/clubs/search')).json().detail[0]).toMatchObject({ type: 'missing', loc: ['query', 'name'] });
      expect((await http.get('/players/search?name=ab&limit=251')).status).toBe(422);
    });

    it('finds players seen in battle logs by any spelling of their name, best match first', async () => {
      const name = (w.sim.world.player(sample[0]!, T0) as Player).name;
      const shouted = name.toUpperCase();
      const r = await http.get(`/players/search?name=${encodeURIComponent(shouted)}`);
      expect(r.status).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({ limit: 50, offset: 0 });
      expect(body.items[0]).toMatchObject({ tag: sample[0], name, match: 'exact' });
      expect(body.total).toBeGreaterThanOrEqual(body.items.length);
      const ranks = ['exact', 'prefix', 'word', 'substring'];
      const order = body.items.map((i: { match: string }) => ranks.indexOf(i.match));
      expect(order).toEqual([...order].sort((a: number, b: number) => a - b));
      for (const i of body.items) expect(ranks[matchClass(foldName(i.name), foldName(shouted))!]).toBe(i.match);
    });

    it('answers a tag with that player, fetched from upstream when never seen', async () => {
      const tag = w.sim.world.playerTag(250);
      expect(await store.entity('player', tag)).toBeNull();
      const r = await http.get(`/players/search?name=${enc(tag)}`);
      expect(r.status).toBe(200);
      expect(r.json().items[0]).toMatchObject({ tag, name: w.sim.world.playerName(250), match: 'tag' });
      // now indexed (and tracked: it was looked up)
      expect((await store.entity('player', tag))!.name).toBe(w.sim.world.playerName(250));
      const club = w.sim.world.clubTag(29);
      const c = await http.get(`/clubs/search?name=${enc(club)}`);
      expect(c.json()).toMatchObject({ total: 1, items: [{ tag: club, match: 'tag' }] });
    });
  });

  describe('premium gating', () => {
    const tag = '%232PP0GQ9LU';
    const premium = [`/players/${tag}/history`, `/players/${tag}/log`, `/players/${tag}/push`, `/clubs/${tag}/history`, `/clubs/${tag}/log`, '/brawlers/16000000/bestbuild'];

    it('answers 422 on ["query","api_key"] without a key', async () => {
      for (const path of premium) {
        const r = await http.get(path);
        expect(r.status, path).toBe(422);
        expect(r.json().detail, path).toEqual([{ type: 'missing', loc: ['query', 'api_key'], msg: 'Field required', input: null }]);
      }
    });

    it('answers 401 for a key that does not exist', async () => {
      for (const path of premium) {
        const r = await http.get(`${path}?api_key=${'0'.repeat(40)}`);
        expect(r.status, path).toBe(401);
      }
    });
  });

  describe('players and clubs', () => {
    it('gives a backfilled player its snapshots, newest first, and its log', async () => {
      const tag = sample[1]!;
      const r = await http.get(`/players/${enc(tag)}/history?api_key=${key}&limit=5`);
      expect(r.status).toBe(200);
      const body = r.json();
      expect(body.tag).toBe(tag);
      expect(body.items.length).toBe(5);
      const times = body.items.map((s: { timestamp: number }) => s.timestamp);
      expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
      expect(body.items[0].trophies).toBe((w.sim.world.player(tag, times[0] * 1000) as Player).trophies);
      const log = await http.get(`/players/${enc(tag)}/log?api_key=${key}`);
      expect(log.status).toBe(200);
      expect(Array.isArray(log.json().items)).toBe(true);
      const push = await http.get(`/players/${enc(tag)}/push?api_key=${key}`);
      expect(push.json()).toMatchObject({ tag, trophies: body.items[0].trophies });
    });

    it('answers a player seen for the first time with what exists, and tracks it', async () => {
      const tag = w.sim.world.playerTag(200);
      const r = await http.get(`/players/${enc(tag)}/log?api_key=${key}`);
      expect(r.status).toBe(200);
      expect(r.json()).toMatchObject({ tag, tracked: true, items: [] });
      const h = (await http.get(`/players/${enc(tag)}/history?api_key=${key}`)).json();
      expect(h.items.length).toBe(1);
      expect(h.trackedUntil).toBeGreaterThan(T0 / 1000);
      const club = w.sim.world.clubTag(20);
      const c = await http.get(`/clubs/${enc(club)}/log?api_key=${key}`);
      expect(c.json()).toMatchObject({ tag: club, tracked: true, items: [] });
    });

    it('answers 404 for a tag nobody has', async () => {
      const r = await http.get(`/players/%23${'2'.repeat(9)}/history?api_key=${key}`);
      expect(r.status).toBe(404);
      expect(r.json()).toEqual({ detail: 'Player not found' });
    });

    it('gives club snapshots with members', async () => {
      const club = clubsOf(w.sim.world, sample, T0)[0]!;
      const r = (await http.get(`/clubs/${enc(club)}/history?api_key=${key}&limit=2`)).json();
      expect(r.items.length).toBe(2);
      expect(r.items[0].memberCount).toBe(r.items[0].members.length);
    });
  });

  describe('events and maps', () => {
    it('lists the active events and predicts the next one per slot from the recorded rotation', async () => {
      const r = await http.get('/events');
      expect(r.status).toBe(200);
      const body = r.json();
      expect(body.active.map((e: { slotId: number }) => e.slotId)).toEqual((w.sim.world.eventRotation(T0) as { slotId: number }[]).map((e) => e.slotId));
      expect(body.active.every((e: { predicted: boolean }) => !e.predicted)).toBe(true);
      expect(body.upcoming.length).toBeGreaterThan(0);
      for (const u of body.upcoming) {
        const current = body.active.find((e: { slotId: number }) => e.slotId === u.slotId);
        expect(u.predicted).toBe(true);
        expect(u.startTime).toBe(current.endTime);
      }
    });

    it('lists maps seen and gives per-brawler statistics of one, 404 for an unknown id', async () => {
      const maps = (await http.get('/maps')).json().items;
      expect(maps.length).toBeGreaterThan(5);
      const counts = await Promise.all(maps.map(async (m: { id: number }) => (await http.get(`/maps/${m.id}`)).json()));
      const busiest = counts.sort((a, b) => b.battles - a.battles)[0];
      expect(busiest.battles).toBeGreaterThan(0);
      const stat = busiest.stats[0];
      expect(stat).toMatchObject({ brawler: { id: expect.any(Number), name: expect.any(String) } });
      expect(stat.brawler.name).not.toBe('');
      expect(busiest.stats.some((s: { smallSample: boolean }) => s.smallSample)).toBe(true);
      const missing = await http.get('/maps/15999999');
      expect(missing.status).toBe(404);
      expect(missing.json()).toEqual({ detail: 'Map not found' });
      expect((await http.get('/maps/abc')).status).toBe(422);
    });

    it('gives best builds of a brawler from the recorded top players', async () => {
      const top = w.sim.world.player(sample[0]!, T0) as Player;
      const brawler = [...top.brawlers].sort((a, b) => b.trophies - a.trophies)[0]!;
      const r = await http.get(`/brawlers/${brawler.id}/bestbuild?api_key=${key}`);
      expect(r.status).toBe(200);
      const body = r.json();
      expect(body.brawler).toEqual({ id: brawler.id, name: brawler.name });
      expect(body.sampleSize).toBeGreaterThan(0);
      const owned = brawler.gadgets.map((g) => g.id);
      expect(body.gadgets.some((g: { id: number }) => owned.includes(g.id))).toBe(true);
      expect((await http.get(`/brawlers/16999999/bestbuild?api_key=${key}`)).status).toBe(404);
    });
  });
});
