/**
 * Fonts for every picture: the game's display face (Lilita One) first, then fallbacks shipped as npm
 * packages so a player name in any script draws real glyphs instead of nothing.
 *
 * Fontsource splits each family into unicode-range subsets (one woff2 per subset, listed with its
 * range in the package's unicode.json). Each subset file is registered under its own alias and a
 * text names only the subsets that cover its characters: Skia then falls back through that list per
 * character. (Registering several files under one alias would make Skia use one of them for every
 * character, so the other subsets would draw as missing glyphs.)
 * Lilita One only covers Latin, so Cyrillic, Greek, Arabic, Hebrew, Thai, Javanese (꧁ ꧂), CJK (simplified Chinese, then Japanese for rarer ideographs), Hangul,
 * symbols, math letters (𝓡) and colour emoji come from Noto. Fallbacks use the heaviest weight that
 * exists so they sit next to Lilita's chunky letters without looking thin.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { GlobalFonts } from '@napi-rs/canvas';

export const DISPLAY_FAMILY = 'Lilita One';

interface FallbackPackage {
  /** our alias for the family */
  family: string;
  /** npm package under @fontsource */
  pkg: string;
  /** the weight whose files we register */
  weight: number;
  /** file format (default woff2; the colour emoji's COLR tables only load from woff in this Skia) */
  format?: 'woff' | 'woff2';
}

/**
 * The order is the order Skia tries them in for a character Lilita One lacks. Colour emoji comes
 * before the monochrome symbol fonts so `⭐` in a name is the yellow star players see in the game.
 */
const FALLBACKS: readonly FallbackPackage[] = [
  { family: 'Starr Sans', pkg: 'noto-sans', weight: 800 },
  { family: 'Starr Arabic', pkg: 'noto-sans-arabic', weight: 800 },
  { family: 'Starr Hebrew', pkg: 'noto-sans-hebrew', weight: 800 },
  { family: 'Starr Thai', pkg: 'noto-sans-thai', weight: 800 },
  { family: 'Starr Javanese', pkg: 'noto-sans-javanese', weight: 700 },
  { family: 'Starr SC', pkg: 'noto-sans-sc', weight: 800 },
  // Japanese subset of CJK has rare ideographs the simplified Chinese one lacks (亗 in names)
  { family: 'Starr JP', pkg: 'noto-sans-jp', weight: 800 },
  { family: 'Starr KR', pkg: 'noto-sans-kr', weight: 800 },
  { family: 'Starr Emoji', pkg: 'noto-color-emoji', weight: 400, format: 'woff' },
  { family: 'Starr Symbols', pkg: 'noto-sans-symbols', weight: 800 },
  { family: 'Starr Symbols 2', pkg: 'noto-sans-symbols-2', weight: 400 },
  { family: 'Starr Math', pkg: 'noto-sans-math', weight: 400 },
];

const require = createRequire(import.meta.url);

/** One registered subset file: its alias and the code points it covers. */
interface Face {
  alias: string;
  file: string;
  ranges: [number, number][];
}

function parseRanges(css: string): [number, number][] {
  return css.split(',').map((part) => {
    const [lo, hi] = part.trim().replace(/^U\+/i, '').split('-');
    return [parseInt(lo!, 16), parseInt(hi ?? lo!, 16)] as [number, number];
  });
}

/** The subset files of one fontsource package at one weight, each with its alias and range. */
function facesOf(family: string, pkg: string, weight: number, format: 'woff' | 'woff2' = 'woff2'): Face[] {
  const root = dirname(require.resolve(`@fontsource/${pkg}/package.json`));
  const unicode = JSON.parse(readFileSync(join(root, 'unicode.json'), 'utf8')) as Record<string, string>;
  const files = new Set(readdirSync(join(root, 'files')));
  const faces: Face[] = [];
  for (const [subset, range] of Object.entries(unicode)) {
    const key = subset.replace(/^\[(\d+)\]$/, '$1');
    const file = `${pkg}-${key}-${weight}-normal.${format}`;
    if (!files.has(file)) continue;
    faces.push({ alias: `${family} ${key}`, file: join(root, 'files', file), ranges: parseRanges(range) });
  }
  if (faces.length === 0) throw new Error(`font package @fontsource/${pkg} has no ${weight} weight files`);
  // numbered subsets (CJK, emoji) in numeric order, so lookups are stable
  return faces.sort((x, y) => x.alias.localeCompare(y.alias, 'en', { numeric: true }));
}

const covers = (face: Face, cp: number) => face.ranges.some(([lo, hi]) => cp >= lo && cp <= hi);

interface FontTable {
  /** Lilita One's basic Latin subset: the display face itself */
  main: Face;
  /** every fallback subset in fallback order (Lilita's Latin Extended first), each with its package */
  fallbacks: (Face & { family: string })[];
  /** the fallback packages in order, with the index of their first subset in `fallbacks` */
  packages: { family: string; faces: Face[]; at: number }[];
}

let table: FontTable | undefined;

