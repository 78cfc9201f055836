/**
 * Rendering speed and size. For every option:
 * - through the worker pool as the service renders (draw + PNG encode + hand-over): median, p95;
 * - in this thread, split: the true draw time (the canvas forced to rasterise, `canvas.data()`),
 *   the service's PNG encode time and bytes, and Skia's default PNG encoding of the same canvas
 *   (`canvas.encodeSync('png')`) with its time and bytes; the encoders' ratio both in wall-clock
 *   time and in CPU time, the one a busy machine's scheduler does not blur (see encoderThreads);
 * then the longest event-loop block of the main thread during 1,000 renders and how many blocks
 * reached 10 and 15 ms, and RSS.
 * Every option is rendered 10 times before anything is timed (fonts, JIT, caches warm).
 *
 * On a shared, busy machine a thread waits for a core now and then whatever it runs, so next to the
 * main thread's longest block the bench prints (a) the longest block of an idle Node process
 * measured at the same time — what the machine's scheduling alone costs; its longest block and its
 * count of blocks over 10 and 15 ms — and (b) the main
 * thread's garbage-collection pauses during the renders, the part of a block the process causes.
 *
 *   npm run bench:render [-- --renders 1000 --runs 15 --only loop|chart|… --shared-mb 64 --nice 10]
 *
 * `--only loop` skips the per-option table; any other word keeps only the options whose name has it
 * (`--only chart`: the charts), then measures the event loop as usual. `--nice 0` runs the render
 * workers at the main thread's priority (the default lowers theirs; see RenderPool), to compare.
 */
