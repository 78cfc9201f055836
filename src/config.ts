/**
 * Every setting of Starr Stats, parsed once from the environment (plus a `.env` file when present).
 * Nothing else in the code reads process.env: callers receive a typed, frozen Config.
 *
 * Each setting is declared once below with its parser, default and one-line description; the
 * README table and .env.example are checked against this list by a test.
 */
import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly value: string,
    readonly problem: string,
  ) {
    super(`Invalid setting ${variable}=${JSON.stringify(value)}: ${problem}`);
    this.name = 'ConfigError';
  }
}

interface Setting<T> {
  /** one-line description, used for .env.example and the README */
  doc: string;
  /** the default as it would be written in the environment ('' = unset) */
  default: string;
  /** parses the raw string; throws a message describing what is expected */
  parse: (raw: string) => T;
}

function setting<T>(doc: string, def: string, parse: (raw: string) => T): Setting<T> {
  return { doc, default: def, parse };
}

function int(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw.trim());
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(`expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

const text = (raw: string): string => raw.trim();
const optionalText = (raw: string): string | undefined => (raw.trim() === '' ? undefined : raw.trim());

function bool(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error('expected true or false');
}

function url(protocols: string[], optional = false) {
  return (raw: string): string | undefined => {
    const v = raw.trim();
    if (v === '' && optional) return undefined;
    const parsed = z.url().safeParse(v);
    if (!parsed.success || !protocols.some((p) => v.startsWith(`${p}:`))) {
      throw new Error(`expected a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`);
    }
    return v.replace(/\/+$/, '');
  };
}

function list(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string): T => {
    const v = raw.trim().toLowerCase() as T;
    if (!values.includes(v)) throw new Error(`expected one of ${values.join(', ')}`);
    return v;
  };
}

/** What a process runs (ROLE): everything, or one part of a cluster. */
export const ROLES = ['all', 'api', 'worker', 'bot'] as const;
export type Role = (typeof ROLES)[number];

/** Gateway shard ids: `0,1,5` or ranges `0-3,8-11`; unset = every shard of SHARD_COUNT. */
function shardIds(raw: string): number[] | undefined {
  if (raw.trim() === '') return undefined;
  const ids = new Set<number>();
  for (const part of list(raw)) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    if (!m) throw new Error(`expected shard ids like 0,1 or ranges like 0-3, got ${JSON.stringify(part)}`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`the range ${part} runs backwards`);
    for (let i = from; i <= to; i++) ids.add(i);
  }
  return [...ids].sort((a, b) => a - b);
}

function optionalInt(min: number, max: number) {
  const parse = int(min, max);
  return (raw: string): number | undefined => (raw.trim() === '' ? undefined : parse(raw));
}

function countries(raw: string): string[] {
  const codes = list(raw).map((c) => c.toUpperCase());
  for (const c of codes) {
    if (!/^[A-Z]{2}$/.test(c)) throw new Error(`expected comma-separated two-letter country codes, got ${JSON.stringify(c)}`);
  }
  return codes;
}

function hex32(raw: string): string | undefined {
  const v = raw.trim();
  if (v === '') return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(v)) throw new Error('expected the application public key: 64 hex characters');
  return v.toLowerCase();
}

function secret(raw: string): string | undefined {
  const v = raw.trim();
  if (v === '') return undefined;
  if (v.length < 16) throw new Error('expected at least 16 characters (a long random string)');
  return v;
}

export const settings = {
  PORT: setting('Port of the HTTP statistics API', '8080', int(0, 65535)),
  HOST: setting('Address the HTTP API listens on', '0.0.0.0', text),
  DATA_DIR: setting('Folder for the SQLite cache, history and settings', './data', text),
  LOG_LEVEL: setting('Log level: fatal, error, warn, info, debug, trace or silent', 'info',
    oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const)),
  BRAWLSTARS_API_TOKEN: setting('Official API token(s), comma-separated; unset = simulated world', '', list),
  BRAWLSTARS_API_URL: setting('Official API base URL (override for a proxy)', 'https://api.brawlstars.com/v1',
    url(['https', 'http'])),
  UPSTREAM_TIMEOUT_MS: setting('Timeout of one upstream request in milliseconds', '10000', int(100, 120_000)),
  UPSTREAM_RETRIES: setting('Retries of an upstream request after a 5xx, reset or timeout', '2', int(0, 10)),
  UPSTREAM_STALE_WAIT_MS: setting('How long a user with a last good copy waits for upstream before being served the copy (ms)', '1000',
    int(0, 120_000)),
  UPSTREAM_USER_BUDGET_MS: setting("How long a user's upstream request may take in all, retries included, when nothing is cached (ms)", '2500',
    int(100, 600_000)),
  UPSTREAM_CONNECTIONS: setting('Upstream connection pool size per origin', '32', int(1, 1024)),
  UPSTREAM_RPS: setting('Upstream requests per second per token (polling and interactive share it)', '10',
    int(1, 10_000)),
  CACHE_URL: setting('Cache store: sqlite://<file> (default under DATA_DIR, or REDIS_URL when set) or redis://host:port', '',
    url(['sqlite', 'redis', 'rediss'], true)),
  ROLE: setting('What this process runs: all (one process), or api, worker or bot as part of a cluster (needs DATABASE_URL and REDIS_URL)', 'all',
    oneOf(ROLES)),
  REDIS_URL: setting('Redis shared by the processes of a cluster: single-flight, upstream budget, rate limits, locks, job queues, and the cache unless CACHE_URL says otherwise (unset = one process, in memory)', '',
    url(['redis', 'rediss'], true)),
  REDIS_PREFIX: setting('Prefix of every key this installation keeps in Redis (several installations can share one Redis)', '',
    (raw: string) => {
      const v = raw.trim();
      if (v !== '' && !/^[A-Za-z0-9_.:-]{1,64}$/.test(v)) throw new Error('expected up to 64 letters, digits, _ . : -');
      return v;
    }),
  DATABASE_URL: setting('Durable store: postgres://user:password@host:port/database (unset = SQLite files under DATA_DIR)', '',
    url(['postgres', 'postgresql'], true)),
  DATABASE_SCHEMA: setting('PostgreSQL schema of the durable tables: history, keys, settings (created when missing; unset = public)', '',
    (raw: string) => {
      const v = raw.trim();
      if (v === '') return undefined;
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(v)) throw new Error('expected a lower-case SQL identifier (letters, digits, _)');
      return v;
    }),
  CACHE_TTL_SECONDS: setting('How long upstream answers are served from cache', '120', int(1, 86_400)),
  CACHE_MEMORY_MB: setting('Megabytes of answers (as JSON) kept in the in-process cache layer; 0 turns it off', '16', int(0, 65_536)),
  RENDER_CACHE_MB: setting('Megabytes of rendered PNG pictures kept in memory (the most asked for; the rest are read back from RENDER_DISK_CACHE_MB); 0 turns it off', '4', int(0, 65_536)),
  RENDER_DISK_CACHE_MB: setting('Megabytes of rendered PNG pictures kept as files under DATA_DIR/pictures, read back when memory has let them go; 0 turns it off', '256', int(0, 1_048_576)),
  PICTURE_STALE_WAIT_MS: setting('How long a picture request waits for a new drawing when the picture of the same thing drawn from an older copy is kept in memory, before being answered that one marked stale (ms)', '50',
    int(0, 120_000)),
  SIM_SEED: setting('Seed of the simulated world', 'starr', text),
  SIM_PLAYERS: setting('Players in the simulated world', '5000', int(10, 10_000_000)),
  SIM_CLUBS: setting('Clubs in the simulated world', '500', int(1, 1_000_000)),
  RATE_LIMIT_FREE: setting('Requests per minute per client IP without an API key', '60', int(1, 1_000_000_000)),
  RATE_LIMIT_KEY: setting('Requests per minute per API key', '600', int(1, 1_000_000_000)),
  TRUST_PROXY: setting('Honour X-Forwarded-For (set behind a reverse proxy only)', 'false', bool),
  TRACK_DAYS: setting('Days a looked-up player or club stays tracked after its last view', '14', int(1, 3650)),
  POLL_PLAYER_MINUTES: setting('Minutes between polls of a tracked player', '30', int(1, 1440)),
  POLL_CLUB_MINUTES: setting('Minutes between polls of a tracked club', '30', int(1, 1440)),
  RANKING_COUNTRIES: setting('Countries whose rankings are polled hourly, besides global',
    'US,BR,MX,DE,FR,ES,IT,RU,TR,KR,JP,GB', countries),
  HISTORY_DAYS: setting('Days of history kept before pruning', '365', int(1, 36_500)),
  POLLER: setting('Run the background poller in this process', 'true', bool),
  POLL_SCAN_SECONDS: setting('With REDIS_URL (polls as jobs): the longest a worker waits between two looks at the durable poll schedule; it looks sooner when the next poll it knows of is due sooner, so a poll made due from outside (another process, an operator) is found at most this late', '60', int(1, 3600)),
  POLL_JOB_LOCK_SECONDS: setting('With REDIS_URL (polls as jobs): seconds a worker holds a running poll job between renewals; a job whose worker died is taken over by another worker within about twice this', '30', int(1, 3600)),
  ASSET_CDN_URL: setting('Base URL of a brawler/icon art CDN (unset = drawn art only)', '',
    url(['https', 'http'], true)),
  DISCORD_TOKEN: setting('Discord bot token; when set, npm start also runs the gateway bot', '', optionalText),
  DISCORD_APP_ID: setting('Discord application id (read from the token when unset)', '', optionalText),
  DISCORD_PUBLIC_KEY: setting('Discord application public key; enables POST /interactions', '', hex32),
  DISCORD_API_URL: setting('Discord REST base URL: a REST proxy shared by every bot process (starr discord-proxy), or a local fake in tests', '',
    url(['https', 'http'], true)),
  SHARD_COUNT: setting("Gateway shards of the whole bot (ROLE=bot or all; unset = Discord's recommendation, every shard in this process)", '',
    optionalInt(1, 65_535)),
  SHARD_IDS: setting('Gateway shards this process runs, e.g. 0-3 or 0,2 (needs SHARD_COUNT; unset = all of them)', '', shardIds),
  BOARD_CHECK_SECONDS: setting('How often a bot process (ROLE=bot or all) looks for leaderboards that are due; each board is still refreshed once per its own interval', '60', int(1, 3600)),
  FEED_CHECK_SECONDS: setting('How often a bot process (ROLE=bot or all) looks for club changes its feeds have not posted yet; each change is still posted once', '60', int(1, 3600)),
  STARR_SECRET: setting('Secret that encrypts per-server API keys at rest (AES-256-GCM)', '', secret),
} as const;

type Settings = typeof settings;
export type Config = { readonly [K in keyof Settings]: ReturnType<Settings[K]['parse']> };
export type SettingName = keyof Settings;

/** Reads `.env` (if present) without overriding variables already set in the environment. */
export function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

/**
 * Parses every setting. Throws ConfigError naming the first bad variable, its value and what is
 * expected.
 */
export function loadConfig(env: Record<string, string | undefined>, opts: { envFile?: string } = {}): Config {
  const fromFile = opts.envFile ? readEnvFile(opts.envFile) : {};
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(settings) as [SettingName, Setting<unknown>][]) {
    const raw = env[name] ?? fromFile[name] ?? s.default;
    try {
      out[name] = s.parse(raw);
    } catch (err) {
      throw new ConfigError(name, raw, (err as Error).message);
    }
  }
  const cfg = out as Config;
  if (cfg.SHARD_IDS) {
    const raw = env.SHARD_IDS ?? fromFile.SHARD_IDS ?? '';
    if (cfg.SHARD_COUNT === undefined) throw new ConfigError('SHARD_IDS', raw, 'set SHARD_COUNT too: the shard ids of a process are ids out of the whole bot\'s count');
    const over = cfg.SHARD_IDS.filter((id) => id >= cfg.SHARD_COUNT!);
    if (over.length) throw new ConfigError('SHARD_IDS', raw, `shard ids run from 0 to SHARD_COUNT-1 (${cfg.SHARD_COUNT - 1}); got ${over.join(', ')}`);
  }
  return Object.freeze({ ...cfg, DATA_DIR: resolve(cfg.DATA_DIR) });
}

/** The cache URL actually used: CACHE_URL, else the cluster's REDIS_URL, else a SQLite file under DATA_DIR. */
export function cacheUrl(cfg: Config): string {
  return cfg.CACHE_URL ?? cfg.REDIS_URL ?? `sqlite://${resolve(cfg.DATA_DIR, 'cache.sqlite')}`;
}

