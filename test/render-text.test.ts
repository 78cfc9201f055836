/**
 * Names in every script draw real glyphs (no empty boxes, no blanks), and game colour markup is
 * drawn as colour, never printed.
 */
import { createCanvas } from '@napi-rs/canvas';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drawName, makeCanvas, splitGraphemes, type Ctx } from '../src/render/draw.ts';
import { ensureFonts, familiesFor, font } from '../src/render/fonts.ts';
import { parseMarkup, plainName } from '../src/render/markup.ts';

ensureFonts();

/** Names the way players write them, one script (or habit) each. */
const NAMES: Record<string, string> = {
  latin: 'Rika Zoë Łukasz Ærøskøbing',
  cyrillic: 'Тимур Лёша Жора',
  greek: 'Ελένη Σωκράτης',
  arabic: 'محمد العربي',
  hebrew: 'שירה כהן',
  chinese: '王小明 乂NOVA 亗',
  japanese: 'さくら カタカナ 日本',
  korean: '김민수 한국',
  thai: 'สมชาย ไทย',
  emoji: '⭐🦉🔥👑😎💀✨🇫🇷👨‍👩‍👧',
  decorated: '꧁Ninja꧂ ✿♛★☆ ᴮᴿ 𝓡𝓸𝔁 Ⓡⓘⓚⓐ ｒｉｋａ',
};

/** Scripts Lilita One does not have and no system font on a bare machine supplies. */
const ONLY_FROM_FALLBACKS = ['chinese', 'japanese', 'korean', 'thai', 'emoji'];

/** Pixels of one grapheme drawn alone, as RGBA bytes, and how many are inked. */
function draw(text: string, fallback = true): { ink: number; data: Uint8ClampedArray } {
  const c = createCanvas(96, 64);
  const ctx = c.getContext('2d');
  ctx.font = font(40, { fallback }, text);
  ctx.fillStyle = '#ffffff';
  ctx.fillText(text, 8, 46);
  const data = ctx.getImageData(0, 0, 96, 64).data;
  let ink = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) ink++;
  return { ink, data };
}

/** What a character no font has looks like (U+E000 is private use: in none of ours). */
const missing = draw('\ue000');

function sameBitmap(a: Uint8ClampedArray, b: Uint8ClampedArray): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

describe('every script draws real glyphs', () => {
  it('a character no font has draws nothing: a blank is how a missing glyph shows up here', () => {
    expect(missing.ink).toBe(0);
  });

  for (const [script, name] of Object.entries(NAMES)) {
    it(`${script}: every grapheme of ${JSON.stringify(name)} has ink and is not the missing glyph`, () => {
      const blanks = splitGraphemes(name)
        .filter((g) => g.trim() !== '')
        .filter((g) => {
          const d = draw(g);
          return d.ink === 0 || sameBitmap(d.data, missing.data);
        });
      expect(blanks).toEqual([]);
    });
  }

  it('the fallback fonts are what fills those gaps: with Lilita One alone they come out blank', () => {
    for (const script of ONLY_FROM_FALLBACKS) {
      const blank = splitGraphemes(NAMES[script]!)
        .filter((g) => g.trim() !== '')
        .filter((g) => draw(g, false).ink === 0);
      expect({ script, blank: blank.length > 0 }).toEqual({ script, blank: true });
    }
  });

  it('plain Latin text and numbers ask for no fallback family (they stay fast)', () => {
    expect(familiesFor('SHELLY 1,397 #2PP0GQ9LU')).toEqual([]);
    expect(familiesFor('王')).toSatisfy((fs: string[]) => fs.some((f) => f.startsWith('Starr SC ')));
    expect(familiesFor('김')).toSatisfy((fs: string[]) => fs.some((f) => f.startsWith('Starr KR ')));
    expect(familiesFor('⭐')).toSatisfy((fs: string[]) => fs.some((f) => f.startsWith('Starr Emoji ')));
  });
});

