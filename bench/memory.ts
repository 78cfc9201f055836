/**
 * Memory of the service under a mixed load: `node bin/starr.js serve` (what `npm start` runs, see
 * support/service.ts) with 16 clients asking, one request after another, for players drawn from a
 * Zipf distribution (s = 1) over 500 tags of the simulated world: 95 % JSON (profile 70 %, battle
 * log 25 %), 5 % pictures (the profile card, or brawler grids 4/8/9; support/mixed-load.ts). Prints the process's RSS
 * (render worker threads included: they live in the same process) at start, every 30 s, at 60 s
 * and at 180 s (both while the clients still ask; then once they have stopped), the peak and the
 * mean from 60 s on (sampled every 250 ms), with the requests answered; then, with no requests, RSS once the
 * render workers have been idle long enough to be ended (--idle seconds after the load, default 75;
 * the pool ends a worker once no picture has been drawn or asked for in 60 s).
 *
 * At 60 s and at the end it also prints where the RSS is (/proc/<pid>/smaps: the node binary, native
 * addons, glibc's arenas, other anonymous memory: V8's heaps and large buffers).
 *
 * `--env NAME=VALUE` (repeatable) starts the service with that setting changed, to compare settings
 * (CACHE_MEMORY_MB, RENDER_CACHE_MB, MALLOC_ARENA_MAX, NODE_OPTIONS=…) run after run.
 *
 *   npm run bench:memory [-- --seconds 180 --clients 16 --tags 500 --idle 75 --port 19100 --env CACHE_MEMORY_MB=16]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { gcCountsOf, rssOf, serviceEnv, startService } from './support/service.ts';
import { formatSmaps, smapsOf } from './support/smaps.ts';
import { mixedLoad } from './support/mixed-load.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    clients: { type: 'string', default: '16' },
    tags: { type: 'string', default: '500' },
    idle: { type: 'string', default: '75' },
    /** the service's port (default: one derived from this process's id) */
    port: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const seconds = Number(values.seconds);
const clients = Number(values.clients);
const tagCount = Number(values.tags);
const idleSeconds = Number(values.idle);

