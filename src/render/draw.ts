/**
 * The visual language every picture shares: background, panels, outlined game-style text, coloured
 * names, readable numbers, small vector icons and the credit line. Renderers compose these; nothing
 * here knows about players or clubs.
 */
import { noteCut, type Words } from './words.ts';
import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import { ensureFonts, font, type FontOptions } from './fonts.ts';
import { parseMarkup } from './markup.ts';

export type Ctx = SKRSContext2D;

export const THEME = {
  bgTop: '#1f3fa8',
  bgBottom: '#4a1f8f',
  panel: 'rgba(8, 12, 48, 0.62)',
  panelEdge: 'rgba(0, 0, 0, 0.55)',
  panelLight: 'rgba(255, 255, 255, 0.08)',
  text: '#ffffff',
  muted: '#b9c3ff',
  faint: 'rgba(255, 255, 255, 0.55)',
  trophy: '#ffc93c',
  win: '#5fe06a',
  loss: '#ff5c5c',
  power: '#e35cff',
  gadget: '#39d46b',
  starPower: '#ffd83b',
  gear: '#9fb4c8',
  hyper: '#b25cff',
  xp: '#4fb6ff',
  prestige: '#ff8a3d',
  outline: '#0b0b1e',
} as const;

/** `low | medium | high` → drawing scale. */
export const QUALITY_SCALE = { low: 0.5, medium: 0.75, high: 1 } as const;
export type Quality = keyof typeof QUALITY_SCALE;

export function pixelSize(width: number, height: number, quality: Quality): { width: number; height: number } {
  const s = QUALITY_SCALE[quality];
  return { width: Math.round(width * s), height: Math.round(height * s) };
}

// Canvas property setters parse their value natively on every assignment (a CSS font string is not
// cheap); these remember what a context already has. Our drawing code sets fonts only through here.
const fonts = new WeakMap<Ctx, string>();
const deviceScales = new WeakMap<Ctx, number>();

export function setFont(ctx: Ctx, value: string): void {
  if (fonts.get(ctx) === value) return;
  ctx.font = value;
  fonts.set(ctx, value);
}

/** Pixels per logical unit of a picture's context (its quality scale). */
export function deviceScale(ctx: Ctx): number {
  let d = deviceScales.get(ctx);
  if (d === undefined) {
    d = ctx.getTransform().a;
    deviceScales.set(ctx, d);
  }
  return d;
}

/** A canvas of the logical size × quality scale, already scaled, with fonts ready. */
export function makeCanvas(width: number, height: number, quality: Quality): { canvas: Canvas; ctx: Ctx } {
  ensureFonts();
  const px = pixelSize(width, height, quality);
  const canvas = createCanvas(px.width, px.height);
  const ctx = canvas.getContext('2d');
  ctx.scale(px.width / width, px.height / height);
  deviceScales.set(ctx, px.width / width);
  ctx.textBaseline = 'alphabetic';
  return { canvas, ctx };
}

/**
 * Lets a canvas's pixels go now, once they have been copied out (`data()`) or drawn onto another
 * canvas. V8 does not see the native memory behind a canvas, so a dead one stayed resident until
 * the render worker's next collection (after 32 MB of pixels drawn, worker-main.ts). Resizing a
 * canvas replaces its surface with one of the new size (here 1×1 pixel); a copy of its pixels, or
 * a picture it was drawn onto, keeps what it had.
 */
export function releasePixels(canvas: Canvas): void {
  canvas.width = 1;
  canvas.height = 1;
}

// ------------------------------------------------------------------ sprites

const SPRITE_LIMIT = 3000;
const sprites = new Map<string, Canvas>();
/** bytes of pixels the sprites hold (4 a pixel, outside the heap): reported with the worker's memory */
let spritePixels = 0;

/** Bytes of pixels held by the sprite cache of this thread. */
export function spriteBytes(): number {
  return spritePixels;
}

