/**
 * Cached HTTP answers against a bare node:http server sending the same bytes and headers.
 *
 * The service runs as an operator runs it: `node bin/starr.js serve` (what `npm start` runs) in its
 * own process, default settings and log level (info: one line per request, written to a file here
 * as a terminal or journald would take it), except RATE_LIMIT_FREE, raised so the load is not
 * refused, and a fresh DATA_DIR. The bare server is another process serving, per path, the bytes
 * and headers the service answered. The client is wrk when installed (Debian: apt-get install wrk),
 * else autocannon in as many worker processes as cores: one autocannon process saturates at about
 * half of what a bare server answers, which would flatter every ratio.
 *
 * Timing starts once the service is quiet (its start-up work — the demo backfill, the poller's
 * first rounds — done), as an operator's long-running service is.
 *
 * Each path is warmed up 2 s on both servers; then each round runs every path in turn, the service
 * then the bare server (service, bare, service, bare...), so load from elsewhere and either
 * process's drift over the minutes skew both servers and every path alike. Each line prints req/s,
 * p50/p99 and the server's CPU per request (from /proc/<pid>/stat; the main thread's user and
 * system part apart, and per 1,000 answers how often the main thread moved to another core or was
 * switched out while it could have run on; for the service, from its /metrics, its event loop's
 * longest block and p99 and its main thread's collections, major and minor, with their pauses),
 * each run its ratio, and the median ratio at the end.
 *
 *   npm run bench:http [-- --seconds 15 --rounds 3 --connections 32 --client wrk|autocannon --profile --gc --env NAME=VALUE --only /image --port P --sim-process]
 *
 * --profile starts the service with --cpu-prof (the profile is written into the bench's folder);
 * --gc runs both servers with node's --trace-gc-nvp and prints under each run their main thread's
 * collections: scavenges per 1,000 answers, their pause (and its roots and parallel phases), the
 * bytes each answer allocated, left alive at a scavenge and promoted, and the major collections;
 * --env NAME=VALUE (repeatable) starts the service alone with that setting changed (NODE_OPTIONS for
 * the V8 flags node takes there, e.g. --v8-pool-size=2; a flag the start script passes itself, such
 * as --max-semi-space-size, is not changed that way: node's command line wins over NODE_OPTIONS);
 * --only keeps the paths containing that text; --port sets the service's port (default 18000 plus
 * the bench's pid modulo 2000), for a machine where several benchmarks run at once;
 * --sim-process runs the simulated world in a process of its own (`starr sim`, the same SIM_SEED,
 * SIM_PLAYERS and SIM_CLUBS) and points the service at it as at the official API
 * (BRAWLSTARS_API_URL, BRAWLSTARS_API_TOKEN): the service as a deployment with a real token runs it,
 * without the in-process world's HTTP server (and without the demo backfill, which needs it). Each
 * service line then adds the simulator's CPU during the run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { collectionsIn, describeCollections, type Collection } from './support/gc-trace.ts';
import { cpuOf, gcCountsOf, gcTraced, machineCpu, mainThreadCpu, mainThreadSched, reclaimNs, reclaimThreads, ROOT, serviceEnv, settled, startService, until, type GcCounts } from './support/service.ts';

interface Run {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpuPerRequest: number;
  /** the main thread's user and system CPU per request, µs (Linux /proc/<pid>/task/<pid>/stat) */
  mainPerRequest: [number, number];
  /** the main thread's moves to another core and involuntary switches per 1,000 requests (Linux), or null */
  mainSched: [number, number] | null;
  /** with --gc: the main thread's collections during the run */
  gc?: Collection[];
  /** with --sim-process: the simulator process's CPU during the service's run, per request, µs */
  simCpu?: number;
  /** the service's event loop during the run, from /metrics: its longest block and p99, ms */
  loop?: { max: number; p99: number };
  /** the service's main-thread collections during the run, from /metrics: major and minor, each with its pauses' total, ms */
  collections?: GcCounts;
  /** the machine's TCP counters that moved during the run (Linux), or null where they cannot be read */
  tcp: TcpCounters | null;
  /** the share of the machine's CPU time stolen by the hypervisor during the run, %, or null (machineCpu) */
  stealPct: number | null;
  /** how long the host's proactive memory reclaim (DAMON's kdamond) ran during the run, ms, or null without it (reclaimThreads) */
  reclaimMs: number | null;
}

/** TCP events counted by the kernel for the whole machine (all the load here is on loopback). */
interface TcpCounters {
  retransmitted: number;
  timeouts: number;
  lossProbes: number;
  zeroWindows: number;
}

