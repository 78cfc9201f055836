/**
 * A cluster of real OS processes on 127.0.0.1, as an operator would run one: the simulated world
 * (`starr sim`, with its request log), `starr serve --role api|worker|bot` processes sharing one
 * PostgreSQL (a schema of this run, dropped by close) and one Redis (every key under a prefix of
 * this run, deleted by close), and optionally the fake Discord in the test process for the bots.
 *
 *   const c = await startCluster({ api: 2, worker: 2, bot: 2, discord: true, env: { RATE_LIMIT_FREE: '5' } });
 *   await c.api[0]!.get('/players/%23ABC');                  // fetch against one process
 *   const calls = await c.sim.log('/players/');             // what reached the game API, from all of them
 *   await c.worker[0]!.waitForLine((l) => l.msg === 'poll done');   // an event in its log
 *   await c.worker[1]!.kill();  await c.worker[1]!.restart();
 *   await c.close();                                         // in afterAll: kills every child, cleans up
 *
 * Each child gets an explicit environment (nothing of the test process's is inherited beyond PATH)
 * and a DATA_DIR of its own. Waiting is on events — a log line, the sim's log, the fake Discord —
 * with a generous hang guard, never a sleep: the machine is shared and slow.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Role } from '../../src/config.ts';
import type { FaultUpdate, RequestLogView } from '../../src/sim/index.ts';
import { FakeDiscord, type FakeDiscordOptions, type FakeGuild } from './fake-discord.ts';
import { loadCommands } from '../../src/bot/command.ts';
import { deployCommands } from '../../src/bot/deploy.ts';
import { discordRest } from '../../src/bot/discord-rest.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'starr.js');

/** A hang guard, not a deadline: start-up of a process on a busy 2-core machine can take long. */
export const HANG_GUARD_MS = 120_000;

/** One line a process wrote: its JSON log record (pino), or the plain text the CLI prints. */
export interface LogLine {
  text: string;
  /** the parsed record of a JSON line (msg, level, component, …); null for plain text */
  json: Record<string, unknown> | null;
  /** the record's message, or the plain text */
  msg: string;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** the body parsed as JSON (undefined when it is not JSON) */
  json: any;
}

type LinePredicate = RegExp | ((line: LogLine) => boolean);

export interface ClusterProcess {
  readonly role: Role | 'sim';
  /** e.g. api-0, worker-1, sim */
  readonly name: string;
  /** where it listens (http://127.0.0.1:port); for the sim, the root beside /v1 */
  readonly url: string;
  /** every line written, across restarts */
  readonly lines: readonly LogLine[];
  readonly alive: boolean;
  /** the exit code or signal of the last incarnation that ended */
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /**
   * Resolves with the first line from `from` on (default: the next line written) that matches;
   * rejects when the process exits first or after the hang guard.
   */
  waitForLine(match: LinePredicate, opts?: { from?: number; timeoutMs?: number }): Promise<LogLine>;
  /** A request to the process (path below its url). */
  fetch(path: string, init?: RequestInit): Promise<HttpAnswer>;
  get(path: string): Promise<HttpAnswer>;
  /** SIGTERM (default) or another signal, then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: dies mid-work, as a crash or an OOM kill. */
  kill(): Promise<void>;
  /** Starts it again with the same settings and DATA_DIR (after stop or kill). */
  restart(): Promise<void>;
}

export interface ClusterOptions {
  api?: number;
  worker?: number;
  bot?: number;
  /** settings of every serve process, as environment strings */
  env?: Record<string, string>;
  /** settings of one process, over `env` */
  envOf?: (role: Role, index: number) => Record<string, string>;
  sim?: { seed?: string; players?: number; clubs?: number; latencyMs?: number };
  /**
   * The fake Discord in the test process, with one guild and the commands deployed: bot processes
   * log in to it (SHARD_IDS = their index, SHARD_COUNT = the number of bots), api processes take
   * its public key for POST /interactions. Options say how the fake plays (max_concurrency…).
   */
  discord?: boolean | Omit<FakeDiscordOptions, 'realTimeDeadlines'>;
}

