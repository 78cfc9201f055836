/**
 * The render worker: registers the fonts once, warms the font fallbacks up, then renders and
 * encodes jobs one at a time. Everything CPU-heavy about a picture happens here, off the event loop
 * of the HTTP server and the bot.
 */
import { readdirSync } from 'node:fs';
import { readlink } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { renderPng } from './index.ts';
import { spriteBytes } from './draw.ts';
import { ensureFonts } from './fonts.ts';
import type { RenderJob } from './types.ts';
import { currentTid, tidOfLink } from './thread-id.ts';
import { warmUp } from './warm.ts';

/** A worker's own V8 heap (the process's RSS holds it; the main thread's memoryUsage does not see it). */
export interface WorkerMemory {
  heapUsed: number;
  heapTotal: number;
  /** memory outside the heap that V8 knows of (canvases, buffers) */
  external: number;
  /** bytes of pixels in the sprite cache (draw.ts), outside the heap and unknown to V8 */
  sprites: number;
  /**
   * Bytes of ArrayBuffers this worker's allocator had given out and not had back, beyond those it
   * held once started, as of the collection after its previous picture: the pictures it handed
   * over (shared or transferred) that either thread still held or had not collected yet, and the
   * few MB its drawing keeps in buffers made since it started. An ArrayBuffer made here is freed,
   * on whichever thread lets it go last, through this worker's allocator. What decided whether
   * this picture came shared (`WorkerStart.maxShared`; pool.ts).
   */
  handedOver: number;
}

/** What the pool hands a worker as it starts. */
export interface WorkerStart {
  /** niceness of this thread (0 = the main thread's; see lowerPriority) */
  nice: number;
  /** the thread that runs the pool (its Linux thread id), which lowerOthers leaves at its priority; undefined where there is no /proc */
  host?: number;
  /** bytes of pictures handed over and still alive (`WorkerMemory.handedOver`) below which a picture comes in shared memory (pool.ts) */
  maxShared: number;
}

export interface JobMessage {
  id: number;
  job: RenderJob;
}

export type ResultMessage =
  | { type: 'ready' }
  | { type: 'done'; id: number; png: Uint8Array; ms: number; memory: WorkerMemory }
  | { type: 'failed'; id: number; name: string; message: string };

const port = parentPort;
if (!port) throw new Error('worker-main.ts runs only as a worker thread');

/**
 * Lowers this thread's scheduling priority, and only this thread's: on Linux a thread is a task
 * with an id of its own, setpriority(PRIO_PROCESS, tid) changes that task alone, and raising one's
 * own niceness needs no privilege. /proc/thread-self links to /proc/<pid>/task/<tid>. With the
 * render workers below the main thread, a main thread that wakes (a request, a timer, a picture to
 * send) takes a core from a render at once instead of waiting for the scheduler's next turn — on a
 * 2-core machine with a render on each core, that wait was the event loop's longest blocks. Threads
 * this one starts inherit the niceness. Where there is no /proc/thread-self (not Linux) or the call
 * is refused, the worker keeps its priority: pictures are drawn the same, only without that yield.
 */
function lowerPriority(nice: number): void {
  if (nice <= 0) return;
  const tid = currentTid();
  if (tid === undefined) return; // no per-thread priority here: render at the main thread's
  try {
    setPriority(tid, nice);
  } catch {
    // refused: render at the main thread's priority
  }
}
const start = workerData as WorkerStart | undefined;
const NICE = start?.nice ?? 0;
const maxShared = start?.maxShared ?? 0;
lowerPriority(NICE);

/** Threads lowerOthers has settled (lowered, or left alone), by id. */
const settled = new Set<number>();
let tasksReadable = NICE > 0;

/**
 * The threads of libuv's pool, which every thread of the process shares: each runs a file-system
 * call for whoever queued it, so a readlink of /proc/thread-self queued from here resolves to the
 * pool thread that runs it. Rounds of as many calls at once as the pool has threads eight times
 * over, until every thread has answered or 50 rounds have: one round did on the quiet machine, but
 * on a busy one a thread that wakes first can take a whole round (a test probing this way saw three
 * of four threads in one round, 2026-11-29), and a pool thread missed here would be lowered.
 */
async function poolThreads(): Promise<Set<number>> {
  const size = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const seen = new Set<number>();
  for (let round = 0; round < 50 && seen.size < size; round++) {
    const links = await Promise.all(Array.from({ length: size * 8 }, () => readlink('/proc/thread-self').catch(() => '')));
    for (const link of links) {
      const tid = tidOfLink(link);
      if (tid !== undefined) seen.add(tid);
    }
  }
  return seen;
}