/**
 * Draws something small that repeats (portraits, icons) through a cache of pre-rendered bitmaps at
 * the device scale: a 90-tile grid paints each portrait once per process instead of once per tile.
 * `paint` draws the w×h box at the origin; `pad` leaves room for outlines and shadows.
 */
export function cached(ctx: Ctx, key: string, x: number, y: number, w: number, h: number, pad: number, paint: (c: Ctx) => void): void {
  const d = deviceScale(ctx);
  const full = `${key}|${w.toFixed(2)}x${h.toFixed(2)}@${d.toFixed(3)}`;
  let sprite = sprites.get(full);
  if (sprite) {
    sprites.delete(full);
  } else {
    sprite = paintSprite(w, h, pad, d, paint);
    spritePixels += sprite.width * sprite.height * 4;
    if (sprites.size >= SPRITE_LIMIT) {
      const oldest = sprites.keys().next().value!;
      const out = sprites.get(oldest)!;
      spritePixels -= out.width * out.height * 4;
      sprites.delete(oldest);
    }
  }
  sprites.set(full, sprite);
  drawSprite(ctx, sprite, x, y, pad, d);
}

/**
 * Draws what `cached` would, the same pixels, without keeping the bitmap: for what belongs to one
 * player or club (its icon with its initial, its badge), which a picture draws once and another
 * picture seldom again. Kept, they were one sprite per player drawn, the part of the cache that
 * grew with the load (10.4 of 26.5 MB after 120 s of bench:memory's load; docs/benchmarks.md,
 * Memory).
 */
export function uncached(ctx: Ctx, x: number, y: number, w: number, h: number, pad: number, paint: (c: Ctx) => void): void {
  const d = deviceScale(ctx);
  const sprite = paintSprite(w, h, pad, d, paint);
  drawSprite(ctx, sprite, x, y, pad, d);
  releasePixels(sprite);
}

function paintSprite(w: number, h: number, pad: number, d: number, paint: (c: Ctx) => void): Canvas {
  const sprite = createCanvas(Math.ceil((w + 2 * pad) * d), Math.ceil((h + 2 * pad) * d));
  const sctx = sprite.getContext('2d');
  sctx.scale(d, d);
  sctx.translate(pad, pad);
  paint(sctx);
  return sprite;
}

function drawSprite(ctx: Ctx, sprite: Canvas, x: number, y: number, pad: number, d: number): void {
  // snap to device pixels so cached bitmaps stay as sharp as direct drawing
  const px = Math.round((x - pad) * d) / d;
  const py = Math.round((y - pad) * d) / d;
  ctx.drawImage(sprite, px, py, sprite.width / d, sprite.height / d);
}

// ------------------------------------------------------------------ numbers

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** 67383 → "67,383" */
export function fmt(n: number): string {
  return INT.format(n);
}

/** 1234567 → "1.2M"; below 10,000 the full number. */
export function fmtCompact(n: number): string {
  return Math.abs(n) < 10_000 ? INT.format(n) : COMPACT.format(n);
}

/** +12 / −7 / 0 with a real minus sign. */
export function fmtSigned(n: number): string {
  if (n > 0) return `+${fmt(n)}`;
  if (n < 0) return `\u2212${fmt(-n)}`;
  return '0';
}

export function fmtPercent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** 1732320000000 → "23 Nov 2024" (UTC) */
export function fmtDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

// ------------------------------------------------------------------ shapes

export function roundRect(ctx: Ctx, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, Math.min(r, w / 2, h / 2));
}

/**
 * The game's backdrop: a blue-violet gradient with faint diagonal bands and a glow. Painted onto
 * each picture, not kept as a sprite: a backdrop is a whole picture's pixels (3.2 MB for a card,
 * 5.6 for a grid), 8 of the render worker's 16 MB of sprites under bench:memory's load, for 2–5 ms
 * of drawing per picture; since pictures are kept as files (RENDER_DISK_CACHE_MB) few are drawn
 * twice (docs/benchmarks.md, Memory).
 */
