/**
 * The pictures' files tier over real HTTP (RENDER_DISK_CACHE_MB): a picture the memory tier has let
 * go, or one drawn before a restart, is answered from its file — the same bytes and ETag, nothing
 * drawn — and a file gone is drawn again.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/http/metrics.ts';
import { createHttpServer } from '../src/http/server.ts';
import { T0 } from './fixtures/render/cases.ts';
import { startWorld, type TestWorld } from './support/world.ts';

interface Answer {
  status: number;
  etag: string;
  body: Buffer;
}

let w: TestWorld;
let app: ReturnType<typeof createHttpServer>;
let port = 0;
const metrics = new MetricsRegistry();

async function serve(): Promise<void> {
  app = createHttpServer(w.core, { now: w.now, metrics });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
}

function get(path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: String(res.headers.etag), body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Pictures are written in the background of the answer: waits until `n` files are kept. */
async function filesKept(n: number): Promise<void> {
  for (let i = 0; i < 500 && w.images.fileStats().files < n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(w.images.fileStats().files).toBeGreaterThanOrEqual(n);
}

/** starr_picture_answers_total by source, as GET /metrics shows it */
async function answeredFrom(): Promise<Record<string, number>> {
  const text = (await get('/metrics')).body.toString();
  return Object.fromEntries([...text.matchAll(/^starr_picture_answers_total\{source="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

const image = (i: number) => `/players/${encodeURIComponent(w.sim.world.playerTag(i))}/image?quality=low`;
const picturesDir = () => join(w.dir, 'pictures');

beforeAll(async () => {
  // a memory tier of 1 MB holds a few low-quality cards (~100–200 KB each)
  w = await startWorld({ startMs: T0, env: { RATE_LIMIT_FREE: '100000', RENDER_CACHE_MB: '1', RENDER_DISK_CACHE_MB: '64' }, metrics });
  await serve();
});

afterAll(async () => {
  await app?.close();
  await w?.close();
});

describe('pictures kept as files', () => {
  it('a picture memory let go is read back from its file: the same bytes and ETag, nothing drawn', async () => {
    const first = await get(image(0));
    expect(first.status).toBe(200);
    await filesKept(1);
    // enough other pictures to push the first out of the 1 MB memory tier
    let held = 0;
    for (let i = 1; held <= 1024 * 1024; i++) {
      const r = await get(image(i));
      expect(r.status).toBe(200);
      held += r.body.length;
    }
    expect(w.images.cacheStats().bytes).toBeLessThanOrEqual(1024 * 1024);
    const drawn = w.images.renders;
    const again = await get(image(0));
    expect(again.status).toBe(200);
    expect(again.etag).toBe(first.etag);
    expect(again.body.equals(first.body)).toBe(true);
    expect(w.images.renders).toBe(drawn);
    // every picture drawn has its file, and the index knows each (once the background writes are done)
    const onDisk = () => readdirSync(picturesDir()).filter((f) => f.endsWith('.png')).length;
    for (let i = 0; i < 500 && (onDisk() !== w.images.renders || w.images.fileStats().files !== w.images.renders); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect([onDisk(), w.images.fileStats().files]).toEqual([w.images.renders, w.images.renders]);
  });

  it('survive a restart: the first answer after it draws nothing', async () => {
    const before = await get(image(0));
    await filesKept(1);
    await app.close();
    await w.restart();
    await serve();
    expect(w.images.renders).toBe(0);
    const after = await get(image(0));
    expect(after.status).toBe(200);
    expect(after.etag).toBe(before.etag);
    expect(after.body.equals(before.body)).toBe(true);
    expect(w.images.renders).toBe(0);
  });

  it('a file removed behind its back is drawn again', async () => {
    // out of memory again, then its file gone
    let held = 0;
    for (let i = 20; held <= 1024 * 1024; i++) held += (await get(image(i))).body.length;
    const first = await get(image(0));
    expect(first.status).toBe(200);
    const drawn = w.images.renders;
    // (a picture still being written may add a file while it goes: tried again)
    rmSync(picturesDir(), { recursive: true, force: true, maxRetries: 20, retryDelay: 10 });
    held = 0;
    for (let i = 40; held <= 1024 * 1024; i++) held += (await get(image(i))).body.length;
    const drawnBefore = w.images.renders;
    expect(drawnBefore).toBeGreaterThan(drawn);
    const again = await get(image(0));
    expect(again.status).toBe(200);
    expect(again.body.equals(first.body)).toBe(true);
    expect(w.images.renders).toBe(drawnBefore + 1);
    // and the folder was made again for the pictures drawn since (written in the background)
    const written = () => existsSync(picturesDir()) && readdirSync(picturesDir()).some((f) => f.endsWith('.png'));
    for (let i = 0; i < 500 && !written(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(written()).toBe(true);
  });

  it('a picture read back from its file is kept in memory only when read back once already lately; /metrics counts each answer by where it came from', async () => {
    const first = await get(image(60));
    expect(first.status).toBe(200);
    let held = 0;
    for (let i = 61; held <= 1024 * 1024; i++) held += (await get(image(i))).body.length;
    const drawn = w.images.renders;
    const before = await answeredFrom();
    const memoryBytes = w.images.cacheStats().bytes;

    // the first read back answers from the file and leaves the memory tier as it was
    const once = await get(image(60));
    expect([once.status, once.etag, once.body.equals(first.body)]).toEqual([200, first.etag, true]);
    expect(w.images.cacheStats().bytes).toBe(memoryBytes);
    // so the second is read back too, and kept
    const twice = await get(image(60));
    expect([twice.status, twice.etag, twice.body.equals(first.body)]).toEqual([200, first.etag, true]);
    expect(w.images.cacheStats().bytes).toBeGreaterThan(memoryBytes - first.body.length);
    // the third comes from memory
    const thrice = await get(image(60));
    expect([thrice.status, thrice.etag, thrice.body.equals(first.body)]).toEqual([200, first.etag, true]);
    expect(w.images.renders).toBe(drawn);

    const after = await answeredFrom();
    expect(after.file! - before.file!).toBe(2);
    expect(after.memory! - before.memory!).toBe(1);
    expect(after.drawn).toBe(before.drawn);
    // a matching If-None-Match is counted apart: nothing was looked up
    const notModified = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: image(60), headers: { 'if-none-match': first.etag } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(notModified).toBe(304);
    const last = await answeredFrom();
    expect(last.etag! + last.memory! - after.etag! - after.memory!).toBe(1);
  });
});