import { spawn } from 'node:child_process';
import { pbkdf2 } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { EntryType, PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CLUB_CHART_OPTIONS, CLUB_IMAGE_OPTIONS, optionsOf, PLAYER_CHART_OPTIONS, PLAYER_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import { prepareJob, pngStyle, renderCanvas } from '../src/render/index.ts';
import { encodePng } from '../src/render/png.ts';
import { RenderPool } from '../src/render/pool.ts';
import type { RenderJob } from '../src/render/types.ts';
import { fixtureSubjects, fixtureWorld, jobCollector, T0 } from '../test/fixtures/render/cases.ts';
import { reclaimNs, reclaimThreads, threadsOf, type ThreadCpu } from './support/service.ts';

const { values } = parseArgs({ options: { renders: { type: 'string', default: '1000' }, runs: { type: 'string', default: '15' }, only: { type: 'string' }, 'shared-mb': { type: 'string' }, nice: { type: 'string' } } });
const RENDERS = Number(values.renders);
const RUNS = Number(values.runs);
const WARM_UP = 10;

const world = fixtureWorld();
const s = fixtureSubjects(world);
const { service, jobs } = jobCollector(world, T0);
const cases: { name: string; job: RenderJob }[] = [];
const take = async (name: string, work: Promise<unknown>) => {
  await work;
  cases.push({ name, job: jobs[jobs.length - 1]! });
};
for (const o of optionsOf(PLAYER_IMAGE_OPTIONS)) await take(`player image ${o}`, service.playerImage(s.player, o, 'high'));
for (const o of optionsOf(CLUB_IMAGE_OPTIONS)) await take(`club image ${o}`, service.clubImage(s.club, o, 'high'));
for (const o of optionsOf(PLAYER_CHART_OPTIONS)) await take(`player chart ${o}`, service.playerChart(s.player, o));
for (const o of optionsOf(CLUB_CHART_OPTIONS)) await take(`club chart ${o}`, service.clubChart(s.club, o));
// the chart target: 1,000 recorded points
const thousand = Array.from({ length: 1000 }, (_, i) => ({ t: T0 - (1000 - i) * 3_600_000, v: 60_000 + Math.round(4000 * Math.sin(i / 40) + i * 3) }));
cases.push({
  name: 'player chart 1 (1,000 points)',
  job: { kind: 'playerChart', option: 1, quality: 'high', input: { name: 'Bench', tag: '#2PP0GQ9LU', from: thousand[0]!.t, to: T0, series: [{ label: 'trophies', points: thousand }] } },
});

const pct = (xs: number[], p: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((a.length - 1) * p))]!;
};
const ms = (n: number, w = 6) => n.toFixed(1).padStart(w);
const kb = (n: number) => String(Math.round(n / 1024)).padStart(5);
const mb = () => process.memoryUsage.rss() / 1024 / 1024;
/** CPU time of the process (user + system): on a shared machine a wall-clock time also counts the turns other processes get */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * CPU time of the threads that encode, apart from V8's helper threads (Linux schedstat: ns on a core
 * per thread). The process's CPU during an encoder also holds V8's background work on the garbage
 * of the draw just before it (concurrent marking and sweeping on its helper threads, and collection
 * tasks this thread runs while it awaits sharp): up to 40 ms during the 1,800×1,200 grid's sharp
 * encode, which itself took ~55 ms on libvips's threads (2026-11-24 09:51 UTC, per-thread
 * schedstat). So each encoder is timed on this thread (Skia's and the palette encoder run here;
 * collection work on this thread still counts), libuv's pool and every thread the process started
 * after this bench began (libvips's workers, the render workers); V8's helper threads, those present
 * at the start that are not libuv's pool, are summed apart and printed next to the ratio, so nothing
 * is left out of sight. Null where there is no /proc (the process's CPU time is used instead).
 */
const encoderThreads = await (async () => {
  const runMs = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const tids = () => readdirSync('/proc/self/task');
  try {
    const main = String(process.pid);
    const before = new Map(tids().map((t) => [t, runMs(t)] as const));
    // libuv's pool: the threads that run these hashes (8 jobs of ~20 ms each over its threads)
    await Promise.all(Array.from({ length: 8 }, () => new Promise((r) => pbkdf2('bench', 'salt', 100_000, 32, 'sha256', r))));
    const growth = (t: string) => {
      try {
        return runMs(t) - before.get(t)!;
      } catch {
        return Infinity; // ended: not a helper to watch
      }
    };
    const grown = new Map([...before.keys()].filter((t) => t !== main).map((t) => [t, growth(t)] as const));
    // each pool thread ran hashes for tens of ms; V8's helpers, busy with the modules just loaded,
    // may have run a few ms too (a fixed 5-ms line once put them all among the encoders)
    const poolLine = 0.25 * Math.max(0, ...[...grown.values()].filter(Number.isFinite));
    const helpers = new Set([...grown].filter(([, ms]) => ms < poolLine).map(([t]) => t));
    /** [encoder threads, V8 helper threads] in ms; this thread read last before and first after, so the reads of the others fall outside */
    const sample = (mainLast: boolean): [number, number] => {
      let enc = mainLast ? 0 : runMs(main);
      let help = 0;
      for (const t of tids()) {
        if (t === main) continue;
        try {
          if (helpers.has(t)) help += runMs(t);
          else enc += runMs(t);
        } catch {
          // a thread that ended between the listing and the read
        }
      }
      return [mainLast ? enc + runMs(main) : enc, help];
    };
    return { start: () => sample(true), end: () => sample(false) };
  } catch {
    return null;
  }
})();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A full collection of this thread's heap, now (V8's gc(), exposed for this bench alone). */
const collectNow = (setFlagsFromString('--expose-gc'), runInNewContext('gc') as () => void);
/** When each of this thread's collections began during the option being timed (performance.now() ms), to count those inside its encoders. */
const collectionStarts: number[] = [];
const collectionsSeen = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) collectionStarts.push(e.startTime);
});
/** The longest wait for V8's helper threads to go quiet before an encoder, ms (printed with the ratios). */
let longestQuiet = 0;
/**
 * Before each timed encoder, ours and Skia's alike: a full collection of this thread's heap, then 20
 * ms in which this thread is idle, then, where the helper threads can be watched, until they have run
 * less than 0.2 ms in the last 10 ms (1 s at most). So the garbage of the draws before (each canvas's
 * pixels are external memory, and V8 begins a collection when they push it over its limit) is
 * collected, and its sweeping done, before the timer starts, not inside whichever encoder comes next.
 * - Without the wait for the helpers, one picture a run took 0.59–0.74× Skia's time in four full runs
 *   (club image 200, the 900×1600 roster, in three, player image 6 in one), with 14–31 ms of the
 *   helpers' CPU during its encodes against 0–6 for the other options, where the same pictures took
 *   0.30–0.40× in the other runs (2026-11-30, eleventh and twelfth machines).
 * - With the wait but no collection forced, a collection V8 began during the encoder still ran
 *   inside it: on the thirteenth machine (2026-11-30) player image 6 read 0.71× with 37.2 ms of the
 *   helpers' CPU, and 2–7 of a run's timed encoders, ours or Skia's, held the start of a full
 *   collection.
 * - The collection was not forced until then because sweeping fell on the next encoder's allocations
 *   (the palette encoder took 3–6× its time, 2026-11-24); the wait for the helpers, which sweep, now
 *   comes after it: the charts' encoders read 0.32–0.35× with it, as without.
 * Collections the encoder itself starts are still timed; how many began inside the timed encoders is
 * printed with the helpers' CPU during them.
 */
