/**
 * What nobody captured from the official API (test/upstream-captures.test.ts covers what was), from
 * the simulated world in the shapes reference/upstream-api.md gives, through the HTTP API: a club
 * whose members all left (`members: []`, `memberCount: 0` in the club ranking) and a player without
 * a club (`"club": {}`). Both answer, pass through as the API shaped them, and draw their pictures.
 */
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/server.ts';
import { CLUB_CHART_OPTIONS, CLUB_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import type { Club, Player } from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 10, 23, 12);
let w: TestWorld;
let http: HttpClient;
let key = '';

beforeAll(async () => {
  // Fewer players than club places: the weakest clubs have nobody left in them.
  w = await startWorld({ startMs: T0, players: 20, clubs: 30, env: { RATE_LIMIT_FREE: '100000', RATE_LIMIT_KEY: '100000' } });
  http = await serve(createHttpServer(w.core, { now: w.now }));
  key = (await w.keys.issue({ email: 'uncaptured@example.com', password: 'password1', ip: '127.0.0.1' })).key;
});

afterAll(async () => {
  await http?.close();
  await w?.close();
});

describe('bodies nobody captured, in the reference shapes', () => {
  it('a club without members: its body, its ranking entry, its log and every picture', async () => {
    const empty = Array.from({ length: 30 }, (_, i) => w.sim.world.club(w.sim.world.clubTag(i), T0) as unknown as Club).find((c) => c.members.length === 0)!;
    expect(empty).toBeDefined();
    const tag = encodeURIComponent(empty.tag);
    const body = await http.get(`/clubs/${tag}`);
    expect(body.status).toBe(200);
    expect(body.json()).toMatchObject({ tag: empty.tag, members: [], trophies: 0 });
    const ranking = (await http.get('/rankings/global/clubs')).json().items.find((c: { tag: string }) => c.tag === empty.tag);
    expect(ranking).toMatchObject({ memberCount: 0, trophies: 0 });
    const log = await http.get(`/clubs/${tag}/log?api_key=${key}`);
    expect(log.status).toBe(200);
    expect(log.json().items).toEqual([]);
    for (const o of Object.keys(CLUB_IMAGE_OPTIONS)) {
      const r = await http.get(`/clubs/${tag}/image?option=${o}&quality=low`);
      expect([o, r.status, r.headers['content-type']]).toEqual([o, 200, 'image/png']);
      PNG.sync.read(r.body);
    }
    for (const o of Object.keys(CLUB_CHART_OPTIONS)) {
      const r = await http.get(`/clubs/${tag}/chart?option=${o}`);
      expect([o, r.status, r.headers['content-type']]).toEqual([o, 200, 'image/png']);
    }
  });

  it('a player without a club: "club": {} passes through, and the profile picture draws', async () => {
    const lone = Array.from({ length: 20 }, (_, i) => w.sim.world.player(w.sim.world.playerTag(i), T0) as unknown as Player).find((p) => JSON.stringify(p.club) === '{}')!;
    expect(lone).toBeDefined();
    const r = await http.get(`/players/${encodeURIComponent(lone.tag)}`);
    expect(r.status).toBe(200);
    expect(r.json().club).toEqual({});
    const image = await http.get(`/players/${encodeURIComponent(lone.tag)}/image?option=1&quality=low`);
    expect([image.status, image.headers['content-type']]).toEqual([200, 'image/png']);
    const history = await http.get(`/players/${encodeURIComponent(lone.tag)}/history?api_key=${key}`);
    expect(history.json().items[0].club).toBeNull();
  });
});
