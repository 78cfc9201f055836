import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidTagError,
  TAG_ALPHABET,
  encodeTagForPath,
  idToTag,
  isValidTag,
  normaliseTag,
  parseTag,
  tagProblem,
  tagToId,
} from '../src/upstream/tags.ts';

/** Canonical tags: alphabet characters, not starting with the zero digit (ids drop leading zeros). */
const canonical = fc
  .tuple(
    fc.constantFrom(...TAG_ALPHABET.slice(1)),
    fc.array(fc.constantFrom(...TAG_ALPHABET), { minLength: 2, maxLength: 11 }),
  )
  .map(([first, rest]) => first + rest.join(''));

/** The ways users write one tag: `#`, `%23`, lower case, the letter O for zero, spaces around. */
const spelling = (tag: string) =>
  fc
    .record({
      prefix: fc.constantFrom('', '#', '%23', '%2523', '##'),
      lower: fc.boolean(),
      letterO: fc.boolean(),
      pad: fc.constantFrom('', ' ', '\t'),
    })
    .map(({ prefix, lower, letterO, pad }) => {
      let s = letterO ? tag.replace(/0/g, 'O') : tag;
      if (lower) s = s.toLowerCase();
      return `${pad}${prefix}${s}${pad}`;
    });

describe('tag helpers (properties)', () => {
  it('normalise is idempotent on any input', () => {
    fc.assert(fc.property(fc.string(), (s) => normaliseTag(normaliseTag(s)) === normaliseTag(s)));
  });

  it('every spelling of a tag normalises to the same canonical form', () => {
    fc.assert(fc.property(canonical.chain((t) => fc.tuple(fc.constant(t), spelling(t))), ([t, written]) => normaliseTag(written) === t));
  });

  it('tagToId and idToTag round-trip', () => {
    fc.assert(fc.property(canonical, (t) => idToTag(tagToId(t)) === `#${t}`));
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 14n ** 14n - 1n }), (id) => tagToId(idToTag(id)) === id));
  });

  it('parseTag accepts exactly the valid tags and returns them with #', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (s) => {
        const valid = tagProblem(normaliseTag(s)) === null;
        if (valid) return parseTag(s) === `#${normaliseTag(s)}`;
        expect(() => parseTag(s)).toThrow(InvalidTagError);
        return true;
      }),
    );
  });

  it('the path form is %23 + canonical, whatever the spelling', () => {
    fc.assert(fc.property(canonical.chain((t) => fc.tuple(fc.constant(t), spelling(t))), ([t, written]) => encodeTagForPath(written) === `%23${t}`));
  });
});

describe('tag helpers (examples)', () => {
  it('reads the usual spellings', () => {
    expect(parseTag('#2pp0gq9lu')).toBe('#2PP0GQ9LU');
    expect(parseTag('%232PPOGQ9LU')).toBe('#2PP0GQ9LU');
    // a space after the hash, as people type it; and normalising twice changes nothing more
    expect(parseTag('# 2pp0gq9lu')).toBe('#2PP0GQ9LU');
    expect(normaliseTag(normaliseTag('# !'))).toBe(normaliseTag('# !'));
    expect(isValidTag('2PP')).toBe(true);
  });

  it('names the problem of a bad tag', () => {
    expect(tagProblem(normaliseTag(''))).toBe('empty');
    expect(tagProblem(normaliseTag('#2P'))).toBe('too_short');
    expect(tagProblem(normaliseTag('#ABC'))).toBe('bad_characters');
    expect(tagProblem(normaliseTag('#'.padEnd(16, '2')))).toBe('too_long');
    expect(() => parseTag('#ABC')).toThrow(/only the characters/);
  });

  it('numbers a tag in base 14 in the game digit order', () => {
    expect(tagToId('#2')).toBe(1n);
    expect(tagToId('#20')).toBe(14n);
    expect(idToTag(15n)).toBe('#22');
  });
});
