/**
 * The one declarative route helper of the HTTP API.
 *
 * How to add an endpoint:
 *
 *   // src/http/routes/maps.ts
 *   import { z } from 'zod';
 *   import { cached, defineRoute, routeGroup } from '../route.ts';
 *   import { idParam } from '../params.ts';
 *
 *   export default routeGroup('maps', [
 *     defineRoute({
 *       method: 'GET',
 *       url: '/maps/:mapId',                      // fastify syntax; OpenAPI shows /maps/{mapId}
 *       operationId: 'getMap',
 *       summary: 'One map',
 *       tags: ['Events and maps'],
 *       params: { mapId: idParam('Map id', 15000026) },   // zod, in path order
 *       query: { limit: z.int().min(1).max(250).default(50) }, // zod, in the interface's order
 *       premium: false,                           // true: api_key required (422 without it, 403 on a plan without premium)
 *       cacheable: true,                          // Cache-Control/ETag/Age/304/stale headers from a Fetched<T>
 *       response: MapSchema,                      // zod schema of the 200 body (OpenAPI)
 *       notFound: 'Map not found',                // detail of the 404 when the core throws NotFoundError
 *       handler: async ({ params, query, core }) => cached(await core.history.map(params.mapId), (m) => view(m, query.limit)),
 *     }),
 *   ]);
 *
 * then add ONE line to ROUTES in src/http/server.ts. That is all: validation (pydantic-exact 422
 * bodies, every problem at once, path before query), the api_key parameter (optional, or required
 * and first when `premium`), rate limits and their headers, error mapping (404 / 503 + Retry-After
 * from the core's typed errors), caching headers and the OpenAPI entry all follow from the spec.
 *
 * Parameters: z.int() / z.string() / z.literal([1, 3, 4]) / z.enum([...]) with .min/.max/.default
 * behave as FastAPI's int / str / Literal with ge/le/min_length and defaults (see pydantic.ts);
 * tagParam, countryCodeParam, idParam, emailParam... live in params.ts. Handlers get parsed values
 * (a tag arrives as '#TAG', a country as 'global' or 'US').
 *
 * A handler takes everything from its context (params, query, auth, headers, core): the fast path
 * (fast-path.ts) calls it again, without routing or validation, for a URL it answered before; and
 * when its reply was `cached(read)` of one core read (`core.stats`), it is not called at all while
 * that copy is fresh in memory (`hotAnswer`): such a reply depends on the read, params and query only.
 * Nor when its reply was `raw` bytes made from one fresh copy that their producer can give again
 * synchronously (`RawAgain`: a picture still in the picture cache, keyed by the copy's version).
 *
 * Replies: `cached(fetched, view?, contentType?)` for data from the core (the view runs once per
 * fetched copy and parameters: its serialized bytes and ETag are memoised, so a cached GET costs a
 * lookup), `json(body, status?)` for uncacheable JSON, `raw(bytes, contentType, opts?)` for
 * anything else. A view may return a Buffer (e.g. a PNG) with `contentType: 'image/png'`.
 * Throw `HttpError` for other statuses; never build an error body by hand.
 */
import { createHash } from 'node:crypto';
import { etagMatches } from '../lib/etag.ts';
import { Lru } from '../lib/lru.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core, Fetched } from '../core/index.ts';
import type { ApiKeyInfo } from '../store/apikeys.ts';
import type { MetricsRegistry } from './metrics.ts';
import { apiKeyParam } from './params.ts';
import type { HotRoutes } from './fast-path.ts';
import { requestLogHead } from './request-log.ts';
import type { Preformatted } from '../log.ts';
import { compileShape, RequestValidationError, type Shape, type ValidationIssue } from './pydantic.ts';

// ------------------------------------------------------------------ what handlers see

export type Auth = { kind: 'free'; ip: string } | { kind: 'key'; ip: string; key: ApiKeyInfo };

