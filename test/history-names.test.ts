/**
 * Brawlers the catalogue does not list, over real HTTP: the simulated world behind a proxy whose
 * `/brawlers` leaves one brawler out (a limited brawler, or one released since the catalogue was
 * fetched). Battles and profiles name it: /maps/{id} and the best build show its name, the name
 * survives a restart, and its first sighting refreshes the catalogue once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE_REFRESH_GAP_MS } from '../src/core/history.ts';
import { createHttpServer } from '../src/http/server.ts';
import { Poller } from '../src/poller/index.ts';
import { BattleLog, type Brawler } from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startRecordingProxy, type RecordingProxy } from './support/recording-proxy.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 3, 15, 0, 0);
const MIN = 60_000;
const PLAYERS = 12;

let w: TestWorld;
let proxy: RecordingProxy | undefined;
let key = '';
/** the brawler the served catalogue leaves out, and a map it was played on in ranked battles */
let missing: { id: number; name: string; mapId: number };

/** The HTTP API and the poller over the world's core; `close` ends them. */
interface Running {
  http: HttpClient;
  poller: Poller;
  close(): Promise<void>;
}

async function start(): Promise<Running> {
  const http = await serve(createHttpServer(w.core, { now: w.now }));
  const poller = new Poller({ stats: w.stats, history: w.history, config: w.config, clock: { now: w.now, sleep: async () => {} }, pinTopPlayers: 0 });
  return {
    http,
    poller,
    async close() {
      await poller.stop();
      await http.close();
    },
  };
}

const catalogueCalls = () => proxy!.requests.filter((r) => r.path.split('?')[0] === '/v1/brawlers').length;

beforeAll(async () => {
  w = await startWorld({
    startMs: T0,
    seed: 'names',
    players: 200,
    clubs: 20,
    env: { RANKING_COUNTRIES: '', RATE_LIMIT_FREE: '100000', RATE_LIMIT_KEY: '100000' },
    through: async (sim) => {
      // The brawler most picked in the ranked battles the tracked players' logs show.
      const picks = new Map<string, number>();
      for (let i = 0; i < PLAYERS; i++) {
        for (const item of BattleLog.parse(sim.world.battlelog(sim.world.playerTag(i), T0)).items) {
          const b = item.battle;
          if (!b || item.event.id <= 0 || !['ranked', 'soloRanked', 'teamRanked'].includes(b.type ?? '')) continue;
          for (const p of [...(b.teams?.flat() ?? []), ...(b.players ?? [])]) {
            for (const x of p.brawlers ?? (p.brawler ? [p.brawler] : [])) {
              const k = `${x.id}|${x.name}|${item.event.id}`;
              picks.set(k, (picks.get(k) ?? 0) + 1);
            }
          }
        }
      }
      const [id, name, mapId] = [...picks].sort((a, b) => b[1] - a[1])[0]![0].split('|');
      missing = { id: Number(id), name: name!, mapId: Number(mapId) };

      const p = await startRecordingProxy(sim.url);
      proxy = p;
      const catalogue = (sim.world.brawlers() as unknown as Brawler[]).filter((b) => b.id !== missing.id);
      p.intercept = (r) => (r.path.split('?')[0] === '/v1/brawlers' ? { status: 200, body: { items: catalogue, paging: { cursors: {} } } } : undefined);
      return p.url;
    },
  });
  key = (await w.keys.issue({ email: 'names@example.com', password: 'password1', ip: '127.0.0.1' })).key;
});

afterAll(async () => {
  await w?.close();
  await proxy?.close();
});

describe('a brawler the catalogue does not list', () => {
  it('is named in map statistics and best builds from battles and profiles, and refreshes the catalogue once', async () => {
    const run = await start();
    try {
      for (let i = 0; i < PLAYERS; i++) await w.history.renew('player', w.sim.world.playerTag(i));
      // First tick: the catalogue job, then every tracked player's profile and battle log.
      await run.poller.runOnce();
      await w.history.flush();
      // The job fetched the catalogue, and the missing brawler's first sighting fetched it again.
      expect(catalogueCalls()).toBe(2);

      const map = await run.http.get(`/maps/${missing.mapId}`);
      expect(map.status).toBe(200);
      const row = map.json().stats.find((s: { brawler: { id: number } }) => s.brawler.id === missing.id);
      expect(row.brawler).toEqual({ id: missing.id, name: missing.name });
      expect(map.json().stats.every((s: { brawler: { name: string } }) => s.brawler.name !== '')).toBe(true);

      const build = await run.http.get(`/brawlers/${missing.id}/bestbuild?api_key=${key}`);
      expect(build.status, build.text).toBe(200);
      expect(build.json().brawler).toEqual({ id: missing.id, name: missing.name });
      // a brawler nobody ever named stays unknown
      expect((await run.http.get(`/brawlers/16999999/bestbuild?api_key=${key}`)).status).toBe(404);

      // Later polls see the same brawler again: it is no longer news, the catalogue is not asked.
      w.clock.advance(CATALOGUE_REFRESH_GAP_MS + 30 * MIN);
      await run.poller.runOnce();
      await w.history.flush();
      expect(catalogueCalls()).toBe(2);
    } finally {
      await run.close();
    }
  });

  it('keeps its name across a restart', async () => {
    await w.restart();
    const run = await start();
    try {
      const map = await run.http.get(`/maps/${missing.mapId}`);
      const row = map.json().stats.find((s: { brawler: { id: number } }) => s.brawler.id === missing.id);
      expect(row.brawler.name).toBe(missing.name);
    } finally {
      await run.close();
    }
  });
});
