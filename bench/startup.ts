/**
 * Start-up of the `starr` command: the esbuild bundle (bin/build.js) against the TypeScript sources
 * through tsx (`STARR_TSX=1`), alternating, each round a fresh process.
 *
 * - `starr --help`: wall time from the spawn to the exit, and the process's own CPU time and peak RSS
 *   (process.resourceUsage() written at exit by a preloaded module: every thread counted).
 * - `starr serve` as `npm start` runs it (its malloc settings and node flags, a fresh DATA_DIR, a
 *   free port): wall time from the spawn to its "is listening on" line, and RSS then.
 *
 * The bundle is built before the first timed round (a build after a source change is not start-up).
 *
 *   npm run bench:startup [-- --rounds 5]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT, rssOf, startCommand } from './support/service.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'starr-startup-'));
const report = join(dir, 'report.mjs');
writeFileSync(
  report,
  `import { writeFileSync } from 'node:fs';
process.on('exit', () => { const u = process.resourceUsage(); writeFileSync(process.env.STARR_BENCH_REPORT, JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssMb: u.maxRSS / 1024 })); });\n`,
);
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

/** `starr --help`: [wall ms, CPU ms, peak RSS MB] */
async function help(tsx: boolean, round: number): Promise<[number, number, number]> {
  const out = join(dir, `help-${tsx}-${round}.json`);
  const t = performance.now();
  const child = spawn(process.execPath, ['--import', pathToFileURL(report).href, 'bin/starr.js', '--help'], {
    cwd: ROOT,
    env: { ...process.env, STARR_TSX: tsx ? '1' : '0', STARR_BENCH_REPORT: out },
    stdio: 'ignore',
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const wall = performance.now() - t;
  if (code !== 0) throw new Error(`starr --help exited with ${code}`);
  const u = JSON.parse(readFileSync(out, 'utf8')) as { cpuMs: number; maxRssMb: number };
  return [wall, u.cpuMs, u.maxRssMb];
}

/** `starr serve` as npm start runs it: [ms to its listening line, RSS MB then] */
async function serve(tsx: boolean, round: number): Promise<[number, number]> {
  const start = startCommand();
  const data = join(dir, `data-${tsx}-${round}`);
  const t = performance.now();
  const child = spawn(process.execPath, start.args, {
    cwd: ROOT,
    env: { ...process.env, ...start.env, STARR_TSX: tsx ? '1' : '0', PORT: '0', HOST: '127.0.0.1', DATA_DIR: data },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    return await new Promise<[number, number]>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (c: Buffer) => {
        seen += c.toString();
        if (seen.includes('is listening on')) resolve([performance.now() - t, rssOf(child.pid!)]);
      });
      child.stderr!.resume();
      child.once('exit', (code) => reject(new Error(`starr serve exited with ${code} before listening`)));
    });
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    rmSync(data, { recursive: true, force: true });
  }
}

try {
  // both ready before timing: the bundle built, tsx's cache warm
  await help(false, -1);
  await help(true, -1);
  console.log(`${new Date().toISOString()}  ${rounds} rounds, tsx and bundle alternating; load average ${load()}`);
  const rows: Record<'tsx' | 'bundle', { help: [number, number, number][]; serve: [number, number][] }> = {
    tsx: { help: [], serve: [] },
    bundle: { help: [], serve: [] },
  };
  for (let i = 0; i < rounds; i++) {
    for (const tsx of [true, false]) {
      const name = tsx ? 'tsx' : 'bundle';
      const h = await help(tsx, i);
      const s = await serve(tsx, i);
      rows[name].help.push(h);
      rows[name].serve.push(s);
      console.log(
        `  ${name.padEnd(6)} --help ${h[0].toFixed(0).padStart(5)} ms wall, ${h[1].toFixed(0).padStart(5)} ms CPU, peak RSS ${h[2].toFixed(0)} MB;` +
          `  serve listening after ${s[0].toFixed(0).padStart(5)} ms, RSS ${s[1].toFixed(0)} MB`,
      );
    }
  }
  console.log(`\nmedians (load average now ${load()}):`);
  for (const name of ['tsx', 'bundle'] as const) {
    const r = rows[name];
    console.log(
      `  ${name.padEnd(6)} --help ${median(r.help.map((h) => h[0])).toFixed(0)} ms wall, ${median(r.help.map((h) => h[1])).toFixed(0)} ms CPU, ` +
        `peak RSS ${median(r.help.map((h) => h[2])).toFixed(0)} MB;  serve listening after ${median(r.serve.map((s) => s[0])).toFixed(0)} ms, RSS ${median(r.serve.map((s) => s[1])).toFixed(0)} MB`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
