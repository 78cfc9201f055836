/**
 * The HTTP face of the simulated world: the official `/v1` paths with the official bodies, paging,
 * error bodies and authentication (reference/upstream-api.md §17), plus the control endpoints
 * `/_sim/faults`, `/_sim/clock`, `/_sim/players/{tag}/icon` and `/_sim/players/{tag}/club` for a
 * standalone server (same bearer
 * token).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { TAG_ALPHABET } from '../upstream/tags.ts';
import { plainIp, type SimKeys } from './auth.ts';
import type { SimClock } from './clock.ts';
import { FaultUpdate, malform, type Faults } from './faults.ts';
import { decodeCursor, page, type PageRequest } from './paging.ts';
import { applyQuirks } from './quirks.ts';
import type { RequestLog } from './request-log.ts';
import { CLUB_MEMBER_ROLES, RANKING_SIZE, type ClubMemberRole, type World } from './world.ts';
import type { Schedule } from '../lib/schedule.ts';

type Json = unknown;

interface Answer {
  status: number;
  body: Json;
  headers?: Record<string, string>;
  /** Cache-Control max-age of a success */
  maxAge?: number;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message ?? body.reason));
  }
}

const notFound = (message: string) => new ApiError(404, { reason: 'notFound', message });
const badRequest = (message: string) => new ApiError(400, { reason: 'badRequest', message });

export interface SimDeps {
  world: World;
  clock: SimClock;
  faults: Faults;
  keys: SimKeys;
  /** every request of the official paths, as it arrives */
  log: RequestLog;
  /** ends injected latencies */
  schedule: Schedule;
}

export function createSimServer(deps: SimDeps): Server {
  const server = createServer((req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { status: 500, body: { reason: 'unknownException' } });
      else res.destroy(err as Error);
    });
  });
  // Idle connections stay open until the client closes them (a pool does, after its own idle
  // timeout). A server-side idle close races a client that reuses the connection after a pause:
  // under `npm run test:stress` a test that computed for over 5 s between two requests got
  // ECONNRESET on the second.
  server.keepAliveTimeout = 0;
  return server;
}

async function handle(deps: SimDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim.local');
  const ip = plainIp(req.socket.remoteAddress ?? '');
  const denied = deps.keys.check(req.headers.authorization, ip);

  if (url.pathname.startsWith('/_sim/')) {
    if (denied) return send(res, { status: denied.status, body: denied.body });
    return control(deps, req, res, url);
  }
  deps.log.record(url.pathname + url.search, req.headers['user-agent']);
  if (denied) return send(res, { status: denied.status, body: denied.body });

  const fate = deps.faults.decide(url.pathname);
  const { delayMs } = fate;
  let { decision } = fate;
  if (delayMs > 0) await new Promise<void>((resolve) => deps.schedule(delayMs, resolve));
  if (decision.kind === 'reset') {
    req.socket.destroy();
    return;
  }
  if (decision.kind === 'hang') {
    const gaveUp = new AbortController();
    res.once('close', () => gaveUp.abort());
    await deps.faults.hold(gaveUp.signal);
    if (gaveUp.signal.aborted) return;
    decision = { kind: 'pass', malformed: null };
  }
  if (decision.kind === 'status') {
    return send(res, { status: decision.status, body: decision.body, headers: decision.headers });
  }
  let answer: Answer;
  try {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw notFound('Not found');
    answer = route(deps, url);
  } catch (e) {
    if (e instanceof ApiError) answer = { status: e.status, body: e.body };
    else throw e;
  }
  if (answer.status === 200 && decision.malformed) {
    return sendRaw(res, 200, malform(JSON.stringify(answer.body), decision.malformed), answer);
  }
  if (answer.status === 200 && decision.quirks) answer = { ...answer, body: applyQuirks(url.pathname, answer.body, decision.quirks) };
  send(res, answer);
}

function send(res: ServerResponse, a: Answer): void {
  sendRaw(res, a.status, JSON.stringify(a.body), a);
}

/** Every error of the gateway is cacheable for 10 minutes (reference/upstream-api.md §10): faults and refusals too. */
const ERROR_MAX_AGE = 600;

function sendRaw(res: ServerResponse, status: number, text: string, a: Answer): void {
  const body = Buffer.from(text, 'utf8');
  const maxAge = a.maxAge ?? (status >= 400 ? ERROR_MAX_AGE : undefined);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(body.length),
    'X-Content-Type-Options': 'nosniff',
    ...(maxAge !== undefined ? { 'Cache-Control': `public max-age=${maxAge}` } : {}),
    ...(a.headers ?? {}),
  });
  res.end(body);
}

// ---------------------------------------------------------------- routes

