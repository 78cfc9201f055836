/**
 * The HTTP statistics API: a fastify instance over the service core (not listening; src/app.ts calls
 * listen, tests call inject or listen on port 0).
 *
 * Every request goes through the same steps: rate limit (per API key, or per client IP on the
 * free plan) with RateLimit-* headers on every response; the key's validity (401) and plan (403);
 * pydantic-exact validation (422); the handler; then one error mapping so that nothing a client
 * sends produces a 500 or a body that is not JSON.
 */
import { StoreUnavailableError } from '../store/sql.ts';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';
import { usesSimulator } from '../config.ts';
import type { Core } from '../core/index.ts';
import type { Logger, Preformatted } from '../log.ts';
import { decimal } from '../lib/decimal.ts';
import { createRateLimiter, type RateLimiter, type RateLimitState } from '../store/ratelimit.ts';
import { isUpstreamError, type UpstreamError } from '../upstream/errors.ts';
import { InvalidTagError, explainTagProblem } from '../upstream/tags.ts';
import { docs } from './docs.ts';
import { MetricsRegistry, type CounterSeries, type HistogramSeries } from './metrics.ts';
import { requestLog, requestLogHead } from './request-log.ts';
import { RequestValidationError, errors as pyErrors } from './pydantic.ts';
import { parseQuery } from './querystring.ts';
import { bodyUnread, HotRoutes } from './fast-path.ts';
import { answerOf, headerList, hotAnswer, HttpError, sendAnswer, type Answer, type Auth, type HotRoute, type HttpRuntime, type RouteDef } from './route.ts';
import brawlers from './routes/brawlers.ts';
import events from './routes/events.ts';
import clubs from './routes/clubs.ts';
import game from './routes/game.ts';
import history from './routes/history.ts';
import images from './routes/images.ts';
import keys from './routes/keys.ts';
import meta, { healthRoutes } from './routes/meta.ts';
import players from './routes/players.ts';
import rankings from './routes/rankings.ts';
import search from './routes/search.ts';

/** Every route group, one line each; the interactive reference (docs) comes after them all. */
export const ROUTES: FastifyPluginAsync[] = [
  meta,
  keys,
  search,
  brawlers,
  players,
  clubs,
  history,
  events,
  rankings,
  game,
  images,
  docs,
];

export interface HttpServerOptions {
  /** clock for rate-limit windows and Cache-Control (default Date.now) */
  now?: () => number;
  /** shared with the core so one /metrics shows both (default: a new registry) */
  metrics?: MetricsRegistry;
  /** default: counters in the core's cache store (createRateLimiter) */
  limiter?: RateLimiter;
  /** default: package.json's version */
  serviceVersion?: string;
  /** default: from the config (no token = simulated world) */
  upstreamKind?: 'official' | 'simulated';
  /** default: core.logger */
  logger?: Logger;
  /**
   * 'health': only /healthz, /readyz and /metrics, what a worker or bot process of a cluster
   * serves on its port; default 'all' (the API)
   */
  routes?: 'all' | 'health';
  /**
   * more /readyz checks by name (null = ok, else the problem), from the other parts of the process:
   * the bot's gateway. Read at each request, so a part started later can add its own.
   */
  readiness?: Record<string, () => Promise<string | null>>;
  /**
   * answer GETs of URLs already answered with cacheable data in front of fastify (fast-path.ts);
   * default true. Off when TRUST_PROXY is set (the client's IP is then fastify's to work out).
   */
  fastPath?: boolean;
}

const WINDOW_SECONDS = 60;

/**
 * Cross-origin reads are allowed from anywhere, with the headers clients need to see. Sent on every
 * answer (not only when a request has an Origin), so a shared cache never hands a browser a copy
 * without them.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, ETag, Age, Last-Modified, Warning, X-Cache, X-Stale-Reason',
} as const;
const CORS_LIST = Object.entries(CORS_HEADERS).flat();

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/**
 * Python's unquote decodes what it can and keeps the rest; the router instead rejects a path with
 * a malformed escape. Rewrite such paths so they route like they would under FastAPI: a stray `%`
 * becomes `%25`, an escape run that is not UTF-8 becomes the encoding of its U+FFFD-replaced text.
 */
