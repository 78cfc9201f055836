/**
 * Query strings parsed the way Starlette (under FastAPI) parses them, so the same URL means the
 * same thing here: `&`-separated pairs, `+` is a space, blank values kept (`?limit=` is the empty
 * string, which is then not an integer), a name without `=` has the empty value, the last of
 * repeated names wins, and percent-escapes decode as UTF-8 with invalid bytes replaced (U+FFFD)
 * and malformed escapes left as they are. Never throws.
 */

/** Python's urllib.parse.unquote(s, 'utf-8', 'replace'). */
export function unquote(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

/** All pairs in order, as parse_qsl(keep_blank_values=True). */
export function parsePairs(qs: string): [string, string][] {
  const out: [string, string][] = [];
  if (qs === '') return out;
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    out.push([unquote(name.replace(/\+/g, ' ')), unquote(value.replace(/\+/g, ' '))]);
  }
  return out;
}

/** Name → value with the last occurrence winning (Starlette's QueryParams.get). */
export function parseQuery(qs: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of parsePairs(qs)) out[k] = v;
  return out;
}

/** The names whose values never reach a log line. */
const SECRET_PARAMS = new Set(['api_key', 'password', 'email', 'token', 'key']);

/** A URL fit for logs: values of secret query parameters replaced by `***`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const redacted = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const name = unquote((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
      return eq >= 0 && SECRET_PARAMS.has(name) ? `${part.slice(0, eq)}=***` : part;
    })
    .join('&');
  return `${url.slice(0, q)}?${redacted}`;
}