export interface HandlerContext<P extends Shape, Q extends Shape> {
  params: z.output<z.ZodObject<P>>;
  query: z.output<z.ZodObject<Q>>;
  core: Core;
  auth: Auth;
  /** the request's headers */
  headers: IncomingHttpHeaders;
  /** the server's clock (epoch ms) */
  now(): number;
  runtime: HttpRuntime;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'cached'; fetched: Fetched<unknown>; view?: ((data: unknown) => unknown) | undefined; contentType?: string | undefined }
  | {
      kind: 'raw';
      status: number;
      body: Buffer | string;
      contentType: string;
      headers?: Record<string, string>;
      maxAge?: number;
      /** the ETag when the producer knows it (pictures: from their inputs' versions); else a hash of the body */
      etag?: string;
      /** for the request's log line: hit or miss of the producer's cache */
      cache?: 'hit' | 'miss' | 'stale';
      /** bytes made from a fresh copy of the core's data, which the fast path may repeat (`RawAgain`) */
      again?: RawAgain;
    };

/**
 * How to answer a raw reply again without its handler (a picture drawn from a fresh copy, whose
 * headers are that copy's `freshnessHeaders` and whose max-age is the copy's freshness left): the
 * copy (`peekFresh`'s question); the bytes, when their producer would give these very bytes, with
 * the same ETag, now (else undefined; changes nothing); and `answered`, which the producer counts
 * as its handler's call would be counted (a hit of its cache).
 */
export interface RawAgain {
  key: string;
  fetchedAt: number;
  png(): Buffer | undefined;
  answered(): void;
}

/** Uncacheable JSON (Cache-Control: no-store). */
export function json(body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return { kind: 'json', status, body, ...(headers ? { headers } : {}) };
}

/** Data from the core with its freshness: caching headers, ETag/304, stale marking. */
export function cached<T>(fetched: Fetched<T>, view?: (data: T) => unknown, contentType?: string): Reply {
  // one shape for every cached reply (a cached answer makes one per request): no spread of optional parts
  return { kind: 'cached', fetched: fetched as Fetched<unknown>, view: view as ((data: unknown) => unknown) | undefined, contentType };
}

/**
 * Bytes as they are; `maxAge` makes them publicly cacheable with an ETag (`etag` when the caller
 * knows it, else a hash of the bytes). A matching If-None-Match gets a 304 without the body.
 */
export function raw(
  body: Buffer | string,
  contentType: string,
  opts: { status?: number; maxAge?: number; headers?: Record<string, string>; etag?: string; cache?: 'hit' | 'miss' | 'stale'; again?: RawAgain | undefined } = {},
): Reply {
  return {
    kind: 'raw',
    status: opts.status ?? 200,
    body,
    contentType,
    ...(opts.maxAge !== undefined ? { maxAge: opts.maxAge } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.etag ? { etag: opts.etag } : {}),
    ...(opts.cache ? { cache: opts.cache } : {}),
    ...(opts.again ? { again: opts.again } : {}),
  };
}

// ------------------------------------------------------------------ the route spec

export interface ResponseSpec {
  schema: z.ZodType;
  /** default application/json */
  contentType?: string;
  description?: string;
}

export interface RouteSpec<P extends Shape = Shape, Q extends Shape = Shape> {
  method: 'GET' | 'POST';
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  /** requires an api_key whose plan includes premium endpoints */
  premium?: boolean;
  /** accepts the api_key query parameter (default true; false for endpoints without parameters) */
  apiKey?: boolean;
  /** answers from a Fetched<T>: caching headers, ETag, 304, stale copies, 503 when nothing is cached */
  cacheable?: boolean;
  /** 'peek' shows the caller's rate limit without counting the request (health and metrics) */
  rateLimit?: 'count' | 'peek';
  /** the 200 body */
  response: z.ZodType | ResponseSpec;
  /** detail of the 404 answered when the core throws NotFoundError (documents the 404) */
  notFound?: string;
  /** more documented statuses: status → description */
  errors?: Record<number, string>;
  /** left out of the OpenAPI document (the documents themselves) */
  hidden?: boolean;
  handler(ctx: HandlerContext<P, Q>): Promise<Reply>;
}

/** The compiled form the server and the OpenAPI generator read. */
export interface RouteDef {
  spec: RouteSpec;
  /** query shape as validated, api_key included where it belongs */
  query: Shape;
  params: Shape;
}