const settle = async () => {
  collectNow();
  await sleep(20);
  if (!encoderThreads) return;
  const from = performance.now();
  let [, was] = encoderThreads.end();
  for (;;) {
    await sleep(10);
    const [, now] = encoderThreads.end();
    if (now - was < 0.2 || performance.now() - from > 1000) break;
    was = now;
  }
  longestQuiet = Math.max(longestQuiet, performance.now() - from - 10);
};
/** CPU of one encoder: [encoder threads, V8 helper threads] (see encoderThreads), or [process, 0] */
const timeCpu = async (work: () => unknown): Promise<[number, number]> => {
  if (!encoderThreads) {
    const c = cpuMs();
    await work();
    return [cpuMs() - c, 0];
  }
  const [e0, h0] = encoderThreads.start();
  await work();
  const [e1, h1] = encoderThreads.end();
  return [e1 - e0, h1 - h0];
};
/** How many of this thread's collections began inside the given timed windows [from, to] (performance.now() ms). */
const collectionsIn = (windows: [number, number][]) => collectionStarts.filter((t) => windows.some(([a, b]) => t >= a && t <= b)).length;

// --shared-mb 0: every picture comes back as a transferred (counted) buffer, as before pictures came in shared memory
const pool = new RenderPool({
  ...(values['shared-mb'] === undefined ? {} : { maxSharedBytes: Number(values['shared-mb']) * 1024 * 1024 }),
  ...(values.nice === undefined ? {} : { nice: Number(values.nice) }),
});
await pool.warm();
for (const c of cases) await prepareJob(c.job);
console.log(`render pool: ${pool.size} worker(s) at niceness ${values.nice ?? 'default'}; ${WARM_UP} warm-up renders per option, then ${RUNS} timed; RSS at start ${mb().toFixed(0)} MB\n`);
console.log(
  `encode CPU: ${encoderThreads ? "the encoding threads' (this one, libuv's pool, libvips's); V8's helper threads apart, in the \"V8 bg\" columns (ours, Skia's)" : "the process's"}; ` +
    `"GCs": this thread's collections begun inside the timed encoders (ours/Skia's), each encoder timed after a full collection and V8's helpers quiet\n`,
);
console.log(
  `${'option'.padEnd(30)} ${'pool med'.padStart(8)} ${'p95'.padStart(6)} | ${'draw'.padStart(6)} ${'encode'.padStart(6)} ${'cpu'.padStart(6)} ${'KB'.padStart(5)} | ${'Skia enc'.padStart(8)} ${'cpu'.padStart(6)} ${'KB'.padStart(5)} | ${'bytes'.padStart(5)} ${'time'.padStart(5)} ${'cpu'.padStart(5)} | ${'V8 bg'.padStart(11)} ${'GCs'.padStart(5)}  size`,
);
const ratios: { bytes: number; time: number; cpu: number }[] = [];
if (values.only === 'loop') for (const c of cases) for (let i = 0; i < WARM_UP; i++) await pool.render(c.job);
const timed = values.only === 'loop' ? [] : cases.filter((c) => !values.only || c.name.includes(values.only));
// this thread's JIT warmed up on every encoder before anything is timed (the pool's worker warms its own)
for (const c of timed) {
  const canvas = renderCanvas(c.job);
  await encodePng(canvas.data(), canvas.width, canvas.height, pngStyle(c.job));
  canvas.encodeSync('png');
}
collectionsSeen.observe({ entryTypes: ['gc' as EntryType] });
for (const c of timed) {
  for (let i = 0; i < WARM_UP; i++) await pool.render(c.job);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await pool.render(c.job);
    times.push(performance.now() - t);
  }
  // the same picture in this thread, split into its parts
  const draws: number[] = [];
  const encodes: number[] = [];
  const skias: number[] = [];
  const encodeCpu: number[] = [];
  const skiaCpu: number[] = [];
  const encodeHelp: number[] = [];
  const skiaHelp: number[] = [];
  const oursWindows: [number, number][] = [];
  const skiaWindows: [number, number][] = [];
  collectionStarts.length = 0;
  let bytes = 0;
  let skiaBytes = 0;
  let size = '';
  // two untimed rounds first
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    const canvas = renderCanvas(c.job);
    const pixels = canvas.data(); // rasterised now, so the encoders below time encoding alone
    const drawn = performance.now() - t;
    await settle();
    let ours = 0;
    let oursFrom = 0;
    const [oursCpu, oursHelp] = await timeCpu(async () => {
      oursFrom = performance.now();
      bytes = (await encodePng(pixels, canvas.width, canvas.height, pngStyle(c.job))).length;
      ours = performance.now() - oursFrom;
    });
    await settle();
    let skia = 0;
    let skiaFrom = 0;
    const [skiaOwn, skiaHelpMs] = await timeCpu(() => {
      skiaFrom = performance.now();
      skiaBytes = canvas.encodeSync('png').length;
      skia = performance.now() - skiaFrom;
    });
    size = `${canvas.width}×${canvas.height}`;
    if (i < 2) continue;
    draws.push(drawn);
    encodes.push(ours);
    encodeCpu.push(oursCpu);
    encodeHelp.push(oursHelp);
    skias.push(skia);
    skiaCpu.push(skiaOwn);
    skiaHelp.push(skiaHelpMs);
    oursWindows.push([oursFrom, oursFrom + ours]);
    skiaWindows.push([skiaFrom, skiaFrom + skia]);
  }
  await sleep(0); // the observer's entries of the last encoder delivered
  const r = { bytes: bytes / skiaBytes, time: pct(encodes, 0.5) / pct(skias, 0.5), cpu: pct(encodeCpu, 0.5) / pct(skiaCpu, 0.5) };
  ratios.push(r);
  console.log(
    `${c.name.padEnd(30)} ${ms(pct(times, 0.5), 8)} ${ms(pct(times, 0.95))} | ${ms(pct(draws, 0.5))} ${ms(pct(encodes, 0.5))} ${ms(pct(encodeCpu, 0.5))} ${kb(bytes)} | ${ms(pct(skias, 0.5), 8)} ${ms(pct(skiaCpu, 0.5))} ${kb(skiaBytes)} | ${r.bytes.toFixed(2).padStart(5)} ${r.time.toFixed(2).padStart(5)} ${r.cpu.toFixed(2).padStart(5)} | ${ms(pct(encodeHelp, 0.5), 5)} ${ms(pct(skiaHelp, 0.5), 5)} ${`${collectionsIn(oursWindows)}/${collectionsIn(skiaWindows)}`.padStart(5)}  ${size} ${pngStyle(c.job)}`,
  );
}
collectionsSeen.disconnect();
if (ratios.length) console.log(
  `\nour PNG / Skia's: bytes ${Math.min(...ratios.map((r) => r.bytes)).toFixed(2)}–${Math.max(...ratios.map((r) => r.bytes)).toFixed(2)}×, ` +
    `encode time ${Math.min(...ratios.map((r) => r.time)).toFixed(2)}–${Math.max(...ratios.map((r) => r.time)).toFixed(2)}×, ` +
    `encode CPU time ${Math.min(...ratios.map((r) => r.cpu)).toFixed(2)}–${Math.max(...ratios.map((r) => r.cpu)).toFixed(2)}× (targets: ≤ 1, ≤ 0.5); ` +
    `the longest wait for V8's helper threads to go quiet before an encoder ${longestQuiet.toFixed(0)} ms`,
);