/**
 * Lowers the process's other busy threads to this thread's niceness: all but the main thread and
 * the pool's (`host`), the event loops, and libuv's pool, which runs their SQLite queries and file
 * system calls (poolThreads; lowered too, the service held ~20 MB more under bench:memory's mixed
 * load, 395–399 MB after 180 s against 373–377). A picture's CPU does not all run on this thread.
 * sharp encodes on libvips's worker threads, started from libuv's pool; V8's helper threads, which
 * every isolate of the process shares, mark this thread's heap and compile its code with TurboFan.
 * All of those start at the main thread's priority, and a thread woken at niceness 0 (the event
 * loop, or any other process) waits for one of them to use up its slice. bench:render's
 * 1,000-render loop on the quiet 2-core VM (2026-11-29): with libvips's threads lowered alone, the
 * others still ran 10.6 s at niceness 0 beside this thread's 67 s, and the event loop's longest
 * block was 26.8 ms (51 blocks of 10 ms or more; an idle Node process beside it 20.7 ms); with V8's
 * helpers lowered as well, 10.7 ms and one such block (the idle process the same).
 *
 * Run after each picture, so threads started meanwhile (libvips starts its threads when it first
 * needs them) are lowered too: a listing of /proc/self/task (~30 ids), a priority read for the
 * ids not seen before. Raising a niceness needs no privilege; lowering it again would, so a thread
 * already at this niceness or above is left as it is. Linux only; elsewhere, or if refused, the
 * threads keep their priority.
 */
function lowerOthers(keep: Set<number>): void {
  if (!tasksReadable) return;
  try {
    for (const entry of readdirSync('/proc/self/task')) {
      const tid = Number(entry);
      if (settled.has(tid)) continue;
      settled.add(tid);
      if (tid === process.pid || tid === start?.host || keep.has(tid)) continue;
      try {
        if (getPriority(tid) < NICE) setPriority(tid, NICE);
      } catch {
        // ended meanwhile, or refused: it keeps its priority
      }
    }
  } catch {
    tasksReadable = false;
  }
}
const libuvPool = tasksReadable ? await poolThreads() : new Set<number>();

ensureFonts();
warmUp();
/** the ArrayBuffers this worker holds for itself once started (fonts, warm-up): not pictures (WorkerMemory.handedOver) */
const ownBuffers = process.memoryUsage().arrayBuffers;
/** WorkerMemory.handedOver, measured after each picture's collection */
let handedOver = 0;
port.postMessage({ type: 'ready' } satisfies ResultMessage);

/**
 * A canvas holds its pixels (up to 8.6 MB for the 1800×1200 grid) outside the JS heap, where V8
 * does not see them: the worker's heap stays small, so garbage collection came seldom and dozens
 * of dead canvases stayed resident: RSS +100 MB over 23 renders of a card, a grid and a chart, +58 MB
 * with a collection after each picture. renderPng lets a canvas's surface go as soon as its pixels
 * are copied out (releasePixels, draw.ts); the copy (`data()`) is a Buffer V8 counts as external
 * memory, freed when V8 collects it.
 *
 * A minor collection after each picture: the copy (3.2 MB for a card, 8.6 MB for the grid) is
 * allocated by the canvas addon's own allocator (mimalloc) and is young and dead once the picture
 * is sent. Collected there, it is freed before the next picture draws; with MIMALLOC_PURGE_DELAY=0
 * (npm start's settings) mimalloc gives its pages back to the system at once. Together they hold
 * mimalloc's resident memory at ~12 MB under bench:memory's mixed load, against 20–38 MB with
 * neither and 17–20 MB with the purge setting alone (docs/benchmarks.md, Memory).
 *
 * No full collection is asked for: one was, after every 32 MB of pixels drawn (one per 4–10
 * pictures), when the surfaces were not yet let go. Its marking ran on V8's helper threads, which
 * all isolates share and which run at the main thread's priority, not this thread's; and each one
 * threw away the optimised code of the drawing and chart functions that held objects it freed
 * ("weak objects"), compiled again by the same helpers. V8's own full collections of this heap
 * (incremental, every second or two under bench:render's stream) keep it as small: bench:render's
 * 300-render loop on the quiet 2-core VM (2026-11-29) printed 5.3 s of CPU at niceness 0 in the
 * process's other threads with them and 4.5 s without, the render worker's heap 25 MB held either
 * way in bench:memory (docs/benchmarks.md, Images and charts: speed).
 */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

port.on('message', async (msg: JobMessage) => {
  const t = performance.now();
  try {
    const png = await renderPng(msg.job);
    lowerOthers(libuvPool);
    // fresh memory of its own: shared, or an ArrayBuffer transferred without a copy
    const shared = handedOver < maxShared;
    const out = new Uint8Array(shared ? new SharedArrayBuffer(png.length) : new ArrayBuffer(png.length));
    out.set(png);
    const h = getHeapStatistics();
    const memory: WorkerMemory = {
      heapUsed: h.used_heap_size,
      heapTotal: h.total_heap_size,
      external: h.external_memory,
      sprites: spriteBytes(),
      handedOver,
    };
    port.postMessage({ type: 'done', id: msg.id, png: out, ms: performance.now() - t, memory } satisfies ResultMessage, shared ? [] : [out.buffer as ArrayBuffer]);
  } catch (e) {
    const err = e as Error;
    port.postMessage({ type: 'failed', id: msg.id, name: err?.name ?? 'Error', message: err?.message ?? String(e) } satisfies ResultMessage);
  }
  collect({ type: 'minor' });
  // this picture's own buffers (the canvas's pixels, the encoder's) are gone now: what is left beyond the start is handed over
  handedOver = Math.max(0, process.memoryUsage().arrayBuffers - ownBuffers);
});