/** Typing helper: infers params/query types for the handler. */
export function defineRoute<P extends Shape = Record<never, never>, Q extends Shape = Record<never, never>>(
  spec: RouteSpec<P, Q>,
): RouteDef {
  const acceptsKey = spec.apiKey ?? true;
  const own = spec.query ?? ({} as Q);
  // The interface lists api_key first on premium endpoints and last elsewhere; FastAPI reports
  // problems in declaration order, so the position matters.
  const query: Shape = !acceptsKey
    ? own
    : spec.premium
      ? { api_key: apiKeyParam(true), ...own }
      : { ...own, api_key: apiKeyParam(false) };
  return { spec: spec as unknown as RouteSpec, query, params: spec.params ?? {} };
}

export const responseSpec = (r: RouteSpec['response']): ResponseSpec => (r instanceof z.ZodType ? { schema: r } : r);

// ------------------------------------------------------------------ per-request plumbing

/** What the server decorates the instance with; route groups read it. */
export interface HttpRuntime {
  core: Core;
  now(): number;
  /** every route registered with this helper, in registration order (for OpenAPI) */
  routes: RouteDef[];
  metrics: MetricsRegistry;
  /** epoch ms when the server was created */
  startedAt: number;
  serviceVersion: string;
  upstreamKind: 'official' | 'simulated';
  /** more /readyz checks by name, from the parts this process runs: null = ok, else the problem */
  readiness: Record<string, () => Promise<string | null>>;
  /** URLs the fast path may answer (absent: every request goes through fastify) */
  hot?: HotRoutes;
}

/**
 * A URL already routed and validated: what the route's handler is called with. The fast path
 * (fast-path.ts) calls the handler with it again, skipping routing and validation, which give the
 * same result for the same URL every time.
 */
export interface HotRoute {
  def: RouteDef;
  /** the route's path pattern, the metrics' and the log line's `route` */
  route: string;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** the key of the serialized body among a fetched copy's variants */
  variant: string;
  /** the log line's method, URL (secrets redacted) and route, formatted once */
  logHead: Preformatted;
  /**
   * The copy of the core's data the last answer was made from, while it was fresh: the fast path
   * asks the core whether it still holds it (`peekFresh`) and, if so, sends its memoised body (or
   * the bytes their producer gives again, `RawAgain`) without calling the handler (`hotAnswer`).
   * Replaced by each answer the handler gives.
   */
  memo?: HotMemo | undefined;
}

/** What `hotAnswer` needs of the copy an answer was made from; no reference to the data or body. */
export interface HotMemo {
  /** the copy's cache key and when it was fetched (`peekFresh`'s question) */
  key: string;
  fetchedAt: number;
  /** data: the key of its serialized body among the memoised ones */
  prepared?: string | undefined;
  /** bytes made from the copy by their producer (a picture): them again, their type and ETag */
  raw?: { again: RawAgain; contentType: string; etag: string } | undefined;
}

/** Replies the fast path may repeat: data with freshness, or bytes with an ETag and a max-age. */
const isCacheable = (r: Reply) => r.kind === 'cached' || (r.kind === 'raw' && r.maxAge !== undefined);

declare module 'fastify' {
  interface FastifyInstance {
    starr: HttpRuntime;
  }
  interface FastifyRequest {
    auth: Auth;
    /** where the answer came from, for the request's log line (hit, miss, stale) */
    cacheState?: string;
  }
  interface FastifyContextConfig {
    starr?: RouteDef;
  }
}

interface Prepared {
  /** its key in `prepared` (a HotMemo holds it, not the body) */
  key: string | undefined;
  body: Buffer;
  etag: string;
  contentType: string;
  lastModified: string;
}

/**
 * Serialized bodies of the answers asked for most recently, at most PREPARED_BYTES of them: a
 * repeated GET sends bytes already made (no JSON.stringify, no hash). Not one per copy the core holds
 * in memory: those memoised bodies were a second copy of the answers' layer (CACHE_MEMORY_MB of JSON
 * parsed, and as much again serialized, outside the heap and outside that bound; bench:memory). A
 * body dropped here is made again from the core's copy, the same bytes and ETag. Keyed by the
 * fetched copy's identity (a number given to it once; the memo does not keep the copy alive) and the
 * parameters' variant. 4 MB (8 until 2026-11-29): with the pictures' cache at 4 MB and the simulated
 * world's caches halved, RSS after bench:memory's load fell from 297–302 MB (mean from 60 s on) to
 * 291–292 (docs/benchmarks.md, *Memory, a seventh machine*); a body made again costs a
 * JSON.stringify and a hash.
 */