// the event loop while the pool renders: a burst of 50 requests at once, then a steady stream
const loop = monitorEventLoopDelay({ resolution: 1 });
const burst = cases.find((c) => c.name === 'player image 1')!.job;
loop.enable();
let t = performance.now();
await Promise.all(Array.from({ length: 50 }, () => pool.render(burst)));
const burstMs = performance.now() - t;
loop.disable();
console.log(`\n50 concurrent card requests: all done in ${burstMs.toFixed(0)} ms; longest event-loop block ${(loop.max / 1e6).toFixed(1)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms)`);

/**
 * How many of a histogram's samples were at least `ms` long: the event loop's blocks that reached a
 * line, counted. The longest block is one moment of a 70-s run (on a shared machine, whichever burst
 * of the other processes came worst); a count, next to the idle process's, shows whether a variant
 * moves the blocks at all. Read from the monitorEventLoopDelay histogram, whose 1-ms timer already
 * runs (each sample one gap between its turns), so nothing more runs on the thread measured for it
 * (trackLongest, which times the longest block, adds a 250-ms timer): the
 * smallest percentile whose value reaches `ms`, found by bisection (HdrHistogram keeps values to
 * 0.1%; on random samples this gave exactly the count made one by one). Its text also runs in the
 * idle process, so it uses nothing from this module.
 */
