/**
 * The render worker: registers the fonts once, warms the font fallbacks up, then renders and
 * encodes jobs one at a time. Everything CPU-heavy about a picture happens here, off the event loop
 * of the HTTP server and the bot.
 */
import { parentPort } from 'node:worker_threads';
import { renderPng } from './index.ts';
import { ensureFonts } from './fonts.ts';
import type { RenderJob } from './types.ts';
import { warmUp } from './warm.ts';

export interface JobMessage {
  id: number;
  job: RenderJob;
}

export type ResultMessage =
  | { type: 'ready' }
  | { type: 'done'; id: number; png: Uint8Array; ms: number }
  | { type: 'failed'; id: number; name: string; message: string };

const port = parentPort;
if (!port) throw new Error('worker-main.ts runs only as a worker thread');

ensureFonts();
warmUp();
port.postMessage({ type: 'ready' } satisfies ResultMessage);

port.on('message', async (msg: JobMessage) => {
  const t = performance.now();
  try {
    const png = await renderPng(msg.job);
    // a fresh ArrayBuffer we can hand over without copying
    const out = new Uint8Array(png.length);
    out.set(png);
    port.postMessage({ type: 'done', id: msg.id, png: out, ms: performance.now() - t } satisfies ResultMessage, [out.buffer]);
  } catch (e) {
    const err = e as Error;
    port.postMessage({ type: 'failed', id: msg.id, name: err?.name ?? 'Error', message: err?.message ?? String(e) } satisfies ResultMessage);
  }
});
