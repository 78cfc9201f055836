/**
 * Contract test over real data: every body in ../shared/reference/upstream-captures (57 response
 * bodies of the official API that others saved in public repositories, 2021–2026) served on
 * 127.0.0.1 in place of api.brawlstars.com, to Starr Stats configured as a user with a token would
 * configure it (BRAWLSTARS_API_TOKEN + BRAWLSTARS_API_URL).
 *
 * - the client parses every capture of every path: no MalformedResponse, no field lost;
 * - the HTTP API answers every path it has a counterpart for, passing every captured field through,
 *   with the virtual clock at each capture's date, oldest first (so history records them in order);
 * - history holds the 16 consecutive daily profiles of #JRLLR9QU with exactly the changes between them;
 * - brawlers are named from what battles and profiles say, also the ones the catalogue lacks
 *   (BUZZ LIGHTYEAR on Minecart Madness, 2026 brawlers against a 2025 catalogue), in /maps/{id},
 *   best builds and the bot's /map, and a first sighting refreshes the catalogue;
 * - every picture of every captured player and club renders.
 *
 * The folder is read where it is; when it is absent the suite fails on CI (CI=true) and is skipped
 * with its reason otherwise.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../src/cli.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { HistoryService } from '../src/core/history.ts';
import { openCore, type OpenCore } from '../src/core/open.ts';
import { createHttpServer } from '../src/http/server.ts';
import { silentLogger } from '../src/log.ts';
import { CLUB_CHART_OPTIONS, CLUB_IMAGE_OPTIONS, PLAYER_CHART_OPTIONS, PLAYER_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import { pixelSize } from '../src/render/draw.ts';
import { UpstreamClient } from '../src/upstream/client.ts';
import { AccessDeniedError } from '../src/upstream/errors.ts';
import { parseApiTime } from '../src/upstream/schemas.ts';
import { CAPTURES_DIR, captureTime, loadCaptures, startCaptureServer, type CaptureServer, type Captures } from './support/captures.ts';
import { serve, type HttpClient } from './support/http.ts';

const captures = loadCaptures();
const MIN = 60_000;
const HISTORY_TAG = '#JRLLR9QU';

// ------------------------------------------------------------------ pure helpers of the test

/**
 * Where `got` lost or changed something `raw` has (paths). A `null` name may read as '' (the
 * client's documented reading of null game names); everything else must be there, equal.
 */
function lost(raw: unknown, got: unknown, path = ''): string[] {
  if (raw === null && got === '' && /(^|\.)name$/.test(path)) return [];
  if (Array.isArray(raw)) {
    if (!Array.isArray(got) || got.length !== raw.length) return [path || '(root)'];
    return raw.flatMap((r, i) => lost(r, got[i], `${path}[${i}]`));
  }
  if (raw !== null && typeof raw === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return [path || '(root)'];
    return Object.entries(raw).flatMap(([k, v]) => lost(v, (got as Record<string, unknown>)[k], path ? `${path}.${k}` : k));
  }
  return Object.is(raw, got) ? [] : [path || '(root)'];
}

interface Call {
  /** the client call that fetches this path */
  client(c: UpstreamClient): Promise<unknown>;
  /** the Starr Stats HTTP path that serves it, and what of its body holds the captured body */
  http?: { path: string; view(body: any): unknown; raw(captured: any): unknown };
}

const same = (x: unknown) => x;
const items = (x: any) => x.items;