function blocksAtLeast(h: { count: number; max: number; percentile(p: number): number }, ms: number): number {
  const line = ms * 1e6;
  if (h.count === 0 || h.max < line) return 0;
  let below = 0;
  let reaches = 100;
  for (let i = 0; i < 40; i++) {
    const p = (below + reaches) / 2;
    if (h.percentile(p) >= line) reaches = p;
    else below = p;
  }
  // HdrHistogram rounds a percentile's rank half up: reaching the (k+1)-th sample starts half a sample early
  return Math.round((h.count * (100 - reaches)) / 100 + 0.5);
}

/** A longest block, ms, and the window of wall-clock time it came in (Date.now() ms). */
interface LongestBlock {
  ms: number;
  from: number;
  to: number;
  /** in that window, the thread's time on a core and waiting for one, ms (Linux schedstat; null elsewhere) */
  ranMs: number | null;
  waitedMs: number | null;
  /** in that window, how long the host's proactive memory reclaim ran, ms (the main thread's readings only; null without it) */
  reclaimMs: number | null;
}

/**
 * When a histogram's longest block came: its max read every 250 ms (an unref'd timer, a few µs a
 * turn, where the 1-ms sampler already runs), and the last rise to 10 ms or more kept as the window
 * of wall-clock time (Date.now(), the same clock in both processes) it lies in — from the reading
 * before the one before it, since the sampler may record a block only after the reading that follows
 * it —, so that the main thread's longest block and the idle process's can be seen to come at the
 * same moment (the machine holding both) or not. `sched` reads the thread's schedstat (ns on a core,
 * ns waiting for one) at each reading, so the window also tells how long the thread waited for a
 * core in it: a block about as long as that wait was the scheduler's (the machine's other work, or
 * the hypervisor's), one with little wait was the thread's own work. Its text also runs in the idle
 * process.
 */
function trackLongest(h: { max: number }, sched: () => number[] | null): () => LongestBlock | null {
  let seen = 0;
  let before = Date.now();
  let last = before;
  let sBefore = sched();
  let sLast = sBefore;
  // the window's readings, kept raw (a named helper here would be renamed by the TypeScript loader,
  // and this text runs again in the idle process without it)
  let found: { ms: number; from: number; to: number; s0: number[] | null; s1: number[] | null } | null = null;
  const timer = setInterval(() => {
    const now = Date.now();
    const sNow = sched();
    if (h.max > seen) {
      seen = h.max;
      if (seen >= 10e6) found = { ms: seen / 1e6, from: before, to: now, s0: sBefore, s1: sNow };
    }
    before = last;
    sBefore = sLast;
    last = now;
    sLast = sNow;
  }, 250);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (h.max > seen && h.max >= 10e6) found = { ms: h.max / 1e6, from: before, to: Date.now(), s0: sBefore, s1: sched() };
    if (!found) return null;
    const { s0, s1 } = found;
    return {
      ms: found.ms,
      from: found.from,
      to: found.to,
      ranMs: s0 && s1 ? (s1[0]! - s0[0]!) / 1e6 : null,
      waitedMs: s0 && s1 ? (s1[1]! - s0[1]!) / 1e6 : null,
      // a fourth reading, where `sched` gives one: the host's reclaim threads' time on a core
      reclaimMs: s0 && s1 && s0.length > 3 && s1.length > 3 ? (s1[3]! - s0[3]!) / 1e6 : null,
    };
  };
}

