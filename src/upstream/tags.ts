/**
 * Player and club tags. The game writes them as `#` + characters of a 14-letter alphabet; users
 * type them with or without `#`, URL-encoded as `%23`, in any case, and often with the letter O
 * for the digit 0.
 */

export const TAG_ALPHABET = '0289PYLQGRJCUV';
const DIGIT = new Map([...TAG_ALPHABET].map((c, i) => [c, BigInt(i)]));
const BASE = BigInt(TAG_ALPHABET.length);

/** Real tags are 3 to about 10 characters; 14 leaves room without accepting junk. */
export const TAG_MIN_LENGTH = 3;
export const TAG_MAX_LENGTH = 14;

/** Canonical form without `#`: decoded, trimmed, uppercase, O→0. Does not validate. */
export function normaliseTag(input: string): string {
  let s = input.trim();
  // `%23` is the URL-encoded `#`; decode it even when it reaches us still encoded, double encoding
  // (`%2523`) too. Every pass shortens the string, so the loop ends, and at a fixpoint (idempotent).
  while (/%2[35]/i.test(s)) s = s.replace(/%25/gi, '%').replace(/%23/gi, '#');
  // `# ABC` (a space after the hash, as people type it) is the tag ABC: the hashes and the blanks
  // between them go together, so a second pass finds nothing more to remove
  return s.replace(/^[#\s]+/, '').toUpperCase().replace(/O/g, '0');
}

export type TagProblem = 'empty' | 'too_short' | 'too_long' | 'bad_characters';

/** Why a (normalised) tag is not valid, or null when it is. */
export function tagProblem(normalised: string): TagProblem | null {
  if (normalised.length === 0) return 'empty';
  if (!/^[0289PYLQGRJCUV]+$/.test(normalised)) return 'bad_characters';
  if (normalised.length < TAG_MIN_LENGTH) return 'too_short';
  if (normalised.length > TAG_MAX_LENGTH) return 'too_long';
  return null;
}

export function isValidTag(input: string): boolean {
  return tagProblem(normaliseTag(input)) === null;
}

/** Human explanation of a tag problem, shared by the HTTP API, the bot and the CLI. */
export function explainTagProblem(problem: TagProblem): string {
  switch (problem) {
    case 'empty':
      return 'A tag is required.';
    case 'too_short':
      return `A tag has at least ${TAG_MIN_LENGTH} characters.`;
    case 'too_long':
      return `A tag has at most ${TAG_MAX_LENGTH} characters.`;
    case 'bad_characters':
      return `A tag uses only the characters ${TAG_ALPHABET.split('').join(' ')} (the letter O is read as zero).`;
  }
}

export class InvalidTagError extends Error {
  constructor(
    readonly input: string,
    readonly problem: TagProblem,
  ) {
    super(`Invalid tag ${JSON.stringify(input)}: ${explainTagProblem(problem)}`);
    this.name = 'InvalidTagError';
  }
}

/** Normalises and validates; returns the tag with its leading `#` (the form in API bodies). */
export function parseTag(input: string): string {
  const n = normaliseTag(input);
  const problem = tagProblem(n);
  if (problem) throw new InvalidTagError(input, problem);
  return `#${n}`;
}

/** `#ABC` → `%23ABC`, the form the official API takes in paths. */
export function encodeTagForPath(tag: string): string {
  return `%23${normaliseTag(tag)}`;
}

/** The tag read as a base-14 number in the game's digit order (as community tools compute it). */
export function tagToId(tag: string): bigint {
  const n = normaliseTag(tag);
  if (tagProblem(n) === 'bad_characters' || n.length === 0) throw new InvalidTagError(tag, tagProblem(n) ?? 'empty');
  let id = 0n;
  for (const c of n) id = id * BASE + DIGIT.get(c)!;
  return id;
}

/** Inverse of tagToId for ids of real tags (tags never start with the zero digit). */
export function idToTag(id: bigint): string {
  if (id <= 0n) throw new RangeError('tag ids are positive');
  let s = '';
  let v = id;
  while (v > 0n) {
    s = TAG_ALPHABET[Number(v % BASE)] + s;
    v /= BASE;
  }
  return `#${s}`;
}

/** Server/region part (`high`) and account part (`low`) of a tag id. */
export function splitTagId(id: bigint): { high: number; low: number } {
  return { high: Number(id % 256n), low: Number(id >> 8n) };
}
