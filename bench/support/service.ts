/**
 * The service as an operator starts it, for benchmarks: what `npm start` runs (package.json's start
 * script: glibc malloc settings and V8 flags, then bin/starr.js serve) in its own process with the default settings and log level, its log written to a file,
 * a fresh DATA_DIR, RATE_LIMIT_FREE raised so a benchmark's load is not refused.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TICK_US = 1_000_000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

/** The fields of a /proc stat file after its name (state first), and the name (comm). */
function statFields(statPath: string): { name: string; fields: string[] } {
  const stat = readFileSync(statPath, 'utf8');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
}

/** [user, system] CPU in µs of a /proc stat file's fields (statFields). */
const cpuOfFields = (fields: string[]): [number, number] => [Number(fields[11]) * TICK_US, Number(fields[12]) * TICK_US];

/** [user, system] CPU in µs of a /proc stat file (a process's, or one thread's under task/). */
const userSystem = (statPath: string): [number, number] => cpuOfFields(statFields(statPath).fields);

/** user + system CPU of a process and all its threads, in microseconds. */
export function cpuOf(pid: number): number {
  const [user, system] = userSystem(`/proc/${pid}/stat`);
  return user + system;
}

/**
 * The user and system CPU of a process's main thread, µs (its task has the process's id): where the
 * server's own work and its system calls go, apart from V8's helpers and libuv's pool.
 */
export const mainThreadCpu = (pid: number): [number, number] => userSystem(`/proc/${pid}/task/${pid}/stat`);

/** One thread of a process: its id, name (comm), niceness and user + system CPU so far, µs. */
export interface ThreadCpu {
  tid: number;
  name: string;
  nice: number;
  cpuUs: number;
}

/**
 * Every thread of a process as /proc/<pid>/task lists it now (Linux; empty elsewhere): which of them
 * ran, and at what priority. A thread that ended is no longer listed.
 */