export function background(ctx: Ctx, w: number, h: number, hue: { top?: string; bottom?: string } = {}): void {
  const g = ctx.createLinearGradient(0, 0, w * 0.35, h);
  g.addColorStop(0, hue.top ?? THEME.bgTop);
  g.addColorStop(1, hue.bottom ?? THEME.bgBottom);
  ctx.fillStyle = g;
  ctx.fillRect(0, 0, w, h);
  ctx.save();
  ctx.globalAlpha = 0.06;
  ctx.fillStyle = '#ffffff';
  const band = 46;
  // one path of all the bands, filled once: they do not overlap, so the same pixels as a fill each
  ctx.beginPath();
  for (let x = -h; x < w; x += band * 2) {
    ctx.moveTo(x, h);
    ctx.lineTo(x + h, 0);
    ctx.lineTo(x + h + band, 0);
    ctx.lineTo(x + band, h);
    ctx.closePath();
  }
  ctx.fill();
  ctx.restore();
  const glow = ctx.createRadialGradient(w * 0.15, h * 0.05, 10, w * 0.15, h * 0.05, Math.max(w, h) * 0.7);
  glow.addColorStop(0, 'rgba(120, 200, 255, 0.28)');
  glow.addColorStop(1, 'rgba(120, 200, 255, 0)');
  ctx.fillStyle = glow;
  ctx.fillRect(0, 0, w, h);
}

/** A dark rounded panel with a thick edge and a lighter lip, like the game's menus. */
export function panel(ctx: Ctx, x: number, y: number, w: number, h: number, opts: { r?: number; fill?: string } = {}): void {
  const r = opts.r ?? 18;
  roundRect(ctx, x, y + 4, w, h, r);
  ctx.fillStyle = THEME.panelEdge;
  ctx.fill();
  roundRect(ctx, x, y, w, h, r);
  ctx.fillStyle = opts.fill ?? THEME.panel;
  ctx.fill();
  ctx.lineWidth = 2;
  ctx.strokeStyle = THEME.panelLight;
  ctx.stroke();
}

/** A horizontal bar (track + fill), for progress and comparisons. */
export function bar(ctx: Ctx, x: number, y: number, w: number, h: number, ratio: number, color: string): void {
  roundRect(ctx, x, y, w, h, h / 2);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.35)';
  ctx.fill();
  const fw = Math.max(0, Math.min(1, ratio)) * w;
  if (fw >= 1) {
    roundRect(ctx, x, y, Math.max(fw, h), h, h / 2);
    ctx.fillStyle = color;
    ctx.fill();
    roundRect(ctx, x + 2, y + 2, Math.max(fw, h) - 4, (h - 4) / 2, h / 4);
    ctx.fillStyle = 'rgba(255, 255, 255, 0.25)';
    ctx.fill();
  }
}

// ------------------------------------------------------------------ text

