/**
 * `npm run test:stress`: the suite as a busy CI machine runs it. Runs vitest N times in a row with
 * CPU-bound processes beside it, reads each run's JSON report, and prints every test that failed at
 * least once (with how often and its first message), then one summary line. Exit code 1 when any
 * test failed in any run.
 *
 *   npm run test:stress                               # 5 runs, 2 busy processes
 *   npm run test:stress -- --runs 10 --load 3
 *   npm run test:stress -- --runs 3 test/bot-router.test.ts   # only these files
 *
 * A test that passes idle and fails here depends on wall-clock time or scheduling: make it
 * deterministic (injected clock or timer, awaited events), never slower or looser.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    load: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  allowPositionals: true,
});

if (values.help) {
  console.log('usage: npm run test:stress -- [--runs N] [--load K] [test files...]');
  process.exit(0);
}

function count(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} needs a whole number of at least ${min}, got "${raw}"`);
    process.exit(2);
  }
  return n;
}

const runs = count('runs', values.runs!, 1);
const load = count('load', values.load!, 0);
const beside = `${load} busy process${load === 1 ? '' : 'es'}`;

/**
 * One busy process: spins on the CPU in 100 ms slices and exits as soon as its parent is gone, so
 * even a killed stress run (SIGKILL, which no handler sees) leaves nothing spinning behind.
 */
const BUSY = `
const parent = process.ppid;
for (;;) {
  const end = Date.now() + 100;
  while (Date.now() < end);
  try { process.kill(parent, 0); } catch { process.exit(0); }
}`;

const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const busy: ChildProcess[] = [];
let vitest: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'starr-stress-'));

function stopAll(): void {
  for (const p of busy) if (p.exitCode === null) p.kill('SIGKILL');
  if (vitest && vitest.exitCode === null) vitest.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

/** What vitest's JSON reporter writes (the parts read here). */
interface JsonReport {
  numTotalTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

interface Failure {
  /** the runs (1-based) it failed in */
  runs: number[];
  message: string;
}
const failures = new Map<string, Failure>();
let completed = 0;
let totalTests = 0;

function note(key: string, run: number, message: string): void {
  const f = failures.get(key);
  if (f) f.runs.push(run);
  else failures.set(key, { runs: [run], message: firstLine(message) });
}

/**
 * The first line of a failure. The JSON report keeps no message for a timeout (only vitest's
 * placeholder stack) nor for a failed hook: those point at the run's console output instead.
 */
function firstLine(text: string): string {
  const line = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  if (line === '' || line === 'Error: STACK_TRACE_ERROR') return '(no message in the JSON report: a timeout or a hook; see that run\'s output above)';
  return line.slice(0, 300);
}

function relative(file: string): string {
  return file.startsWith(process.cwd() + '/') ? file.slice(process.cwd().length + 1) : file;
}

function record(run: number, report: JsonReport): void {
  totalTests = Math.max(totalTests, report.numTotalTests);
  for (const file of report.testResults) {
    const name = relative(file.name);
    let testFailed = false;
    for (const t of file.assertionResults) {
      if (t.status !== 'failed') continue;
      testFailed = true;
      note(`${name} > ${t.fullName}`, run, t.failureMessages?.[0] ?? '');
    }
    // A file can fail with no failed test: a hook, an import, an unhandled error.
    if (file.status === 'failed' && !testFailed) note(`${name} (outside any test)`, run, file.message ?? '');
  }
}

function runOnce(k: number): Promise<void> {
  const out = join(dir, `run-${k}.json`);
  const args = ['run', '--reporter=dot', '--reporter=json', `--outputFile.json=${out}`, ...positionals];
  return new Promise((resolve, reject) => {
    vitest = spawn(process.execPath, [VITEST, ...args], { stdio: 'inherit' });
    vitest.on('error', reject);
    vitest.on('exit', (code, signal) => {
      vitest = undefined;
      if (signal) return reject(new Error(`vitest stopped by ${signal}`));
      let report: JsonReport;
      try {
        report = JSON.parse(readFileSync(out, 'utf8')) as JsonReport;
      } catch {
        return reject(new Error(`vitest exited with ${code} and wrote no report (${out})`));
      }
      record(k, report);
      completed++;
      resolve();
    });
  });
}

function summary(): void {
  console.log('');
  const sorted = [...failures].sort((a, b) => b[1].runs.length - a[1].runs.length || a[0].localeCompare(b[0]));
  for (const [name, f] of sorted) {
    console.log(`FAILED ${f.runs.length}/${completed} (run ${f.runs.join(', ')})  ${name}`);
    console.log(`    ${f.message}`);
  }
  const what = positionals.length ? positionals.join(' ') : 'the whole suite';
  let verdict = failures.size === 0 ? `all ${totalTests} tests passed every time` : `${failures.size} of ${totalTests} tests failed at least once`;
  if (completed < runs) verdict += ' (stopped early)';
  console.log(`test:stress: ${completed}/${runs} runs of ${what} beside ${beside}: ${verdict}`);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    stopAll();
    summary();
    process.exit(130);
  });
}

for (let i = 0; i < load; i++) busy.push(spawn(process.execPath, ['-e', BUSY], { stdio: 'ignore' }));

let ok = true;
try {
  for (let k = 1; k <= runs; k++) {
    console.log(`\n== test:stress run ${k}/${runs} beside ${beside} ==`);
    await runOnce(k);
  }
} catch (e) {
  console.error(`test:stress: ${(e as Error).message}`);
  ok = false;
} finally {
  stopAll();
}
summary();
process.exit(ok && failures.size === 0 ? 0 : 1);