function route(deps: SimDeps, url: URL): Answer {
  const { world, clock } = deps;
  const at = clock.now();
  const parts = url.pathname.split('/').slice(1);
  if (parts[0] !== 'v1') throw notFound('Not found');
  const [a, b, c, d, e] = parts.slice(1).map((p) => p);
  const ok = (body: Json, maxAge = 60): Answer => ({ status: 200, body, maxAge });

  if (a === 'players' && b !== undefined && d === undefined) {
    const tag = pathTag(b);
    if (c === undefined) return ok(world.player(tag, at) ?? throwNotFound(b));
    if (c === 'battlelog') return ok(world.battlelog(tag, at) ?? throwNotFound(b));
  }
  if (a === 'clubs' && b !== undefined && d === undefined) {
    const tag = pathTag(b);
    if (c === undefined) return ok(world.club(tag, at) ?? throwNotFound(b));
    if (c === 'members') {
      const req = pageRequest(url, Infinity);
      return ok(page(world.clubMembers(tag, at) ?? throwNotFound(b), req), 120);
    }
  }
  if (a === 'rankings' && b !== undefined && c !== undefined) {
    const req = pageRequest(url, RANKING_SIZE);
    if (c === 'players' && d === undefined) return ok(page(world.playerRankings(b, at) ?? throwCountry(b), req));
    if (c === 'clubs' && d === undefined) return ok(page(world.clubRankings(b, at) ?? throwCountry(b), req));
    if (c === 'brawlers' && d !== undefined && e === undefined) {
      const id = numericId(d);
      if (world.brawler(id) === null) throw notFound(`Not found with id ${d}`);
      return ok(page(world.brawlerRankings(b, id, at) ?? throwCountry(b), req));
    }
  }
  if (a === 'brawlers' && c === undefined) {
    if (b === undefined || b === '') return ok(page(world.brawlers(), pageRequest(url, Infinity)), 600);
    return ok(world.brawler(numericId(b)) ?? throwNotFoundId(b), 600);
  }
  if (a === 'events' && b === 'rotation' && c === undefined) return ok(world.eventRotation(at));
  if (a === 'gamemodes' && b === undefined) return ok(page(world.gameModes(), pageRequest(url, Infinity)), 600);
  throw notFound('Not found');
}

function throwNotFound(raw: string): never {
  throw notFound(`Not found with tag ${raw}`);
}

function throwNotFoundId(raw: string): never {
  throw notFound(`Not found with id ${raw}`);
}

function throwCountry(raw: string): never {
  throw notFound(`Not found with country code ${raw}`);
}

/** `%23ABC` → `#ABC`; the API takes tags URL-encoded with their `#` and in any letter case. */
function pathTag(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw notFound(`Not found with tag ${raw}`);
  }
  const upper = decoded.trim().toUpperCase();
  const re = new RegExp(`^#[${TAG_ALPHABET}]{3,14}$`);
  if (!re.test(upper)) throw notFound(`Not found with tag ${raw}`);
  return upper;
}

function numericId(raw: string): number {
  if (!/^\d{1,12}$/.test(raw)) throw notFound(`Not found with id ${raw}`);
  return Number(raw);
}

/** Reads limit/after/before; `cap` clamps limit silently (rankings: 200), like the API. */
function pageRequest(url: URL, cap: number): PageRequest {
  const q = url.searchParams;
  const out: PageRequest = {};
  const limit = q.get('limit');
  if (limit !== null) {
    if (!/^\d+$/.test(limit) || Number(limit) <= 0) throw badRequest(`Invalid value for parameter 'limit': ${limit}`);
    out.limit = Math.min(Number(limit), cap);
  }
  const after = q.get('after');
  const before = q.get('before');
  if (after !== null && before !== null) throw badRequest("Only one of 'after' and 'before' can be specified");
  if (after !== null) {
    const pos = decodeCursor(after);
    if (pos === null) throw badRequest(`Invalid value for parameter 'after': ${after}`);
    out.after = pos;
  }
  if (before !== null) {
    const pos = decodeCursor(before);
    if (pos === null) throw badRequest(`Invalid value for parameter 'before': ${before}`);
    out.before = pos;
  }
  return out;
}

// ---------------------------------------------------------------- control endpoints

/** Longest a `GET /_sim/log?atLeast=N` waits before answering what is there. */
const LOG_WAIT_MS = 60_000;