/**
 * The CPU each kind of thread of this process used between two readings, in seconds: this thread,
 * then the others grouped by name and niceness (the render workers run at RENDER_NICE; libvips
 * names its threads; V8's helpers and libuv's pool are plain "node" threads at the main thread's
 * priority). A thread at niceness 0 that works during the renders competes with the event loop
 * for a core; a lowered one gives way to it.
 */
function threadGroups(before: ThreadCpu[], after: ThreadCpu[]): string {
  const start = new Map(before.map((t) => [t.tid, t.cpuUs]));
  const groups = new Map<string, { threads: number; us: number }>();
  for (const t of after) {
    const key = t.tid === process.pid ? 'main thread' : `${t.name} at ${t.nice}`;
    const g = groups.get(key) ?? { threads: 0, us: 0 };
    g.threads++;
    g.us += t.cpuUs - (start.get(t.tid) ?? 0);
    groups.set(key, g);
  }
  return [...groups]
    .filter(([, g]) => g.us > 0)
    .sort((a, b) => b[1].us - a[1].us)
    .map(([k, g]) => `${k}${k === 'main thread' ? '' : ` (${g.threads})`} ${(g.us / 1e6).toFixed(1)} s`)
    .join(', ');
}

/**
 * An idle Node process's own longest event-loop block, measured while the renders run: it is started
 * before the bench settles (its own start-up is over by then), and its readings begin when it is told
 * the renders begin (a line on its stdin) and end when its stdin ends, the main thread's window.
 * Until 2026-12-01 they began at its start, so its longest block, its blocks of 10 and 15 ms and its
 * wait for a core also counted the 14–60 s of settling (on the eighteenth machine its longest block
 * came 13 s before the renders in one run).
 */
const control = spawn(
  process.execPath,
  [
    '-e',
    `const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 1 }); h.enable();
     const wait = () => { try { return require('node:fs').readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number); } catch { return null; } };
     const atLeast = ${blocksAtLeast.toString()};
     const trackLongest = ${trackLongest.toString()};
     let w0 = null, longest = null;
     process.stdin.once('data', () => { h.reset(); w0 = wait(); longest = trackLongest(h, wait); });
     process.stdin.resume(); process.stdin.on('end', () => { h.disable(); const w1 = wait(); const at = longest ? longest() : null; const started = longest !== null;
       process.stdout.write(JSON.stringify({ started, max: h.max / 1e6, p99: h.percentile(99) / 1e6, over10: atLeast(h, 10), over15: atLeast(h, 15), waitMs: w0 && w1 ? (w1[1] - w0[1]) / 1e6 : null, slices: w0 && w1 ? w1[2] - w0[2] : null, at })); });`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
let controlOut = '';
control.stdout.on('data', (d: Buffer) => (controlOut += d));
/** the main thread's collections during the renders, by kind (V8 pauses only: the marking steps in between are not entries) */
const gcKinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'full (mark-compact)',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
/**
 * V8's memory reducer: a full collection it starts (to shrink a heap whose thread has gone quiet)
 * carries the callback flag "all external memory"; those of the heap's own growth do not (seen with
 * --trace-gc: every "Mark-Compact (reduce)" line came with flags 32, 2026-11-29).
 */
const byReducer = (e: PerformanceEntry) => {
  const d = (e as unknown as { detail?: { kind?: number; flags?: number } }).detail;
  return d?.kind === constants.NODE_PERFORMANCE_GC_MAJOR && ((d.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY) !== 0;
};
const pauses = new Map<string, number[]>();
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = byReducer(e) ? 'full, by the memory reducer' : (gcKinds[(e as unknown as { detail: { kind: number } }).detail.kind] ?? 'other');
    pauses.set(kind, [...(pauses.get(kind) ?? []), e.duration]);
  }
});
/**
 * Whether the main thread's blocks came with the host's proactive memory reclaim (DAMON's kdamond,
 * reclaimThreads in bench/support/service.ts), on a machine that runs it: every 50 ms (an unref'd
 * timer), whether kdamond ran in that window (0.5 ms or more), and how many blocks of 10 ms or more a
 * second 1-ms histogram recorded in it (reset each window; its timer fires in the turns the first
 * one's does, and is read by bisection only in a window that had such a block; a reset also drops
 * the histogram's next sample, so a block that begins right after a reading is not counted, and the
 * count can fall a few short of the main histogram's: 31 against 34 in one run). A block is recorded
 * when it ends, so one that came with a burst of reclaim lies in the burst's window or the next: the
 * blocks in those windows, against those windows' share of the run, tell whether the two go together
 * beyond chance. On the nineteenth machine (a burst of ~5 ms every 500 ms) 17 of the main thread's
 * 18 blocks of 10 ms or more came during a burst, and none of the idle process's 3 (perf sched,
 * docs/benchmarks.md). Null where no kdamond runs.
 */