export interface SimControl {
  /** base URL of the official paths (…/v1) */
  readonly url: string;
  /** the token every process uses (bound to loopback, like an official key to its IP) */
  readonly token: string;
  readonly process: ClusterProcess;
  /**
   * The requests of the official paths it received since the last reset; `contains` filters by
   * path; `atLeast` waits until that many such requests arrived (the sim answers after a minute anyway).
   */
  log(contains?: string, opts?: { atLeast?: number }): Promise<RequestLogView>;
  resetLog(): Promise<void>;
  faults(update: FaultUpdate): Promise<void>;
}

export interface Cluster {
  sim: SimControl;
  api: ClusterProcess[];
  worker: ClusterProcess[];
  bot: ClusterProcess[];
  /** every serve process (not the sim) */
  all(): ClusterProcess[];
  discord: { fake: FakeDiscord; guild: FakeGuild } | null;
  /** REDIS_PREFIX of this run (ends with ':') and DATABASE_SCHEMA */
  readonly redisPrefix: string;
  readonly schema: string;
  /** a connection to the shared Redis, without a key prefix (keys of this run start with redisPrefix) */
  readonly redis: Redis;
  /** a query on the shared PostgreSQL, in this run's schema */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** one more serve process of a role, with the cluster's settings (and `env` over them) */
  spawn(role: Role, env?: Record<string, string>): Promise<ClusterProcess>;
  /** kills every child (even after a failed test), drops the schema, deletes the run's Redis keys */
  close(): Promise<void>;
}

/** The shared servers of CI (DATABASE_URL, REDIS_URL): the reason a cluster cannot start, or null. */
export function clusterUnavailable(): string | null {
  const missing = [...(process.env.DATABASE_URL ? [] : ['DATABASE_URL']), ...(process.env.REDIS_URL ? [] : ['REDIS_URL'])];
  return missing.length === 0 ? null : `a cluster needs PostgreSQL and Redis: set ${missing.join(' and ')}`;
}

function parseLine(text: string): LogLine {
  if (text.startsWith('{')) {
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      return { text, json, msg: typeof json.msg === 'string' ? json.msg : '' };
    } catch {
      // a line that merely starts with a brace
    }
  }
  return { text, json: null, msg: text };
}

const matches = (m: LinePredicate, l: LogLine) => (m instanceof RegExp ? m.test(l.text) : m(l));