export interface TextStyle extends FontOptions {
  size: number;
  color?: string;
  /** outline width as a fraction of the size; 0 = none (default 0.14, the game's chunky look) */
  outline?: number;
  /** horizontal alignment relative to x */
  align?: 'left' | 'center' | 'right';
  /** shrink (down to minSize) then ellipsise so the text fits this width */
  maxWidth?: number;
  minSize?: number;
  /** drop shadow under the outline */
  shadow?: boolean;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

export function splitGraphemes(s: string): string[] {
  return Array.from(graphemes.segment(s), (g) => g.segment);
}

interface Run {
  text: string;
  color: string;
}

function measureRuns(ctx: Ctx, runs: Run[]): number {
  let w = 0;
  for (const r of runs) w += ctx.measureText(r.text).width;
  return w;
}

/** Keeps the longest prefix (in graphemes) of the runs that fits with "…" appended. */
function ellipsise(ctx: Ctx, runs: Run[], maxWidth: number): Run[] {
  const pieces = runs.flatMap((r) => splitGraphemes(r.text).map((g) => ({ g, color: r.color })));
  const build = (n: number): Run[] => {
    const out: Run[] = [];
    for (const p of pieces.slice(0, n)) {
      const last = out[out.length - 1];
      if (last && last.color === p.color) last.text += p.g;
      else out.push({ text: p.g, color: p.color });
    }
    const tail = out[out.length - 1];
    if (tail) tail.text = `${tail.text.trimEnd()}…`;
    else out.push({ text: '…', color: runs[0]?.color ?? THEME.text });
    return out;
  };
  // Every new string costs a text layout; single graphemes repeat (and are cached), so the cut is
  // found from per-grapheme widths and checked once, stepping back while kerning makes it too wide.
  const ell = ctx.measureText('…').width;
  let n = 0;
  let w = ell;
  while (n < pieces.length) {
    const gw = ctx.measureText(pieces[n]!.g).width;
    if (w + gw > maxWidth) break;
    w += gw;
    n++;
  }
  while (n > 0 && measureRuns(ctx, build(n)) > maxWidth) n--;
  return build(n);
}

/**
 * Draws text in the display face with an outline, optionally as a sequence of coloured runs.
 * Returns the drawn width. Game markup is not parsed here: see `drawName`.
 */
export function drawRuns(ctx: Ctx, input: Run[], x: number, y: number, style: TextStyle): number {
  let runs = input.filter((r) => r.text !== '');
  const all = runs.map((r) => r.text).join('');
  let size = style.size;
  setFont(ctx, font(size, style, all));
  // one measurement per run and size: measureText is the costliest call in a busy grid
  let widths = runs.map((r) => ctx.measureText(r.text).width);
  let width = widths.reduce((a, b) => a + b, 0);
  if (style.maxWidth !== undefined && style.maxWidth > 0 && width > style.maxWidth) {
    // text width scales with the size: one step to the fitting size (not below minSize)
    const min = style.minSize ?? size;
    const fitted = Math.max(min, Math.floor(((size * style.maxWidth) / width) * 2) / 2);
    if (fitted < size) {
      size = fitted;
      setFont(ctx, font(size, style, all));
      widths = runs.map((r) => ctx.measureText(r.text).width);
      width = widths.reduce((a, b) => a + b, 0);
    }
    if (width > style.maxWidth) {
      noteCut(all);
      runs = ellipsise(ctx, runs, style.maxWidth);
      widths = runs.map((r) => ctx.measureText(r.text).width);
      width = widths.reduce((a, b) => a + b, 0);
    }
  }
  let cx = style.align === 'center' ? x - width / 2 : style.align === 'right' ? x - width : x;
  ctx.textAlign = 'left';
  const outline = (style.outline ?? 0.14) * size;
  runs.forEach((r, i) => {
    if (style.shadow !== false && outline > 0) {
      ctx.fillStyle = 'rgba(0, 0, 0, 0.55)';
      ctx.fillText(r.text, cx, y + size * 0.07);
    }
    if (outline > 0) {
      ctx.lineJoin = 'round';
      ctx.lineWidth = outline;
      ctx.strokeStyle = THEME.outline;
      ctx.strokeText(r.text, cx, y);
    }
    ctx.fillStyle = r.color;
    ctx.fillText(r.text, cx, y);
    cx += widths[i]!;
  });
  return width;
}

export function drawText(ctx: Ctx, text: string, x: number, y: number, style: TextStyle): number {
  return drawRuns(ctx, [{ text, color: style.color ?? THEME.text }], x, y, style);
}

/** A player or club name: colour markup becomes colour, the rest takes `style.color`. */
export function drawName(ctx: Ctx, name: string, x: number, y: number, style: TextStyle): number {
  const base = style.color ?? THEME.text;
  const runs = parseMarkup(name).map((r) => ({ text: r.text.replace(/\s+/g, ' '), color: r.color ?? base }));
  return drawRuns(ctx, runs.length ? runs : [{ text: '?', color: base }], x, y, style);
}

/** Plain small text (labels, notes) without outline; wraps on spaces into at most `maxLines`. */
export function drawParagraph(
  ctx: Ctx,
  text: string,
  x: number,
  y: number,
  opts: { size: number; width: number; lineHeight?: number; maxLines?: number; color?: string; align?: 'left' | 'center' } & FontOptions,
): number {
  setFont(ctx, font(opts.size, opts, text));
  ctx.fillStyle = opts.color ?? THEME.muted;
  ctx.textAlign = opts.align ?? 'left';
  const lh = opts.lineHeight ?? opts.size * 1.3;
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (const word of para.split(/\s+/).filter(Boolean)) {
      const next = line ? `${line} ${word}` : word;
      if (ctx.measureText(next).width <= opts.width || line === '') line = next;
      else {
        lines.push(line);
        line = word;
      }
      // Japanese and Chinese put no spaces between words: a "word" wider than the box breaks
      // between characters.
      while (ctx.measureText(line).width > opts.width && splitGraphemes(line).length > 1) {
        const g = splitGraphemes(line);
        let n = g.length - 1;
        while (n > 1 && ctx.measureText(g.slice(0, n).join('')).width > opts.width) n--;
        lines.push(g.slice(0, n).join(''));
        line = g.slice(n).join('');
      }
    }
    lines.push(line);
  }
  const max = opts.maxLines ?? lines.length;
  const shown = lines.slice(0, max);
  if (lines.length > max && shown.length > 0) {
    noteCut(text);
    let last = shown[shown.length - 1]!;
    while (last && ctx.measureText(`${last}…`).width > opts.width) last = splitGraphemes(last).slice(0, -1).join('');
    shown[shown.length - 1] = `${last.trimEnd()}…`;
  }
  const lx = opts.align === 'center' ? x + opts.width / 2 : x;
  shown.forEach((l, i) => ctx.fillText(l, lx, y + i * lh));
  ctx.textAlign = 'left';
  return shown.length * lh;
}