function besideReclaim(pids: number[]): (() => { windows: number; near: number; blocks: number; blocksNear: number; ranMs: number; bursts: number }) | null {
  const first = reclaimNs(pids);
  if (first === null) return null;
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let last = first;
  let ranBefore = false;
  let windows = 0;
  let near = 0;
  let blocks = 0;
  let blocksNear = 0;
  let bursts = 0;
  const read = () => {
    const now = reclaimNs(pids) ?? last;
    const ran = now - last >= 0.5e6;
    last = now;
    const b = h.max >= 10e6 ? blocksAtLeast(h, 10) : 0;
    h.reset();
    windows++;
    if (ran && !ranBefore) bursts++;
    if (ran || ranBefore) {
      near++;
      blocksNear += b;
    }
    blocks += b;
    ranBefore = ran;
  };
  const timer = setInterval(read, 50);
  timer.unref();
  return () => {
    clearInterval(timer);
    read();
    h.disable();
    return { windows, near, blocks, blocksNear, ranMs: (last - first) / 1e6, bursts };
  };
}

/** This thread's Linux schedstat: ns on a core, ns waiting for one, timeslices; null elsewhere. */
function schedstat(): number[] | null {
  try {
    return readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
  } catch {
    return null;
  }
}

/**
 * A thread's time spent ready to run but waiting for a core, and its turns on a core (Linux
 * schedstat: run ns, wait ns, timeslices), null elsewhere. The main thread's wait is the part of
 * its blocks the scheduler makes, summed over the whole run rather than its single worst moment.
 */
const schedWait = (): [number, number] | null => {
  const s = schedstat();
  return s ? [s[1]! / 1e6, s[2]!] : null;
};
// Settled before timing: what building the fixtures and the warm-up renders left on this thread's
// heap is collected now, and V8's memory reducer, which a full collection arms when this thread then
// allocates little (as while pictures render), has done its shrinking collections before the clock
// starts. A forced collection right before the renders had it collect in full ~8 s into them (two
// collections shrinking the heap from 83 to 55 MB, the longest paused 59.8 ms; 2026-11-29,
// --trace-incremental-marking: "Start (memory reducer)"). It looks every 8 s and starts once it has
// seen the allocation rate low, 16–18 s after the collection that armed it, then collects up to three
// times ~0.6 s apart. So timing waits until it has collected and 5 s have passed without a full
// collection, or 25 s without one if it does not start (60 s at most); collections during the
// renders are still counted below, the reducer's apart.
collectNow();
let lastFull = performance.now();
let reduced = 0;
const settling = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) lastFull = performance.now();
    if (byReducer(e)) reduced++;
  }
});
settling.observe({ entryTypes: ['gc' as EntryType] });
const settleFrom = performance.now();
while (performance.now() - lastFull < (reduced > 0 ? 5_000 : 25_000) && performance.now() - settleFrom < 60_000) await new Promise((r) => setTimeout(r, 250));
settling.disconnect();
console.log(
  `settled for ${((performance.now() - settleFrom) / 1000).toFixed(1)} s (a forced full collection, then ${reduced} by the memory reducer` +
    `${reduced > 0 ? ' and 5 s' : ' in 25 s'} without another)`,
);
let peak = mb();
const rss: string[] = [];
gcObserver.observe({ entryTypes: ['gc' as EntryType] });
loop.reset();
loop.enable();
// the idle process's readings begin now too
control.stdin.write('renders\n');
const reclaimers = reclaimThreads();
// the main thread's readings carry the host's reclaim threads' time as a fourth figure
const longestAt = trackLongest(loop, () => {
  const s = schedstat();
  const r = reclaimNs(reclaimers);
  return s && r !== null ? [...s.slice(0, 3), r] : s;
});
const reclaimAt = besideReclaim(reclaimers);
const rendersFrom = Date.now();
const wait0 = schedWait();
const threads0 = threadsOf(process.pid);
t = performance.now();
for (let i = 0; i < RENDERS; i++) {
  await pool.render(cases[i % cases.length]!.job);
  peak = Math.max(peak, mb());
  if ((i + 1) % Math.max(1, Math.floor(RENDERS / 4)) === 0) rss.push(`${i + 1}: ${mb().toFixed(0)} MB`);
}
const mainLongest = longestAt();
const reclaim = reclaimAt?.() ?? null;
loop.disable();
const wait1 = schedWait();
const threads1 = threadsOf(process.pid);
gcObserver.disconnect();
control.stdin.end();
await once(control, 'exit');
const idle = JSON.parse(controlOut) as {
  started: boolean;
  max: number;
  p99: number;
  over10: number;
  over15: number;
  waitMs: number | null;
  slices: number | null;
  at: LongestBlock | null;
};
if (!idle.started) throw new Error('the idle Node process was not told when the renders began: its figures would not be of their window');
console.log(`${RENDERS} renders (every option in turn) in ${((performance.now() - t) / 1000).toFixed(1)} s; RSS after ${rss.join(', ')}; peak ${peak.toFixed(0)} MB`);
console.log(`longest event-loop block during those renders: ${(loop.max / 1e6).toFixed(1)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms; target ≤ 15 ms)`);
console.log(`an idle Node process at the same time (the machine's scheduling alone): longest block ${idle.max.toFixed(1)} ms (p99 ${idle.p99.toFixed(1)} ms)`);
/** a longest block's window, in seconds from the renders' start */
const when = (b: LongestBlock | null) =>
  b
    ? `${b.ms.toFixed(1)} ms at ${((b.from - rendersFrom) / 1000).toFixed(2)}–${((b.to - rendersFrom) / 1000).toFixed(2)} s` +
      (b.ranMs !== null && b.waitedMs !== null
        ? ` (in that window on a core ${b.ranMs.toFixed(1)} ms, waiting for one ${b.waitedMs.toFixed(1)} ms` +
          `${b.reclaimMs !== null ? `; the host's memory reclaim ran ${b.reclaimMs.toFixed(1)} ms` : ''})`
        : '')
    : 'none of 10 ms or more';