export const PREPARED_BYTES = 4 * 2 ** 20;
const prepared = new Lru<string, Prepared>(Number.MAX_SAFE_INTEGER, { max: PREPARED_BYTES, weigh: (p) => p.body.length + 256 });
/** bytes of serialized bodies memoised (as counted against PREPARED_BYTES) */
export const preparedBytes = (): number => prepared.weightTotal;
const copyIds = new WeakMap<object, number>();
let lastCopyId = 0;

const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`;

function serialize(value: unknown, contentType: string | undefined): { body: Buffer; contentType: string } {
  if (Buffer.isBuffer(value)) return { body: value, contentType: contentType ?? 'application/octet-stream' };
  if (typeof value === 'string' && contentType && !contentType.includes('json')) return { body: Buffer.from(value, 'utf8'), contentType };
  return { body: Buffer.from(JSON.stringify(value), 'utf8'), contentType: contentType ?? 'application/json; charset=utf-8' };
}

function prepare(r: Extract<Reply, { kind: 'cached' }>, variant: string): Prepared {
  const data = r.fetched.data;
  let key: string | undefined;
  if (typeof data === 'object' && data !== null) {
    let id = copyIds.get(data);
    if (id === undefined) copyIds.set(data, (id = ++lastCopyId));
    key = `${id} ${variant}`;
    const hit = prepared.get(key);
    if (hit) return hit;
  }
  const { body, contentType } = serialize(r.view ? r.view(data) : data, r.contentType);
  const p: Prepared = { key, body, contentType, etag: etagOf(body), lastModified: new Date(r.fetched.fetchedAt).toUTCString() };
  if (key !== undefined) prepared.set(key, p);
  return p;
}

export { etagMatches };

/**
 * What goes on the wire for a handler's reply: status, headers in the order they are sent, and the
 * body (none for a 304). Both the fastify route and the fast path (fast-path.ts) send exactly this.
 */
export interface Answer {
  status: number;
  /**
   * The answer's own headers as a flat `[name, value, …]` list in the order they are sent: the fast
   * path appends it to the CORS and RateLimit headers and hands the whole list to `writeHead`
   * (a for-in over header objects of several shapes cost ~470 instructions per cached answer in
   * callgrind, docs/benchmarks.md *HTTP API: cached answers*); fastify sets them one by one
   * (`send`).
   */
  headers: string[];
  body?: Buffer;
  /** for the request's log line: hit, miss or stale */
  cache?: string;
}

/**
 * The answer to a handler's reply; `ifNoneMatch` is the request's If-None-Match header. `hot`, the
 * URL as the fast path remembers it, gets the memo of a fresh copy (or loses the one it had).
 */
export function answerOf(r: Reply, ifNoneMatch: string | undefined, variant: string, now: number, hot?: HotRoute): Answer {
  if (r.kind === 'json') {
    const { body, contentType } = serialize(r.body, undefined);
    return { status: r.status, headers: headerList({ 'content-type': contentType, 'cache-control': 'no-store', ...r.headers }), body };
  }
  if (r.kind === 'raw') {
    const body = typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : r.body;
    if (r.maxAge === undefined) {
      if (hot) hot.memo = undefined;
      const a: Answer = { status: r.status, headers: headerList({ 'content-type': r.contentType, ...r.headers, 'cache-control': 'no-store' }), body };
      if (r.cache) a.cache = r.cache;
      return a;
    }
    const etag = r.etag ?? etagOf(body);
    if (hot) hot.memo = r.again && r.status === 200 ? { key: r.again.key, fetchedAt: r.again.fetchedAt, raw: { again: r.again, contentType: r.contentType, etag } } : undefined;
    return rawAnswer(r.status, r.contentType, r.headers ? headerList(r.headers) : undefined, r.maxAge, etag, body, ifNoneMatch, r.cache);
  }
  const f = r.fetched;
  const p = prepare(r, variant);
  if (hot) hot.memo = !f.stale && f.key !== undefined && p.key !== undefined ? { key: f.key, fetchedAt: f.fetchedAt, prepared: p.key } : undefined;
  const maxAge = f.stale ? 0 : Math.max(0, Math.ceil((f.expiresAt - now) / 1000));
  const a = copyAnswer(p, maxAge, f, ifNoneMatch);
  if (f.stale) a.cache = 'stale';
  else if (f.source) a.cache = f.source === 'upstream' ? 'miss' : 'hit';
  return a;
}

/** A header object as the flat `[name, value, …]` list an Answer carries, in the object's order. */
export function headerList(headers: Record<string, string>): string[] {
  const list: string[] = [];
  for (const k in headers) list.push(k, headers[k]!);
  return list;
}

/** The Cache-Control values of max-ages up to an hour, made once each (`cacheControl`). */
const CACHE_CONTROL: (string | undefined)[] = new Array<string | undefined>(3601).fill(undefined);
/** The last longer one made (`cacheControl`). */
let longMaxAge = NaN;
let longCacheControl = '';

/**
 * `public, max-age=N`. Made once per max-age (up to an hour) and kept: a template string of 13
 * characters or more is a V8 cons string, which node:http's header check (a regular expression)
 * flattened again on every answer, through V8's runtime (~1,500 instructions per cached answer in
 * callgrind, docs/benchmarks.md *HTTP API: cached answers*); a kept one is flattened once, in
 * place.
 */
export function cacheControl(maxAge: number): string {
  if (Number.isInteger(maxAge) && maxAge >= 0 && maxAge < CACHE_CONTROL.length) return (CACHE_CONTROL[maxAge] ??= `public, max-age=${maxAge}`);
  // longer (CACHE_TTL_SECONDS goes up to a day): the last one made, which the answers of one second share
  if (longMaxAge !== maxAge) {
    longMaxAge = maxAge;
    longCacheControl = `public, max-age=${maxAge}`;
  }
  return longCacheControl;
}

/** The answer of cacheable bytes (a raw reply with a max-age): its caching headers, or the 304. */
function rawAnswer(
  status: number,
  contentType: string,
  more: string[] | undefined,
  maxAge: number,
  etag: string,
  body: Buffer,
  ifNoneMatch: string | undefined,
  cache: string | undefined,
): Answer {
  // `more` (a picture's freshness headers) never names Cache-Control or an ETag
  const headers = ['content-type', contentType];
  if (more) for (let i = 0; i < more.length; i++) headers.push(more[i]!);
  headers.push('cache-control', cacheControl(maxAge), 'etag', etag);
  const a: Answer = status === 200 && etagMatches(ifNoneMatch, etag) ? { status: 304, headers } : { status, headers, body };
  if (cache) a.cache = cache;
  return a;
}

/** The answer of a serialized copy of the core's data: its caching and freshness headers, or the 304. */
function copyAnswer(p: Prepared, maxAge: number, f: Staleness, ifNoneMatch: string | undefined): Answer {
  const headers = pushFreshness(['content-type', p.contentType, 'cache-control', cacheControl(maxAge), 'etag', p.etag, 'last-modified', p.lastModified], f);
  return etagMatches(ifNoneMatch, p.etag) ? { status: 304, headers } : { status: 200, headers, body: p.body };
}

/**
 * The answer to a remembered URL without calling its handler: when the copy its last answer was made
 * from is still fresh in the core's memory (`peekFresh`, which counts the read as the handler's call
 * would) and its body is still memoised, or for bytes (a picture) still what their producer would
 * answer with (`RawAgain.png`: no hash, no JSON, a map look-up). Undefined otherwise, having done
 * nothing: call the handler.
 */
export function hotAnswer(hot: HotRoute, ifNoneMatch: string | undefined, reads: Pick<Core['stats'], 'peekFresh'>, now: number): Answer | undefined {
  const m = hot.memo;
  if (!m) return undefined;
  if (m.raw) {
    // bytes made from the copy (a picture): still the producer's answer, and the copy still fresh
    const body = m.raw.again.png();
    if (!body) return undefined;
    const fresh = reads.peekFresh(m.key, m.fetchedAt);
    if (!fresh) return undefined;
    m.raw.again.answered();
    const maxAge = Math.max(0, Math.ceil((fresh.expiresAt - now) / 1000));
    return rawAnswer(200, m.raw.contentType, pushFreshness([], { stale: false, ageSeconds: fresh.ageSeconds }), maxAge, m.raw.etag, body, ifNoneMatch, 'hit');
  }
  const p = m.prepared === undefined ? undefined : prepared.get(m.prepared);
  if (!p) return undefined;
  const fresh = reads.peekFresh(m.key, m.fetchedAt);
  if (!fresh) return undefined;
  const a = copyAnswer(p, Math.max(0, Math.ceil((fresh.expiresAt - now) / 1000)), { stale: false, ageSeconds: fresh.ageSeconds }, ifNoneMatch);
  a.cache = 'hit';
  return a;
}

/** Sends an Answer through fastify: its status, its headers in order, its body (the error handler's too). */
export function sendAnswer(reply: FastifyReply, a: Answer): FastifyReply {
  reply.code(a.status);
  for (let i = 0; i < a.headers.length; i += 2) reply.header(a.headers[i]!, a.headers[i + 1]!);
  return a.body ? reply.send(a.body) : reply.send();
}

function send(reply: FastifyReply, request: FastifyRequest, a: Answer): FastifyReply {
  if (a.cache) request.cacheState = a.cache;
  return sendAnswer(reply, a);
}

/**
 * How old the data of an answer is, and whether it is a last good copy served because upstream
 * failed or was slow: the same headers on JSON bodies and on pictures drawn from them.
 */
export function freshnessHeaders(f: Staleness): Record<string, string> {
  const list = pushFreshness([], f);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1]!;
  return headers;
}

type Staleness = Pick<Fetched<unknown>, 'stale' | 'ageSeconds' | 'staleReason'>;

/** Appends the freshness headers of `f` to a flat `[name, value, …]` list (`freshnessHeaders`). */
function pushFreshness(list: string[], f: Staleness): string[] {
  list.push('age', String(Math.max(0, f.ageSeconds)));
  if (f.stale) {
    // RFC 7234's stale warning (still the one clients look for) plus a plain marker.
    list.push('warning', '110 - "Response is Stale"', 'x-cache', 'STALE');
    if (f.staleReason) list.push('x-stale-reason', f.staleReason);
  }
  return list;
}

/** A fastify plugin registering the given routes. */
export function routeGroup(name: string, defs: RouteDef[]): FastifyPluginAsync {
  const plugin: FastifyPluginAsync = async (app: FastifyInstance) => {
    for (const def of defs) {
      const pathShape = compileShape('path', def.params);
      const queryShape = compileShape('query', def.query);
      const { spec } = def;
      // Without parameters of its own a route has one variant per fetched copy.
      const plain = Object.keys(def.params).length === 0 && Object.keys(def.query).every((k) => k === 'api_key');
      app.route({
        method: spec.method,
        url: spec.url,
        config: { starr: def },
        handler: async (request, reply) => {
          const issues: ValidationIssue[] = [];
          const params = pathShape.validate(request.params as Record<string, string>, issues);
          const query = queryShape.validate(request.query as Record<string, string>, issues);
          if (issues.length > 0) throw new RequestValidationError(issues);
          delete (query as Record<string, unknown>).api_key;
          const rt = app.starr;
          const variant = plain ? spec.url : `${spec.url}\n${JSON.stringify(params)}\n${JSON.stringify(query)}`;
          const result = await spec.handler({ params, query, core: rt.core, auth: request.auth, headers: request.headers, now: rt.now, runtime: rt });
          // A cacheable answer to a client without a key: the next GET of the same URL may skip
          // routing and validation (fast-path.ts); what the URL means never changes.
          let hot: HotRoute | undefined;
          if (rt.hot && request.method === 'GET' && request.auth?.kind === 'free' && (spec.rateLimit ?? 'count') === 'count' && isCacheable(result)) {
            const raw = request.raw as { originalUrl?: string; url?: string };
            hot = { def, route: spec.url, params, query, variant, logHead: requestLogHead('GET', request.url, spec.url), memo: undefined };
            rt.hot.remember(raw.originalUrl ?? raw.url ?? request.url, hot);
          }
          return send(reply, request, answerOf(result, request.headers['if-none-match'], variant, rt.now(), hot));
        },
      });
    }
  };
  Object.defineProperty(plugin, 'name', { value: `routes:${name}` });
  return plugin;
}
