/**
 * The Redis a cluster's processes share (REDIS_URL): one ioredis connection per use, every key
 * under the installation's prefix (REDIS_PREFIX; tests give each suite its own).
 *
 * ioredis rather than the `redis` client @keyv/redis uses: BullMQ is built on it, and one client
 * library for the coordination code (locks, claims, the shared token bucket, queues) keeps one set
 * of reconnection rules. The response cache stays on keyv (src/store/keyv.ts).
 */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

export type { Redis };

/**
 * ioredis is loaded by the first connection, not with this module: coordination and peer flights
 * import it in every process, and one without REDIS_URL never connects (ioredis and its 33 modules
 * were ~1 MB of its heap; docs/benchmarks.md, Memory). ioredis is CommonJS: `require` gives the
 * module instance an `import` would (BullMQ's included).
 */
const requireModule = createRequire(import.meta.url);
let RedisClient: typeof Redis | undefined;

export interface RedisTarget {
  /** redis://… or rediss://… */
  url: string;
  /** prefix of every key, e.g. `starr:` ('' = none) */
  prefix: string;
}

/**
 * A new connection. `forQueues` gives the options BullMQ's blocking connections need
 * (maxRetriesPerRequest null); other uses fail a command after a few retries instead of waiting
 * for Redis forever.
 */
export function connectRedis(target: RedisTarget, opts: { forQueues?: boolean; name?: string } = {}): Redis {
  const options: RedisOptions = {
    lazyConnect: false,
    enableAutoPipelining: true,
    connectionName: opts.name ?? 'starr',
    maxRetriesPerRequest: opts.forQueues ? null : 3,
    // BullMQ prefixes its own keys (its `prefix` option); a key prefix on the connection would double it.
    ...(opts.forQueues ? {} : { keyPrefix: target.prefix }),
  };
  RedisClient ??= (requireModule('ioredis') as typeof import('ioredis')).Redis;
  const client = new RedisClient(target.url, options);
  // Without a listener ioredis prints every failed reconnect to stderr while Redis is down. The
  // failures reach whoever sends a command (and log there), and /readyz names Redis.
  client.on('error', () => undefined);
  return client;
}

/** `prefix` made to end in ':' (so `starr` and `starr:` mean the same), or '' for none. */
export function normalisePrefix(prefix: string): string {
  if (prefix === '') return '';
  return prefix.endsWith(':') ? prefix : `${prefix}:`;
}