describe('game colour markup', () => {
  it('parses colour codes, hex colours, nesting and unclosed tags; leaves look-alikes alone', () => {
    expect(parseMarkup('<c5>Just</c>Win')).toEqual([{ text: 'Just', color: '#ffe14a' }, { text: 'Win' }]);
    expect(parseMarkup('<cff00aa>pink</c> <c2>a<c1>b</c>c</c>')).toEqual([
      { text: 'pink', color: '#ff00aa' },
      { text: ' ' },
      { text: 'a', color: '#58e05c' },
      { text: 'b', color: '#ff4b4b' },
      { text: 'c', color: '#58e05c' },
    ]);
    expect(parseMarkup('<c7>TOP ONE')).toEqual([{ text: 'TOP ONE', color: '#ff9a3a' }]);
    expect(plainName('<cool> <3 </b>')).toBe('<cool> <3 </b>');
  });

  it('never prints a tag, whatever the name', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom('<c1>', '<c9>', '</c>', '<cabcdef>', '</c5>')), { maxLength: 8 }), (parts) => {
        const out = plainName(parts.join(''));
        expect(out).not.toMatch(/<c[0-9]>|<c[0-9a-fA-F]{6}>|<\/c[0-9]?>/);
      }),
    );
  });

  it('draws the coloured part in its colour and the tags not at all', () => {
    const { canvas, ctx } = makeCanvas(400, 80, 'high');
    ctx.fillStyle = '#000000';
    ctx.fillRect(0, 0, 400, 80);
    const width = drawName(ctx as Ctx, '<c1>RED</c>white', 10, 55, { size: 40, outline: 0, shadow: false });
    const plain = makeCanvas(400, 80, 'high').ctx;
    const plainWidth = drawName(plain as Ctx, 'REDwhite', 10, 55, { size: 40, outline: 0, shadow: false });
    expect(width).toBeCloseTo(plainWidth, 1);
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let red = 0;
    let white = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i]! > 200 && px[i + 1]! < 110 && px[i + 2]! < 110) red++;
      if (px[i]! > 230 && px[i + 1]! > 230 && px[i + 2]! > 230) white++;
    }
    expect(red).toBeGreaterThan(200);
    expect(white).toBeGreaterThan(200);
  });
});

describe('any name, any numbers', () => {
  it('pictures render whatever players call themselves and whatever the API quirks send', async () => {
    const { renderPng } = await import('../src/render/index.ts');
    const { PNG } = await import('pngjs');
    const brawler = fc.record({
      id: fc.integer({ min: 16000000, max: 16000120 }),
      name: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('')),
      power: fc.integer({ min: -1, max: 11 }),
      rank: fc.integer({ min: -1, max: 60 }),
      trophies: fc.integer({ min: -1, max: 5000 }),
      highestTrophies: fc.integer({ min: -1, max: 5000 }),
      gadgets: fc.constant([]),
      gears: fc.constant([]),
      starPowers: fc.constant([]),
    });
    const player = fc.record({
      tag: fc.constant('#2PP0GQ9LU'),
      name: fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.constant('<c5>'), fc.constant('')),
      nameColor: fc.oneof(fc.constant('0xffff9727'), fc.constant('garbage')),
      trophies: fc.integer({ min: -1, max: 200000 }),
      highestTrophies: fc.integer({ min: 0, max: 200000 }),
      expLevel: fc.integer({ min: 0, max: 999 }),
      '3vs3Victories': fc.integer({ min: 0, max: 1e6 }),
      soloVictories: fc.integer({ min: 0, max: 1e6 }),
      duoVictories: fc.integer({ min: 0, max: 1e6 }),
      club: fc.oneof(fc.constant({}), fc.record({ tag: fc.constant('#8QJR2YUC'), name: fc.string({ unit: 'grapheme', maxLength: 30 }) })),
      brawlers: fc.array(brawler, { maxLength: 12 }),
    });
    await fc.assert(
      fc.asyncProperty(player, fc.constantFrom(1, 3, 8, 41), async (p, option) => {
        const png = PNG.sync.read(await renderPng({ kind: 'playerImage', option, quality: 'low', input: { player: p as never } }));
        expect(png.width).toBeGreaterThan(0);
      }),
      { numRuns: 12 },
    );
  });
});
