/**
 * Real response bodies of the official API, saved by others in public repositories, read in place
 * from `<repo>/../shared/reference/upstream-captures` (never copied into the project), and a loopback
 * server that answers with them where api.brawlstars.com would:
 *
 *   const captures = loadCaptures();             // null when the folder is absent
 *   const server = await startCaptureServer(captures!);
 *   server.select('/players/%23JRLLR9QU', 3);     // which capture of a path answers (default: the newest)
 *   createUpstreamClient(config, { baseUrl: server.url, tokens: [server.token] });
 *
 * Bodies go out byte for byte as captured. A path nobody captured is a 404 in the official words;
 * a request without a token gets the captured accessDenied body, one with a wrong token the
 * documented "Invalid authorization" (reference/upstream-api.md §9).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (where package.json is). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CAPTURES_DIR = join(REPO_ROOT, '..', 'shared', 'reference', 'upstream-captures');

export interface CaptureVersion {
  /** relative to the captures folder */
  file: string;
  /** when it was captured: YYYY-MM-DD or YYYY-MM */
  date: string;
  source: string;
  note: string;
}

export interface CaptureEntry {
  /** official path with its query, as manifest.json names it (`/players/%23TAG`, `/brawlers?limit=10`), or `ERROR:<what>` */
  path: string;
  status: number;
  /** oldest first */
  versions: CaptureVersion[];
}

export interface Captures {
  dir: string;
  entries: CaptureEntry[];
  /** the bytes of a capture */
  bytes(file: string): Buffer;
  /** a capture parsed as JSON */
  json(file: string): unknown;
}

/** The captures, or null when the folder is not there. */
export function loadCaptures(dir = CAPTURES_DIR): Captures | null {
  const manifest = join(dir, 'manifest.json');
  if (!existsSync(manifest)) return null;
  const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { entries: Record<string, { status: number; versions: CaptureVersion[] }> };
  const cache = new Map<string, Buffer>();
  const bytes = (file: string) => {
    let b = cache.get(file);
    if (!b) cache.set(file, (b = readFileSync(join(dir, file))));
    return b;
  };
  return {
    dir,
    entries: Object.entries(parsed.entries).map(([path, e]) => ({ path, status: e.status, versions: e.versions })),
    bytes,
    json: (file) => JSON.parse(bytes(file).toString('utf8')),
  };
}

/** Epoch ms of a capture date: a day at noon UTC, a month on its 15th. */
export function captureTime(date: string): number {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(date);
  if (!m) throw new Error(`unreadable capture date ${date}`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, m[3] ? Number(m[3]) : 15, 12);
}

export interface CaptureServer {
  /** base URL with the official path prefix (…/v1) */
  url: string;
  /** the bearer token it accepts */
  token: string;
  /** paths (with query) of every request, in order */
  requests: string[];
  /** which capture answers a path from now on (index into its versions) */
  select(path: string, version: number): void;
  close(): Promise<void>;
}

const PREFIX = '/v1';

export async function startCaptureServer(captures: Captures): Promise<CaptureServer> {
  const token = 'captured-bodies-token';
  const byPath = new Map(captures.entries.filter((e) => !e.path.startsWith('ERROR:')).map((e) => [e.path, e]));
  const denied = captures.entries.find((e) => e.path === 'ERROR:missing-authorization');
  const chosen = new Map<string, number>();
  const requests: string[] = [];

  const server = createServer((req, res) => {
    const send = (status: number, body: Buffer | object) => {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
      res.end(bytes);
    };
    const url = req.url ?? '/';
    requests.push(url);
    const auth = /^Bearer\s+(.*)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '';
    if (auth === '') {
      if (denied) return send(denied.status, captures.bytes(denied.versions.at(-1)!.file));
      return send(403, { reason: 'accessDenied', message: 'Missing authorization' });
    }
    if (auth !== token) return send(403, { reason: 'accessDenied', message: 'Invalid authorization' });
    if (!url.startsWith(`${PREFIX}/`)) return send(404, { reason: 'notFound' });
    const path = url.slice(PREFIX.length);
    const entry = byPath.get(path);
    if (!entry) {
      const tag = /^\/(?:players|clubs)\/(%23[^/?]+)/.exec(path)?.[1];
      return send(404, tag ? { reason: 'notFound', message: `Not found with tag ${tag}` } : { reason: 'notFound' });
    }
    const v = entry.versions[chosen.get(path) ?? entry.versions.length - 1]!;
    send(entry.status, captures.bytes(v.file));
  });
  // Idle connections close from the client's side only: see createSimServer in src/sim/server.ts.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PREFIX}`,
    token,
    requests,
    select(path, version) {
      const e = byPath.get(path);
      if (!e || !e.versions[version]) throw new Error(`no capture ${version} of ${path}`);
      chosen.set(path, version);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
