/**
 * PNG encoding of a drawn canvas, by libvips through sharp (prebuilt for every platform on the npm
 * registry, nothing to compile).
 *
 * Candidates measured on the 2-core machine while it was busy (load 13–22; medians of 5–7, in one
 * thread; a 1200×675 player card / trophy chart; Skia's own `encodeSync('png')` for reference):
 *
 *   Skia's default                                       110 ms 268 KB  /  110 ms 160 KB
 *   the former "sub" filter + zlib 2 (plain JS)           52 ms 320 KB  /   26 ms 212 KB
 *   sharp truecolour, zlib 3, adaptive row filters        20 ms 272 KB  /   17 ms 168 KB
 *   sharp truecolour, zlib 6, adaptive row filters        29 ms 242 KB  /   28 ms 143 KB
 *
 * Again on 2026-11-24 02:30 UTC (load 6.7–7.2; medians of 7 in one thread, the canvas rasterised
 * first; the player card 1200×675 and the 1400×1000 grid of player image 14):
 *
 *   Skia's default                                        37.7 ms 268 KB  /  68.0 ms 429 KB
 *   sharp truecolour, zlib 6, adaptive row filters        29.0 ms 242 KB  /  48.6 ms 385 KB
 *   sharp truecolour, zlib 6, no row filter               12.1 ms 226 KB  /  20.3 ms 372 KB
 *   sharp truecolour, zlib 5, no row filter               10.4 ms 230 KB  /  15.7 ms 379 KB
 *   sharp truecolour, zlib 3, no row filter                7.8 ms 254 KB  /  12.1 ms 421 KB
 *
 * These pictures are large flat areas and art already flattened by the draw: choosing a filter per
 * row costs libpng five trial filterings per row and, here, makes the file larger, not smaller.
 * Without row filters zlib 6 is both the smallest and under a third of Skia's time; truecolour
 * stays lossless (test/render-images.test.ts compares the decoded pixels with the canvas's).
 * Palettes through sharp in the same run (card / trophy chart):
 *   sharp palette (libimagequant effort 1, no dither), quality 100   117 ms 73 KB  /  195 ms  56 KB
 *   the same, quality 80                                                  —        /   80–126 ms 44 KB
 *   the same, quality 50 (banding, the green "+99" turns olive)           —        /   60 ms 36 KB
 *
 * Pictures with art, gradients and emoji keep every colour: truecolour at zlib 6 without row
 * filters is 13–16 % smaller than Skia's file in under a third of its time (measured below).
 *
 * The same truecolour PNG made in the render worker's own thread (RGB scanlines in JS, Node's
 * zlib) would run at the worker's lowered priority (pool.ts), where sharp encodes on libuv's
 * thread pool at the main thread's. It does not pay: on 2026-11-24 06:47 UTC (load 5.4; medians
 * of 9, CPU time; the card 1200×675, the grid 1400×1000, the 108-brawler grid 1800×1200), sharp
 * took 28.0 / 42.8 / 79.1 ms, Node's zlib 6 (memLevel 8 or 9, default or filtered strategy)
 * 29.0–32.2 / 42.4–55.6 / 83.0–107.8 ms for the same bytes (226 / 372 / 1,207 KB), of which
 * making the scanlines alone was 6.2 / 12.5 / 36.0 ms. Node's zlib 3 made files larger than
 * Skia's (the card 273 KB against 268 KB), zlib 4–5 fell between, as they do through sharp.
 *
 * Charts are flat areas and lines over the backdrop and must stay under 100 KB (every byte goes to
 * Discord with each reply); truecolour does not get there (the trophy chart: 139 KB at zlib 6
 * without row filters, 20 ms; Skia: 160 KB in 106 ms), a palette of ≤ 256 colours does. Through
 * sharp, libimagequant (effort 1, no dither, quality 80) made them ~45 KB but took 0.65–4.4× Skia's
 * time (bench:render, 2026-11-24 02:33 UTC): its quantiser works on every pixel, and at quality 100
 * twice as long. A chart has only ~2,300 colours once its channels are cut to 6 bits, so the colours
 * are now chosen on those bins in this thread (palette.ts: a variance-based median cut, no
 * dithering) and the indices deflated by Node's zlib. On 2026-11-24 03:35 UTC (load 19–24; medians
 * of 7–9 in one thread, the trophy chart 1200×675 and the activity chart):
 *
 *   Skia's default                                        55–135 ms  160 / 171 KB
 *   libimagequant through sharp, quality 80, zlib 6      233 / 251 ms  45 / 46 KB
 *   palette.ts (256 colours): choosing and mapping            13–15 ms
 *     + zlib 6                                               10–25 ms  53 / 56 KB
 *     + zlib 4                                               11–15 ms  63 / 65 KB
 *     + zlib 3                                                4–8 ms   62 / 66 KB   ← chosen
 *     + zlib 1                                                2–7 ms   71 / 74 KB
 *     + zlib 9                                             100–260 ms  46 / 50 KB
 *   palette.ts, 128 colours, zlib 3                           4–5 ms   55 / 57 KB (more banding)
 *
 * zlib 3 is the last level of its fast matcher (levels 4+ use lazy matching: level 4 took 2–3×
 * the time for no fewer bytes, level 6 2–4× the time for 15 % fewer). The result is a little larger than libimagequant's (58–68 KB against
 * 41–51 KB at 1200×675, a third of Skia's) and closer to the canvas: on every reference chart
 * (test/fixtures/render/reference, English, Russian and Japanese) pixelmatch at threshold 0.1 finds
 * no differing pixel against the canvas (libimagequant: up to 38), pixels move by 0.6–0.8 of 255
 * on average (libimagequant 1.0–1.2) and at most 27 on one channel (libimagequant up to 76, on
 * anti-aliased edges); test/render-palette.test.ts holds this.
 */
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { indexColours } from './palette.ts';

// One render worker encodes one picture at a time: libvips needs no threads of its own on the
// machine's other core, and its operation cache would only hold pixels that are never asked again.
sharp.concurrency(1);
sharp.cache(false);

export type PngStyle = 'truecolour' | 'palette';

/** An opaque RGBA canvas (what @napi-rs/canvas hands over) → PNG bytes. */
export async function encodePng(rgba: Uint8Array, width: number, height: number, style: PngStyle): Promise<Buffer> {
  if (style === 'palette') return encodeIndexed(rgba, width, height);
  const pixels = sharp(Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength), { raw: { width, height, channels: 4 } }).removeAlpha();
  return pixels.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
}

/** zlib level of indexed pictures: 3 is zlib's fastest matcher at its fullest (see the table above). */
const INDEXED_LEVEL = 3;
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type: 'IHDR' | 'PLTE' | 'IDAT' | 'IEND', data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** An indexed PNG (colour type 3, 8 bits): at most 256 colours (palette.ts), rows unfiltered, deflated by zlib. */
export function encodeIndexed(rgba: Uint8Array, width: number, height: number): Buffer {
  const { palette, rows } = indexColours(rgba, width, height);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per index
  header[9] = 3; // colour type: palette
  // compression, filter method and interlace: 0
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('PLTE', palette),
    chunk('IDAT', deflateSync(rows, { level: INDEXED_LEVEL })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}
