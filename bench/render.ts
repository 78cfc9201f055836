/**
 * Rendering speed: for every option, median and p95 of a picture through the worker pool (render +
 * PNG encode + hand-over), the drawing time alone, PNG bytes; the longest event-loop block of the
 * main thread while pictures render; RSS over 1,000 renders.
 *
 *   npm run bench:render            (node --import tsx bench/render.ts [renders=1000] [runs=15])
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CLUB_CHART_OPTIONS, CLUB_IMAGE_OPTIONS, optionsOf, PLAYER_CHART_OPTIONS, PLAYER_IMAGE_OPTIONS } from '../src/render/catalogue.ts';
import { renderCanvas } from '../src/render/index.ts';
import { encodePng } from '../src/render/png-encode.mjs';
import { RenderPool } from '../src/render/pool.ts';
import type { RenderJob } from '../src/render/types.ts';
import { fixtureSubjects, fixtureWorld, jobCollector, T0 } from '../test/fixtures/render/cases.ts';

const RENDERS = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 15);

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
  job: { kind: 'playerChart', option: 1, quality: 'high', input: { name: 'Bench', tag: '#2PP0GQ9LU', from: thousand[0]!.t, to: T0, series: [{ label: 'Trophies', points: thousand }] } },
});

const pct = (xs: number[], p: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((a.length - 1) * p))]!;
};
const f1 = (n: number) => n.toFixed(1).padStart(7);

const pool = new RenderPool({});
await pool.warm();
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();

console.log(`render pool: ${pool.size} worker(s); ${RUNS} runs per option after one warm-up\n`);
console.log(`${'option'.padEnd(32)} ${'median'.padStart(7)} ${'p95'.padStart(7)} ${'draw'.padStart(7)}  ${'PNG KB'.padStart(7)}  size`);
for (const c of cases) {
  await pool.render(c.job);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const png = await pool.render(c.job);
    times.push(performance.now() - t);
    bytes = png.length;
  }
  // drawing alone, in this thread (not what requests pay on the event loop: that is the pool)
  const draws: number[] = [];
  let size = '';
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const canvas = renderCanvas(c.job);
    draws.push(performance.now() - t);
    size = `${canvas.width}×${canvas.height}`;
  }
  console.log(`${c.name.padEnd(32)} ${f1(pct(times, 0.5))} ${f1(pct(times, 0.95))} ${f1(pct(draws, 0.5))}  ${String(Math.round(bytes / 1024)).padStart(7)}  ${size}`);
}
loop.disable();
loop.reset();

// event-loop block while the pool renders: a burst of 50 requests at once, and a steady stream
loop.enable();
const burst = cases.filter((c) => c.name === 'player image 1')[0]!.job;
let t = performance.now();
await Promise.all(Array.from({ length: 50 }, () => pool.render(burst)));
const burstMs = performance.now() - t;
loop.disable();
console.log(`\n50 concurrent card requests: all done in ${burstMs.toFixed(0)} ms; longest event-loop block ${(loop.max / 1e6).toFixed(1)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms)`);

const mb = () => process.memoryUsage.rss() / 1024 / 1024;
const rss: string[] = [];
loop.reset();
loop.enable();
t = performance.now();
for (let i = 0; i < RENDERS; i++) {
  await pool.render(cases[i % cases.length]!.job);
  if ((i + 1) % Math.max(1, Math.floor(RENDERS / 4)) === 0) rss.push(`${i + 1}: ${mb().toFixed(0)} MB`);
}
loop.disable();
console.log(`${RENDERS} renders (all options in turn) in ${((performance.now() - t) / 1000).toFixed(1)} s; RSS after ${rss.join(', ')}`);
console.log(`longest event-loop block during those renders: ${(loop.max / 1e6).toFixed(1)} ms`);

// for comparison: drawing on the main thread would block it this long per picture
const block: number[] = [];
for (const c of cases) {
  const t0 = performance.now();
  renderCanvas(c.job);
  block.push(performance.now() - t0);
}
console.log(`(drawing in the main thread instead would block it up to ${Math.max(...block).toFixed(0)} ms per picture, before encoding)`);

// the encoders compared on the classic card and the biggest grid: why the pool runs our own
console.log('\nPNG encoders (median of 5, in this thread):');
for (const name of ['player image 1', 'player image 3']) {
  const canvas = renderCanvas(cases.find((c) => c.name === name)!.job);
  const raw = canvas.data();
  const run = (label: string, f: () => Buffer) => {
    const ts: number[] = [];
    let size = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      size = f().length;
      ts.push(performance.now() - t0);
    }
    console.log(`  ${name.padEnd(16)} ${label.padEnd(26)} ${f1(pct(ts, 0.5))} ms  ${String(Math.round(size / 1024)).padStart(6)} KB`);
  };
  run("Skia (canvas.toBuffer)", () => canvas.toBuffer('image/png'));
  for (const level of [1, 2, 4, 6]) run(`ours, sub filter, zlib ${level}`, () => encodePng(raw, canvas.width, canvas.height, { level }));
}
await pool.close();