export function threadsOf(pid: number): ThreadCpu[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: ThreadCpu[] = [];
  for (const tid of tids) {
    try {
      const { name, fields } = statFields(`/proc/${pid}/task/${tid}/stat`);
      const [user, system] = cpuOfFields(fields);
      out.push({ tid: Number(tid), name, nice: Number(fields[16]), cpuUs: user + system });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * How often a process's main thread moved to another core, and was switched out while it could have
 * run on (involuntary) or because it waited (voluntary): Linux /proc/<pid>/task/<pid>/sched, null
 * where the kernel does not expose it. A thread that moves leaves its caches behind on the other core.
 */
export function mainThreadSched(pid: number): { migrations: number; involuntary: number; voluntary: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/sched`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name.replace('.', '\\.')}\\s*:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    const r = { migrations: field('se.nr_migrations'), involuntary: field('nr_involuntary_switches'), voluntary: field('nr_voluntary_switches') };
    return Object.values(r).every(Number.isFinite) ? r : null;
  } catch {
    return null;
  }
}

/**
 * The machine's CPU time so far, µs, summed over its cores (/proc/stat's `cpu` line): `total`, and
 * `steal`, the time the hypervisor gave this VM's virtual cores to someone else while they had work
 * (Linux; null where it cannot be read). Over a run, steal / total is the share of the machine's
 * time that neither server nor the client got: on a shared host it moves a run's req/s and p99 with
 * no change of either server.
 */
export function machineCpu(): { total: number; steal: number } | null {
  try {
    const fields = /^cpu\s+(.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    // user nice system idle iowait irq softirq steal (guest time is already within user and nice)
    const ticks = fields.slice(0, 8);
    if (ticks.length < 8 || !ticks.every(Number.isFinite)) return null;
    return { total: ticks.reduce((a, b) => a + b, 0) * TICK_US, steal: ticks[7]! * TICK_US };
  } catch {
    return null;
  }
}

/**
 * The kernel's proactive memory-reclaim threads (DAMON's `kdamond.N`), by pid, or none (most
 * machines; or /proc cannot be read). A host that runs DAMON's physical-address monitor wakes one
 * every sampling interval to check and clear the accessed bits of pages all over memory, a large
 * process's among them; on the nineteenth machine (every 500 ms, a burst of about 5 ms) that
 * coincided with the render bench's main-thread blocks and not with the idle process's.
 */
export function reclaimThreads(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('kdamond');
        } catch {
          return false; // ended meanwhile
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/** How long the threads `reclaimThreads` found have run so far, ns (Linux schedstat), or null without any. */
export function reclaimNs(pids: number[]): number | null {
  if (pids.length === 0) return null;
  let ns = 0;
  for (const pid of pids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a kdamond stopped meanwhile: its time no longer counts
    }
  }
  return ns;
}

/** resident memory of a process, threads (render workers) included, in MB. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Waits until the process is quiet: less than `share` of one core over `windowMs` (after start-up,
 * the demo backfill and the poller's first rounds take 20–40 s of CPU on the 2-core machine; timed
 * requests must not pay for them). Gives up after `maxMs` and says so. Returns the seconds waited.
 */
export async function settled(pid: number, opts: { share?: number; windowMs?: number; maxMs?: number } = {}): Promise<number> {
  const { share = 0.03, windowMs = 3000, maxMs = 120_000 } = opts;
  const start = Date.now();
  for (;;) {
    const before = cpuOf(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    const used = (cpuOf(pid) - before) / 1000 / windowMs;
    if (used < share) return (Date.now() - start) / 1000;
    if (Date.now() - start > maxMs) {
      console.log(`(the service still used ${(used * 100).toFixed(0)}% of a core after ${maxMs / 1000} s; measuring anyway)`);
      return (Date.now() - start) / 1000;
    }
  }
}

export async function until<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface RunningService {
  base: string;
  pid: number;
  /** folder of the log, the data and a CPU profile */
  dir: string;
  /** the service's log (stdout and stderr): request lines, and with `gcTrace` one line per collection */
  logFile: string;
  /** the tag of the strongest player of the simulated world */
  topTag: string;
  /**
   * The log's lines that contain `text`: how many, and the last (read as a stream: a benchmark's
   * log of a million request lines is larger than a string may be).
   */
  logLinesWith(text: string): Promise<{ count: number; last: string | undefined }>;
  stop(keepDir?: boolean): Promise<void>;
}

/** The main thread's collections since start, as the service's /metrics counts them (src/core/open.ts): major and minor, each with its pauses' total, ms. */
export interface GcCounts {
  major: number;
  majorMs: number;
  minor: number;
  minorMs: number;
}

/** The GcCounts in a /metrics text (`starr_gc_pauses_total`, `starr_gc_pause_seconds_total`); a kind not collected yet has no series: 0. */
export function gcCountsOf(metrics: string): GcCounts {
  const value = (name: string, kind: string) => Number(new RegExp(`^${name}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
  return {
    major: value('starr_gc_pauses_total', 'major'),
    majorMs: value('starr_gc_pause_seconds_total', 'major') * 1000,
    minor: value('starr_gc_pauses_total', 'minor'),
    minorMs: value('starr_gc_pause_seconds_total', 'minor') * 1000,
  };
}

/**
 * The environment a benchmark gives the service from its `--env NAME=VALUE` options (repeatable)
 * and `--port`; a pair without a name is refused.
 */
export function serviceEnv(pairs: string[], port?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--env takes NAME=VALUE, not ${pair}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (port) env.PORT = port;
  return env;
}

/**
 * What `npm start` runs, read from package.json's start script: its environment assignments
 * (glibc's MALLOC_* and the canvas addon's MIMALLOC_* settings) and node's arguments, so the
 * benchmarks measure exactly that.
 */
export function startCommand(): { env: Record<string, string>; args: string[] } {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`the start script does not run node: ${script}`);
  return { env, args: words };
}

/**
 * node's arguments and the command that runs it for `--trace-gc-nvp` (bench:http --gc): one line per
 * collection of the main thread, line-buffered (`stdbuf -oL`) so that each is in the log or pipe when
 * it happens — libc buffers a file's or pipe's stdout by 4 KB, which would move lines into the next run.
 */
export function gcTraced(args: string[]): [string, string[]] {
  return ['stdbuf', ['-oL', process.execPath, '--trace-gc-nvp', ...args]];
}

export async function startService(opts: { profile?: boolean; gcTrace?: boolean; env?: Record<string, string> } = {}): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'starr-bench-'));
  const port = opts.env?.PORT ? Number(opts.env.PORT) : 18_000 + (process.pid % 2000);
  const log = openSync(join(dir, 'service.log'), 'a');
  const start = startCommand();
  const args = [...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...start.args];
  const [command, argv] = opts.gcTrace ? gcTraced(args) : [process.execPath, args];
  const child: ChildProcess = spawn(command, argv, {
    cwd: ROOT,
    // RATE_LIMIT_FREE beyond any load here: at 1,000,000 a minute, two 15-s runs of bench:http at
    // 44,000 req/s in one window were partly answered 429 (2026-11-25, the ranking's ratio 0.52).
    env: { ...process.env, ...start.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir, 'data'), RATE_LIMIT_FREE: '1000000000', ...opts.env },
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (keepDir = false) => {
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    await until('the service', async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 120_000);
    const topTag = await until(
      'rankings',
      async () => {
        const r = await fetch(`${base}/rankings/global/players?limit=1`);
        return r.ok ? ((await r.json()) as { items: { tag: string }[] }).items[0]!.tag : undefined;
      },
      60_000,
    );
    return {
      base,
      pid: child.pid!,
      dir,
      logFile: join(dir, 'service.log'),
      topTag,
      logLinesWith: async (text: string) => {
        let count = 0;
        let last: string | undefined;
        for await (const l of createInterface({ input: createReadStream(join(dir, 'service.log')), crlfDelay: Infinity })) {
          if (!l.includes(text)) continue;
          count++;
          last = l;
        }
        return { count, last };
      },
      stop,
    };
  } catch (e) {
    console.error(`the service did not come up; its log:\n${readFileSync(join(dir, 'service.log'), 'utf8').split('\n').slice(-15).join('\n')}`);
    await stop();
    throw e;
  }
}
