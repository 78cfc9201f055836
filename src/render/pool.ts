/**
 * A bounded pool of render workers. Each worker renders and encodes one picture at a time; jobs
 * wait in a FIFO queue of bounded length, so a burst of requests costs memory for their inputs only
 * (a few hundred KB each), never for fifty canvases at once. A full queue is refused right away with
 * RenderBusyError (the HTTP API answers 503 with Retry-After) instead of growing without end.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.ts';
import { BUNDLE_URL } from '../lib/bundle.ts';
import type { Schedule } from '../lib/schedule.ts';
import type { RenderJob } from './types.ts';
import { currentTid } from './thread-id.ts';
import type { JobMessage, ResultMessage, WorkerMemory, WorkerStart } from './worker-main.ts';

export class RenderBusyError extends Error {
  readonly retryAfterSeconds = 2;
  constructor(queued: number) {
    super(`The image renderer is busy (${queued} pictures waiting). Try again in a moment.`);
    this.name = 'RenderBusyError';
  }
}

export class RenderFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderFailedError';
  }
}

export interface RenderPoolOptions {
  /** worker threads (default: one core left to the event loop, 1 to 4) */
  size?: number;
  /** jobs allowed to wait beyond those being rendered (default 64) */
  maxQueue?: number;
  /** a job running longer than this kills its worker (default 30 s) */
  timeoutMs?: number;
  logger?: Logger;
  /** bytes of pictures handed over and still alive at or above which the next ones come as counted buffers (default 64 MB; see SHARED_BYTES) */
  maxSharedBytes?: number;
  /** a worker idle this long is ended, and started again by the next picture (default 60 s; see IDLE_MS) */
  idleMs?: number;
  /** where the idle deadlines run (default: an unref'd timer; tests fire them themselves) */
  schedule?: Schedule;
  /** milliseconds of a monotonic clock, what `asked` and the idle deadlines compare (default performance.now) */
  now?: () => number;
  /** niceness of the render threads, 0 to 19 (default RENDER_NICE; 0 renders at the main thread's priority) */
  nice?: number;
}

interface Pending {
  id: number;
  job: RenderJob;
  resolve(png: Buffer): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  current: Pending | null;
  timer: NodeJS.Timeout | null;
  /** the worker's heap as of its last picture */
  memory?: WorkerMemory;
  /** cancels the idle deadline, while one runs */
  idle: (() => void) | null;
  /** ended by the pool (idle, or closing): its exit is not a failure */
  ending: boolean;
}

/** The worker's entry: its build next to the bundle's, or the plain-JS file that registers tsx. */
const WORKER_URL = BUNDLE_URL ? new URL('render-worker.js', BUNDLE_URL) : new URL('./worker.mjs', import.meta.url);

/**
 * How pictures reach this thread. A transferred ArrayBuffer counts as "external memory" of the
 * receiving thread, and V8 starts a full (mark-compact) collection of the main thread's whole heap
 * each time 64 MB of it has arrived since the last one: about one per 150–250 pictures, and the
 * longest event-loop blocks during renders (bench:render: 6 such collections in 300 renders, the
 * longest 48.8 ms on the busy machine). V8 does not count SharedArrayBuffer memory per thread, so a
 * picture handed over in one puts no such pressure: a picture that dies young (an answer sent and
 * dropped) is freed by the next minor collection, the cheap one.
 *
 * A picture that lives on (the RENDER_CACHE_MB cache, a slow client) and is dropped later waits
 * for a full collection, which V8 would not hurry for memory it cannot see. So the pictures handed
 * over and still alive are bounded: an ArrayBuffer is freed, on whichever thread lets it go last,
 * through the allocator of the thread that made it, so a worker's allocator counts the pictures it
 * handed over that either thread still holds or has not collected yet. Each worker reads that count
 * (beyond the buffers it held once started) after the collection that follows each picture
 * (`WorkerMemory.handedOver`, worker-main.ts), and hands the next picture over in shared memory
 * while it is under its share of SHARED_BYTES, in a counted buffer, which V8 sees, otherwise.
 *
 * Until 2026-11-30 the bound was on the bytes handed over since the main thread's last full
 * collection (64 MB), alive or not: under bench:render, whose pictures die as they arrive, that made
 * one full collection per ~128 MB of pictures, three in 1,000 renders, and those collections' final
 * pauses were the longest event-loop blocks (20.4 and 24.7 ms on the eleventh machine;
 * docs/benchmarks.md, Images and charts: speed, *An eleventh machine*).
 */
const SHARED_BYTES = 64 * 1024 * 1024;