/**
 * The kernel's TCP counters (/proc/net/snmp, /proc/net/netstat). A run's p99 of 100 ms or more
 * while its p50 stays near 1 ms is a wait of the kernel's, not of either server's event loop: a
 * retransmission timeout is at least 200 ms on Linux, and a peer that advertises a zero window is
 * probed on the same clock. Both servers share loopback, so a run's counters are the run's own.
 */
function tcpCounters(): TcpCounters | null {
  try {
    const table = (file: string, prefix: string): Map<string, number> => {
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith(`${prefix}:`));
      const names = (lines[0] ?? '').split(/\s+/).slice(1);
      const values = (lines[1] ?? '').split(/\s+/).slice(1).map(Number);
      return new Map(names.map((n, i) => [n, values[i] ?? NaN]));
    };
    const tcp = table('/proc/net/snmp', 'Tcp');
    const ext = table('/proc/net/netstat', 'TcpExt');
    const c = {
      retransmitted: tcp.get('RetransSegs') ?? NaN,
      timeouts: ext.get('TCPTimeouts') ?? NaN,
      lossProbes: ext.get('TCPLossProbes') ?? NaN,
      zeroWindows: ext.get('TCPToZeroWindowAdv') ?? NaN,
    };
    return Object.values(c).every(Number.isFinite) ? c : null;
  } catch {
    return null;
  }
}

const tcpSince = (a: TcpCounters | null, b: TcpCounters | null): TcpCounters | null =>
  a && b
    ? { retransmitted: b.retransmitted - a.retransmitted, timeouts: b.timeouts - a.timeouts, lossProbes: b.lossProbes - a.lossProbes, zeroWindows: b.zeroWindows - a.zeroWindows }
    : null;

/** What the kernel's TCP did during a run, when it did anything of note. */
const describeTcp = (t: TcpCounters | null): string =>
  t && (t.retransmitted || t.timeouts || t.zeroWindows)
    ? `  TCP: ${t.retransmitted} segments retransmitted (${t.lossProbes} loss probes), ${t.timeouts} retransmission timeouts, ${t.zeroWindows} zero windows advertised`
    : '';

interface Captured {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string; // base64
}

function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    return (e as { status?: number }).status !== undefined && (e as { code?: string }).code !== 'ENOENT';
  }
}

const wrkUnit = (v: string): number => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
};

function wrk(url: string, seconds: number, connections: number): Omit<Run, 'cpuPerRequest' | 'mainPerRequest' | 'mainSched' | 'tcp' | 'stealPct' | 'reclaimMs'> {
  const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const p50 = wrkUnit(/\s50%\s+(\S+)/.exec(out)?.[1] ?? '');
  const p99 = wrkUnit(/\s99%\s+(\S+)/.exec(out)?.[1] ?? '');
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: .*?timeout (\d+)/.exec(out)?.[1] ?? 0);
  return { rps, requests, p50, p99, errors };
}

/** autocannon in `workers` processes at once, connections split between them. */
async function autocannonRun(url: string, seconds: number, connections: number, workers: number): Promise<Omit<Run, 'cpuPerRequest' | 'mainPerRequest' | 'mainSched' | 'tcp' | 'stealPct' | 'reclaimMs'>> {
  const per = Math.max(1, Math.floor(connections / workers));
  const results = await Promise.all(
    Array.from({ length: workers }, () => {
      const child = spawn(process.execPath, [join(ROOT, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(per), '-d', String(seconds), url], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      return new Promise<{ requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number }>(
        (resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`autocannon exited ${code}`)))),
      );
    }),
  );
  return {
    rps: results.reduce((a, r) => a + r.requests.average, 0),
    requests: results.reduce((a, r) => a + r.requests.total, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((a, r) => a + r.non2xx + r.errors, 0),
  };
}

/**
 * One scrape of the service's /metrics (src/core/open.ts). The event loop since the previous scrape
 * (how late a 10-ms timer ran, read and reset at each scrape): the longest block and the p99, ms. A
 * block of the loop holds every request waiting, so the service's p99 is read next to it. The main
 * thread's collections since start (`starr_gc_pauses_total`, `starr_gc_pause_seconds_total`), which
 * a run's line gives as the difference of two scrapes: a run of a slow start whose window held a
 * major collection tells itself from one whose code was slower throughout (*How far one start of the
 * service is from the next*, docs/benchmarks.md).
 */
