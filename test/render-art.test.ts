/**
 * Optional CDN art: fetched once from the CDN (a local server here), cached on disk, drawn in the
 * picture; a missing or broken file falls back to the drawn art without failing the picture.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImageService, ImageService, NO_RECORDS } from '../src/core/images.ts';
import { ArtStore } from '../src/render/assets.ts';
import { renderPng } from '../src/render/index.ts';
import type { RenderJob } from '../src/render/types.ts';
import { fixtureSubjects, fixtureWorld, T0, worldStats } from './fixtures/render/cases.ts';

const world = fixtureWorld();
const subjects = fixtureSubjects(world);

/** A solid magenta square: easy to find in a picture. */
function magenta(): Buffer {
  const c = createCanvas(64, 64);
  const ctx = c.getContext('2d');
  ctx.fillStyle = '#ff00ff';
  ctx.fillRect(0, 0, 64, 64);
  return c.toBuffer('image/png');
}

let server: Server;
let base = '';
const hits: string[] = [];
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'starr-art-'));
  const art = magenta();
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url?.startsWith('/club-badges/regular/')) {
      res.writeHead(200, { 'content-type': 'image/png' }).end(art);
    } else if (req.url?.startsWith('/profile-icons/')) {
      res.writeHead(200, { 'content-type': 'image/png' }).end('not a png');
    } else {
      res.writeHead(404).end();
    }
  });
  // Idle connections close from the client's side only: see createSimServer in src/sim/server.ts.
  server.keepAliveTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function magentaPixels(png: Buffer): number {
  const p = PNG.sync.read(png);
  let n = 0;
  for (let i = 0; i < p.data.length; i += 4) if (p.data[i]! > 240 && p.data[i + 1]! < 20 && p.data[i + 2]! > 240) n++;
  return n;
}

describe('asset CDN', () => {
  const inline = { render: async (job: RenderJob) => renderPng(job) };

  it('draws CDN art, caches it on disk, and falls back to drawn art for missing or broken files', async () => {
    const store = new ArtStore({ baseUrl: base, dir });
    const service = new ImageService({ stats: worldStats(world, () => T0), records: NO_RECORDS, renderer: inline, art: store, now: () => T0 });
    const club = await service.clubImage(subjects.club, 2, 'low');
    expect(magentaPixels(club.png)).toBeGreaterThan(500);
    const badgeId = (world.club(subjects.club, T0) as { badgeId: number }).badgeId;
    expect(existsSync(join(dir, 'badge', `${badgeId}.png`))).toBe(true);
    // member icons answered with a body that is no PNG: drawn instead, and not cached on disk
    expect(hits.some((h) => h.startsWith('/profile-icons/'))).toBe(true);
    expect(existsSync(join(dir, 'icon'))).toBe(false);

    // a new process with the CDN gone still has the badge from disk
    const offline = new ArtStore({ baseUrl: 'http://127.0.0.1:9', dir, timeoutMs: 500 });
    expect(Object.keys(await offline.get([`badge:${badgeId}`]))).toEqual([`badge:${badgeId}`]);
    const again = new ImageService({ stats: worldStats(world, () => T0), records: NO_RECORDS, renderer: inline, art: offline, now: () => T0 });
    expect((await again.clubImage(subjects.club, 2, 'low')).png.equals(club.png)).toBe(true);
  });

  it('is off without ASSET_CDN_URL: no request leaves, drawn art only', async () => {
    const before = hits.length;
    const { images, pool } = createImageService({ config: { DATA_DIR: dir, ASSET_CDN_URL: undefined, RENDER_CACHE_MB: 24, RENDER_DISK_CACHE_MB: 0 }, stats: worldStats(world, () => T0), now: () => T0 });
    try {
      const r = await images.clubImage(subjects.club, 2, 'low');
      expect(magentaPixels(r.png)).toBe(0);
      expect(hits.length).toBe(before);
      expect(pool.stats().rendered).toBe(1);
    } finally {
      await images.close();
    }
  });
});