// ------------------------------------------------------------------ icons (vector, no art files)

function star(ctx: Ctx, cx: number, cy: number, r: number, points = 5, inner = 0.48): void {
  ctx.beginPath();
  for (let i = 0; i < points * 2; i++) {
    const rad = i % 2 === 0 ? r : r * inner;
    const a = -Math.PI / 2 + (i * Math.PI) / points;
    ctx.lineTo(cx + Math.cos(a) * rad, cy + Math.sin(a) * rad);
  }
  ctx.closePath();
}

function outlined(ctx: Ctx, fill: string | CanvasGradient, width: number): void {
  ctx.lineJoin = 'round';
  ctx.lineWidth = width;
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
  ctx.fillStyle = fill as string;
  ctx.fill();
}

type CanvasGradient = ReturnType<Ctx['createLinearGradient']>;

export type IconName =
  | 'trophy'
  | 'star'
  | 'bolt'
  | 'gadget'
  | 'starPower'
  | 'gear'
  | 'hyper'
  | 'xp'
  | 'skull'
  | 'people'
  | 'crown'
  | 'flame'
  | 'lock';

/** Draws an icon centred at (cx, cy) fitting a box of `s` pixels. */
export function icon(ctx: Ctx, name: IconName, cx: number, cy: number, s: number): void {
  const pad = Math.ceil(s * 0.2);
  cached(ctx, `icon:${name}`, cx - s / 2, cy - s / 2, s, s, pad, (c) => paintIcon(c, name, s / 2, s / 2, s));
}

