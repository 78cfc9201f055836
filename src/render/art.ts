/**
 * Brawler portraits, profile icons and club badges. Real art comes from the optional asset CDN
 * (decoded images handed in by the caller); without it every piece is drawn: a coloured token whose
 * hue follows the id, so a brawler keeps its colour across every picture, with a monogram in the
 * display face. No broken-image boxes, ever.
 */
import { Image } from '@napi-rs/canvas';
import { cached, roundRect, setFont, splitGraphemes, THEME, uncached, type Ctx } from './draw.ts';
import { font } from './fonts.ts';
import { plainName } from './markup.ts';

export type ArtKind = 'brawler' | 'icon' | 'badge';

export function artKey(kind: ArtKind, id: number): string {
  return `${kind}:${id}`;
}

/** Decoded art by `artKey`; empty when the CDN is off. */
export type ArtImages = ReadonlyMap<string, Image>;

const decoded = new WeakMap<Record<string, Uint8Array>, Map<string, Image>>();

/**
 * Decodes a job's art (PNG/JPEG/WebP bytes by `artKey`) before it is drawn: Skia decodes image bytes
 * asynchronously, and an image drawn before its `onload` comes out empty. Undecodable entries are
 * dropped (drawn art takes their place: a corrupt cache file must not cost the picture).
 */
export async function loadArt(bytes: Record<string, Uint8Array> | undefined): Promise<void> {
  if (!bytes || decoded.has(bytes)) return;
  const out = new Map<string, Image>();
  await Promise.all(
    Object.entries(bytes).map(
      ([key, data]) =>
        new Promise<void>((resolve) => {
          const img = new Image();
          img.onload = () => {
            if (img.width > 0 && img.height > 0) out.set(key, img);
            resolve();
          };
          img.onerror = () => resolve();
          try {
            img.src = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
          } catch {
            resolve();
          }
        }),
    ),
  );
  decoded.set(bytes, out);
}

/** The images loadArt decoded for these bytes (none when it was not called: drawn art throughout). */
export function decodeArt(bytes: Record<string, Uint8Array> | undefined): ArtImages {
  return (bytes && decoded.get(bytes)) || new Map();
}

/** A stable number for a tag, for colouring things we have no id for (a player's club has no badge id). */
export function tagNumber(tag: string): number {
  let h = 0;
  for (const ch of tag) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h;
}

/** Stable, well-spread hue for an id (golden angle), so neighbouring ids differ clearly. */
export function hueOf(id: number): number {
  return Math.round((((id % 1000) * 137.508) % 360) + 360) % 360;
}

/** "EL PRIMO" → "EP", "8-BIT" → "8B", "SHELLY" → "SH", "MR. P" → "MP". */
export function monogram(name: string): string {
  const words = name
    .toUpperCase()
    .split(/[\s.\-&]+/)
    .filter(Boolean);
  if (words.length >= 2) return words.slice(0, 2).map((w) => splitGraphemes(w)[0] ?? '').join('');
  const g = splitGraphemes(words[0] ?? '?');
  return g.slice(0, 2).join('') || '?';
}

function drawImageCover(ctx: Ctx, img: Image, x: number, y: number, w: number, h: number): void {
  const s = Math.max(w / img.width, h / img.height);
  const sw = w / s;
  const sh = h / s;
  ctx.drawImage(img, (img.width - sw) / 2, (img.height - sh) / 2, sw, sh, x, y, w, h);
}

/** A brawler portrait in a rounded square. */
export function brawlerPortrait(
  ctx: Ctx,
  art: ArtImages,
  brawler: { id: number; name: string },
  x: number,
  y: number,
  s: number,
  opts: { dim?: boolean } = {},
): void {
  const img = art.get(artKey('brawler', brawler.id));
  const key = `brawler:${brawler.id}:${brawler.name}:${img ? 'art' : 'drawn'}:${opts.dim ? 'dim' : ''}`;
  cached(ctx, key, x, y, s, s, Math.ceil(s * 0.08), (c) => paintPortrait(c, img, brawler, 0, 0, s, opts));
}

function paintPortrait(
  ctx: Ctx,
  img: Image | undefined,
  brawler: { id: number; name: string },
  x: number,
  y: number,
  s: number,
  opts: { dim?: boolean },
): void {
  const hue = hueOf(brawler.id);
  const r = s * 0.16;
  ctx.save();
  roundRect(ctx, x, y + s * 0.04, s, s, r);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.5)';
  ctx.fill();
  roundRect(ctx, x, y, s, s, r);
  ctx.clip();
  const g = ctx.createLinearGradient(x, y, x + s * 0.4, y + s);
  g.addColorStop(0, `hsl(${hue}, 78%, 62%)`);
  g.addColorStop(1, `hsl(${(hue + 28) % 360}, 70%, 34%)`);
  ctx.fillStyle = g;
  ctx.fillRect(x, y, s, s);
  if (img) {
    drawImageCover(ctx, img, x, y, s, s);
  } else {
    // sheen and a soft ring give the token depth; the monogram names the brawler
    ctx.fillStyle = 'rgba(255, 255, 255, 0.14)';
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + s, y);
    ctx.lineTo(x, y + s * 0.55);
    ctx.closePath();
    ctx.fill();
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.18)';
    ctx.lineWidth = s * 0.05;
    ctx.beginPath();
    ctx.arc(x + s * 0.5, y + s * 0.5, s * 0.36, 0, Math.PI * 2);
    ctx.stroke();
    const text = monogram(brawler.name || String(brawler.id));
    const size = s * (splitGraphemes(text).length > 1 ? 0.42 : 0.5);
    setFont(ctx, font(size, {}, text));
    ctx.textAlign = 'center';
    ctx.lineJoin = 'round';
    ctx.lineWidth = size * 0.16;
    ctx.strokeStyle = THEME.outline;
    ctx.strokeText(text, x + s / 2, y + s / 2 + size * 0.36);
    ctx.fillStyle = '#ffffff';
    ctx.fillText(text, x + s / 2, y + s / 2 + size * 0.36);
  }
  if (opts.dim) {
    ctx.fillStyle = 'rgba(10, 10, 30, 0.55)';
    ctx.fillRect(x, y, s, s);
  }
  ctx.restore();
  roundRect(ctx, x, y, s, s, r);
  ctx.lineWidth = Math.max(1.5, s * 0.04);
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
}

