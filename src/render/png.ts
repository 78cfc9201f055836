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
 *   sharp palette (libimagequant effort 1, no dither), quality 100   117 ms 73 KB  /  195 ms  56 KB
 *   the same, quality 80                                                  —        /   80–126 ms 44 KB
 *   the same, quality 50 (banding, the green "+99" turns olive)           —        /   60 ms 36 KB
 *
 * Pictures with art, gradients and emoji keep every colour: truecolour at zlib 6 with libpng's
 * adaptive per-row filters is ~10 % smaller than Skia's file in a quarter to a half of its time.
 * Charts are flat areas and lines over the backdrop and must stay under 100 KB (every byte goes to
 * Discord with each reply): a palette at quality 80 without dithering shows no difference one can
 * see and makes them ~45 KB, in about Skia's time (quality 100 took twice as long for 56 KB).
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
    : pixels.png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer();
}
