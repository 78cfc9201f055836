/**
 * A bounded pool of render workers. Each worker renders and encodes one picture at a time; jobs
 * wait in a FIFO queue of bounded length, so a burst of requests costs memory for their inputs only
 * (a few hundred KB each), never for fifty canvases at once. A full queue is refused right away with
 * RenderBusyError (the HTTP API answers 503 with Retry-After) instead of growing without end.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.ts';
import type { RenderJob } from './types.ts';
import type { JobMessage, ResultMessage } from './worker-main.ts';

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
}

const WORKER_URL = new URL('./worker.mjs', import.meta.url);

export class RenderPool {
  readonly size: number;
  readonly maxQueue: number;
  private readonly timeoutMs: number;
  private readonly logger?: Logger;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readyWaiters: (() => void)[] = [];
  /** pictures rendered, for metrics and the bench */
  rendered = 0;

  constructor(opts: RenderPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(4, availableParallelism() - 1));
    this.maxQueue = Math.max(0, opts.maxQueue ?? 64);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.logger = opts.logger;
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

  /** Starts every worker and waits until each has its fonts loaded. */
  async warm(): Promise<void> {
    this.spawnAll();
    while (!this.closed && this.slots.some((s) => !s.ready)) {
      await new Promise<void>((r) => this.readyWaiters.push(r));
    }
  }

  stats(): { workers: number; busy: number; queued: number; rendered: number } {
    return {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.current).length,
      queued: this.queue.length,
      rendered: this.rendered,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new RenderFailedError('the render pool closed');
    for (const p of this.queue.splice(0)) p.reject(err);
    await Promise.all(
      this.slots.splice(0).map(async (s) => {
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
    const worker = new Worker(WORKER_URL);
    const slot: Slot = { worker, ready: false, current: null, timer: null };
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
  }

  private dispatch(slot: Slot, p: Pending): void {
    slot.current = p;
    slot.timer = setTimeout(() => {
      this.logger?.error({ kind: p.job.kind, option: p.job.option }, 'render timed out; restarting its worker');
      void slot.worker.terminate();
    }, this.timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id: p.id, job: p.job } satisfies JobMessage);
  }
}