/**
 * A render worker holds ~110 MB of the process's RSS once warm (its V8 isolate with the compiled
 * drawing code, Skia with the registered fonts, libvips): kept only while pictures are asked for.
 * One idle this long — no picture drawn, and none asked for (`asked`: pictures answered from a
 * cache count) — is ended; the next picture starts one again (1–2 s on the busy 2-core machine, the
 * same wait as a cold start), and waits in the queue meanwhile.
 *
 * Why the pictures answered from a cache count: a picture asked for again and again is drawn again
 * each time its data is refreshed (every 120 s for a player), which a 60-s deadline counted from
 * the last drawing made a cold start each time. Under bench:http's load on one cached picture
 * (wrk, 32 connections, 2026-11-30, the ninth machine), every refresh then held every connection:
 * a 15-s run that met one had a p99 of 140–184 ms; with the worker kept, every run 4.7–6.1 ms
 * (docs/benchmarks.md, *HTTP API: cached answers*).
 */
const IDLE_MS = 60_000;

/**
 * The young generation of a worker's heap, in MB (V8's default on 64-bit lets it grow to 48 MB).
 * A picture's garbage is mostly canvases and pixels outside the heap, and the worker collects its
 * young generation after each picture anyway (worker-main.ts). 4 MB: the worker's heap held 19.5 MB
 * instead of 23.4 with 8 after 60 s of bench:memory's load, for the same CPU per picture
 * (71.7–72.2 ms against 72.7–73.5, 2026-11-25); 2 MB held 17.5 for 1–3 % more CPU
 * (docs/benchmarks.md, Memory). With 4, more of a chart's or a grid's objects outlive the minor
 * collections its drawing runs into and are marked in the old generation by V8's helper threads,
 * which with 4 MB ran 4.5 s of 300 renders against 3.2 s with 8 (bench:render, 2026-11-29); those
 * threads run below the event loop's priority now (lowerOthers, worker-main.ts), and with them
 * lowered the 1,000-render loop printed no event-loop block of 10 ms or more with 4 MB (8.6 ms the
 * longest).
 */
const WORKER_YOUNG_MB = 4;

/**
 * Niceness of the render worker threads (Linux; see lowerPriority in worker-main.ts): below the
 * main thread, so the event loop preempts a render as soon as it has work. 10 gives a render about
 * a tenth of the CPU weight of a thread at 0 when both want the same core; an idle main thread
 * leaves the core to the render, so pictures take no longer on their own.
 */
const RENDER_NICE = 10;

/** This thread's Linux thread id (the pool's event loop, which render workers leave at its priority), or undefined. */
const HOST_THREAD = currentTid();