/** The client call and HTTP counterpart of an official path (with query) as the manifest names it. */
function callOf(official: string): Call {
  const [path, query] = official.split('?');
  const q = new URLSearchParams(query ?? '');
  const page = query ? { ...(q.has('limit') ? { limit: Number(q.get('limit')) } : {}), ...(q.has('after') ? { after: q.get('after')! } : {}) } : undefined;
  const s = path!.split('/').slice(1);
  const tag = s[1] ? decodeURIComponent(s[1]) : '';
  // Starr Stats reads lists whole (the 200 of a ranking) and cuts them; cursor pages and the
  // members list (members come with the club) have no HTTP counterpart: the client reads them.
  const http = (p: string, view: (body: any) => unknown, raw: (captured: any) => unknown = same) => (page ? undefined : { path: p, view, raw });
  if (s[0] === 'players' && s.length === 2) return { client: (c) => c.player(tag), http: http(path!, same) };
  if (s[0] === 'players' && s[2] === 'battlelog') return { client: (c) => c.battlelog(tag), http: http(`${path}?limit=1000`, same) };
  if (s[0] === 'clubs' && s.length === 2) return { client: (c) => c.club(tag), http: http(path!, same) };
  if (s[0] === 'clubs' && s[2] === 'members') return { client: (c) => c.clubMembers(tag, page) };
  if (s[0] === 'rankings' && s[2] === 'players') return { client: (c) => c.playerRankings(s[1]!, page), http: http(path!, items, items) };
  if (s[0] === 'rankings' && s[2] === 'clubs') return { client: (c) => c.clubRankings(s[1]!, page), http: http(path!, items, items) };
  if (s[0] === 'rankings' && s[2] === 'brawlers') return { client: (c) => c.brawlerRankings(s[1]!, Number(s[3]), page), http: http(path!, items, items) };
  if (s[0] === 'brawlers' && s.length === 1) return { client: (c) => c.brawlers(page), http: http('/brawlers', same) };
  if (s[0] === 'brawlers' && s.length === 2) return { client: (c) => c.brawler(Number(s[1])), http: http(path!, same) };
  if (s[0] === 'events' && s[1] === 'rotation') return { client: (c) => c.eventRotation(), http: http('/events', (b) => b.active) };
  throw new Error(`no client call for ${official}`);
}

/** Brawler names as the captures give them, the latest sighting winning (battles at their battle time). */
function namesFromCaptures(c: Captures, when: Map<string, number>): Map<number, string> {
  const seen = new Map<number, { name: string; t: number }>();
  const see = (x: { id?: unknown; name?: unknown } | undefined, t: number) => {
    if (!x || typeof x.id !== 'number' || typeof x.name !== 'string' || x.name === '') return;
    const prev = seen.get(x.id);
    if (!prev || t >= prev.t) seen.set(x.id, { name: x.name, t });
  };
  for (const e of c.entries) {
    for (const v of e.versions) {
      const t = when.get(v.file);
      if (t === undefined) continue;
      const body = c.json(v.file) as any;
      if (e.path.endsWith('/battlelog')) {
        for (const item of body.items) {
          const b = item.battle;
          if (!b) continue;
          const bt = parseApiTime(item.battleTime);
          for (const p of [...(b.teams ?? []).flat(), ...(b.players ?? []), b.starPlayer, b.bigBrawler]) {
            if (!p) continue;
            see(p.brawler, bt);
            for (const x of p.brawlers ?? []) see(x, bt);
          }
        }
      } else if (/^\/players\/[^/]+$/.test(e.path)) {
        for (const b of body.brawlers) see(b, t);
      } else if (e.path === '/brawlers') {
        for (const b of body.items) see(b, t);
      }
    }
  }
  return new Map([...seen].map(([id, v]) => [id, v.name]));
}

/** A profile as history compares it: brawlers by id (their order in the body carries no meaning). */
const comparable = (p: any) => ({ ...p, brawlers: [...p.brawlers].sort((a: any, b: any) => a.id - b.id) });

// ------------------------------------------------------------------ the suite

