/**
 * An opaque RGBA canvas → at most 256 colours and one palette index per pixel, for an indexed PNG
 * (png.ts). Pure functions over typed arrays; no state survives a call but reused scratch memory.
 *
 * - A canvas of at most 256 distinct colours gets exactly those colours: lossless, no quantisation.
 * - Otherwise (a chart over the gradient backdrop has ~2,000–3,000 colours) the colours are counted
 *   in bins of 6 bits per channel, each bin standing for the mean colour of its pixels; the bins are
 *   cut into at most 256 boxes, always splitting the box whose split removes the most squared error,
 *   along its widest channel at the point that leaves the least error on both sides (variance-based
 *   median cut, as Wu's and libimagequant's quantisers begin); each box's palette colour is the mean
 *   of its pixels, and each bin maps to the nearest palette colour. No dithering: flat areas stay
 *   flat (and compress), the gradient bands by one or two shades.
 *
 * Cost is two passes over the pixels with a lookup each (runs of one colour, most of a flat picture,
 * cost a comparison per pixel) plus work on the ~3,000 bins: ~13 ms for a 1200×675 chart on the busy
 * 2-core machine, where libimagequant through sharp took 80–240 ms (see png.ts).
 */

export interface Indexed {
  /** r, g, b of each palette entry (length = 3 × entries, at most 768) */
  palette: Uint8Array;
  /** per row: a filter byte (0, none) then one palette index per pixel — a PNG's scanlines before deflate */
  rows: Uint8Array;
  /** true when the palette holds the canvas's colours exactly (decoding gives back every pixel) */
  exact: boolean;
}

export const MAX_COLOURS = 256;

/** Scanlines of width × height indices, each row led by filter byte 0. */
const scanlines = (width: number, height: number) => new Uint8Array(height * (width + 1));

/** The canvas's own palette when it has at most 256 colours; null (after looking at little) when it has more. */
export function exactPalette(px: Int32Array, width: number, height: number): Indexed | null {
  // open addressing over 1,024 slots for at most 256 keys (24-bit colours)
  const keys = new Int32Array(1024).fill(-1);
  const slots = new Uint8Array(1024);
  const palette = new Uint8Array(MAX_COLOURS * 3);
  const rows = scanlines(width, height);
  let n = 0;
  let last = -1;
  let index = 0;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0, o = y * (width + 1) + 1; x < width; x++, i++, o++) {
      const c = px[i]! & 0xffffff;
      if (c !== last) {
        let h = Math.imul(c, 0x9e3779b1) >>> 22;
        while (keys[h] !== -1 && keys[h] !== c) h = (h + 1) & 1023;
        if (keys[h] === -1) {
          if (n === MAX_COLOURS) return null;
          keys[h] = c;
          slots[h] = n;
          // pixels are little-endian RGBA words: red in the low byte
          palette[n * 3] = c & 255;
          palette[n * 3 + 1] = (c >>> 8) & 255;
          palette[n * 3 + 2] = (c >>> 16) & 255;
          n++;
        }
        last = c;
        index = slots[h]!;
      }
      rows[o] = index;
    }
  }
  return { palette: palette.slice(0, n * 3), rows, exact: true };
}

// 6 bits per channel: 2^18 bins
const BINS = 1 << 18;
/** Most pixels a canvas may have here: a bin's sum of one channel (pixels × 255) must fit 32 bits. */
export const MAX_PIXELS = Math.floor(0xffffffff / 255);

/**
 * Per-bin counts, channel sums and nearest palette entries (4.25 MB), made by the first quantised
 * picture and reused (a render worker encodes one picture at a time); each call leaves them zeroed.
 */
let scratch: { count: Uint32Array; sumR: Uint32Array; sumG: Uint32Array; sumB: Uint32Array; nearest: Uint8Array } | null = null;

/** The bin of an RGBA word: the top 6 bits of red, green and blue. */
const binOf = (c: number) => ((c & 0xfc) << 10) | ((c & 0xfc00) >>> 4) | ((c & 0xfc0000) >>> 18);

interface Box {
  lo: number;
  hi: number;
  /** the box's mean colour */
  r: number;
  g: number;
  b: number;
  /** where to split (an index in lo+1..hi-1), or -1 when it cannot be split */
  split: number;
  /** squared error the split removes */
  gain: number;
}

