/**
 * Indexed PNGs (src/render/palette.ts, encodeIndexed in src/render/png.ts): a canvas of at most 256
 * colours comes back pixel for pixel; more colours are cut to 256 with every pixel near its own
 * colour and large flat areas exact; a real chart shows no difference pixelmatch can see.
 */
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { renderCanvas } from '../src/render/index.ts';
import { indexColours, MAX_COLOURS } from '../src/render/palette.ts';
import { encodeIndexed } from '../src/render/png.ts';
import { fixtureSubjects, fixtureWorld, jobCollector, T0 } from './fixtures/render/cases.ts';

/** An opaque RGBA picture from a colour function of (x, y). */
function picture(width: number, height: number, colour: (x: number, y: number) => [number, number, number]): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b] = colour(x, y);
      rgba.set([r, g, b, 255], (y * width + x) * 4);
    }
  return rgba;
}

const decode = (png: Buffer) => PNG.sync.read(png);

/** Largest difference on any channel, and the mean over all channels, between two RGBA pictures. */
function error(a: Uint8Array, b: Uint8Array): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    if (i % 4 === 3) continue;
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    max = Math.max(max, d);
  }
  return { max, mean: sum / ((a.length / 4) * 3) };
}

describe('indexed PNG', () => {
  it('keeps a picture of at most 256 colours exactly', () => {
    // 16 × 16 blocks of 16 colours each way: 256 colours, with runs and changes on every row
    const rgba = picture(64, 48, (x, y) => [(x % 16) * 17, (y % 16) * 17, ((x + y) % 2) * 255]);
    const ix = indexColours(rgba, 64, 48);
    expect(ix.exact).toBe(true);
    const png = decode(encodeIndexed(rgba, 64, 48));
    expect([png.width, png.height]).toEqual([64, 48]);
    expect(Buffer.from(png.data).equals(Buffer.from(rgba))).toBe(true);
  });

  it('cuts a gradient of thousands of colours to at most 256, every pixel near its own', () => {
    const rgba = picture(300, 200, (x, y) => [Math.round((x / 299) * 255), Math.round((y / 199) * 255), 128 + Math.round(((x + y) / 498) * 100)]);
    const ix = indexColours(rgba, 300, 200);
    expect(ix.exact).toBe(false);
    expect(ix.palette.length / 3).toBeLessThanOrEqual(MAX_COLOURS);
    expect(ix.rows.length).toBe(200 * 301);
    const png = decode(encodeIndexed(rgba, 300, 200));
    const e = error(png.data, rgba);
    expect(e.max).toBeLessThanOrEqual(24);
    expect(e.mean).toBeLessThan(6);
  });

  it('gives a large flat area its exact colour, even among thousands of others', () => {
    const rgba = picture(256, 256, (x, y) => (x < 128 ? [0x5f, 0xd3, 0xff] : [x, y, (x * y) & 255]));
    const png = decode(encodeIndexed(rgba, 256, 256));
    for (let y = 0; y < 256; y += 17) for (let x = 0; x < 128; x += 13) expect([...png.data.subarray((y * 256 + x) * 4, (y * 256 + x) * 4 + 3)]).toEqual([0x5f, 0xd3, 0xff]);
  });

  it('accepts pixels at any byte offset, and refuses a buffer of the wrong size', () => {
    const rgba = picture(10, 10, (x, y) => [x * 20, y * 20, 7]);
    const shifted = new Uint8Array(rgba.length + 1).subarray(1);
    shifted.set(rgba);
    expect(Buffer.from(decode(encodeIndexed(shifted, 10, 10)).data).equals(Buffer.from(rgba))).toBe(true);
    expect(() => encodeIndexed(rgba, 10, 11)).toThrow(/expected 440 bytes of RGBA for 10×11, got 400/);
  });

  it('draws line, bar and two-series charts without a difference pixelmatch can see, no channel moved by more than 32', async () => {
    const world = fixtureWorld();
    const { service, jobs } = jobCollector(world, T0);
    const subjects = fixtureSubjects(world);
    for (const o of [1, 2, 9] as const) await service.playerChart(subjects.player, o);
    for (const job of jobs) {
      const canvas = renderCanvas(job);
      const rgba = canvas.data();
      const png = decode(encodeIndexed(rgba, canvas.width, canvas.height));
      const differing = pixelmatch(png.data, Buffer.from(rgba), undefined, canvas.width, canvas.height, { threshold: 0.1 });
      const { max } = error(png.data, rgba);
      expect({ option: job.option, differing, withinShades: max <= 32 }).toEqual({ option: job.option, differing: 0, withinShades: true });
    }
  });
});