const env = serviceEnv(values.env, values.port);
const service = await startService({ env });
const started = Date.now();
const mb = () => rssOf(service.pid);
const atStart = mb();
let peak = atStart;
const marks: string[] = [];
console.log(
  `${new Date().toISOString()}  ${clients} clients, Zipf over ${tagCount} tags, 5 % pictures, ${seconds} s${values.env.length ? `, ${values.env.join(' ')}` : ''}; RSS at start ${atStart.toFixed(0)} MB; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

const load = mixedLoad(service.base, { clients, tags: tagCount });

// the mean from 60 s on: one reading depends on where it falls between two collections (±40 MB)
let lateSum = 0;
let lateCount = 0;
const sampler = setInterval(() => {
  const now = mb();
  peak = Math.max(peak, now);
  if (Date.now() - started >= 60_000) {
    lateSum += now;
    lateCount++;
  }
}, 250);
const reporter = setInterval(() => {
  const t = Math.round((Date.now() - started) / 1000);
  const line = `${String(t).padStart(4)} s: RSS ${mb().toFixed(0)} MB (peak ${peak.toFixed(0)}), ${load.done} requests`;
  console.log(line);
}, 30_000);
let smapsAt60 = '';
/** requests answered in the first 60 s (start-up work, the demo backfill and the poller's first rounds, slows them) */
let doneAt60 = -1;
const at60 =
  seconds > 60
    ? setTimeout(() => {
        marks.push(`60 s: ${mb().toFixed(0)} MB`);
        doneAt60 = load.done;
        smapsAt60 = formatSmaps(smapsOf(service.pid));
      }, 60_000)
    : undefined;

await new Promise((r) => setTimeout(r, seconds * 1000));
// read while the clients still ask, as the 60-s mark is; a reading once they had stopped came out
// 10 MB lower in one run and 1–4 MB higher in two (2026-11-29): it is printed apart, after it
clearInterval(sampler);
clearInterval(reporter);
clearTimeout(at60);
const end = mb();
peak = Math.max(peak, end);
const smapsAtEnd = formatSmaps(smapsOf(service.pid));
await load.stop();
const stopped = mb();
console.log(
  `\nRSS: start ${atStart.toFixed(0)} MB, ${marks.join(', ')}${marks.length ? ', ' : ''}after ${seconds} s ${end.toFixed(0)} MB, peak ${peak.toFixed(0)} MB${lateCount ? `, mean from 60 s on ${(lateSum / lateCount).toFixed(0)} MB` : ''} (target ≤ 300 MB)` +
    `; once the clients had stopped ${stopped.toFixed(0)} MB`,
);
// what holds it: the main thread's heap, the render workers', the caches (from /metrics)
const metrics = await (await fetch(`${service.base}/metrics`)).text();
const parts = metrics
  .split('\n')
  .filter((l) => /^starr_(process|cache)_memory_bytes\{/.test(l))
  .map((l) => {
    const [name, value] = l.split(' ');
    const labels = [...name!.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(' ');
    return `${labels} ${(Number(value) / 2 ** 20).toFixed(0)}`;
  });
console.log(`held, MB: ${parts.join(', ')}`);
const files = Number(/^starr_picture_files_bytes (\d+)$/m.exec(metrics)?.[1] ?? NaN);
console.log(`pictures kept as files (DATA_DIR/pictures, not in RSS but the page cache): ${(files / 2 ** 20).toFixed(0)} MB`);
if (smapsAt60) console.log(`at 60 s: ${smapsAt60}`);
console.log(`after ${seconds} s: ${smapsAtEnd}`);
// what the heap's settings cost the event loop: the main thread's collections during the run
const gc = gcCountsOf(metrics);
const gcLine = `major ${gc.major} (${gc.majorMs.toFixed(0)} ms), minor ${gc.minor} (${gc.minorMs.toFixed(0)} ms)`;
// what a smaller memory layer costs: where the core's reads were answered from
const reads = new Map<string, number>();
for (const m of metrics.matchAll(/^starr_core_reads_total\{[^}]*source="([^"]+)"[^}]*\} (\S+)$/gm)) reads.set(m[1]!, (reads.get(m[1]!) ?? 0) + Number(m[2]));
const readsTotal = [...reads.values()].reduce((a, b) => a + b, 0);
console.log(`core reads: ${[...reads].map(([source, n]) => `${source} ${((100 * n) / readsTotal).toFixed(1)} %`).join(', ')} of ${readsTotal}`);
// and the pictures' (RENDER_CACHE_MB's memory tier, the files, drawings)
const pictures = [...metrics.matchAll(/^starr_picture_answers_total\{source="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])] as const);
const picturesTotal = pictures.reduce((a, [, n]) => a + n, 0);
console.log(`pictures answered: ${pictures.map(([source, n]) => `${source} ${((100 * n) / picturesTotal).toFixed(1)} %`).join(', ')} of ${picturesTotal}`);
console.log(`main thread's collections since start: ${gcLine}; longest major pause ${(Number(/^starr_gc_longest_major_pause_seconds (\S+)$/m.exec(metrics)?.[1] ?? NaN) * 1000).toFixed(1)} ms`);
if (idleSeconds > 0) {
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const workers = /^starr_render_workers (\d+)/m.exec(await (await fetch(`${service.base}/metrics`)).text())?.[1];
  console.log(`idle ${idleSeconds} s after the load: RSS ${mb().toFixed(0)} MB${workers === undefined ? '' : `, ${workers} render workers running`}`);
}
console.log(`${load.done} requests${doneAt60 >= 0 ? ` (${((load.done - doneAt60) / (seconds - 60)).toFixed(0)}/s from 60 s on)` : ''}; statuses ${[...load.statuses].map(([s, n]) => `${s || 'error'}: ${n}`).join(', ')}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
await service.stop();