/** What the boxes of one quantisation cut: each occupied bin's weight and mean colour, and the bins' order. */
interface Bins {
  /** pixels in each bin */
  w: Float64Array;
  /** each bin's mean red, green and blue */
  chan: readonly [Float64Array, Float64Array, Float64Array];
  /** bin numbers, each box a range of it */
  order: Int32Array;
  /** scratch for sorting a range of `order` */
  sortKeys: Float64Array;
}

/**
 * The box over order[lo..hi): its mean, and its best split along its widest channel (sorting that
 * range of `order` along it). One function for every picture: as a closure made by each quantise
 * call it was compiled by TurboFan again for every chart (23 ms of a V8 helper thread each time).
 */
function boxOf(bins: Bins, lo: number, hi: number): Box {
  const { w, chan, order, sortKeys } = bins;
  const [mr, mg, mb] = chan;
  let W = 0, R = 0, G = 0, B = 0, Q = 0;
  for (let k = lo; k < hi; k++) {
    const j = order[k]!;
    const wj = w[j]!;
    W += wj;
    R += wj * mr[j]!;
    G += wj * mg[j]!;
    B += wj * mb[j]!;
    Q += wj * (mr[j]! * mr[j]! + mg[j]! * mg[j]! + mb[j]! * mb[j]!);
  }
  const out: Box = { lo, hi, r: R / W, g: G / W, b: B / W, split: -1, gain: 0 };
  if (hi - lo < 2) return out;
  const means = [R / W, G / W, B / W];
  let axis = 0;
  let widest = -1;
  for (let a = 0; a < 3; a++) {
    const ch = chan[a]!;
    let v = 0;
    for (let k = lo; k < hi; k++) {
      const j = order[k]!;
      const d = ch[j]! - means[a]!;
      v += w[j]! * d * d;
    }
    if (v > widest) {
      widest = v;
      axis = a;
    }
  }
  // sort the box's bins along that channel: keys pack (value, bin) so a numeric sort does it
  const ch = chan[axis]!;
  for (let k = lo; k < hi; k++) sortKeys[k] = Math.floor(ch[order[k]!]! * 256) * BINS + order[k]!;
  const sorted = sortKeys.subarray(lo, hi).sort();
  for (let k = lo; k < hi; k++) order[k] = sorted[k - lo]! % BINS;
  // the split leaving the least squared error on both sides, from running sums
  const sse = Q - (R * R + G * G + B * B) / W;
  let lW = 0, lR = 0, lG = 0, lB = 0, lQ = 0;
  for (let k = lo; k < hi - 1; k++) {
    const j = order[k]!;
    const wj = w[j]!;
    lW += wj;
    lR += wj * mr[j]!;
    lG += wj * mg[j]!;
    lB += wj * mb[j]!;
    lQ += wj * (mr[j]! * mr[j]! + mg[j]! * mg[j]! + mb[j]! * mb[j]!);
    if (ch[j] === ch[order[k + 1]!]) continue;
    const rW = W - lW, rR = R - lR, rG = G - lG, rB = B - lB;
    const left = lQ - (lR * lR + lG * lG + lB * lB) / lW;
    const right = Q - lQ - (rR * rR + rG * rG + rB * rB) / rW;
    const gain = sse - left - right;
    if (gain > out.gain) {
      out.gain = gain;
      out.split = k + 1;
    }
  }
  return out;
}