function paintIcon(ctx: Ctx, name: IconName, cx: number, cy: number, s: number): void {
  ctx.save();
  const ow = Math.max(1.5, s * 0.09);
  switch (name) {
    case 'trophy': {
      const g = ctx.createLinearGradient(0, cy - s / 2, 0, cy + s / 2);
      g.addColorStop(0, '#ffe27a');
      g.addColorStop(1, '#f0a01c');
      const w = s * 0.62;
      ctx.beginPath();
      // cup
      ctx.moveTo(cx - w / 2, cy - s * 0.42);
      ctx.lineTo(cx + w / 2, cy - s * 0.42);
      ctx.quadraticCurveTo(cx + w / 2, cy + s * 0.1, cx + s * 0.08, cy + s * 0.16);
      ctx.lineTo(cx + s * 0.08, cy + s * 0.28);
      ctx.lineTo(cx + s * 0.24, cy + s * 0.28);
      ctx.lineTo(cx + s * 0.24, cy + s * 0.42);
      ctx.lineTo(cx - s * 0.24, cy + s * 0.42);
      ctx.lineTo(cx - s * 0.24, cy + s * 0.28);
      ctx.lineTo(cx - s * 0.08, cy + s * 0.28);
      ctx.lineTo(cx - s * 0.08, cy + s * 0.16);
      ctx.quadraticCurveTo(cx - w / 2, cy + s * 0.1, cx - w / 2, cy - s * 0.42);
      ctx.closePath();
      outlined(ctx, g, ow);
      // handles
      ctx.lineWidth = s * 0.08;
      ctx.strokeStyle = THEME.outline;
      ctx.beginPath();
      ctx.arc(cx - w / 2, cy - s * 0.2, s * 0.14, Math.PI * 0.5, Math.PI * 1.5);
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(cx + w / 2, cy - s * 0.2, s * 0.14, -Math.PI * 0.5, Math.PI * 0.5);
      ctx.stroke();
      break;
    }
    case 'star':
    case 'starPower': {
      star(ctx, cx, cy + s * 0.03, s * 0.48);
      outlined(ctx, THEME.starPower, ow);
      break;
    }
    case 'xp': {
      star(ctx, cx, cy + s * 0.03, s * 0.5, 5, 0.62);
      outlined(ctx, THEME.xp, ow);
      break;
    }
    case 'bolt':
    case 'hyper': {
      ctx.beginPath();
      ctx.moveTo(cx + s * 0.1, cy - s * 0.48);
      ctx.lineTo(cx - s * 0.3, cy + s * 0.06);
      ctx.lineTo(cx - s * 0.02, cy + s * 0.06);
      ctx.lineTo(cx - s * 0.12, cy + s * 0.48);
      ctx.lineTo(cx + s * 0.32, cy - s * 0.1);
      ctx.lineTo(cx + s * 0.04, cy - s * 0.1);
      ctx.closePath();
      outlined(ctx, name === 'hyper' ? THEME.hyper : THEME.power, ow);
      break;
    }
    case 'gadget': {
      ctx.beginPath();
      ctx.arc(cx, cy, s * 0.42, 0, Math.PI * 2);
      outlined(ctx, THEME.gadget, ow);
      ctx.beginPath();
      ctx.arc(cx, cy, s * 0.16, 0, Math.PI * 2);
      ctx.fillStyle = '#d9ffe4';
      ctx.fill();
      break;
    }
    case 'gear': {
      const teeth = 8;
      ctx.beginPath();
      for (let i = 0; i < teeth * 2; i++) {
        const a = (i * Math.PI) / teeth;
        const r = i % 2 === 0 ? s * 0.48 : s * 0.36;
        ctx.lineTo(cx + Math.cos(a) * r, cy + Math.sin(a) * r);
      }
      ctx.closePath();
      outlined(ctx, THEME.gear, ow);
      ctx.beginPath();
      ctx.arc(cx, cy, s * 0.14, 0, Math.PI * 2);
      ctx.fillStyle = THEME.outline;
      ctx.fill();
      break;
    }
    case 'skull': {
      ctx.beginPath();
      ctx.arc(cx, cy - s * 0.06, s * 0.36, Math.PI * 0.85, Math.PI * 2.15);
      ctx.lineTo(cx + s * 0.2, cy + s * 0.42);
      ctx.lineTo(cx - s * 0.2, cy + s * 0.42);
      ctx.closePath();
      outlined(ctx, '#f2f2f2', ow);
      ctx.fillStyle = THEME.outline;
      ctx.beginPath();
      ctx.arc(cx - s * 0.13, cy - s * 0.02, s * 0.09, 0, Math.PI * 2);
      ctx.arc(cx + s * 0.13, cy - s * 0.02, s * 0.09, 0, Math.PI * 2);
      ctx.fill();
      break;
    }
    case 'people': {
      for (const [dx, col] of [
        [-0.2, '#ffb347'],
        [0.2, '#58c7ff'],
        [0, '#ff6b6b'],
      ] as const) {
        ctx.beginPath();
        ctx.arc(cx + dx * s, cy - s * 0.14, s * 0.16, 0, Math.PI * 2);
        outlined(ctx, col, ow * 0.8);
        ctx.beginPath();
        ctx.ellipse(cx + dx * s, cy + s * 0.3, s * 0.22, s * 0.18, 0, Math.PI, 0);
        ctx.closePath();
        outlined(ctx, col, ow * 0.8);
      }
      break;
    }
    case 'crown': {
      ctx.beginPath();
      ctx.moveTo(cx - s * 0.44, cy + s * 0.3);
      ctx.lineTo(cx - s * 0.46, cy - s * 0.28);
      ctx.lineTo(cx - s * 0.2, cy);
      ctx.lineTo(cx, cy - s * 0.4);
      ctx.lineTo(cx + s * 0.2, cy);
      ctx.lineTo(cx + s * 0.46, cy - s * 0.28);
      ctx.lineTo(cx + s * 0.44, cy + s * 0.3);
      ctx.closePath();
      outlined(ctx, THEME.trophy, ow);
      break;
    }
    case 'flame': {
      ctx.beginPath();
      ctx.moveTo(cx, cy - s * 0.48);
      ctx.bezierCurveTo(cx + s * 0.5, cy - s * 0.1, cx + s * 0.4, cy + s * 0.46, cx, cy + s * 0.46);
      ctx.bezierCurveTo(cx - s * 0.4, cy + s * 0.46, cx - s * 0.42, cy, cx - s * 0.12, cy - s * 0.16);
      ctx.bezierCurveTo(cx - s * 0.1, cy - s * 0.02, cx + s * 0.02, cy - s * 0.2, cx, cy - s * 0.48);
      ctx.closePath();
      outlined(ctx, '#ff7a2f', ow);
      break;
    }
    case 'lock': {
      ctx.lineWidth = s * 0.1;
      ctx.strokeStyle = THEME.faint;
      ctx.beginPath();
      ctx.arc(cx, cy - s * 0.1, s * 0.2, Math.PI, 0);
      ctx.stroke();
      roundRect(ctx, cx - s * 0.3, cy - s * 0.1, s * 0.6, s * 0.5, s * 0.08);
      ctx.fillStyle = THEME.faint;
      ctx.fill();
      break;
    }
  }
  ctx.restore();
}

