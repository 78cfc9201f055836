/**
 * The pictures' files tier (src/core/picture-files.ts): kept and read back, bounded in bytes with
 * the least recently used out first, indexed again when reopened, and every failure a miss.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PictureFiles } from '../src/core/picture-files.ts';

const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'starr-pictures-'));
  dirs.push(d);
  return join(d, 'pictures');
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const key = (n: number) => `key${String(n).padStart(20, '0')}`;
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

describe('picture files', () => {
  it('keeps a picture and reads the same bytes back; an unknown key is a miss', async () => {
    const files = await PictureFiles.open(freshDir(), 10_000);
    await files.put(key(1), bytes(1000, 1));
    expect((await files.get(key(1)))?.equals(bytes(1000, 1))).toBe(true);
    expect(await files.get(key(2))).toBeUndefined();
    expect(files.stats()).toEqual({ files: 1, bytes: 1000 });
  });

  it('stays within its bound, the least recently read or written out first', async () => {
    const dir = freshDir();
    const files = await PictureFiles.open(dir, 3000);
    await files.put(key(1), bytes(1000, 1));
    await files.put(key(2), bytes(1000, 2));
    await files.put(key(3), bytes(1000, 3));
    // reading 1 makes 2 the oldest
    expect(await files.get(key(1))).toBeDefined();
    await files.put(key(4), bytes(1000, 4));
    expect(files.stats()).toEqual({ files: 3, bytes: 3000 });
    expect(await files.get(key(2))).toBeUndefined();
    expect(existsSync(join(dir, `${key(2)}.png`))).toBe(false);
    for (const k of [1, 3, 4]) expect((await files.get(key(k)))?.[0]).toBe(k);
    // a picture larger than the whole bound is not kept, and evicts nothing
    await files.put(key(5), bytes(3001, 5));
    expect(await files.get(key(5))).toBeUndefined();
    expect(files.stats().files).toBe(3);
  });

  it('reopened, indexes what it finds, oldest written first, and removes what a killed process left half-written', async () => {
    const dir = freshDir();
    const first = await PictureFiles.open(dir, 10_000);
    for (const n of [1, 2, 3]) await first.put(key(n), bytes(1000, n));
    // written an hour, then two, then three ago: 3 is the oldest
    const now = Date.now() / 1000;
    for (const n of [1, 2, 3]) utimesSync(join(dir, `${key(n)}.png`), now - 3600 * n, now - 3600 * n);
    writeFileSync(join(dir, `${key(9)}.123.0.tmp`), 'half a picture');
    writeFileSync(join(dir, 'notes.txt'), 'not a picture');

    const again = await PictureFiles.open(dir, 2000);
    expect(again.stats()).toEqual({ files: 2, bytes: 2000 });
    expect(await again.get(key(3))).toBeUndefined();
    expect((await again.get(key(1)))?.[0]).toBe(1);
    expect((await again.get(key(2)))?.[0]).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([`${key(1)}.png`, `${key(2)}.png`, 'notes.txt']);
  });

  it('a file removed or changed by someone else is a miss, and forgotten', async () => {
    const dir = freshDir();
    const files = await PictureFiles.open(dir, 10_000);
    await files.put(key(1), bytes(1000, 1));
    await files.put(key(2), bytes(1000, 2));
    rmSync(join(dir, `${key(1)}.png`));
    writeFileSync(join(dir, `${key(2)}.png`), bytes(10, 2));
    expect(await files.get(key(1))).toBeUndefined();
    expect(await files.get(key(2))).toBeUndefined();
    expect(files.stats()).toEqual({ files: 0, bytes: 0 });
    // and kept again when drawn again
    await files.put(key(1), bytes(1000, 1));
    expect((await files.get(key(1)))?.length).toBe(1000);
  });

  it('a key that could not be a file name is never written', async () => {
    const dir = freshDir();
    const files = await PictureFiles.open(dir, 10_000);
    await files.put('../escape', bytes(10, 1));
    await files.put('short', bytes(10, 1));
    expect(readdirSync(dir)).toEqual([]);
    expect(await files.get('../escape')).toBeUndefined();
  });

  it('a picture that cannot be written is a miss, and nothing is left behind', async () => {
    const dir = freshDir();
    const files = await PictureFiles.open(dir, 10_000);
    // a file where the folder was: nothing can be written under it
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a folder');
    await expect(files.put(key(1), bytes(100, 1))).resolves.toBeUndefined();
    expect(await files.get(key(1))).toBeUndefined();
    expect(files.stats()).toEqual({ files: 0, bytes: 0 });
  });

  it('makes its folder again when it was removed under it', async () => {
    const dir = freshDir();
    const files = await PictureFiles.open(dir, 10_000);
    await files.put(key(1), bytes(100, 1));
    rmSync(dir, { recursive: true });
    expect(await files.get(key(1))).toBeUndefined();
    await files.put(key(2), bytes(100, 2));
    expect((await files.get(key(2)))?.[0]).toBe(2);
    expect(readdirSync(dir)).toEqual([`${key(2)}.png`]);
  });

  it('refuses a bound that is not a positive whole number of bytes', async () => {
    await expect(PictureFiles.open(freshDir(), 0)).rejects.toThrow(/positive whole number/);
    await expect(PictureFiles.open(freshDir(), 1.5)).rejects.toThrow(/positive whole number/);
  });
});