/** The player's profile icon; without art, a token in the icon's hue with the name's first letter. */
export function playerIcon(ctx: Ctx, art: ArtImages, iconId: number | undefined, name: string, x: number, y: number, s: number): void {
  const img = iconId !== undefined ? art.get(artKey('icon', iconId)) : undefined;
  const letter = splitGraphemes(plainName(name).trim())[0] ?? '?';
  uncached(ctx, x, y, s, s, Math.ceil(s * 0.08), (c) => paintPlayerIcon(c, img, iconId, letter, 0, 0, s));
}

function paintPlayerIcon(ctx: Ctx, img: Image | undefined, iconId: number | undefined, letter: string, x: number, y: number, s: number): void {
  const hue = hueOf(iconId ?? 0);
  const r = s * 0.2;
  roundRect(ctx, x, y + s * 0.05, s, s, r);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.5)';
  ctx.fill();
  ctx.save();
  roundRect(ctx, x, y, s, s, r);
  ctx.clip();
  if (img) {
    drawImageCover(ctx, img, x, y, s, s);
  } else {
    const g = ctx.createRadialGradient(x + s * 0.3, y + s * 0.25, s * 0.05, x + s * 0.5, y + s * 0.5, s * 0.8);
    g.addColorStop(0, `hsl(${hue}, 85%, 66%)`);
    g.addColorStop(1, `hsl(${(hue + 40) % 360}, 70%, 30%)`);
    ctx.fillStyle = g;
    ctx.fillRect(x, y, s, s);
    const size = s * 0.56;
    setFont(ctx, font(size, {}, letter));
    ctx.textAlign = 'center';
    ctx.lineJoin = 'round';
    ctx.lineWidth = size * 0.14;
    ctx.strokeStyle = THEME.outline;
    ctx.strokeText(letter.toUpperCase(), x + s / 2, y + s / 2 + size * 0.36);
    ctx.fillStyle = '#ffffff';
    ctx.fillText(letter.toUpperCase(), x + s / 2, y + s / 2 + size * 0.36);
  }
  ctx.restore();
  roundRect(ctx, x, y, s, s, r);
  ctx.lineWidth = Math.max(2, s * 0.045);
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
}

/** The club badge: a shield in the badge's hue with the club's initial, or the real badge art. */
export function clubBadge(ctx: Ctx, art: ArtImages, badgeId: number, name: string, x: number, y: number, s: number): void {
  const img = art.get(artKey('badge', badgeId));
  const letter = splitGraphemes(plainName(name).trim())[0] ?? '?';
  uncached(ctx, x, y, s, s, Math.ceil(s * 0.08), (c) => {
    if (img) c.drawImage(img, 0, 0, s, s);
    else paintBadge(c, badgeId, letter, 0, 0, s);
  });
}

function paintBadge(ctx: Ctx, badgeId: number, letter: string, x: number, y: number, s: number): void {
  const hue = hueOf(badgeId);
  const shield = () => {
    ctx.beginPath();
    ctx.moveTo(x + s * 0.5, y);
    ctx.quadraticCurveTo(x + s * 0.75, y + s * 0.1, x + s * 0.95, y + s * 0.1);
    ctx.lineTo(x + s * 0.92, y + s * 0.55);
    ctx.quadraticCurveTo(x + s * 0.85, y + s * 0.85, x + s * 0.5, y + s);
    ctx.quadraticCurveTo(x + s * 0.15, y + s * 0.85, x + s * 0.08, y + s * 0.55);
    ctx.lineTo(x + s * 0.05, y + s * 0.1);
    ctx.quadraticCurveTo(x + s * 0.25, y + s * 0.1, x + s * 0.5, y);
    ctx.closePath();
  };
  ctx.save();
  ctx.translate(0, s * 0.04);
  shield();
  ctx.fillStyle = 'rgba(0,0,0,0.5)';
  ctx.fill();
  ctx.restore();
  shield();
  const g = ctx.createLinearGradient(x, y, x + s, y + s);
  g.addColorStop(0, `hsl(${hue}, 80%, 62%)`);
  g.addColorStop(1, `hsl(${(hue + 35) % 360}, 72%, 32%)`);
  ctx.fillStyle = g;
  ctx.fill();
  ctx.lineJoin = 'round';
  ctx.lineWidth = Math.max(2, s * 0.05);
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
  ctx.save();
  shield();
  ctx.clip();
  ctx.fillStyle = 'rgba(255,255,255,0.16)';
  ctx.fillRect(x, y, s / 2, s);
  ctx.restore();
  const size = s * 0.5;
  setFont(ctx, font(size, {}, letter));
  ctx.textAlign = 'center';
  ctx.lineWidth = size * 0.14;
  ctx.strokeStyle = THEME.outline;
  ctx.strokeText(letter.toUpperCase(), x + s / 2, y + s * 0.5 + size * 0.34);
  ctx.fillStyle = '#ffffff';
  ctx.fillText(letter.toUpperCase(), x + s / 2, y + s * 0.5 + size * 0.34);
}
