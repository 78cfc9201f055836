/**
 * The service as an operator starts it, for benchmarks: `node bin/starr.js serve` (what `npm start`
 * runs) in its own process with the default settings and log level, its log written to a file,
 * a fresh DATA_DIR, RATE_LIMIT_FREE raised so a benchmark's load is not refused.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TICK_US = 1_000_000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

/** user + system CPU of a process and all its threads, in microseconds. */
export function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** resident memory of a process, threads (render workers) included, in MB. */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
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
  /** the tag of the strongest player of the simulated world */
  topTag: string;
  logLines(): string[];
  stop(keepDir?: boolean): Promise<void>;
}

export async function startService(opts: { profile?: boolean; env?: Record<string, string> } = {}): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'starr-bench-'));
  const port = 18_000 + (process.pid % 2000);
  const log = openSync(join(dir, 'service.log'), 'a');
  const child: ChildProcess = spawn(process.execPath, [...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), join(ROOT, 'bin/starr.js'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir, 'data'), RATE_LIMIT_FREE: '1000000', ...opts.env },
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
      topTag,
      logLines: () => readFileSync(join(dir, 'service.log'), 'utf8').split('\n'),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