console.log(`when each longest block came, s from the renders' start: the main thread ${when(mainLongest)}; the idle process ${when(idle.at)}`);
console.log(
  `blocks of at least 10 / 15 ms: the main thread ${blocksAtLeast(loop, 10)} / ${blocksAtLeast(loop, 15)} of ${loop.count} timer turns; ` +
    `the idle process ${idle.over10} / ${idle.over15}`,
);
if (wait0 && wait1 && idle.waitMs !== null && idle.slices) {
  const [ms0, n0] = wait0;
  const [ms1, n1] = wait1;
  console.log(
    `waiting for a core (ready to run, not running): the main thread ${(ms1 - ms0).toFixed(0)} ms over ${n1 - n0} turns (${(((ms1 - ms0) * 1000) / Math.max(1, n1 - n0)).toFixed(0)} µs each); ` +
      `the idle process ${idle.waitMs.toFixed(0)} ms over ${idle.slices} turns (${((idle.waitMs * 1000) / idle.slices).toFixed(0)} µs each)`,
  );
}
console.log(
  reclaim
    ? `the host's proactive memory reclaim (DAMON's kdamond) during the renders: ran ${reclaim.ranMs.toFixed(0)} ms in ${reclaim.bursts} bursts; ` +
        `of the main thread's ${reclaim.blocks} blocks of at least 10 ms, ${reclaim.blocksNear} came in a 50-ms window in which it ran or the one after ` +
        `(such windows: ${((reclaim.near * 100) / Math.max(1, reclaim.windows)).toFixed(0)} % of the ${reclaim.windows})`
    : "the host's proactive memory reclaim (DAMON): none on this machine",
);
console.log(`CPU during the renders, by thread (name, niceness): ${threadGroups(threads0, threads1)}`);
console.log(
  `main-thread GC pauses during the renders: ${
    [...pauses].map(([k, d]) => `${k} ${d.length}× (longest ${Math.max(...d).toFixed(1)} ms, total ${d.reduce((a, b) => a + b, 0).toFixed(0)} ms)`).join('; ') || 'none'
  }`,
);
await pool.close();
