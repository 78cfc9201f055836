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
 *   sharp palette (libimagequant effort 1, no dither), quality 100   117 ms 73 KB  /  195 ms  56 KB
 *   the same, quality 80                                                  —        /   80–126 ms 44 KB
 *   the same, quality 50 (banding, the green "+99" turns olive)           —        /   60 ms 36 KB
 *
 * Pictures with art, gradients and emoji keep every colour: truecolour at zlib 6 without row
 * filters is 13–16 % smaller than Skia's file in under a third of its time (measured below).
 * Charts are flat areas and lines over the backdrop and must stay under 100 KB (every byte goes to
 * Discord with each reply): a palette at quality 80 without dithering shows no difference one can
 * see and makes them ~45 KB, in 0.65–4.4× Skia's time on the busy machine (bench:render,
 * 2026-11-24 02:33 UTC; quality 100 took twice as long for 56 KB).
 * It is lossy: on the player trophy chart (2026-11-24 02:34 UTC) 92 % of pixels moved, by 1.7 of
 * 255 on average and at most 56 on one channel (anti-aliased edges); the same chart in truecolour
 * at zlib 6 without row filters was 139 KB in 20 ms (Skia: 160 KB in 106 ms), over the 100 KB bound.
 */
import sharp from 'sharp';

// One render worker encodes one picture at a time: libvips needs no threads of its own on the
// machine's other core, and its operation cache would only hold pixels that are never asked again.
sharp.concurrency(1);
sharp.cache(false);

export type PngStyle = 'truecolour' | 'palette';

/** An opaque RGBA canvas (what @napi-rs/canvas hands over) → PNG bytes. */
export async function encodePng(rgba: Uint8Array, width: number, height: number, style: PngStyle): Promise<Buffer> {
  const pixels = sharp(Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength), { raw: { width, height, channels: 4 } }).removeAlpha();
  return style === 'palette'
    ? pixels.png({ palette: true, quality: 80, effort: 1, dither: 0, compressionLevel: 6 }).toBuffer()
    : pixels.png({ compressionLevel: 6, adaptiveFiltering: false }).toBuffer();
}
