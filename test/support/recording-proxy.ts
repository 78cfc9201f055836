/**
 * A loopback HTTP proxy in front of the simulated world that records every request reaching
 * upstream (path, bearer token, connection) and can answer one itself. Tests count upstream calls
 * and see which token a request used from the server side, and produce the conditions the sim
 * cannot: a throttle aimed at a single token, an answer that never comes.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  path: string;
  token: string;
  /** which TCP connection carried it (1, 2, ...) */
  connection: number;
  /** true when the client went away while the request was held back (it never reached upstream) */
  abandoned?: boolean;
}

export interface Canned {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface RecordingProxy {
  /** base URL with the same path prefix as the target (…/v1) */
  url: string;
  requests: Recorded[];
  /** TCP connections opened to the proxy so far */
  connections(): number;
  /**
   * answer instead of upstream when this returns something; 'hold' never answers (the client must
   * give up); a promise holds the request back until it resolves, then forwards it — unless the
   * client went away meanwhile (a killed process): then it is marked `abandoned` and dropped
   */
  intercept: ((r: Recorded) => Canned | 'hold' | Promise<void> | undefined) | null;
  /** resolves once `requests` holds at least `n` entries */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

function tokenOf(headers: IncomingHttpHeaders): string {
  return (headers.authorization ?? '').replace(/^Bearer\s+/i, '');
}

export async function startRecordingProxy(targetBase: string): Promise<RecordingProxy> {
  const target = new URL(targetBase);
  let connections = 0;
  const socketIds = new WeakMap<object, number>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const proxy: RecordingProxy = {
    url: '',
    requests: [],
    connections: () => connections,
    intercept: null,
    received: (n) =>
      proxy.requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer((req, res) => {
    const rec: Recorded = {
      path: req.url ?? '/',
      token: tokenOf(req.headers),
      connection: socketIds.get(req.socket) ?? 0,
    };
    proxy.requests.push(rec);
    for (const w of waiters.filter((w) => proxy.requests.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const canned = proxy.intercept?.(rec);
    if (canned === 'hold') return;
    if (canned instanceof Promise) {
      let gone = false;
      res.once('close', () => {
        if (!res.writableEnded) gone = true;
      });
      // Checked after the event loop's current round: a client killed just before the promise
      // resolved has its end of the connection closed already, but the socket's end may sit in the
      // same round of events as the news of its death, after whatever resolved the promise.
      void canned.then(() =>
        setImmediate(() => {
          if (gone || req.socket.destroyed || req.socket.readableEnded) rec.abandoned = true;
          else forward();
        }),
      );
      return;
    }
    if (canned) {
      const body = JSON.stringify(canned.body);
      res.writeHead(canned.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...canned.headers });
      res.end(body);
      return;
    }
    forward();

    function forward(): void {
      const up = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (ures) => {
          res.writeHead(ures.statusCode ?? 502, ures.headers);
          ures.pipe(res);
        },
      );
      // Upstream dropped the connection: drop ours too, so the client sees what it would have seen.
      up.on('error', () => req.socket.destroy());
      if (req.readableEnded) up.end();
      else req.pipe(up);
    }
  });
  server.on('connection', (socket) => socketIds.set(socket, ++connections));
  // Idle connections close from the client's side only: see createSimServer in src/sim/server.ts.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy.url = `http://127.0.0.1:${port}${target.pathname.replace(/\/+$/, '')}`;
  return proxy;
}
