/**
 * Fonts for every picture: the game's display face (Lilita One) first, then fallbacks shipped as npm
 * packages so a player name in any script draws real glyphs instead of nothing.
 *
 * Fontsource splits each family into unicode-range subsets (one woff2 per subset); Skia treats every
 * file registered under one alias as one family and picks, per character, the typeface that has it.
 * Lilita One only covers Latin, so Cyrillic, Greek, Arabic, Hebrew, Thai, Javanese (꧁ ꧂), CJK (simplified Chinese, then Japanese for rarer ideographs), Hangul,
 * symbols, math letters (𝓡) and colour emoji come from Noto. Fallbacks use the heaviest weight that
 * exists so they sit next to Lilita's chunky letters without looking thin.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readdirSync } from 'node:fs';
import { GlobalFonts } from '@napi-rs/canvas';

export const DISPLAY_FAMILY = 'Lilita One';

interface FallbackPackage {
  /** our alias for the family */
  family: string;
  /** npm package under @fontsource */
  pkg: string;
  /** the weight whose files we register */
  weight: number;
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
  { family: 'Starr Emoji', pkg: 'noto-color-emoji', weight: 400 },
  { family: 'Starr Symbols', pkg: 'noto-sans-symbols', weight: 800 },
  { family: 'Starr Symbols 2', pkg: 'noto-sans-symbols-2', weight: 400 },
  { family: 'Starr Math', pkg: 'noto-sans-math', weight: 400 },
];

export const FALLBACK_FAMILIES: readonly string[] = FALLBACKS.map((f) => f.family);

const require = createRequire(import.meta.url);

function filesOf(pkg: string, weight: number): string[] {
  const dir = join(dirname(require.resolve(`@fontsource/${pkg}/package.json`)), 'files');
  return readdirSync(dir)
    .filter((f) => f.endsWith(`-${weight}-normal.woff2`))
    .sort()
    .map((f) => join(dir, f));
}

let registered = false;

/** Registers every font once per thread (cheap to call again). Throws when a font package is missing. */
export function ensureFonts(): void {
  if (registered) return;
  for (const file of filesOf('lilita-one', 400)) GlobalFonts.registerFromPath(file, DISPLAY_FAMILY);
  for (const f of FALLBACKS) {
    const files = filesOf(f.pkg, f.weight);
    if (files.length === 0) throw new Error(`font package @fontsource/${f.pkg} has no ${f.weight} weight files`);
    for (const file of files) GlobalFonts.registerFromPath(file, f.family);
  }
  registered = true;
}

export interface FontOptions {
  /** false draws with Lilita One alone: tests use it to prove the fallbacks are what fills the gaps */
  fallback?: boolean;
}

/**
 * Which fallback families a text needs. Naming a family costs Skia a lookup over all its typefaces on
 * every new text or size (CJK families have a hundred subset files each: ~1 ms per text with every
 * family listed, 0.02 ms with Lilita One alone), so a text lists only the families its characters
 * call for. Plain Latin text and numbers use the display face alone.
 */
const NEEDS: readonly [family: string, test: RegExp][] = [
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
];

/** The fallback families `text` needs, in fallback order. */
export function familiesFor(text: string): string[] {
  if (/^[\u0020-\u007e]*$/.test(text)) return [];
  return NEEDS.filter(([, re]) => re.test(text)).map(([family]) => family);
}

/**
 * A CSS font string for the display face at `size` CSS pixels, plus the fallbacks `text` needs
 * (every fallback when no text is given). Sizes snap to half pixels so layouts are reused.
 */
export function font(size: number, opts: FontOptions = {}, text?: string): string {
  const fallbacks = opts.fallback === false ? [] : text === undefined ? FALLBACK_FAMILIES : familiesFor(text);
  return `${Math.round(size * 2) / 2}px ${[DISPLAY_FAMILY, ...fallbacks].map((f) => `"${f}"`).join(', ')}`;
}
