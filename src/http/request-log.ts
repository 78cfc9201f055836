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
import { infoLines, jsonValue, preformat, type LineWriter, type Logger, type Preformatted, type TailFormat } from '../log.ts';
import { redactUrl } from './querystring.ts';

/** The fields of a request's line that its URL decides. */
export const requestLogHead = (method: string, url: string, route: string): Preformatted => preformat({ method, url: redactUrl(url), route });

export type RequestLog = (head: Preformatted, status: number, ms: number, cache: string | undefined) => void;

/** `,"status":N` and `,"cache":"…"` as written, made once each: statuses and cache states are few. */
const statusText: (string | undefined)[] = [];
const cacheText = new Map<string, string>();

/**
 * A request line's own fields, status, ms and cache, as pino writes them (infoLines checks it does),
 * in four concatenations: the generic `,"k":v` per key took 16 with the line's others and a String()
 * of the status (~1,000 instructions of a cached answer in callgrind, docs/benchmarks.md *HTTP API:
 * cached answers*).
 */
const requestTail: TailFormat = (t) => {
  const status = t.status as number;
  const s = Number.isInteger(status) && status >= 100 && status < 600 ? (statusText[status] ??= `,"status":${status}`) : `,"status":${jsonValue(status)}`;
  const cache = t.cache as string | undefined;
  if (cache === undefined) return s + ',"ms":' + jsonValue(t.ms!);
  let c = cacheText.get(cache);
  if (c === undefined) {
    c = `,"cache":${jsonValue(cache)}`;
    if (cacheText.size < 16) cacheText.set(cache, c);
  }
  return s + ',"ms":' + jsonValue(t.ms!) + c;
};

/** Writes request lines through `logger` (a child with component http), honouring its level at each line. */
export function requestLog(logger: Logger): RequestLog {
  const write: LineWriter = infoLines(
    logger,
    'request',
    { head: { method: 'GET', url: '/a?b=1', route: '/a' }, tail: { status: 200, ms: 0.25, cache: 'hit' } },
    requestTail,
  );
  return (head, status, ms, cache) => write(head, { status, ms: Math.round(ms * 100) / 100, cache });
}