async function scrape(base: string): Promise<{ loop: { max: number; p99: number }; collections: GcCounts }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const stat = (name: string) => Number(new RegExp(`^starr_event_loop_delay_seconds\\{stat="${name}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { loop: { max: stat('max'), p99: stat('p99') }, collections: gcCountsOf(text) };
}

/** The collections between two scrapes. */
const collectionsBetween = (a: GcCounts, b: GcCounts): GcCounts => ({
  major: b.major - a.major,
  majorMs: b.majorMs - a.majorMs,
  minor: b.minor - a.minor,
  minorMs: b.minorMs - a.minorMs,
});

/** The bare server: `--bare <file>` serves each captured answer at its path. */
async function serveBare(file: string): Promise<void> {
  const answers = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
  for (const c of JSON.parse(readFileSync(file, 'utf8')) as Captured[]) {
    answers.set(c.path, { status: c.status, headers: c.headers, body: Buffer.from(c.body, 'base64') });
  }
  const server = createServer((req, res) => {
    const a = answers.get(req.url ?? '');
    if (!a) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(a.status, a.headers);
    res.end(a.body);
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address() as { port: number };
    process.stdout.write(`${addr.port}\n`);
  });
}

/**
 * `starr sim` in a process of its own, with the service's SIM_* settings (from --env or the
 * environment); its URL and token are read from what it prints.
 */
async function startSimProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; token: string; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'starr-bench-sim-'));
  const log = join(dir, 'sim.log');
  const child = spawn(process.execPath, [join(ROOT, 'bin/starr.js'), 'sim', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')],
  });
  const stop = () => {
    child.kill('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [url, token] = await until(
      'the simulator',
      async () => {
        const text = readFileSync(log, 'utf8');
        const u = / at (http:\/\/\S+\/v1)$/m.exec(text)?.[1];
        const t = /^Token: (\S+)$/m.exec(text)?.[1];
        return u && t ? ([u, t] as const) : undefined;
      },
      120_000,
    );
    console.log(`simulated world in process ${child.pid} at ${url}`);
    return { child, url, token, stop };
  } catch (e) {
    console.error(`the simulator did not come up; its output:\n${readFileSync(log, 'utf8')}`);
    stop();
    throw e;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '15' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
      client: { type: 'string' },
      profile: { type: 'boolean', default: false },
      gc: { type: 'boolean', default: false },
      env: { type: 'string', multiple: true, default: [] },
      only: { type: 'string' },
      port: { type: 'string' },
      'sim-process': { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const client = values.client ?? (hasWrk() ? 'wrk' : 'autocannon');
  const workers = Math.max(1, availableParallelism());

  const env = { ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}), ...serviceEnv(values.env, values.port) };
  const sim = values['sim-process'] ? await startSimProcess(env) : undefined;
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      profile: values.profile,
      gcTrace: values.gc,
      env: { ...env, ...(sim ? { BRAWLSTARS_API_URL: sim.url, BRAWLSTARS_API_TOKEN: sim.token } : {}) },
    });
  } catch (e) {
    sim?.stop();
    throw e;
  }
  const { base, dir } = service;
  let bare: ChildProcess | undefined;
  process.on('SIGINT', () => {
    bare?.kill();
    sim?.stop();
    void service.stop().then(() => process.exit(130));
  });
  try {
    const tag = service.topTag.replace('#', '');
    const paths = [`/brawlers`, `/players/${tag}`, `/rankings/global/players?limit=200`, `/players/${tag}/image`].filter(
      (p) => !values.only || p.includes(values.only),
    );
    // the demo backfill and the poller's first rounds settle (timed requests must not pay for
    // them); every answer is cached before timing
    const waited = await settled(service.pid);
    const captured: Captured[] = [];
    for (const path of paths) {
      await fetch(`${base}${path}`).then((r) => r.arrayBuffer());
      const r = await fetch(`${base}${path}`);
      const headers: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) headers[k] = v;
      });
      captured.push({ path, status: r.status, headers, body: Buffer.from(await r.arrayBuffer()).toString('base64') });
    }
    writeFileSync(join(dir, 'answers.json'), JSON.stringify(captured));
    const bareArgs = ['--import', 'tsx', fileURLToPath(import.meta.url), '--bare', join(dir, 'answers.json')];
    const [bareCommand, bareArgv] = values.gc ? gcTraced(bareArgs) : [process.execPath, bareArgs];
    // its stdout (the port it listens on, then with --gc a line per collection) goes to a file: a
    // pipe would fill while wrk runs (execFileSync holds this process) and stop the bare server
    const bareLog = join(dir, 'bare.log');
    bare = spawn(bareCommand, bareArgv, { cwd: ROOT, stdio: ['ignore', openSync(bareLog, 'a'), 'inherit'] });
    const barePort = await until(
      'the bare server',
      async () => {
        const port = /^(\d+)$/m.exec(readFileSync(bareLog, 'utf8'))?.[1];
        return port ? Number(port) : undefined;
      },
      30_000,
    );

    // the host's proactive memory reclaim, when it runs one: its bursts hold a large process's main
    // thread (the service's, not the bare server's), so each run says how long it ran
    const reclaimers = reclaimThreads();
    const load = (url: string, s: number) => (client === 'wrk' ? Promise.resolve(wrk(url, s, connections)) : autocannonRun(url, s, connections, workers));
    const run = async (pid: number, url: string, s: number): Promise<Run> => {
      const ours = pid === service.pid;
      const gcLog = ours ? service.logFile : bareLog;
      const gc0 = values.gc ? statSync(gcLog).size : 0;
      // the service's event-loop readings restart at each scrape of /metrics: one scrape before the
      // run and one after, both outside the CPU counted for it
      const scraped0 = ours ? await scrape(base) : undefined;
      const before = cpuOf(pid);
      const sim0 = ours && sim ? cpuOf(sim.child.pid!) : 0;
      const main0 = mainThreadCpu(pid);
      const sched0 = mainThreadSched(pid);
      const tcp0 = tcpCounters();
      const machine0 = machineCpu();
      const reclaim0 = reclaimNs(reclaimers);
      const r = await load(url, s);
      const reclaim1 = reclaimNs(reclaimers);
      const machine1 = machineCpu();
      const tcp = tcpSince(tcp0, tcpCounters());
      const main1 = mainThreadCpu(pid);
      const sched1 = mainThreadSched(pid);
      const after = cpuOf(pid);
      const scraped = ours ? await scrape(base) : undefined;
      const n = Math.max(1, r.requests);
      const perK = (a: number, b: number) => ((b - a) * 1000) / n;
      let gc: Collection[] | undefined;
      if (values.gc) {
        // a collection under way when the load stopped prints its line when it ends
        await new Promise((res) => setTimeout(res, 100));
        gc = await collectionsIn(gcLog, gc0);
      }
      return {
        ...r,
        gc,
        ...(ours && sim ? { simCpu: (cpuOf(sim.child.pid!) - sim0) / n } : {}),
        ...(scraped && scraped0 ? { loop: scraped.loop, collections: collectionsBetween(scraped0.collections, scraped.collections) } : {}),
        cpuPerRequest: (after - before) / n,
        mainPerRequest: [(main1[0] - main0[0]) / n, (main1[1] - main0[1]) / n],
        mainSched: sched0 && sched1 ? [perK(sched0.migrations, sched1.migrations), perK(sched0.involuntary, sched1.involuntary)] : null,
        tcp,
        stealPct: machine0 && machine1 && machine1.total > machine0.total ? ((machine1.steal - machine0.steal) * 100) / (machine1.total - machine0.total) : null,
        reclaimMs: reclaim0 !== null && reclaim1 !== null ? (reclaim1 - reclaim0) / 1e6 : null,
      };
    };
    const line = (name: string, r: Run) =>
      `  ${name.padEnd(9)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms  ` +
      `CPU ${r.cpuPerRequest.toFixed(0).padStart(5)} µs/req (main thread user ${r.mainPerRequest[0].toFixed(0)} + system ${r.mainPerRequest[1].toFixed(0)}` +
      `${r.mainSched ? `; per 1,000 answers ${r.mainSched[0].toFixed(1)} moves to another core, ${r.mainSched[1].toFixed(1)} switched out` : ''})` +
      `${r.simCpu !== undefined ? `  sim process ${r.simCpu.toFixed(1)} µs/req` : ''}` +
      `${r.loop ? `; event loop: longest block ${r.loop.max.toFixed(1)} ms, p99 ${r.loop.p99.toFixed(1)} ms` : ''}` +
      `${r.collections ? `; collections: ${r.collections.major} major (${r.collections.majorMs.toFixed(1)} ms), ${r.collections.minor} minor (${r.collections.minorMs.toFixed(0)} ms)` : ''}` +
      `${r.errors ? `  errors/non-2xx ${r.errors}` : ''}` +
      `${r.stealPct !== null ? `; steal ${r.stealPct.toFixed(1)} % of the machine's time` : ''}` +
      `${r.reclaimMs !== null ? `; the host's memory reclaim (kdamond) ${r.reclaimMs.toFixed(0)} ms` : ''}` +
      describeTcp(r.tcp) +
      `${r.gc ? `\n            ${describeCollections(r.gc, r.requests)}` : ''}`;
    // of an even number of rounds, the mean of the middle two (not the higher one)
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      const m = Math.floor(v.length / 2);
      return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
    };

    console.log(
      `${new Date().toISOString()}  ${client}${client === 'autocannon' ? ` × ${workers} processes` : ''}, ${connections} connections, ` +
        `${rounds} rounds of ${seconds} s per server and path; service quiet after ${waited.toFixed(0)} s; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}` +
        `${reclaimers.length > 0 ? `; the host runs proactive memory reclaim (DAMON: ${reclaimers.length} kdamond thread${reclaimers.length > 1 ? 's' : ''})` : ''}`,
    );
    // Rounds go over every path in turn (round 1: each path's service and bare runs, then round 2...),
    // not path by path: either server's speed drifts over minutes (run path by path, the bare server
    // answered /brawlers, always the first path, 15-20 % faster than the player of the same size in
    // every full run of the ninth and tenth machines, while one bare process asked for both in turn
    // answered them alike), and a path measured all at once takes whatever its minutes gave it. It
    // also asks for the picture in bursts about two minutes apart, as clients do, rather than on end.
    const kbOf = (c: Captured) => (Buffer.from(c.body, 'base64').length / 1024).toFixed(1);
    const ours = captured.map((): Run[] => []);
    const theirs = captured.map((): Run[] => []);
    console.log(`\nwarm-up: 2 s per server and path (${captured.map((c) => `GET ${c.path} ${kbOf(c)} KB, status ${c.status}`).join('; ')})`);
    for (const c of captured) {
      await run(service.pid, `${base}${c.path}`, 2);
      await run(bare.pid!, `http://127.0.0.1:${barePort}${c.path}`, 2);
    }
    for (let i = 0; i < rounds; i++) {
      console.log(`\nround ${i + 1} of ${rounds}`);
      for (const [k, c] of captured.entries()) {
        const a = await run(service.pid, `${base}${c.path}`, seconds);
        const b = await run(bare.pid!, `http://127.0.0.1:${barePort}${c.path}`, seconds);
        ours[k]!.push(a);
        theirs[k]!.push(b);
        console.log(`GET ${c.path}  ratio ${(a.rps / b.rps).toFixed(2)}`);
        console.log(line('starr', a));
        console.log(line('bare', b));
      }
    }
    // the hypervisor's share of the machine's time over a path's runs, both servers', when it reads
    const stealRange = (runs: Run[]): string => {
      const v = runs.map((r) => r.stealPct).filter((x): x is number => x !== null);
      return v.length > 0 ? `  steal ${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)} %` : '';
    };
    const summary = captured.map((c, k) => {
      const ratios = ours[k]!.map((a, i) => a.rps / theirs[k]![i]!.rps);
      return (
        `${c.path.padEnd(40)} ratio ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})  ` +
        `starr ${median(ours[k]!.map((r) => r.rps)).toFixed(0)} req/s p99 ${median(ours[k]!.map((r) => r.p99)).toFixed(2)} ms (highest ${Math.max(...ours[k]!.map((r) => r.p99)).toFixed(2)}) ` +
        `CPU ${median(ours[k]!.map((r) => r.cpuPerRequest)).toFixed(0)} µs, longest loop block ${Math.max(...ours[k]!.map((r) => r.loop?.max ?? NaN)).toFixed(1)} ms  ` +
        `bare ${median(theirs[k]!.map((r) => r.rps)).toFixed(0)} req/s CPU ${median(theirs[k]!.map((r) => r.cpuPerRequest)).toFixed(0)} µs` +
        stealRange([...ours[k]!, ...theirs[k]!])
      );
    });
    console.log(`\nmedians (targets: JSON ≥ 0.80, picture ≥ 0.70 of bare; p99 < 10 ms); load average now ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    for (const s of summary) console.log(s);
    const lines = await service.logLinesWith('"msg":"request"');
    console.log(`service log: ${lines.count} request lines, e.g. ${lines.last}`);
  } finally {
    bare?.kill();
    await service.stop(values.profile);
    sim?.stop();
    if (values.profile) console.log(`CPU profile in ${dir}`);
  }
}

const bareAt = process.argv.indexOf('--bare');
if (bareAt >= 0) await serveBare(process.argv[bareAt + 1]!);
else await main();