/** At most `colours` colours chosen for the canvas (see the file's comment), every pixel mapped to the nearest. */
export function quantise(px: Int32Array, width: number, height: number, colours = MAX_COLOURS): Indexed {
  const total = width * height;
  if (total > MAX_PIXELS) throw new RangeError(`${width}×${height} is more than ${MAX_PIXELS} pixels`);
  scratch ??= { count: new Uint32Array(BINS), sumR: new Uint32Array(BINS), sumG: new Uint32Array(BINS), sumB: new Uint32Array(BINS), nearest: new Uint8Array(BINS) };
  const { count, sumR, sumG, sumB, nearest } = scratch;
  const used: number[] = [];
  for (let i = 0; i < total; ) {
    const c = px[i]!;
    let j = i + 1;
    while (j < total && px[j] === c) j++;
    const run = j - i;
    i = j;
    const b = binOf(c);
    if (count[b] === 0) used.push(b);
    count[b] = count[b]! + run;
    sumR[b] = sumR[b]! + run * (c & 255);
    sumG[b] = sumG[b]! + run * ((c >>> 8) & 255);
    sumB[b] = sumB[b]! + run * ((c >>> 16) & 255);
  }
  // each occupied bin as a point (its mean colour) with a weight (its pixels)
  const m = used.length;
  const w = new Float64Array(m);
  const chan = [new Float64Array(m), new Float64Array(m), new Float64Array(m)] as const;
  const [mr, mg, mb] = chan;
  for (let k = 0; k < m; k++) {
    const b = used[k]!;
    const n = count[b]!;
    w[k] = n;
    mr[k] = sumR[b]! / n;
    mg[k] = sumG[b]! / n;
    mb[k] = sumB[b]! / n;
    count[b] = sumR[b] = sumG[b] = sumB[b] = 0;
  }
  const order = new Int32Array(m);
  for (let k = 0; k < m; k++) order[k] = k;
  const bins: Bins = { w, chan, order, sortKeys: new Float64Array(m) };
  const boxes: Box[] = [boxOf(bins, 0, m)];
  while (boxes.length < colours) {
    let pick = -1;
    for (let i = 0; i < boxes.length; i++) if (boxes[i]!.split > 0 && (pick < 0 || boxes[i]!.gain > boxes[pick]!.gain)) pick = i;
    if (pick < 0) break;
    const { lo, hi, split } = boxes[pick]!;
    boxes[pick] = boxOf(bins, lo, split);
    boxes.push(boxOf(bins, split, hi));
  }

  const n = boxes.length;
  const palette = new Uint8Array(n * 3);
  const pr = new Float64Array(n);
  const pg = new Float64Array(n);
  const pb = new Float64Array(n);
  /** each bin's own box: its palette colour is where the search for the nearest starts */
  const own = new Uint8Array(m);
  boxes.forEach((bx, i) => {
    palette.set([(pr[i] = Math.round(bx.r)), (pg[i] = Math.round(bx.g)), (pb[i] = Math.round(bx.b))], i * 3);
    for (let k = bx.lo; k < bx.hi; k++) own[order[k]!] = i;
  });
  // The nearest entry, the lowest-numbered of equals, for each bin. Starting from its own box's
  // colour (near already) lets most entries be dismissed on one or two channels instead of summing
  // all three for each of the 256; the choice is the same. With the Int32Array view (indexColours),
  // choosing and mapping a chart's colours took 13.5–17.3 ms of CPU against 15.3–20.0 ms before,
  // the same palette and indices for all 13 charts (2026-11-24 07:05 UTC, load 8.4, medians of 11).
  for (let k = 0; k < m; k++) {
    const r = mr[k]!, g = mg[k]!, b = mb[k]!;
    let pick = own[k]!;
    let dr = pr[pick]! - r, dg = pg[pick]! - g, db = pb[pick]! - b;
    let best = dr * dr + dg * dg + db * db;
    for (let i = 0; i < n; i++) {
      dr = pr[i]! - r;
      let d = dr * dr;
      if (d > best) continue;
      dg = pg[i]! - g;
      d += dg * dg;
      if (d > best) continue;
      db = pb[i]! - b;
      d += db * db;
      if (d < best || (d === best && i < pick)) {
        best = d;
        pick = i;
      }
    }
    nearest[used[k]!] = pick;
  }
  const rows = scanlines(width, height);
  let last = -1;
  let index = 0;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0, o = y * (width + 1) + 1; x < width; x++, i++, o++) {
      const c = px[i]!;
      if (c !== last) {
        last = c;
        index = nearest[binOf(c)]!;
      }
      rows[o] = index;
    }
  }
  return { palette, rows, exact: false };
}

/** An opaque RGBA canvas as at most 256 colours: exactly when it has that few, quantised otherwise. */
export function indexColours(rgba: Uint8Array, width: number, height: number): Indexed {
  if (rgba.byteLength !== width * height * 4) throw new RangeError(`expected ${width * height * 4} bytes of RGBA for ${width}×${height}, got ${rgba.byteLength}`);
  // A pixel as one 32-bit word, signed: an opaque pixel's word is over 2^31, which as a Uint32Array
  // element is a double to V8 and as an Int32Array element a small integer (the passes over every
  // pixel compare and look up integers). The view needs 4-byte alignment; a canvas's pixels have
  // it, a sliced Buffer may not.
  const aligned = rgba.byteOffset % 4 === 0 ? rgba : rgba.slice();
  const px = new Int32Array(aligned.buffer, aligned.byteOffset, width * height);
  return exactPalette(px, width, height) ?? quantise(px, width, height);
}