const unrefSchedule: Schedule = (ms, fn) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export class RenderPool {
  readonly size: number;
  readonly maxQueue: number;
  private readonly timeoutMs: number;
  private readonly logger?: Logger;
  private readonly maxSharedBytes: number;
  private readonly idleMs: number;
  private readonly schedule: Schedule;
  private readonly now: () => number;
  private readonly nice: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readyWaiters: (() => void)[] = [];
  /** pictures rendered, for metrics and the bench */
  rendered = 0;
  /** workers ended for being idle */
  private ended = 0;
  /** when a picture was last asked for, drawn or not (`asked`), on `now`'s clock */
  private askedAt = -Infinity;

  constructor(opts: RenderPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(4, availableParallelism() - 1));
    this.maxQueue = Math.max(0, opts.maxQueue ?? 64);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.logger = opts.logger;
    this.maxSharedBytes = opts.maxSharedBytes ?? SHARED_BYTES;
    this.idleMs = opts.idleMs ?? IDLE_MS;
    this.schedule = opts.schedule ?? unrefSchedule;
    this.now = opts.now ?? (() => performance.now());
    this.nice = Math.min(19, Math.max(0, Math.round(opts.nice ?? RENDER_NICE)));
  }

  /** Renders a job to PNG bytes on a worker. Rejects with RenderBusyError when the queue is full. */
  render(job: RenderJob): Promise<Buffer> {
    if (this.closed) return Promise.reject(new RenderFailedError('the render pool is closed'));
    this.spawnAll();
    const idle = this.slots.find((s) => s.ready && !s.current);
    if (!idle && this.queue.length >= this.maxQueue) return Promise.reject(new RenderBusyError(this.queue.length));
    return new Promise<Buffer>((resolve, reject) => {
      const p: Pending = { id: this.nextId++, job, resolve, reject };
      if (idle) this.dispatch(idle, p);
      else this.queue.push(p);
    });
  }

  /**
   * A picture was asked for, drawn or not (a cache's answer counts): the idle workers stay until
   * `idleMs` after the last ask too, not only after the last drawing (IDLE_MS).
   */
  asked(): void {
    this.askedAt = this.now();
  }

  /** Starts every worker and waits until each has its fonts loaded. */
  async warm(): Promise<void> {
    this.spawnAll();
    while (!this.closed && this.slots.some((s) => !s.ready)) {
      await new Promise<void>((r) => this.readyWaiters.push(r));
    }
  }

  stats(): { workers: number; busy: number; queued: number; rendered: number; ended: number } {
    return {
      workers: this.slots.length,
      ended: this.ended,
      busy: this.slots.filter((s) => s.current).length,
      queued: this.queue.length,
      rendered: this.rendered,
    };
  }

  /** Each worker's heap as of its last picture (workers that drew nothing yet are left out). */
  memory(): WorkerMemory[] {
    return this.slots.flatMap((s) => (s.memory ? [s.memory] : []));
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new RenderFailedError('the render pool closed');
    for (const p of this.queue.splice(0)) p.reject(err);
    await Promise.all(
      this.slots.splice(0).map(async (s) => {
        s.ending = true;
        s.idle?.();
        if (s.timer) clearTimeout(s.timer);
        s.current?.reject(err);
        await s.worker.terminate();
      }),
    );
    for (const w of this.readyWaiters.splice(0)) w();
  }

  private spawnAll(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn();
  }

  private spawn(): void {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
      // each worker bounds what it handed over (its share of maxSharedBytes)
      workerData: { nice: this.nice, host: HOST_THREAD, maxShared: Math.floor(this.maxSharedBytes / this.size) } satisfies WorkerStart,
    });
    const slot: Slot = { worker, ready: false, current: null, timer: null, idle: null, ending: false };
    this.slots.push(slot);
    worker.on('message', (msg: ResultMessage) => this.onMessage(slot, msg));
    worker.on('error', (e) => this.onExit(slot, e));
    worker.on('exit', (code) => this.onExit(slot, new RenderFailedError(`render worker exited with code ${code}`)));
  }

  private onMessage(slot: Slot, msg: ResultMessage): void {
    if (msg.type === 'ready') {
      slot.ready = true;
      for (const w of this.readyWaiters.splice(0)) w();
      this.next(slot);
      return;
    }
    const p = slot.current;
    if (!p || p.id !== msg.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.current = null;
    if (msg.type === 'done') {
      this.rendered++;
      slot.memory = msg.memory;
      p.resolve(Buffer.from(msg.png.buffer, msg.png.byteOffset, msg.png.byteLength));
    } else {
      p.reject(new RenderFailedError(`${msg.name}: ${msg.message}`));
    }
    this.next(slot);
  }

  private onExit(slot: Slot, e: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    slot.idle?.();
    slot.idle = null;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.current) slot.current.reject(e instanceof RenderFailedError ? e : new RenderFailedError(e.message));
    if (this.closed) return;
    this.logger?.warn({ err: e }, 'render worker stopped; starting another');
    // a worker that dies before it is ever ready would respawn forever: fail the waiting jobs instead
    if (!slot.ready) {
      const err = new RenderFailedError(`render worker failed to start: ${e.message}`);
      for (const p of this.queue.splice(0)) p.reject(err);
      for (const w of this.readyWaiters.splice(0)) w();
      return;
    }
    this.spawnAll();
  }

  private next(slot: Slot): void {
    const p = this.queue.shift();
    if (p) this.dispatch(slot, p);
    else if (!slot.idle && !slot.ending) slot.idle = this.schedule(this.idleMs, () => this.endIdle(slot));
  }

  /** Ends a worker that stayed idle (a picture asked for later starts one again). */
  private endIdle(slot: Slot): void {
    slot.idle = null;
    if (slot.current || slot.ending || this.closed) return;
    // pictures were asked for since the deadline was set: idle from the last of them on
    const since = this.now() - this.askedAt;
    if (since < this.idleMs) {
      slot.idle = this.schedule(this.idleMs - since, () => this.endIdle(slot));
      return;
    }
    slot.ending = true;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    this.ended++;
    void slot.worker.terminate();
  }

  private dispatch(slot: Slot, p: Pending): void {
    slot.idle?.();
    slot.idle = null;
    slot.current = p;
    slot.timer = setTimeout(() => {
      this.logger?.error({ kind: p.job.kind, option: p.job.option }, 'render timed out; restarting its worker');
      void slot.worker.terminate();
    }, this.timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id: p.id, job: p.job } satisfies JobMessage);
  }
}
