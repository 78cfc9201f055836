/**
 * Every statistics endpoint of issue 3 over real HTTP, against the simulated world composed as in
 * production (sim → UpstreamClient → StatsService → HTTP). Bodies are compared with what the world
 * model says at the frozen virtual instant. Runs on SQLite, and on PostgreSQL with the cache on
 * Redis when they are configured (always in CI: worldBackends).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHttpServer } from '../src/http/server.ts';
import { buildGameFiles, toCsv } from '../src/http/gamedata.ts';
import { defineRoute, json, routeGroup } from '../src/http/route.ts';
import * as S from '../src/upstream/schemas.ts';
import { serve, type HttpClient } from './support/http.ts';
import { startWorld, worldBackends, type TestWorld, type WorldBackend } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe.each(worldBackends())('the HTTP API on $name', (backend: WorldBackend) => {
  let w: TestWorld;
  let http: HttpClient;

  beforeAll(async () => {
    w = await startWorld({ startMs: T0, ...backend.options, env: { RATE_LIMIT_FREE: '100000' } });
    const app = createHttpServer(w.core, { now: w.now });
    // A route declared with the helper the way the search endpoints will be, to pin the 422 bodies of
    // bounded and too-short parameters (no endpoint of this issue has bounds).
    await app.register(
      routeGroup('test-bounds', [
        defineRoute({
          method: 'GET',
          url: '/test/search',
          operationId: 'testSearch',
          summary: 'bounds',
          tags: ['Players'],
          query: {
            name: z.string().min(2),
            limit: z.int().min(1).max(250).default(50),
            offset: z.int().min(0).max(1000).default(0),
          },
          response: z.unknown(),
          handler: async ({ query }) => json(query),
        }),
      ]),
    );
    http = await serve(app);
  });

  afterAll(async () => {
    await http?.close();
    await w?.close();
  });

  describe('GET /', () => {
    it('names the service, its version, links, the credit line and the not-affiliated notice', async () => {
      const r = await http.get('/');
      expect(r.status).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({ name: 'Starr Stats', version: '1.2.0', links: { docs: '/docs', openapi: '/openapi.json' } });
      expect(body.credit).toMatch(/credit/i);
      expect(body.notice).toMatch(/not affiliated/i);
    });
  });

  describe('brawlers', () => {
    it('GET /brawlers lists the catalogue as the game API does', async () => {
      const r = await http.get('/brawlers');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = r.json();
      expect(body.items).toEqual(plain(w.sim.world.brawlers().map((b) => S.Brawler.parse(b))));
      expect(body.items.length).toBeGreaterThan(90);
    });

    it('GET /brawlers/{brawlerId} answers one brawler, 404 for an unknown id, 422 for a non-integer', async () => {
      const r = await http.get('/brawlers/16000001');
      expect(r.status).toBe(200);
      expect(r.json()).toEqual(plain(S.Brawler.parse(w.sim.world.brawler(16000001))));
      expect((await http.get('/brawlers/16000001.0')).json().id).toBe(16000001);

      const missing = await http.get('/brawlers/15999999');
      expect(missing.status).toBe(404);
      expect(missing.json()).toEqual({ detail: 'Brawler not found' });

      const bad = await http.get('/brawlers/shelly');
      expect(bad.status).toBe(422);
      expect(bad.json()).toEqual({
        detail: [
          {
            type: 'int_parsing',
            loc: ['path', 'brawlerId'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'shelly',
          },
        ],
      });
    });
  });

  describe('players', () => {
    it('GET /players/{tag} accepts %23TAG, TAG, any case and O for 0, and answers the player', async () => {
      const tag = w.sim.world.playerTag(7);
      const expected = plain(S.Player.parse(w.sim.world.player(tag, T0)));
      const bare = tag.slice(1);
      for (const spelling of [`%23${bare}`, bare, bare.toLowerCase(), `%23${bare.toLowerCase().replace(/0/g, 'o')}`]) {
        const r = await http.get(`/players/${spelling}`);
        expect(r.status, spelling).toBe(200);
        expect(r.json()).toEqual(expected);
      }
    });

    it('answers 404 for a well-formed tag nobody has, 422 on ["path","tag"] for an invalid one', async () => {
      const nobody = await http.get('/players/%23PPPPPPPPPPPP');
      expect(nobody.status).toBe(404);
      expect(nobody.json()).toEqual({ detail: 'Player not found' });

      const invalid = await http.get('/players/%23HELLO!');
      expect(invalid.status).toBe(422);
      expect(invalid.json()).toEqual({
        detail: [
          {
            type: 'value_error',
            loc: ['path', 'tag'],
            msg: 'Value error, A tag uses only the characters 0 2 8 9 P Y L Q G R J C U V (the letter O is read as zero).',
            input: '#HELLO!',
            ctx: { error: {} },
          },
        ],
      });
    });

    it('GET /players/{tag}/battlelog returns 25 battles by default and honours limit without bounds', async () => {
      const tag = w.sim.world.playerTag(7);
      const all = plain(S.BattleLog.parse(w.sim.world.battlelog(tag, T0))).items;
      expect(all.length).toBeGreaterThan(3);

      const byDefault = await http.get(`/players/${tag.slice(1)}/battlelog`);
      expect(byDefault.status).toBe(200);
      expect(byDefault.json().items).toEqual(all.slice(0, 25));

      expect((await http.get(`/players/${tag.slice(1)}/battlelog?limit=3`)).json().items).toEqual(all.slice(0, 3));
      expect((await http.get(`/players/${tag.slice(1)}/battlelog?limit=+2_0.00`)).json().items).toEqual(all.slice(0, 20));
      expect((await http.get(`/players/${tag.slice(1)}/battlelog?limit=0`)).json().items).toEqual([]);
      expect((await http.get(`/players/${tag.slice(1)}/battlelog?limit=-4`)).json().items).toEqual([]);
      expect((await http.get(`/players/${tag.slice(1)}/battlelog?limit=99999999999999999999`)).json().items).toEqual(all);
    });

    it('lists path and query problems together, path first', async () => {
      const r = await http.get('/players/%23!/battlelog?limit=2.5&limit=ten');
      expect(r.status).toBe(422);
      expect(r.json().detail.map((d: { loc: unknown; type: string; input: unknown }) => [d.loc, d.type, d.input])).toEqual([
        [['path', 'tag'], 'value_error', '#!'],
        [['query', 'limit'], 'int_parsing', 'ten'],
      ]);
    });
  });

  describe('clubs', () => {
    it('GET /clubs/{tag} answers the club with its members; 404 and 422 as for players', async () => {
      const tag = w.sim.world.clubTag(3);
      const r = await http.get(`/clubs/%23${tag.slice(1)}`);
      expect(r.status).toBe(200);
      expect(r.json()).toEqual(plain(S.Club.parse(w.sim.world.club(tag, T0))));
      expect((await http.get('/clubs/%23PPPPPPPPPPPP')).json()).toEqual({ detail: 'Club not found' });
      expect((await http.get('/clubs/x')).status).toBe(422);
    });
  });

  describe('rankings', () => {
    it('GET /rankings/{countryCode}/players uses the club ranking envelope; limit cuts from rank 1', async () => {
      const items = plain(w.sim.world.playerRankings('global', T0)!.map((i) => S.PlayerRankingItem.parse(i)));
      const r = await http.get('/rankings/global/players');
      expect(r.status).toBe(200);
      const body = r.json();
      expect(Object.keys(body)).toEqual(['region', 'timestamp', 'items']);
      expect(body).toEqual({ region: 'global', timestamp: Math.floor(T0 / 1000), items });
      expect((await http.get('/rankings/GLOBAL/players?limit=5')).json().items).toEqual(items.slice(0, 5));
    });

    it('GET /rankings/{countryCode}/clubs takes a country code in any case', async () => {
      const items = plain(w.sim.world.clubRankings('KR', T0)!.map((i) => S.ClubRankingItem.parse(i)));
      const body = (await http.get('/rankings/kr/clubs?limit=10')).json();
      expect(body).toEqual({ region: 'KR', timestamp: Math.floor(T0 / 1000), items: items.slice(0, 10) });
      for (const item of body.items) expect(Object.keys(item).sort()).toEqual(['badgeId', 'memberCount', 'name', 'rank', 'tag', 'trophies']);
    });

    it('GET /rankings/{countryCode}/brawlers/{brawlerId} ranks players by one brawler', async () => {
      const items = plain(w.sim.world.brawlerRankings('FR', 16000000, T0)!.map((i) => S.PlayerRankingItem.parse(i)));
      const body = (await http.get('/rankings/Fr/brawlers/16000000?limit=7')).json();
      expect(body).toEqual({ region: 'FR', timestamp: Math.floor(T0 / 1000), items: items.slice(0, 7) });
      expect((await http.get('/rankings/FR/brawlers/15999999')).json()).toEqual({ detail: 'Brawler not found' });
    });

    it('refuses anything but global or an ISO 3166-1 alpha-2 code, with every problem listed', async () => {
      const r = await http.get('/rankings/europe/brawlers/shelly?limit=top');
      expect(r.status).toBe(422);
      expect(r.json()).toEqual({
        detail: [
          {
            type: 'value_error',
            loc: ['path', 'countryCode'],
            msg: "Value error, countryCode must be 'global' or an ISO 3166-1 alpha-2 country code such as US or fr",
            input: 'europe',
            ctx: { error: {} },
          },
          {
            type: 'int_parsing',
            loc: ['path', 'brawlerId'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'shelly',
          },
          {
            type: 'int_parsing',
            loc: ['query', 'limit'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'top',
          },
        ],
      });
      expect((await http.get('/rankings/XX/clubs')).status).toBe(422);
      expect((await http.get('/rankings/UK/players')).status).toBe(422);
    });
  });

  describe('game data', () => {
    it('GET /game lists the CSV files with name, url, rows and update time', async () => {
      const r = await http.get('/game');
      expect(r.status).toBe(200);
      const { items } = r.json();
      expect(items.map((f: { name: string }) => f.name)).toEqual([
        'brawlers.csv',
        'star-powers.csv',
        'gadgets.csv',
        'hypercharges.csv',
        'gears.csv',
        'game-modes.csv',
      ]);
      const brawlers = w.sim.world.brawlers().map((b) => S.Brawler.parse(b));
      const rowsOf = (n: string) => items.find((f: { name: string }) => f.name === n).rows;
      expect(rowsOf('brawlers.csv')).toBe(brawlers.length);
      expect(rowsOf('star-powers.csv')).toBe(brawlers.reduce((n, b) => n + b.starPowers.length, 0));
      expect(rowsOf('gadgets.csv')).toBe(brawlers.reduce((n, b) => n + b.gadgets.length, 0));
      expect(rowsOf('game-modes.csv')).toBe(w.sim.world.gameModes().length);
      for (const f of items) {
        expect(f.url).toBe(`/game/${f.name}`);
        expect(Number.isNaN(Date.parse(f.updatedAt))).toBe(false);
      }
    });

    it('GET /game/{file} serves each file as text/csv with a header row and the listed row count', async () => {
      const { items } = (await http.get('/game')).json();
      for (const f of items) {
        const r = await http.get(f.url);
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
        const lines = r.text.split('\r\n').filter((l) => l !== '');
        expect(lines.length - 1).toBe(f.rows);
      }
      const csv = (await http.get('/game/brawlers.csv')).text;
      const shelly = S.Brawler.parse(w.sim.world.brawler(16000000));
      expect(csv.startsWith('id,name,starPowers,gadgets,hyperCharges,gears\r\n')).toBe(true);
      expect(csv).toContain(`\r\n16000000,SHELLY,${shelly.starPowers.length},${shelly.gadgets.length},`);
      expect((await http.get('/game/players.csv')).status).toBe(404);
    });
  });

  describe('game data files are rebuilt when the catalogue changes, and only then', () => {
    it('keeps updatedAt while the catalogue is the same, across a restart and a refetch', async () => {
      const before = (await http.get('/game')).json().items[0].updatedAt;
      w.clock.advance(3600_000);
      // A new core object is a new server process as far as the game files go: only the store remembers.
      const again = await serve(createHttpServer({ ...w.core }, { now: w.now }));
      try {
        const after = (await again.get('/game')).json().items;
        expect(after[0].updatedAt).toBe(before);
      } finally {
        await again.close();
      }
    });

    it('hashes the catalogue: another star power is another version with another file', () => {
      const brawlers = S.BrawlerList.parse({ items: w.sim.world.brawlers() });
      const modes = S.GameModeList.parse({ items: w.sim.world.gameModes() });
      const a = buildGameFiles(brawlers, modes);
      expect(buildGameFiles(S.BrawlerList.parse({ items: [...w.sim.world.brawlers()].reverse() }), modes).hash).toBe(a.hash);
      const changed = structuredClone(brawlers);
      changed.items[0]!.starPowers.push({ id: 23999999, name: 'NEW, "QUOTED"\nPOWER' });
      const b = buildGameFiles(changed, modes);
      expect(b.hash).not.toBe(a.hash);
      const sp = b.files.find((f) => f.name === 'star-powers.csv')!;
      expect(sp.rows).toBe(a.files.find((f) => f.name === 'star-powers.csv')!.rows + 1);
      expect(sp.csv).toContain(`23999999,"NEW, ""QUOTED""\nPOWER",${changed.items[0]!.id},`);
    });

    it('writes RFC 4180 CSV', () => {
      expect(toCsv(['a', 'b'], [[1, 'x,y'], [null, 'say "hi"']])).toBe('a,b\r\n1,"x,y"\r\n,"say ""hi"""\r\n');
    });
  });

  describe('validation bodies of bounded parameters (route helper)', () => {
    it('reports missing, wrong-typed, out-of-range and too-short parameters at once, in declaration order', async () => {
      const r = await http.get('/test/search?offset=1001&limit=0');
      expect(r.status).toBe(422);
      expect(r.json()).toEqual({
        detail: [
          { type: 'missing', loc: ['query', 'name'], msg: 'Field required', input: null },
          { type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } },
          {
            type: 'less_than_equal',
            loc: ['query', 'offset'],
            msg: 'Input should be less than or equal to 1000',
            input: '1001',
            ctx: { le: 1000 },
          },
        ],
      });
      const r2 = await http.get('/test/search?name=a&limit=251&offset=x');
      expect(r2.json()).toEqual({
        detail: [
          { type: 'string_too_short', loc: ['query', 'name'], msg: 'String should have at least 2 characters', input: 'a', ctx: { min_length: 2 } },
          { type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 250', input: '251', ctx: { le: 250 } },
          { type: 'int_parsing', loc: ['query', 'offset'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
        ],
      });
    });

    it('applies defaults, lax integers and Starlette query parsing (+ is a space, last value wins)', async () => {
      expect((await http.get('/test/search?name=ab')).json()).toEqual({ name: 'ab', limit: 50, offset: 0 });
      expect((await http.get('/test/search?name=a+b&limit=%2010%20&limit=7&offset=1_000')).json()).toEqual({
        name: 'a b',
        limit: 7,
        offset: 1000,
      });
      expect((await http.get('/test/search?name=%E2%82%AC%E2%82%AC&limit=')).json().detail).toEqual([
        { type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: '' },
      ]);
    });
  });

  describe('errors that are not validation', () => {
    it('answers unknown paths with 404 JSON and known paths with the wrong method with 405 JSON', async () => {
      const nf = await http.get('/players');
      expect(nf.status).toBe(404);
      expect(nf.json()).toEqual({ detail: 'Not Found' });
      expect(nf.headers['ratelimit-limit']).toBeDefined();

      const na = await http.call('DELETE', '/brawlers');
      expect(na.status).toBe(405);
      expect(na.headers.allow).toBe('GET, HEAD');
      expect(na.json()).toEqual({ detail: 'Method Not Allowed' });
      expect((await http.get('/generate-api-keys')).status).toBe(405);
    });

    it('explains how to send a name that was not percent-encoded (curl sends raw UTF-8)', async () => {
      const { port } = new URL(http.base);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(Buffer.from('GET /players/search?name=Тимур HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8')));
        let got = '';
        socket.on('data', (d) => (got += d.toString('utf8')));
        socket.on('end', () => resolve(got));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 /);
      const detail = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).detail as string;
      expect(detail).toMatch(/must be percent-encoded/);
      expect(detail).toContain('--data-urlencode');
    });

    it('lets any web page read the API (CORS) and answers preflights without counting them', async () => {
      // on every answer, so a shared cache never serves a browser a copy without them
      const plainGet = await http.get('/brawlers');
      expect(plainGet.headers['access-control-allow-origin']).toBe('*');

      const cross = await http.get('/brawlers', { origin: 'https://example.org' });
      expect(cross.status).toBe(200);
      expect(cross.headers['access-control-allow-origin']).toBe('*');
      expect(cross.headers['access-control-expose-headers']).toMatch(/RateLimit-Remaining.*ETag/);
      const remaining = Number(cross.headers['ratelimit-remaining']);

      const failed = await http.get('/players/%23NOPE!', { origin: 'https://example.org' });
      expect(failed.status).toBe(422);
      expect(failed.headers['access-control-allow-origin']).toBe('*');

      const pre = await http.call('OPTIONS', '/players/%23ABC/battlelog', {
        origin: 'https://example.org',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
      expect(pre.headers['access-control-allow-methods']).toBe('GET, HEAD');
      expect(pre.headers['access-control-allow-headers']).toMatch(/If-None-Match/);
      expect(pre.text).toBe('');
      expect(pre.headers['ratelimit-remaining']).toBeUndefined();

      expect((await http.call('OPTIONS', '/nowhere', { origin: 'https://example.org' })).status).toBe(404);
      // the preflights did not use up the limit: the next GET is counted right after the last one
      const next = await http.get('/brawlers', { origin: 'https://example.org' });
      expect(Number(next.headers['ratelimit-remaining'])).toBe(remaining - 2);
    });

    it('answers HEAD like GET without a body, and ignores a trailing slash', async () => {
      const head = await http.call('HEAD', '/brawlers');
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect((await http.get('/brawlers/')).status).toBe(200);
    });
  });
});
