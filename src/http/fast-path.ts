/**
 * The fast path: a GET of a URL the API has already answered with a cacheable reply, served in front
 * of fastify — no routing, no Request/Reply objects, no hooks, no parameter validation, no
 * serialization — with everything a client or an operator sees unchanged.
 *
 * Why: a cached answer through fastify cost 30–38 µs of CPU against 13–15 µs for a bare node:http
 * server writing the same bytes (bench:http, 2026-11-24, 2-core CI machine); fastify's routing,
 * its Request/Reply objects and three hooks, and our per-request validation were the larger part of
 * the difference. The answer itself comes from the same place as on the normal path: the route's
 * handler is called with the parameters the normal path validated for this very URL (a URL means
 * the same thing every time), and its reply goes through `answerOf` (route.ts), the rate limit,
 * CORS, error mapping, metrics and the log line through the same functions the hooks call
 * (server.ts). The fast path only decides, synchronously, whether it may answer:
 *
 * - a GET without a body, whose URL is remembered (the normal path remembers a URL once it
 *   answered it with data and freshness, or bytes with an ETag, to a client without an API key);
 * - the client's rate-limit window is in memory (`RateLimiter.consumeNow`) and the request is
 *   allowed: a client to be looked up in the store, a key to be verified and a 429 go through
 *   fastify, as do HEAD, OPTIONS and everything else.
 *
 * Once it answers, it answers everything the handler gives, a 404 or a 503 included, as the error
 * handler would.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Lru } from '../lib/lru.ts';
import type { HotRoute } from './route.ts';

/** URLs remembered at most; a URL is a few hundred bytes with its parameters. */
export const HOT_URLS = 10_000;

export class HotRoutes {
  private readonly routes = new Lru<string, HotRoute>(HOT_URLS);
  /** requests answered by the fast path (tests read it to know which path answered) */
  answered = 0;
  /** of those, answered from the memo of a copy still fresh (data or a picture drawn from it), without calling the handler (hotAnswer) */
  fromMemo = 0;

  remember(url: string, route: HotRoute): void {
    this.routes.set(url, route);
  }

  /** The remembered route of a request the fast path may answer (`headers`: its headers, read once), else undefined. */
  lookup(req: IncomingMessage, headers: IncomingHttpHeaders): HotRoute | undefined {
    if (req.method !== 'GET' || hasBody(headers)) return undefined;
    return this.routes.get(req.url ?? '');
  }
}

/** Whether a request announces a body (a length other than 0, or chunks). */
const hasBody = (h: IncomingHttpHeaders): boolean => (h['content-length'] !== undefined && h['content-length'] !== '0') || h['transfer-encoding'] !== undefined;

/**
 * An answer given before the request's body was read must close the connection, or the unread body
 * would be parsed as the next request on it (both paths). A request without a body is not complete
 * yet while its headers' event runs (the fast path answers synchronously in it), but nothing of it
 * is left unread.
 */
export const bodyUnread = (req: IncomingMessage): boolean => !req.complete && hasBody(req.headers);
