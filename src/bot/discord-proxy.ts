/**
 * One Discord REST client for every bot process: @discordjs/proxy in front of Discord's REST API.
 * Each process keeps its own rate-limit buckets, but Discord counts its global limit (50 requests
 * per second per bot) across all of them; behind this proxy one @discordjs/rest queue sees every
 * request, so the processes share the buckets and the global limit. The bot processes point
 * DISCORD_API_URL at it (`http://host:port/api`); they send their own Authorization header, which
 * the proxy passes on, so the proxy holds no token.
 *
 *   const proxy = await startDiscordProxy({ port: 8081, host: '127.0.0.1' });
 *   // DISCORD_API_URL=http://127.0.0.1:8081/api
 *   await proxy.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { proxyRequests } from '@discordjs/proxy';
// @discordjs/rest itself, not discord.js's copy of it: the proxy recognises Discord's errors by
// their class, and discord.js loads the CommonJS build (another class than the proxy's ESM one).
// Through discord.js a 400 reached the bot as an empty 200.
import { REST, type RESTOptions } from '@discordjs/rest';

export interface DiscordProxyOptions {
  port: number;
  host: string;
  /** Discord's REST base without the version (default https://discord.com/api; a fake in tests) */
  upstream?: string;
}

export interface DiscordProxy {
  /** what the bot processes set as DISCORD_API_URL */
  url: string;
  close(): Promise<void>;
}

/** Marks every request the proxy sends upstream (Discord sees `DiscordBot (...) starr-discord-proxy`). */
export const PROXY_USER_AGENT = 'starr-discord-proxy';

async function bytes(body: unknown): Promise<unknown> {
  if (body && typeof body === 'object' && Symbol.asyncIterator in body) {
    const chunks: Buffer[] = [];
    for await (const c of body as AsyncIterable<Buffer>) chunks.push(c);
    return Buffer.concat(chunks);
  }
  return body;
}

export async function startDiscordProxy(opts: DiscordProxyOptions): Promise<DiscordProxy> {
  const rest = new REST({
    ...(opts.upstream ? { api: opts.upstream } : {}),
    userAgentAppendix: PROXY_USER_AGENT,
    // The proxy passes the incoming request body on as a stream; Node's fetch (as the bot's own
    // REST clients use, see discord-rest.ts) takes it as bytes.
    makeRequest: async (url, init) => fetch(url, { ...(init as RequestInit), body: (await bytes(init.body)) as RequestInit['body'] }) as ReturnType<RESTOptions['makeRequest']>,
  });
  const handle = proxyRequests(rest);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    Promise.resolve(handle(req, res)).catch(() => {
      if (res.writableEnded) return;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Discord could not be reached', code: 0 }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/api`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