async function control(deps: SimDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const path = url.pathname;
  let body: unknown = undefined;
  if (req.method === 'POST') {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      body = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      return send(res, { status: 400, body: { reason: 'badRequest', message: 'Body is not JSON' } });
    }
  }
  if (path === '/_sim/faults') {
    if (req.method === 'GET') return send(res, { status: 200, body: deps.faults.current() });
    if (req.method === 'DELETE') return send(res, { status: 200, body: deps.faults.reset() });
    if (req.method === 'POST') {
      const parsed = FaultUpdate.safeParse(body);
      if (!parsed.success) {
        return send(res, { status: 400, body: { reason: 'badRequest', message: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } });
      }
      return send(res, { status: 200, body: deps.faults.set(parsed.data) });
    }
  }
  if (path === '/_sim/log') {
    // ?path=… keeps the requests whose path contains it (e.g. /players/)
    // ?atLeast=N waits (at most a minute, or until the caller goes away) until N such requests arrived
    if (req.method === 'GET') {
      const contains = url.searchParams.get('path') ?? undefined;
      const atLeast = url.searchParams.get('atLeast');
      if (atLeast !== null) {
        if (!/^\d{1,9}$/.test(atLeast)) return send(res, { status: 400, body: { reason: 'badRequest', message: 'atLeast: expected a whole number of requests' } });
        const gaveUp = new AbortController();
        const guard = setTimeout(() => gaveUp.abort(), LOG_WAIT_MS);
        res.once('close', () => gaveUp.abort());
        await deps.log.whenAtLeast(contains ?? '', Number(atLeast), gaveUp.signal);
        clearTimeout(guard);
      }
      return send(res, { status: 200, body: deps.log.view(contains) });
    }
    if (req.method === 'DELETE') return send(res, { status: 200, body: deps.log.reset() });
  }
  const icon = /^\/_sim\/players\/([^/]+)\/icon$/.exec(path);
  if (icon && req.method === 'POST') {
    // A player changing their profile icon in the game (what account verification asks for).
    const tag = decodeURIComponent(icon[1]!);
    const id = (body as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      return send(res, { status: 400, body: { reason: 'badRequest', message: 'Expected {"id": <profile icon id, 28000000+>}' } });
    }
    if (deps.world.playerIndex(tag) === null) return send(res, { status: 404, body: { reason: 'notFound', message: `No player ${tag}` } });
    if (!deps.world.setIcon(tag, id)) {
      return send(res, { status: 400, body: { reason: 'badRequest', message: `${id} is not a profile icon id` } });
    }
    return send(res, { status: 200, body: { tag: deps.world.playerTag(deps.world.playerIndex(tag)!), icon: { id } } });
  }
  const club = /^\/_sim\/players\/([^/]+)\/club$/.exec(path);
  if (club && req.method === 'POST') {
    // A player joining a club ({"club": "#TAG"}), leaving theirs ({"club": null}) or promoted or
    // demoted in it ({"role": "senior"}), as in the game (what a club feed reports).
    const tag = decodeURIComponent(club[1]!);
    const b = (body ?? {}) as { club?: unknown; role?: unknown };
    const keys = Object.keys(b);
    let change: { club: string | null } | { role: ClubMemberRole };
    if (keys.length === 1 && keys[0] === 'club' && (b.club === null || typeof b.club === 'string')) change = { club: b.club };
    else if (keys.length === 1 && keys[0] === 'role' && (CLUB_MEMBER_ROLES as readonly unknown[]).includes(b.role)) change = { role: b.role as ClubMemberRole };
    else {
      return send(res, {
        status: 400,
        body: { reason: 'badRequest', message: `Expected {"club": "#TAG"}, {"club": null} or {"role": ${CLUB_MEMBER_ROLES.map((r) => `"${r}"`).join('|')}}` },
      });
    }
    const now = deps.clock.now();
    const problem = deps.world.moveMember(tag, change, now);
    if (problem) return send(res, { status: problem.status, body: { reason: problem.status === 404 ? 'notFound' : 'badRequest', message: problem.message } });
    const player = deps.world.player(tag, now) as { tag: string; club: { tag?: string } };
    const clubTag = player.club.tag;
    const role = clubTag ? (deps.world.clubMembers(clubTag, now) as { tag: string; role: string }[]).find((m) => m.tag === player.tag)?.role : undefined;
    return send(res, { status: 200, body: { tag: player.tag, club: clubTag ? { tag: clubTag, role } : null } });
  }
  if (path === '/_sim/clock') {
    const state = () => ({ now: deps.clock.now(), iso: new Date(deps.clock.now()).toISOString(), frozen: deps.clock.frozen });
    if (req.method === 'GET') return send(res, { status: 200, body: state() });
    if (req.method === 'POST') {
      const b = (body ?? {}) as { set?: unknown; advance?: unknown; resume?: unknown };
      if (typeof b.set === 'number' && Number.isFinite(b.set)) deps.clock.set(b.set);
      else if (typeof b.set === 'string' && Number.isFinite(Date.parse(b.set))) deps.clock.set(Date.parse(b.set));
      else if (typeof b.advance === 'number' && Number.isFinite(b.advance)) deps.clock.advance(b.advance);
      else if (b.resume === true) deps.clock.resume();
      else {
        return send(res, { status: 400, body: { reason: 'badRequest', message: 'Expected {"set": ms|ISO date}, {"advance": ms} or {"resume": true}' } });
      }
      return send(res, { status: 200, body: state() });
    }
  }
  send(res, { status: 404, body: { reason: 'notFound', message: 'Not found' } });
}
