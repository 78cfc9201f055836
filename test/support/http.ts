/**
 * Real HTTP against a server on 127.0.0.1: `serve(app)` listens on an ephemeral port and returns a
 * client whose paths go on the wire exactly as written (no URL normalisation), so tests can send
 * `%23TAG`, malformed escapes and odd query strings the way a client would.
 */
import { request, Agent, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** the body's bytes (pictures) */
  body: Buffer;
  /** the body parsed as JSON (throws when it is not JSON) */
  json(): any;
}

export interface HttpClient {
  base: string;
  call(method: string, path: string, headers?: Record<string, string>, body?: string): Promise<HttpAnswer>;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  post(path: string, headers?: Record<string, string>, body?: string): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export async function serve(app: FastifyInstance): Promise<HttpClient> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      // Node sends a DELETE or OPTIONS body with neither length nor chunking unless told the length.
      const sized = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = request({ host: '127.0.0.1', port, method, path, headers: sized, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  return {
    base: `http://127.0.0.1:${port}`,
    call,
    get: (path, headers) => call('GET', path, headers),
    post: (path, headers, body) => call('POST', path, headers, body),
    close: async () => {
      agent.destroy();
      await app.close();
    },
  };
}