/** Icon followed by a value, e.g. 🏆 67,383; returns the width used. */
export function iconValue(
  ctx: Ctx,
  name: IconName,
  value: string,
  x: number,
  y: number,
  size: number,
  color: string = THEME.text,
): number {
  icon(ctx, name, x + size * 0.5, y - size * 0.36, size);
  const w = drawText(ctx, value, x + size * 1.12, y, { size, color });
  return size * 1.12 + w;
}

/** A big labelled number inside a panel cell: label above, value below. */
export function statBlock(
  ctx: Ctx,
  x: number,
  y: number,
  w: number,
  label: string,
  value: string,
  opts: { icon?: IconName; color?: string; size?: number } = {},
): void {
  const size = opts.size ?? 34;
  drawText(ctx, label.toUpperCase(), x, y, { size: 16, color: THEME.muted, outline: 0, shadow: false, maxWidth: w, minSize: 10 });
  if (opts.icon) {
    icon(ctx, opts.icon, x + size * 0.5, y + size * 0.95, size * 0.95);
    drawText(ctx, value, x + size * 1.15, y + size * 1.3, { size, color: opts.color, maxWidth: w - size * 1.15, minSize: size * 0.6 });
  } else {
    drawText(ctx, value, x, y + size * 1.3, { size, color: opts.color, maxWidth: w, minSize: size * 0.6 });
  }
}