export function sanitizeUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.includes('%')) return url;
  const fixed = path
    .replace(/%(?![0-9A-Fa-f]{2})/g, '%25')
    .replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
      const text = bytes.toString('utf8');
      return Buffer.from(text, 'utf8').equals(bytes) ? run : encodeURIComponent(text);
    });
  return q < 0 ? fixed : fixed + url.slice(q);
}

/** Seconds a client should wait after an upstream failure with nothing cached. */
function retryAfter(e: UpstreamError): number {
  switch (e.kind) {
    case 'maintenance':
      return 120;
    case 'throttled':
      return Math.max(1, Math.ceil((e as UpstreamError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 10));
    default:
      return 30;
  }
}

function upstreamDetail(e: UpstreamError): string {
  switch (e.kind) {
    case 'maintenance':
      return "The game's API is in maintenance and no cached copy of this resource exists. Try again later.";
    case 'throttled':
      return "The game's API is rate-limiting this service and no cached copy of this resource exists. Try again shortly.";
    default:
      return "The game's API is unavailable and no cached copy of this resource exists. Try again later.";
  }
}

/** The route's `/players/:tag` as a regular expression, to tell a 405 from a 404. */
function patternOf(url: string): RegExp {
  const body = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

export function createHttpServer(core: Core, opts: HttpServerOptions = {}): FastifyInstance {
  const now = opts.now ?? Date.now;
  const metrics = opts.metrics ?? new MetricsRegistry();
  const limiter = opts.limiter ?? createRateLimiter(core.stores, { now });
  const ownsLimiter = !opts.limiter;
  const { RATE_LIMIT_FREE, RATE_LIMIT_KEY } = core.config;

  const logger = (opts.logger ?? core.logger).child({ component: 'http' });
  const logRequest = requestLog(logger);

  const runtime: HttpRuntime = {
    core,
    now,
    routes: [],
    metrics,
    startedAt: now(),
    serviceVersion: opts.serviceVersion ?? packageVersion(),
    upstreamKind: opts.upstreamKind ?? (usesSimulator(core.config) ? 'simulated' : 'official'),
    readiness: opts.readiness ?? {},
  };

  const requests = metrics.counter('starr_http_requests_total', 'HTTP requests by route, method and status');
  const latency = metrics.histogram('starr_http_request_duration_seconds', 'HTTP request latency by route', [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ]);
  const limited = metrics.counter('starr_http_rate_limited_total', 'Requests refused with 429, by plan');
  metrics.gauge('starr_process_uptime_seconds', 'Seconds since the HTTP server was created', () => (now() - runtime.startedAt) / 1000);
  metrics.gauge('starr_process_resident_memory_bytes', 'Resident set size of the process', () => process.memoryUsage.rss());

  /**
   * Appends the RateLimit headers of `s` to a flat [name, value, ...] list (the fast path sends it as
   * is): one push onto a copy of CORS_LIST (`slice`) instead of `concat` of a second list, which V8
   * runs in C++ (~1,500 instructions per answer in callgrind, docs/benchmarks.md *HTTP API: cached
   * answers*). The remaining count differs from one answer to the next: `decimal`, not V8's number
   * cache (src/lib/decimal.ts).
   */
  const pushRateHeaders = (list: string[], s: RateLimitState): string[] => {
    list.push(
      'ratelimit-limit',
      String(s.limit),
      'ratelimit-remaining',
      decimal(s.remaining),
      'ratelimit-reset',
      String(s.resetSeconds),
      'ratelimit-policy',
      policyOf(s.limit),
    );
    return list;
  };
  /**
   * `RateLimit-Policy` of a limit, made once per limit (a few: the free plan's, the keys' plans'):
   * like Cache-Control's (`cacheControl`, route.ts), a template string of 13 characters or more —
   * `1000000;w=60` and up — is a cons string that node:http's header check flattened on every answer.
   */
  const policies = new Map<number, string>();
  const policyOf = (limit: number): string => {
    let p = policies.get(limit);
    if (p === undefined) {
      p = `${limit};w=${WINDOW_SECONDS}`;
      if (policies.size < 64) policies.set(limit, p);
    }
    return p;
  };
  /** Sets the RateLimit headers of `s` on `headers`. */
  const setRateHeaders = (headers: Record<string, string>, s: RateLimitState) => {
    const list = pushRateHeaders([], s);
    for (let i = 0; i < list.length; i += 2) headers[list[i]!] = list[i + 1]!;
    return headers;
  };

  const identity = (ip: string, auth: Auth) =>
    auth.kind === 'key' ? { id: `key:${auth.key.keyId}`, max: RATE_LIMIT_KEY } : { id: `ip:${ip}`, max: RATE_LIMIT_FREE };

  /** Sets the RateLimit headers; throws the 429 when the request is over the limit. */
  function applyLimit(reply: FastifyReply, auth: Auth, s: RateLimitState): void {
    reply.headers(setRateHeaders({}, s));
    if (!s.allowed) {
      limited.inc({ plan: auth.kind === 'key' ? auth.key.plan.name : 'free' });
      const who = auth.kind === 'key' ? 'for this API key' : 'without an API key';
      throw new HttpError(
        429,
        `Rate limit exceeded: ${s.limit} requests per minute ${who}. Try again in ${s.resetSeconds} seconds.`,
        { 'retry-after': String(s.resetSeconds) },
      );
    }
  }

  /** Counts the request against its client and sets the headers; throws 429 when over. */
  async function limit(request: FastifyRequest, reply: FastifyReply, auth: Auth, mode: 'count' | 'peek'): Promise<void> {
    const { id, max } = identity(request.ip, auth);
    let s: RateLimitState;
    try {
      s = mode === 'peek' ? await limiter.peek(id, max) : await limiter.consume(id, max);
    } catch (e) {
      // A store outage must not take the API down with it: serve, say nothing about limits.
      request.log.warn({ err: e }, 'rate limiter unavailable');
      return;
    }
    applyLimit(reply, auth, s);
  }

  /** 401 for a key that is not valid, 403 for a premium route on a plan without premium endpoints. */
  function checkKey(def: RouteDef | undefined, auth: Auth, invalidKey: boolean): void {
    if (invalidKey) throw new HttpError(401, 'Invalid API key.');
    if (def?.spec.premium && auth.kind === 'key' && !auth.key.plan.premium) {
      throw new HttpError(403, `The ${auth.key.plan.name} plan of this API key does not include premium endpoints.`);
    }
  }

  /** Key lookup and counting that may wait for the stores. */
  async function admitSlowly(request: FastifyRequest, reply: FastifyReply, def: RouteDef | undefined, key: string | undefined, mode: 'count' | 'peek'): Promise<void> {
    let auth: Auth = { kind: 'free', ip: request.ip };
    let invalidKey = false;
    let keyStoreDown = false;
    if (key !== undefined) {
      const info = await core.keys.verify(key).catch((e: unknown) => {
        request.log.warn({ err: e }, 'API key store unavailable');
        keyStoreDown = true;
        return null;
      });
      if (info) auth = { kind: 'key', ip: request.ip, key: info };
      else invalidKey = !keyStoreDown;
    }
    request.auth = auth;
    await limit(request, reply, auth, mode);
    // A key that could not be looked up is not a wrong key: the client should retry, not discard it.
    if (keyStoreDown) throw new HttpError(503, 'The API key store is unavailable; try again shortly.', { 'retry-after': '10' });
    checkKey(def, auth, invalidKey);
  }

  /** The metric series of a method and route, bound once (no label key built per request). */
  const bound = new Map<string, Map<string, { latency: HistogramSeries; byStatus: Map<number, CounterSeries> }>>();
  const seriesOf = (method: string, route: string) => {
    let byRoute = bound.get(method);
    if (!byRoute) bound.set(method, (byRoute = new Map()));
    let s = byRoute.get(route);
    if (!s) byRoute.set(route, (s = { latency: latency.series({ route }), byStatus: new Map() }));
    return s;
  };

  /** Metrics and the one log line of a finished request (both paths); `head` is made only when logged. */
  function finished(method: string, route: string, status: number, ms: number, head: Preformatted | (() => Preformatted), cache: string | undefined): void {
    const s = seriesOf(method, route);
    let count = s.byStatus.get(status);
    if (!count) s.byStatus.set(status, (count = requests.series({ route, method, status: String(status) })));
    count.inc();
    s.latency.observe(ms / 1000);
    if (logger.isLevelEnabled('info')) logRequest(typeof head === 'function' ? head() : head, status, ms, cache);
  }

  /** The one mapping of errors to answers: nothing a client sends produces a body that is not JSON. */
  function errorAnswer(error: unknown, def: RouteDef | undefined, log: Pick<Logger, 'warn' | 'error'>): Answer {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
      status,
      headers: headerList({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers }),
      body: Buffer.from(JSON.stringify(body), 'utf8'),
    });
    if (error instanceof RequestValidationError) return answer(422, { detail: error.issues });
    if (error instanceof HttpError) return answer(error.status, { detail: error.detail }, error.headers);
    if (isUpstreamError(error)) {
      if (error.kind === 'not_found') return answer(404, { detail: def?.spec.notFound ?? 'Not Found' });
      log.warn({ upstream: error.kind, status: error.status }, 'upstream failed with nothing cached');
      return answer(503, { detail: upstreamDetail(error) }, { 'retry-after': String(retryAfter(error)) });
    }
    if (error instanceof StoreUnavailableError) {
      log.warn({ err: error }, 'history database unavailable');
      return answer(503, { detail: 'The statistics database is unavailable; try again shortly.' }, { 'retry-after': '10' });
    }
    if (error instanceof InvalidTagError) {
      const e = pyErrors.value(explainTagProblem(error.problem));
      return answer(422, { detail: [{ type: e.type, loc: ['path', 'tag'], msg: e.msg, input: error.input, ctx: e.ctx }] });
    }
    const fe = error as Partial<FastifyError>;
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      return answer(fe.statusCode, { detail: fe.message ?? 'Bad Request' });
    }
    log.error({ err: error }, 'unhandled error');
    return answer(500, { detail: 'Internal Server Error' });
  }

  // Shutting down (SIGTERM, app.close()), a request under way is answered and its connection then
  // closed: fastify closes the connections idle at the signal, but a keep-alive connection that
  // becomes idle only after its last answer would hold the exit for the whole keep-alive timeout
  // (72 s in the cluster test, whose client honours the server's keep-alive hint).
  let closing = false;
  /** Whether an answer closes its connection (both paths): its body unread, or the server shutting down. */
  const closeAfter = (req: IncomingMessage): boolean => bodyUnread(req) || closing;

  // ---------------------------------------------------------------- the fast path (fast-path.ts)

  const hot = opts.fastPath !== false && !core.config.TRUST_PROXY && opts.routes !== 'health' ? new HotRoutes() : undefined;
  runtime.hot = hot;

  /** Answers the request when the fast path may (see fast-path.ts); false hands it to fastify. */
  function answerFast(req: IncomingMessage, res: ServerResponse): boolean {
    // read once: node:http's getter costs a call and a megamorphic load each time (~425 instructions)
    const headers = req.headers;
    const route = hot!.lookup(req, headers);
    if (!route) return false;
    const client = clientOf(req.socket);
    const s = limiter.consumeNow?.(client.id, client.max);
    // not in memory, or over the limit (nothing was counted): fastify's hooks do it all
    if (!s?.allowed) return false;
    hot!.answered++;
    const started = performance.now();
    // the copy the last answer was made from still fresh in memory: its answer at once, no handler
    const a = hotAnswer(route, headers['if-none-match'], core.stats, now());
    if (a) {
      hot!.fromMemo++;
      sendFast(res, route, s, a, started);
    }
    else void replyFast(req, res, route, client.auth, s, started);
    return true;
  }

  /**
   * The client of a connection on the fast path (the free plan: without TRUST_PROXY fastify's
   * request.ip is the socket's peer) and its rate-limit counter, worked out once per connection: a
   * keep-alive connection asks many times, and the peer address getter, the counter id's
   * concatenation and its hash cost ~800 instructions per cached answer (callgrind,
   * docs/benchmarks.md *HTTP API: cached answers*).
   */
  const clients = new WeakMap<Socket, { auth: Auth; id: string; max: number }>();
  function clientOf(socket: Socket): { auth: Auth; id: string; max: number } {
    let c = clients.get(socket);
    if (!c) {
      const ip = socket.remoteAddress;
      const auth: Auth = { kind: 'free', ip: ip ?? '' };
      c = { auth, ...identity(auth.ip, auth) };
      // a socket already closed has no address yet to remember
      if (ip !== undefined) clients.set(socket, c);
    }
    return c;
  }

  async function replyFast(req: IncomingMessage, res: ServerResponse, route: HotRoute, auth: Auth, s: RateLimitState, started: number): Promise<void> {
    let a: Answer;
    try {
      const r = await route.def.spec.handler({ params: route.params, query: route.query, core, auth, headers: req.headers, now, runtime });
      a = answerOf(r, req.headers['if-none-match'], route.variant, now(), route);
    } catch (e) {
      route.memo = undefined;
      a = errorAnswer(e, route.def, logger);
    }
    sendFast(res, route, s, a, started);
  }

  /** Writes a fast-path answer, then its metrics and log line. */
  function sendFast(res: ServerResponse, route: HotRoute, s: RateLimitState, a: Answer, started: number): void {
    // the headers in the order fastify sends them: CORS and limits (onRequest), the answer's, the
    // length; as a flat [name, value, ...] list, which node:http reads in order (no object whose
    // shape grows per header, no for-in over it with an own-property check per key).
    const headers = pushRateHeaders(CORS_LIST.slice(), s);
    const own = a.headers;
    for (let i = 0; i < own.length; i++) headers.push(own[i]!);
    if (a.body) headers.push('content-length', String(a.body.length));
    // closeAfter: the fast path takes no request with a body (HotRoutes.lookup), so only `closing`
    if (closing) headers.push('connection', 'close');
    res.writeHead(a.status, headers);
    res.end(a.body);
    finished('GET', route.route, a.status, performance.now() - started, route.logHead, a.cache);
  }

  const app = Fastify({
    loggerInstance: logger,
    ...(hot
      ? {
          serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void, o: Record<string, unknown>): Server => {
            const server = createServer((req, res) => {
              if (!answerFast(req, res)) handler(req, res);
            });
            // what fastify sets on the server it makes itself
            server.keepAliveTimeout = o.keepAliveTimeout as number;
            server.requestTimeout = o.requestTimeout as number;
            server.setTimeout(o.connectionTimeout as number);
            if ((o.maxRequestsPerSocket as number) > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket as number;
            return server;
          },
        }
      : {}),
    // fastify's own request logging writes two lines per request (incoming, completed); the
    // onResponse hook below writes the one line an operator needs.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: core.config.TRUST_PROXY,
    bodyLimit: 64 * 1024,
    rewriteUrl: (req) => sanitizeUrl(req.url ?? '/'),
    routerOptions: {
      ignoreTrailingSlash: true,
      ignoreDuplicateSlashes: true,
      maxParamLength: 2000,
      querystringParser: (qs: string) => parseQuery(qs),
    },
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const detail = status === 414 ? 'URI Too Long' : 'Bad Request: malformed URL';
      void limit(request, reply, { kind: 'free', ip: request.ip }, 'count')
        .catch(() => undefined)
        .finally(() => void reply.code(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ detail })));
    },
    // Requests Node's HTTP parser refuses (bytes not allowed in a request line, oversized headers)
    // never reach fastify; they still get a JSON answer.
    clientErrorHandler: (err: Error & { code?: string }, socket: Socket) => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'HPE_URI_TOO_LONG' ? 414 : 400;
      const reason = status === 431 ? 'Request Header Fields Too Large' : status === 414 ? 'URI Too Long' : 'Bad Request';
      const packet = (err as { rawPacket?: unknown }).rawPacket;
      // curl sends `?name=Тимур` as raw UTF-8, which HTTP does not allow in a URL: say how to send it
      const rawText = err.code === 'HPE_INVALID_URL' && Buffer.isBuffer(packet) && /^[A-Z]+ [^ \r\n]*[^\x00-\x7f]/.test(packet.toString('latin1'));
      const body = JSON.stringify({
        detail: rawText
          ? 'Bad Request: the URL contains characters that must be percent-encoded (UTF-8), e.g. name=%D0%A2%D0%B8%D0%BC%D1%83%D1%80 for Тимур; with curl use -G --data-urlencode "name=Тимур"'
          : reason,
      });
      // A HEAD answer has no body, and the client would read one as garbage.
      const head = Buffer.isBuffer(packet) && packet.subarray(0, 5).toString('latin1') === 'HEAD ';
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${head ? '' : body}`,
      );
    },
  });

  app.decorate('starr', runtime);
  app.decorateRequest('auth', null as never);
  app.decorateRequest('cacheState', undefined);

  // POST /generate-api-keys takes its input in the query string; a body of any type is ignored
  // (as FastAPI ignores an undeclared body) instead of failing on its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));

  const allowed: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const def = route.config?.starr as RouteDef | undefined;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) allowed.push({ method: m, pattern: patternOf(route.url ?? route.path) });
    if (def && methods.includes(def.spec.method)) runtime.routes.push(def);
  });

  // Hooks take callbacks rather than promises: on the hot path (a known client without a key) the
  // request is admitted without waiting for anything.
  app.addHook('onRequest', (request, reply, done) => {
    // Browsers may call the API from any page: answers are public data, keys travel in the query
    // string (never in cookies), so every origin is allowed to read them and their headers.
    reply.headers(CORS_HEADERS);
    const config = request.routeOptions.config as { rateLimit?: false | 'count' | 'peek'; starr?: RouteDef } | undefined;
    const def = config?.starr;
    // The API's routes take no body (POST /generate-api-keys reads its query string), so, as FastAPI
    // does, a body's content type is none of their business, nor of a 404 or 405: without this
    // fastify answers 415 to a header it cannot parse (`Content-Type: foo`) before the route runs.
    if ((def || request.is404) && request.raw.headers['content-type'] !== undefined) delete request.raw.headers['content-type'];
    // A preflight is answered by the not-found handler below and costs no request of the limit.
    if (request.method === 'OPTIONS') return done();
    // A route of another front door may opt out (POST /interactions: Discord's signed requests).
    if (config?.rateLimit === false) return done();
    const key = def && (def.spec.apiKey ?? true) ? (request.query as Record<string, string>).api_key : undefined;
    const mode = def?.spec.rateLimit ?? config?.rateLimit ?? 'count';
    if (key === undefined && mode === 'count') {
      const auth: Auth = { kind: 'free', ip: request.ip };
      const { id, max } = identity(request.ip, auth);
      const s = limiter.consumeNow?.(id, max);
      if (s) {
        request.auth = auth;
        try {
          applyLimit(reply, auth, s);
        } catch (e) {
          return done(e as Error);
        }
        return done();
      }
    }
    admitSlowly(request, reply, def, key, mode).then(() => done(), done);
  });

  // An answer given before the request body was read (415 on a malformed content type, 404 of a
  // POST somewhere unknown) must close the connection, or the unread body would be parsed as the
  // next request on it; so must every answer once the server is shutting down (closeAfter).
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closeAfter(request.raw)) reply.header('connection', 'close');
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    finished(request.method, route, reply.statusCode, reply.elapsedTime, () => requestLogHead(request.method, request.url, route), request.cacheState);
    done();
  });

  if (ownsLimiter) app.addHook('onClose', async () => limiter.close());

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const methods = [...new Set(allowed.filter((a) => a.pattern.test(path)).map((a) => a.method))].sort();
    if (request.method === 'OPTIONS' && methods.length > 0) {
      // CORS preflight (or a plain OPTIONS): what the path allows, cacheable by the browser for a day
      return reply
        .code(204)
        .headers({
          allow: [...methods, 'OPTIONS'].join(', '),
          'access-control-allow-methods': methods.join(', '),
          'access-control-allow-headers': 'Content-Type, If-None-Match',
          'access-control-max-age': '86400',
          'cache-control': 'no-store',
        })
        .send();
    }
    if (methods.length > 0) {
      return reply
        .code(405)
        .headers({ allow: methods.join(', '), 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
        .send(JSON.stringify({ detail: 'Method Not Allowed' }));
    }
    return reply
      .code(404)
      .headers({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      .send(JSON.stringify({ detail: 'Not Found' }));
  });

  app.setErrorHandler(async (error: unknown, request, reply) => {
    const a = errorAnswer(error, request.routeOptions.config?.starr as RouteDef | undefined, request.log);
    return sendAnswer(reply, a);
  });

  for (const group of opts.routes === 'health' ? [healthRoutes] : ROUTES) void app.register(group);
  return app as unknown as FastifyInstance;
}