/**
 * Why this configuration cannot run its ROLE, or null. A part of a cluster (api, worker, bot)
 * shares durable data through PostgreSQL and everything else through Redis; on SQLite files and
 * in-process memory a second process would work on its own copy.
 */
export function roleProblem(cfg: Config): string | null {
  if (cfg.ROLE === 'all') return null;
  const missing = [
    ...(cfg.DATABASE_URL ? [] : ['DATABASE_URL (postgres://…)']),
    ...(cfg.REDIS_URL ? [] : ['REDIS_URL (redis://…)']),
  ];
  if (missing.length === 0) return null;
  return (
    `ROLE=${cfg.ROLE} runs as one part of a cluster and needs the stores its processes share: set ${missing.join(' and ')}. ` +
    'To run everything in one process, leave ROLE unset (all).'
  );
}

/**
 * Where what users saved (API keys, settings, links, boards) lives: DATABASE_URL, or a SQLite
 * file under DATA_DIR. Never CACHE_URL: a cache may be lost.
 */
export function durableUrl(cfg: Config): string {
  return cfg.DATABASE_URL ?? `sqlite://${resolve(cfg.DATA_DIR, 'settings.sqlite')}`;
}

/** True when no official token is configured and the simulated world serves as upstream. */
export function usesSimulator(cfg: Config): boolean {
  return cfg.BRAWLSTARS_API_TOKEN.length === 0;
}

/** Renders .env.example from the declarations, so the two can never drift apart. */
export function renderEnvExample(): string {
  const lines = ['# Starr Stats settings. Every variable is optional; the value shown is the default.', ''];
  for (const [name, s] of Object.entries(settings)) {
    lines.push(`# ${s.doc}`, `${name}=${s.default}`, '');
  }
  return lines.join('\n');
}