/**
 * The credit line at the bottom of every picture: the service, the data source and that this is a
 * fan project, plus a right-aligned note (usually the tag and what the picture shows).
 */
export function creditLine(ctx: Ctx, w: number, h: number, right: string, words: Words): void {
  ctx.fillStyle = 'rgba(0, 0, 0, 0.35)';
  ctx.fillRect(0, h - 34, w, 34);
  drawText(ctx, 'STARR STATS', 18, h - 11, { size: 17, color: THEME.trophy, outline: 0.12 });
  const brand = 18 + measure(ctx, 'STARR STATS', 17) + 10;
  const rightWidth = Math.min(w * 0.4, measure(ctx, right, 15));
  drawText(ctx, words.t('pic.credit'), brand, h - 12, {
    size: 14,
    color: THEME.faint,
    outline: 0,
    shadow: false,
    maxWidth: w - 18 - rightWidth - 16 - brand,
    minSize: 10,
  });
  drawText(ctx, right, w - 18, h - 11, { size: 15, color: THEME.muted, outline: 0, shadow: false, align: 'right', maxWidth: w * 0.4 });
}

export function measure(ctx: Ctx, text: string, size: number): number {
  setFont(ctx, font(size, {}, text));
  return ctx.measureText(text).width;
}

/**
 * Lays out `n` tiles of roughly `aspect` (width/height) in a box, choosing the column count that
 * makes tiles largest. Returns columns, rows and the tile size including the gap.
 */
export function fitGrid(n: number, w: number, h: number, aspect: number, maxTileH = Infinity): { cols: number; rows: number; tw: number; th: number } {
  let best = { cols: 1, rows: Math.max(1, n), tw: w, th: h / Math.max(1, n), score: -1 };
  for (let cols = 1; cols <= Math.max(1, n); cols++) {
    const rows = Math.ceil(Math.max(1, n) / cols);
    const tw = w / cols;
    const th = Math.min(h / rows, maxTileH);
    const score = Math.min(tw / aspect, th);
    if (score > best.score) best = { cols, rows, tw, th: Math.min(th, tw / aspect * 1.15), score };
  }
  return { cols: best.cols, rows: best.rows, tw: best.tw, th: best.th };
}

/** A centred message on an otherwise finished picture ("not enough history yet"). */
export function emptyState(ctx: Ctx, x: number, y: number, w: number, h: number, title: string, detail: string): void {
  panel(ctx, x, y, w, h, { fill: 'rgba(8, 12, 48, 0.45)' });
  icon(ctx, 'lock', x + w / 2, y + h / 2 - 58, 54);
  drawText(ctx, title, x + w / 2, y + h / 2 + 6, { size: 34, align: 'center', maxWidth: w - 40, minSize: 20 });
  drawParagraph(ctx, detail, x + w / 2 - Math.min(640, w - 60) / 2, y + h / 2 + 44, {
    size: 20,
    width: Math.min(640, w - 60),
    maxLines: 4,
    align: 'center',
  });
}