function fontTable(): FontTable {
  if (!table) {
    const lilita = facesOf(DISPLAY_FAMILY, 'lilita-one', 400);
    const main = lilita.find((f) => f.alias === `${DISPLAY_FAMILY} latin`) ?? lilita[0]!;
    const fallbacks: FontTable['fallbacks'] = lilita.filter((f) => f !== main).map((f) => ({ ...f, family: DISPLAY_FAMILY }));
    const packages = FALLBACKS.map((f) => {
      const faces = facesOf(f.family, f.pkg, f.weight, f.format);
      const at = fallbacks.length;
      fallbacks.push(...faces.map((face) => ({ ...face, family: f.family })));
      return { family: f.family, faces, at };
    });
    table = { main: { ...main, alias: DISPLAY_FAMILY }, fallbacks, packages };
  }
  return table;
}

let registered = false;
/** fallback subsets registered so far (indexes into the table's fallbacks) */
const registeredFallbacks = new Set<number>();

/**
 * Registers the display face once per thread (cheap to call again); fallback subsets are registered
 * when a text first needs them (`familiesFor`). Skia keeps every registered file decoded in memory:
 * registering all ~400 subsets up front cost each render worker 35 MB, most of it CJK and emoji
 * subsets a picture of Latin names never draws. Throws when a font package is missing.
 */
export function ensureFonts(): void {
  if (registered) return;
  const t = fontTable();
  GlobalFonts.registerFromPath(t.main.file, t.main.alias);
  registered = true;
}

function registerFallback(t: FontTable, i: number): void {
  if (registeredFallbacks.has(i)) return;
  const face = t.fallbacks[i]!;
  GlobalFonts.registerFromPath(face.file, face.alias);
  registeredFallbacks.add(i);
}

export interface FontOptions {
  /** false draws with Lilita One alone: tests use it to prove the fallbacks are what fills the gaps */
  fallback?: boolean;
}

/**
 * Which fallback packages a character belongs to (by script), in fallback order. Naming a family
 * costs Skia a lookup on every new text or size (CJK packages have a hundred subsets each), so a text
 * lists only the subsets its characters call for. Plain Latin text and numbers use the display face
 * alone.
 */
const NEEDS = new Map<string, RegExp>([
  ['Starr Sans', /[^\u0000-\u00ff\u2013\u2014\u2018-\u201e\u2022\u2026\u00b7]/u],
  ['Starr Arabic', /\p{Script=Arabic}/u],
  ['Starr Hebrew', /\p{Script=Hebrew}/u],
  ['Starr Thai', /\p{Script=Thai}/u],
  ['Starr Javanese', /\p{Script=Javanese}/u],
  ['Starr SC', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Bopomofo}\u3000-\u303f\u3200-\u33ff\uff00-\uffef\u2460-\u24ff]/u],
  ['Starr JP', /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['Starr KR', /\p{Script=Hangul}/u],
  ['Starr Emoji', /[\p{Extended_Pictographic}\p{Regional_Indicator}\u20e3\ufe0f]/u],
  ['Starr Symbols', /[\p{So}\p{Sm}\u2460-\u24ff]/u],
  ['Starr Symbols 2', /[\p{So}\p{Sm}]/u],
  ['Starr Math', /[\u{1d400}-\u{1d7ff}\p{Sm}]/u],
]);

const perCodePoint = new Map<number, number[]>();

/**
 * Indexes (into the table's fallbacks) of the subsets that may draw `cp`: Lilita's own extended Latin,
 * then, for each fallback package whose script the character belongs to, the subsets whose range
 * covers it (or, for a small package whose ranges do not list it, all of its subsets).
 */
function facesFor(cp: number): number[] {
  let hit = perCodePoint.get(cp);
  if (hit) return hit;
  const t = fontTable();
  hit = [];
  t.fallbacks.forEach((f, i) => f.family === DISPLAY_FAMILY && covers(f, cp) && hit!.push(i));
  const ch = String.fromCodePoint(cp);
  const scripted = t.packages.filter((p) => NEEDS.get(p.family)?.test(ch));
  for (const p of scripted) p.faces.forEach((f, i) => covers(f, cp) && hit!.push(p.at + i));
  // no subset lists it: try every subset of the small packages of its script (Noto Sans Math's
  // single subset holds the math alphabets its range does not mention)
  if (hit.length === 0) for (const p of scripted) if (p.faces.length <= 8) p.faces.forEach((_, i) => hit!.push(p.at + i));
  perCodePoint.set(cp, hit);
  return hit;
}

/** The fallback aliases `text` needs, in fallback order (none for text Lilita One draws alone). */
export function familiesFor(text: string): string[] {
  if (/^[\u0020-\u007e]*$/.test(text)) return [];
  const t = fontTable();
  const wanted = new Set<number>();
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x7f || covers(t.main, cp)) continue;
    for (const i of facesFor(cp)) wanted.add(i);
  }
  const order = [...wanted].sort((x, y) => x - y);
  for (const i of order) registerFallback(t, i);
  return order.map((i) => t.fallbacks[i]!.alias);
}

/** The quoted CSS family list for `text`: the display face plus the fallbacks its characters need. */
export function fontFamily(text: string, opts: FontOptions = {}): string {
  const fallbacks = opts.fallback === false ? [] : familiesFor(text);
  return [DISPLAY_FAMILY, ...fallbacks].map((f) => `"${f}"`).join(', ');
}

/** A CSS font string for the display face at `size` CSS pixels plus the fallbacks `text` needs. Sizes snap to half pixels so layouts are reused. */
export function font(size: number, opts: FontOptions, text: string): string {
  return `${Math.round(size * 2) / 2}px ${fontFamily(text, opts)}`;
}