async function request(base: string, path: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const res = await fetch(base + path, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * One child process, restartable. `ready` is the line that says it serves (it carries the URL).
 */
class Child implements ClusterProcess {
  private child: ChildProcess | null = null;
  private readonly out: LogLine[] = [];
  private readonly listeners = new Set<(l: LogLine | null) => void>();
  private exited: Promise<void> = Promise.resolve();
  url = '';
  exit: ClusterProcess['exit'] = null;

  constructor(
    readonly role: Role | 'sim',
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly ready: RegExp,
    private readonly onReady: (m: RegExpExecArray) => string,
  ) {}

  get lines(): readonly LogLine[] {
    return this.out;
  }

  get alive(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.name} is running`);
    const from = this.out.length;
    const child = spawn(process.execPath, [BIN, ...this.args], { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exit = null;
    for (const stream of [child.stdout!, child.stderr!]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const text of parts) this.push(parseLine(text));
      });
      stream.on('end', () => {
        if (rest) this.push(parseLine(rest));
        rest = '';
      });
    }
    this.exited = new Promise<void>((resolve) => {
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        if (this.child === child) this.child = null;
        for (const f of [...this.listeners]) f(null);
        resolve();
      });
    });
    const line = await this.waitForLine(this.ready, { from });
    this.url = this.onReady(this.ready.exec(line.text)!);
  }

  private push(l: LogLine): void {
    this.out.push(l);
    for (const f of [...this.listeners]) f(l);
  }

  waitForLine(match: LinePredicate, opts: { from?: number; timeoutMs?: number } = {}): Promise<LogLine> {
    const from = opts.from ?? this.out.length;
    const seen = this.out.slice(from).find((l) => matches(match, l));
    if (seen) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve, reject) => {
      const done = () => {
        this.listeners.delete(listen);
        clearTimeout(guard);
      };
      const fail = (why: string) => {
        done();
        const tail = this.out.slice(-30).map((l) => `  ${l.text}`).join('\n');
        reject(new Error(`${this.name}: ${why} while waiting for ${String(match)}; its last lines:\n${tail}`));
      };
      const listen = (l: LogLine | null) => {
        if (l === null) return fail(`exited (${JSON.stringify(this.exit)})`);
        if (!matches(match, l)) return;
        done();
        resolve(l);
      };
      const guard = setTimeout(() => fail(`no such line within ${(opts.timeoutMs ?? HANG_GUARD_MS) / 1000} s`), opts.timeoutMs ?? HANG_GUARD_MS);
      if (!this.child) return fail('not running');
      this.listeners.add(listen);
    });
  }

  fetch(path: string, init?: RequestInit): Promise<HttpAnswer> {
    return request(this.url, path, init);
  }

  get(path: string): Promise<HttpAnswer> {
    return this.fetch(path);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const child = this.child;
    if (child) {
      child.kill(signal);
      await this.exited;
    }
    return this.exit ?? { code: null, signal: null };
  }

  async kill(): Promise<void> {
    await this.stop('SIGKILL');
  }

  restart(): Promise<void> {
    return this.start();
  }
}

const LISTENING = /listening on (http:\/\/\S+?) \(/;
const SIM_READY = /^Simulated Brawl Stars API .* at (http:\/\/\S+)$/;

/** Starts the sim, then every serve process at once (as an orchestrator would). */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const unavailable = clusterUnavailable();
  if (unavailable) throw new Error(unavailable);
  const DATABASE_URL = process.env.DATABASE_URL!;
  const REDIS_URL = process.env.REDIS_URL!;
  const id = `starr_c${process.pid}_${randomBytes(4).toString('hex')}`;
  const redisPrefix = `${id}:`;
  const schema = id;
  const dir = mkdtempSync(join(tmpdir(), 'starr-cluster-'));
  const base = { PATH: process.env.PATH ?? '', HOME: dir, TZ: 'UTC', NO_COLOR: '1' };
  const children: Child[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 3 });
  let fake: FakeDiscord | null = null;
  let schemaMade = false;

  const cleanup = async () => {
    // Children first: nothing may write into the schema or under the prefix while they are removed.
    await Promise.allSettled(children.map((c) => c.kill()));
    await fake?.close().catch(() => undefined);
    if (redis.status === 'ready') {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
      await redis.quit().catch(() => redis.disconnect());
    } else {
      redis.disconnect();
    }
    if (schemaMade) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await redis.connect();
    const pgc = new pg.Client({ connectionString: DATABASE_URL });
    await pgc.connect();
    try {
      await pgc.query(`CREATE SCHEMA ${schema}`);
      schemaMade = true;
    } finally {
      await pgc.end();
    }

    // ---- the simulated world, its own process
    const s = opts.sim ?? {};
    const simArgs = ['sim', '--port', '0', '--host', '127.0.0.1', '--seed', s.seed ?? 'cluster', '--players', String(s.players ?? 300), '--clubs', String(s.clubs ?? 30)];
    if (s.latencyMs) simArgs.push('--latency', String(s.latencyMs));
    const simChild = new Child('sim', 'sim', simArgs, { ...base, DATA_DIR: join(dir, 'sim'), LOG_LEVEL: 'info' }, SIM_READY, (m) => m[1]!.replace(/\/v1$/, ''));
    children.push(simChild);
    await simChild.start();
    const tokenLine = await simChild.waitForLine(/^Token: /, { from: 0 });
    const token = tokenLine.text.slice('Token: '.length).trim();
    const auth = { authorization: `Bearer ${token}` };
    const sim: SimControl = {
      url: `${simChild.url}/v1`,
      token,
      process: simChild,
      async log(contains, opts = {}) {
        const q = new URLSearchParams({ ...(contains ? { path: contains } : {}), ...(opts.atLeast !== undefined ? { atLeast: String(opts.atLeast) } : {}) });
        const a = await request(simChild.url, `/_sim/log${q.size ? `?${q}` : ''}`, { headers: auth });
        if (a.status !== 200) throw new Error(`GET /_sim/log answered ${a.status}: ${a.text}`);
        const view = a.json as RequestLogView;
        if (opts.atLeast !== undefined && view.requests.length < opts.atLeast) {
          throw new Error(`the sim got ${view.requests.length} of the ${opts.atLeast} requests${contains ? ` to ${contains}` : ''} waited for`);
        }
        return view;
      },
      async resetLog() {
        const a = await request(simChild.url, '/_sim/log', { method: 'DELETE', headers: auth });
        if (a.status !== 200) throw new Error(`DELETE /_sim/log answered ${a.status}: ${a.text}`);
      },
      async faults(update) {
        const a = await request(simChild.url, '/_sim/faults', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(update) });
        if (a.status !== 200) throw new Error(`POST /_sim/faults answered ${a.status}: ${a.text}`);
      },
    };

    // ---- the fake Discord, in this process
    let discord: Cluster['discord'] = null;
    if (opts.discord) {
      fake = await FakeDiscord.start(opts.discord === true ? {} : opts.discord);
      const guild = fake.addGuild({ name: 'Starr Cluster Server', channels: [{ name: 'general' }, { name: 'boards' }] });
      const commands = await loadCommands();
      await deployCommands({ rest: discordRest(fake.apiUrl, fake.token), appId: fake.appId, guildId: guild.id, definitions: commands.definitions() });
      discord = { fake, guild };
    }

    const counts = { api: opts.api ?? 0, worker: opts.worker ?? 0, bot: opts.bot ?? 0 };
    const serveEnv = (role: Role, index: number, extra: Record<string, string> = {}): Record<string, string> => ({
      ...base,
      ROLE: role,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, `${role}-${index}`),
      LOG_LEVEL: 'info',
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      BRAWLSTARS_API_TOKEN: token,
      BRAWLSTARS_API_URL: sim.url,
      // The sim takes what the test sends; a suite about the shared budget sets its own.
      UPSTREAM_RPS: '10000',
      // The machine is shared: a slow sim must not turn answers into stale copies the test did not ask for.
      UPSTREAM_STALE_WAIT_MS: '30000',
      UPSTREAM_USER_BUDGET_MS: '60000',
      RANKING_COUNTRIES: '',
      ...(fake
        ? {
            DISCORD_TOKEN: fake.token,
            DISCORD_API_URL: fake.apiUrl,
            ...(role === 'api' ? { DISCORD_PUBLIC_KEY: fake.publicKeyHex } : {}),
            ...(role === 'bot' ? { SHARD_IDS: String(index), SHARD_COUNT: String(Math.max(1, counts.bot)) } : {}),
          }
        : {}),
      ...opts.env,
      ...opts.envOf?.(role, index),
      ...extra,
    });
    const groups: Record<Role, Child[]> = { all: [], api: [], worker: [], bot: [] };
    const make = (role: Role, extra?: Record<string, string>): Child => {
      const index = groups[role].length;
      const env = serveEnv(role, index, extra);
      mkdirSync(env.DATA_DIR!, { recursive: true });
      const child = new Child(role, `${role}-${index}`, ['serve', '--role', role], env, LISTENING, (m) => m[1]!);
      groups[role].push(child);
      children.push(child);
      return child;
    };
    const first: Child[] = [];
    for (const role of ['api', 'worker', 'bot'] as const) for (let i = 0; i < counts[role]; i++) first.push(make(role));
    await Promise.all(first.map((c) => c.start()));

    return {
      sim,
      api: groups.api,
      worker: groups.worker,
      bot: groups.bot,
      all: () => children.filter((c) => c.role !== 'sim'),
      discord,
      redisPrefix,
      schema,
      redis,
      async sql<T>(text: string, params: unknown[] = []) {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        try {
          await client.query(`SET search_path TO ${schema}`);
          return (await client.query(text, params)).rows as T[];
        } finally {
          await client.end();
        }
      },
      async spawn(role, env) {
        const child = make(role, env);
        await child.start();
        return child;
      },
      close: cleanup,
    };
  } catch (e) {
    await cleanup().catch(() => undefined);
    throw e;
  }
}
