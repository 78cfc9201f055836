/**
 * The one log line of a request, at info (both paths, server.ts): method, URL, route, status, ms and
 * where the answer came from (cache: hit — memory or store —, miss — upstream or a render —, stale).
 * Keys, passwords and emails travel in query strings, so the URL is logged without them.
 *
 *   {"level":30,"time":…,"component":"http","method":"GET","url":"/brawlers","route":"/brawlers","status":200,"ms":0.05,"cache":"hit","msg":"request"}
 *
 * The fields a URL always has (method, redacted URL, route) are formatted once per URL the fast path
 * remembers; a line then costs its status, time and cache state (log.ts `infoLines`).
 */
import { infoLines, preformat, type LineWriter, type Logger, type Preformatted } from '../log.ts';
import { redactUrl } from './querystring.ts';

/** The fields of a request's line that its URL decides. */
export const requestLogHead = (method: string, url: string, route: string): Preformatted => preformat({ method, url: redactUrl(url), route });

export type RequestLog = (head: Preformatted, status: number, ms: number, cache: string | undefined) => void;

/** Writes request lines through `logger` (a child with component http), honouring its level at each line. */
export function requestLog(logger: Logger): RequestLog {
  const write: LineWriter = infoLines(logger, 'request', { method: 'GET', url: '/a?b=1', route: '/a', status: 200, ms: 0.25, cache: 'hit' });
  return (head, status, ms, cache) => write(head, { status, ms: Math.round(ms * 100) / 100, cache });
}
