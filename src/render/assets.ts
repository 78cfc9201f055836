/**
 * Optional real art from an asset CDN (ASSET_CDN_URL, off by default and in tests), laid out as
 * Brawlify's CDN is: /brawlers/borderless/<id>.png, /profile-icons/regular/<id>.png,
 * /club-badges/regular/<id>.png. Each file is fetched once, kept on disk under DATA_DIR/art and in a
 * small memory cache; a missing or failing file is remembered for a while and the drawn art is used.
 * A picture never waits on the CDN for long: fetches time out quickly and run a few at a time.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import type { Logger } from '../log.ts';
import type { ArtKind } from './art.ts';

const PATHS: Record<ArtKind, string> = {
  brawler: 'brawlers/borderless',
  icon: 'profile-icons/regular',
  badge: 'club-badges/regular',
};

const MAX_BYTES = 512 * 1024;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

export interface ArtStoreOptions {
  /** CDN base URL; undefined = drawn art only */
  baseUrl?: string;
  /** folder for the disk cache (DATA_DIR/art) */
  dir: string;
  timeoutMs?: number;
  /** how long a failed lookup is not retried */
  failureTtlMs?: number;
  concurrency?: number;
  now?: () => number;
  logger?: Logger;
}

export class ArtStore {
  private readonly memory = new Map<string, Uint8Array>();
  private readonly failed = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<Uint8Array | null>>();
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly opts: ArtStoreOptions) {}

  /** grows whenever a piece of art becomes available: part of the key of pictures drawn with art */
  revision = 0;

  get enabled(): boolean {
    return this.opts.baseUrl !== undefined;
  }

  /** Art bytes for each `kind:id` key that could be had; keys without art are left out. */
  async get(keys: string[]): Promise<Record<string, Uint8Array>> {
    if (!this.enabled || keys.length === 0) return {};
    const out: Record<string, Uint8Array> = {};
    await Promise.all(
      [...new Set(keys)].map(async (key) => {
        const bytes = await this.one(key);
        if (bytes) out[key] = bytes;
      }),
    );
    return out;
  }

  private async one(key: string): Promise<Uint8Array | null> {
    const hit = this.memory.get(key);
    if (hit) return hit;
    const failedAt = this.failed.get(key);
    const now = (this.opts.now ?? Date.now)();
    if (failedAt !== undefined && now - failedAt < (this.opts.failureTtlMs ?? 3_600_000)) return null;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.load(key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private file(key: string): string | null {
    const [kind, id] = key.split(':');
    if (!kind || !(kind in PATHS) || !/^\d+$/.test(id ?? '')) return null;
    return join(this.opts.dir, kind, `${id}.png`);
  }

  private async load(key: string): Promise<Uint8Array | null> {
    const file = this.file(key);
    if (!file) return null;
    try {
      const bytes = await readFile(file);
      this.remember(key, bytes);
      return bytes;
    } catch {
      // not on disk yet
    }
    const bytes = await this.fetch(key);
    const now = (this.opts.now ?? Date.now)();
    if (!bytes) {
      this.failed.set(key, now);
      return null;
    }
    try {
      await mkdir(join(file, '..'), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, bytes);
      await rename(tmp, file);
    } catch (e) {
      this.opts.logger?.warn({ err: e, key }, 'could not cache art on disk');
    }
    this.remember(key, bytes);
    return bytes;
  }

  private remember(key: string, bytes: Uint8Array): void {
    if (this.memory.size >= 1000) this.memory.delete(this.memory.keys().next().value!);
    if (!this.memory.has(key)) this.revision++;
    this.memory.set(key, bytes);
  }

  private async fetch(key: string): Promise<Uint8Array | null> {
    const [kind, id] = key.split(':') as [ArtKind, string];
    const url = `${this.opts.baseUrl}/${PATHS[kind]}/${id}.png`;
    await this.slot();
    try {
      const res = await request(url, {
        method: 'GET',
        headersTimeout: this.opts.timeoutMs ?? 3000,
        bodyTimeout: this.opts.timeoutMs ?? 3000,
        headers: { accept: 'image/png' },
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return null;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BYTES) {
          res.body.destroy();
          return null;
        }
        chunks.push(chunk as Buffer);
      }
      const bytes = Buffer.concat(chunks);
      return bytes.subarray(0, 4).equals(PNG_MAGIC) ? bytes : null;
    } catch (e) {
      this.opts.logger?.debug({ err: e, url }, 'art fetch failed; drawing it instead');
      return null;
    } finally {
      this.release();
    }
  }

  private async slot(): Promise<void> {
    if (this.active < (this.opts.concurrency ?? 6)) {
      this.active++;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}
