/**
 * The pictures' second tier: drawn PNGs kept as files under DATA_DIR/pictures, bounded in bytes
 * (RENDER_DISK_CACHE_MB), least recently used out first. The memory tier (RENDER_CACHE_MB, the
 * ImageService's own map) keeps the pictures asked for most; one it has let go is read back from
 * here (the operating system's page cache, which is not the process's memory, usually answers)
 * instead of being drawn again, and pictures survive a restart: their keys say everything they show
 * (the data's version or a hash of the input, the art's and the drawing code's revisions).
 *
 * A cache, never durable data: a file that cannot be written, read or found is a miss, logged, and
 * the picture is drawn. Processes sharing DATA_DIR (a cluster on one machine) each index the files
 * they find at start and those they write; a file another process removed is a miss, not an error.
 */
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.ts';

/** Picture keys are base64url digests (images.ts); anything else never names a file. */
const KEY = /^[A-Za-z0-9_-]{16,128}$/;
const SUFFIX = '.png';

export class PictureFiles {
  /** key → bytes, least recently used first */
  private readonly index = new Map<string, number>();
  /** keys being written: not written twice at once (a key is indexed only once its file is complete) */
  private readonly writing = new Set<string>();
  private total = 0;
  private tmpSeq = 0;

  private constructor(
    readonly dir: string,
    private readonly maxBytes: number,
    private readonly logger?: Logger,
  ) {}

  /**
   * Opens (creating) the folder and indexes the pictures already in it, oldest written first;
   * those beyond the bound, and temporary files a killed process left, are removed.
   */
  static async open(dir: string, maxBytes: number, logger?: Logger): Promise<PictureFiles> {
    if (!(Number.isInteger(maxBytes) && maxBytes > 0)) throw new RangeError(`maxBytes must be a positive whole number, not ${maxBytes}`);
    const files = new PictureFiles(dir, maxBytes, logger);
    await mkdir(dir, { recursive: true });
    const found: { key: string; size: number; mtime: number }[] = [];
    for (const name of await readdir(dir)) {
      const file = join(dir, name);
      if (name.endsWith('.tmp')) {
        await unlink(file).catch(() => undefined);
        continue;
      }
      const key = name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : '';
      if (!KEY.test(key)) continue;
      const s = await stat(file).catch(() => undefined);
      if (s?.isFile()) found.push({ key, size: s.size, mtime: s.mtimeMs });
    }
    found.sort((a, b) => a.mtime - b.mtime);
    for (const f of found) {
      files.index.set(f.key, f.size);
      files.total += f.size;
    }
    await files.evict();
    return files;
  }

  /** Bytes and files indexed. */
  stats(): { files: number; bytes: number } {
    return { files: this.index.size, bytes: this.total };
  }

  /** The picture kept under `key`, or undefined (never kept, removed since, or unreadable). */
  async get(key: string): Promise<Buffer | undefined> {
    const size = this.index.get(key);
    if (size === undefined) return undefined;
    // most recently used last
    this.index.delete(key);
    this.index.set(key, size);
    try {
      const png = await readFile(this.file(key));
      if (png.length === size) return png;
      this.logger?.warn({ key, bytes: png.length, expected: size }, 'picture file changed size; drawing it again');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.logger?.warn({ err: e, key }, 'picture file unreadable; drawing it again');
    }
    this.forget(key);
    return undefined;
  }

  /**
   * Keeps a picture (written to a temporary file, then renamed: a reader never sees half a file);
   * resolves once written and the oldest beyond the bound removed. Never rejects: a picture that
   * cannot be kept is logged and drawn again next time.
   */
  async put(key: string, png: Buffer): Promise<void> {
    if (!KEY.test(key)) {
      this.logger?.warn({ key }, 'not a picture key; not kept');
      return;
    }
    if (png.length > this.maxBytes || this.index.has(key) || this.writing.has(key)) return;
    this.writing.add(key);
    const tmp = join(this.dir, `${key}.${process.pid}.${this.tmpSeq++}.tmp`);
    try {
      await writeFile(tmp, png).catch(async (e: NodeJS.ErrnoException) => {
        // the folder was removed under the running service (a clean-up): made again, once
        if (e.code !== 'ENOENT') throw e;
        await mkdir(this.dir, { recursive: true });
        await writeFile(tmp, png);
      });
      await rename(tmp, this.file(key));
      this.index.set(key, png.length);
      this.total += png.length;
    } catch (e) {
      this.logger?.warn({ err: e, key }, 'picture file not written');
      await unlink(tmp).catch(() => undefined);
    } finally {
      this.writing.delete(key);
    }
    await this.evict();
  }

  private file(key: string): string {
    return join(this.dir, key + SUFFIX);
  }

  private forget(key: string): void {
    const size = this.index.get(key);
    if (size === undefined) return;
    this.index.delete(key);
    this.total -= size;
  }

  /** Removes the least recently used pictures until the rest fit the bound. */
  private async evict(): Promise<void> {
    while (this.total > this.maxBytes) {
      const oldest = this.index.keys().next().value as string;
      this.forget(oldest);
      await unlink(this.file(oldest)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') this.logger?.warn({ err: e, key: oldest }, 'picture file not removed');
      });
    }
  }
}