if (!captures) {
  describe('real captured API bodies', () => {
    const reason = `the captures folder ${CAPTURES_DIR} is absent`;
    if (process.env.CI === 'true') {
      it('needs the captures on CI', () => {
        throw new Error(`${reason}; CI must check it out next to the repository`);
      });
    } else {
      // The reporter shows a skipped test's name only in verbose mode: say it on stderr too.
      console.warn(`upstream-captures: ${reason}; the contract test over real API bodies is skipped`);
      it('needs the captures folder (on CI, with CI=true, its absence fails instead)', (ctx) => ctx.skip(reason));
    }
  });
} else {
  describe('real captured API bodies', () => {
    const c = captures;
    let server: CaptureServer;
    let dir: string;
    let config: Config;
    let now = 0;
    const clock = () => now;
    let opened: OpenCore;
    let history: HistoryService;
    let http: HttpClient;
    let key = '';
    /** when each capture was served to the service (virtual time) */
    const servedAt = new Map<string, number>();
    /** /brawlers requests history made by itself when it met the Buzz Lightyear battle */
    let refreshesOnBuzz = -1;

    const get = (path: string) => http.get(path);

    beforeAll(async () => {
      server = await startCaptureServer(c);
      dir = mkdtempSync(join(tmpdir(), 'starr-captures-'));
      // As a user with a token configures it; the captures' server stands in for api.brawlstars.com.
      config = loadConfig({
        DATA_DIR: dir,
        BRAWLSTARS_API_TOKEN: server.token,
        BRAWLSTARS_API_URL: server.url,
        RATE_LIMIT_FREE: '100000',
        RATE_LIMIT_KEY: '100000',
        UPSTREAM_RPS: '1000',
      });
      now = captureTime('2021-01-01');
      opened = await openCore(config, { logger: silentLogger, now: clock, scrypt: { N: 1024, r: 8, p: 1 }, renderWorkers: 1 });
      history = opened.history;
      const keys = opened.keys;
      http = await serve(createHttpServer(opened.core, { now: clock }));
      key = (await keys.issue({ email: 'captures@example.com', password: 'password1', ip: '127.0.0.1' })).key;
    });

    afterAll(async () => {
      await http?.close();
      await opened?.close();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('has the captures the issue describes', () => {
      const bodies = c.entries.reduce((n, e) => n + e.versions.length, 0);
      expect(bodies).toBeGreaterThanOrEqual(57);
      expect(c.entries.find((e) => e.path === `/players/${encodeURIComponent(HISTORY_TAG)}`)!.versions).toHaveLength(16);
    });

    it('the client parses every capture of every path and keeps every field', async () => {
      const problems: string[] = [];
      let parsed = 0;
      for (const e of c.entries.filter((x) => !x.path.startsWith('ERROR:'))) {
        for (const [i, v] of e.versions.entries()) {
          server.select(e.path, i);
          try {
            const body = await callOf(e.path).client(opened.upstream);
            const missing = lost(c.json(v.file), body);
            if (missing.length > 0) problems.push(`${v.file}: lost ${missing.slice(0, 5).join(', ')}`);
            parsed++;
          } catch (err) {
            problems.push(`${v.file}: ${(err as Error).name}: ${(err as Error).message}`);
          }
        }
        server.select(e.path, e.versions.length - 1);
      }
      expect(problems).toEqual([]);
      expect(parsed).toBe(c.entries.filter((x) => !x.path.startsWith('ERROR:')).reduce((n, e) => n + e.versions.length, 0));
    });

    it('reads the captured accessDenied body as access denied', async () => {
      const denied = c.entries.find((e) => e.path === 'ERROR:missing-authorization')!;
      const body = c.json(denied.versions[0]!.file) as { reason: string; message: string };
      // A token the gateway cannot read counts as none: the captured body answers.
      const anonymous = new UpstreamClient({ baseUrl: server.url, tokens: [''], retries: 0 });
      try {
        const err = await anonymous.player(HISTORY_TAG).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AccessDeniedError);
        expect(err).toMatchObject({ status: denied.status, reason: body.reason, message: body.message });
      } finally {
        await anonymous.close();
      }
    });

    it('the HTTP API answers every path, oldest capture first, passing every captured field through', async () => {
      const steps = c.entries
        .filter((e) => !e.path.startsWith('ERROR:'))
        .flatMap((e) => e.versions.map((v, i) => ({ e, v, i, call: callOf(e.path) })))
        .filter((s) => s.call.http)
        .sort((a, b) => captureTime(a.v.date) - captureTime(b.v.date));
      // Captures of one date spread over its day (a month's over its 15th), in manifest order.
      const ofDate = new Map<string, number>();
      for (const s of steps) ofDate.set(s.v.date, (ofDate.get(s.v.date) ?? 0) + 1);
      const seen = new Map<string, number>();
      const timeOf = (date: string) => {
        const k = seen.get(date) ?? 0;
        seen.set(date, k + 1);
        const day = captureTime(date) - 12 * 60 * MIN;
        return day + Math.round(((k + 1) * 24 * 60 * MIN) / (ofDate.get(date)! + 1));
      };
      const clientOnly = c.entries.filter((e) => !e.path.startsWith('ERROR:') && !callOf(e.path).http).map((e) => e.path);
      expect(clientOnly.every((p) => p.includes('?') || p.endsWith('/members'))).toBe(true);

      const problems: string[] = [];
      let last = 0;
      for (const s of steps) {
        now = Math.max(timeOf(s.v.date), last + 10 * MIN);
        last = now;
        server.select(s.e.path, s.i);
        servedAt.set(s.v.file, now);
        const before = server.requests.filter((r) => r === '/v1/brawlers').length;
        const r = await get(s.call.http!.path);
        if (r.status !== 200) {
          problems.push(`${s.v.file}: GET ${s.call.http!.path} → ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
          continue;
        }
        const missing = lost(s.call.http!.raw(c.json(s.v.file)), s.call.http!.view(r.json()));
        if (missing.length > 0) problems.push(`${s.v.file}: GET ${s.call.http!.path} lost ${missing.slice(0, 5).join(', ')}`);
        await history.flush();
        if (s.v.file.includes('9V8LCUC0G')) {
          refreshesOnBuzz = server.requests.filter((x) => x === '/v1/brawlers').length - before;
        }
      }
      expect(problems).toEqual([]);
      for (const e of c.entries.filter((x) => !x.path.startsWith('ERROR:'))) server.select(e.path, e.versions.length - 1);
    });

    it('records the 16 daily profiles of #JRLLR9QU with exactly the changes between them', async () => {
      const entry = c.entries.find((e) => e.path === `/players/${encodeURIComponent(HISTORY_TAG)}`)!;
      const bodies = entry.versions.map((v) => ({ t: Math.floor(servedAt.get(v.file)! / 1000), p: c.json(v.file) as any }));
      // A poll that saw no change records nothing.
      const distinct = bodies.filter((b, i) => i === 0 || !isDeepStrictEqual(comparable(b.p), comparable(bodies[i - 1]!.p)));

      const h = await get(`/players/%23JRLLR9QU/history?api_key=${key}&limit=100`);
      expect(h.status).toBe(200);
      expect(h.json().items.map((s: any) => [s.timestamp, s.trophies, s.highestTrophies, s.expLevel, s.brawlerCount])).toEqual(
        [...distinct].reverse().map((b) => [b.t, b.p.trophies, b.p.highestTrophies, b.p.expLevel, b.p.brawlers.length]),
      );

      // The changes, computed here from the bodies themselves.
      const expected: unknown[] = [];
      for (let i = 1; i < distinct.length; i++) {
        const [a, b] = [distinct[i - 1]!, distinct[i]!];
        if (a.p.trophies !== b.p.trophies) expected.push({ type: 'trophies', timestamp: b.t, from: a.p.trophies, to: b.p.trophies });
        const had = new Map(a.p.brawlers.map((x: any) => [x.id, x]));
        for (const x of [...b.p.brawlers].sort((m: any, n: any) => m.id - n.id)) {
          const was: any = had.get(x.id);
          if (!was) expected.push({ type: 'brawlerUnlocked', timestamp: b.t, brawler: { id: x.id, name: x.name } });
          else {
            for (const [f, type] of [['power', 'powerUp'], ['rank', 'rankUp'], ['prestigeLevel', 'prestigeUp']] as const) {
              if ((x[f] ?? 0) > (was[f] ?? 0)) expected.push({ type, timestamp: b.t, brawler: { id: x.id, name: x.name }, from: was[f] ?? 0, to: x[f] });
            }
          }
        }
        expect(b.p.name).toBe(a.p.name);
        expect(b.p.club).toEqual(a.p.club);
      }
      const log = await get(`/players/%23JRLLR9QU/log?api_key=${key}&limit=1000`);
      expect(log.status).toBe(200);
      const got = log.json().items.map((e: any) => (e.type === 'trophies' ? { type: e.type, timestamp: e.timestamp, from: e.from, to: e.to } : e));
      const key_ = (e: any) => `${e.timestamp}|${e.type}|${e.brawler?.id ?? ''}`;
      expect([...got].sort((x, y) => key_(x).localeCompare(key_(y)))).toEqual([...expected].sort((x: any, y: any) => key_(x).localeCompare(key_(y))));
      expect(expected.length).toBeGreaterThan(20);

      const push = await get(`/players/%23JRLLR9QU/push?api_key=${key}`);
      expect(push.status).toBe(200);
      const newest = distinct.at(-1)!;
      expect(push.json().trophies).toBe(newest.p.trophies);
    });

    it('names every brawler in map statistics from battles and profiles, also those the catalogue lacks', async () => {
      const names = namesFromCaptures(c, servedAt);
      const maps = await get('/maps');
      expect(maps.status).toBe(200);
      const wrong: string[] = [];
      const named = new Map<number, string>();
      for (const m of maps.json().items as { id: number }[]) {
        const r = await get(`/maps/${m.id}`);
        expect(r.status).toBe(200);
        for (const s of r.json().stats as { brawler: { id: number; name: string } }[]) {
          named.set(s.brawler.id, s.brawler.name);
          if (s.brawler.name === '' || s.brawler.name !== names.get(s.brawler.id)) wrong.push(`map ${m.id}: ${s.brawler.id} "${s.brawler.name}"`);
        }
      }
      expect(wrong).toEqual([]);
      // The real cases of the issue: a limited brawler, and 2026 brawlers against a 2025 catalogue.
      const catalogue = c.json(c.entries.find((e) => e.path === '/brawlers')!.versions.at(-1)!.file) as { items: { id: number }[] };
      for (const [id, name] of [[16000088, 'BUZZ LIGHTYEAR'], [16000102, 'SIRIUS'], [16000099, 'PIERCE'], [16000106, 'BOLT'], [16000107, 'NORI']] as const) {
        expect(catalogue.items.some((b) => b.id === id)).toBe(false);
        expect(named.get(id)).toBe(name);
      }
      const buzz = (await get('/maps/15000122')).json();
      expect(buzz.name).toBe('Minecart Madness');
      expect(buzz.stats.find((s: any) => s.brawler.id === 16000088).brawler.name).toBe('BUZZ LIGHTYEAR');
      // Meeting it for the first time made history fetch the catalogue again, once.
      expect(refreshesOnBuzz).toBe(1);
    });

    it('answers best builds of brawlers only profiles name, with their latest name and their items named', async () => {
      // 16000101 was GLOWBERT in the March–April 2026 profiles and GLOWY in July's; no catalogue lists it.
      const r = await get(`/brawlers/16000101/bestbuild?api_key=${key}`);
      expect(r.status).toBe(200);
      const b = r.json();
      expect(b.brawler).toEqual({ id: 16000101, name: 'GLOWY' });
      // Only #JRLLR9QU has unlocked anything on it: MORE LUMENS! and PARASITISM (April 2026 profiles).
      expect(b.sampleSize).toBe(1);
      expect(b.gadgets.map((g: any) => [g.id, g.name])).toEqual([[23001184, 'MORE LUMENS!']]);
      expect(b.starPowers.map((g: any) => [g.id, g.name])).toEqual([[23001182, 'PARASITISM']]);
    });

    it('renders every picture of every captured player and club', { timeout: 600_000 }, async () => {
      const players = c.entries.filter((e) => /^\/players\/[^/]+$/.test(e.path)).map((e) => e.path.split('/')[2]!);
      const clubs = c.entries.filter((e) => /^\/clubs\/[^/?]+$/.test(e.path)).map((e) => e.path.split('/')[2]!);
      expect(players.length).toBe(3);
      expect(clubs.length).toBe(1);
      const jobs: [string, { width: number; height: number }][] = [];
      for (const p of players) {
        for (const [o, spec] of Object.entries(PLAYER_IMAGE_OPTIONS)) jobs.push([`/players/${p}/image?option=${o}&quality=low`, pixelSize(spec.size.width, spec.size.height, 'low')]);
        for (const o of Object.keys(PLAYER_CHART_OPTIONS)) jobs.push([`/players/${p}/chart?option=${o}`, { width: 1200, height: 675 }]);
      }
      for (const t of clubs) {
        for (const [o, spec] of Object.entries(CLUB_IMAGE_OPTIONS)) jobs.push([`/clubs/${t}/image?option=${o}&quality=low`, pixelSize(spec.size.width, spec.size.height, 'low')]);
        for (const o of Object.keys(CLUB_CHART_OPTIONS)) jobs.push([`/clubs/${t}/chart?option=${o}`, { width: 1200, height: 675 }]);
      }
      const bad: string[] = [];
      for (const [path, size] of jobs) {
        const r = await get(path);
        if (r.status !== 200 || r.headers['content-type'] !== 'image/png') {
          bad.push(`${path}: ${r.status} ${r.body.toString('utf8').slice(0, 120)}`);
          continue;
        }
        const png = PNG.sync.read(r.body);
        if (png.width !== size.width || png.height !== size.height) bad.push(`${path}: ${png.width}×${png.height}`);
      }
      expect(bad).toEqual([]);
      expect(jobs.length).toBeGreaterThanOrEqual(60);
    });

    it("the bot's /map names the brawlers the catalogue lacks, across restarts of `starr try`", { timeout: 180_000 }, async () => {
      const run = async (text: string, data: string) => {
        const out: string[] = [];
        const io: CliIo = {
          out: (s) => out.push(s),
          err: (s) => out.push(s),
          env: { DATA_DIR: data, LOG_LEVEL: 'silent', POLLER: 'false', BRAWLSTARS_API_TOKEN: server.token, BRAWLSTARS_API_URL: server.url },
          cwd: dir,
        };
        const code = await main(['try', text], io);
        return { code, text: out.join('\n') };
      };
      // A fresh data folder: one run looks the player up (recording its battles), the next reads the map.
      const fresh = join(dir, 'bot');
      const looked = await run('/player tag:#2QRVLCGGR view:battlelog', fresh);
      expect(looked.code, looked.text).toBe(0);
      const skull = await run('/map name:Skull Creek', fresh);
      expect(skull.code, skull.text).toBe(0);
      // The list shows the 12 best of the brawlers played there: NORI (16000107, July 2026) among them.
      expect(skull.text).toContain('**Nori**');
      expect(skull.text).not.toContain('****');
      // Over everything this suite recorded: the limited brawler of 2024-12-24.
      const minecart = await run('/map name:Minecart Madness', dir);
      expect(minecart.code, minecart.text).toBe(0);
      expect(minecart.text).toContain('**Buzz Lightyear**');
      expect(minecart.text).not.toContain('****');
    });
  });
}
