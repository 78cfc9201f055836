/**
 * Name folding and match classes for the player/club search (pure functions).
 *
 * Folding: game colour markup removed, NFKD, combining marks stripped, case folded (upper then
 * lower, which also turns ß into ss), format characters dropped, invisible characters dropped, whitespace collapsed. "Jérôme",
 * "JEROME" and "<c5>jerome</c>" all fold to "jerome".
 */

const MARKUP = /<\/?c[0-9a-f]*>/gi;
const MARKS = /\p{M}+/gu;
/** Control and format characters (zero-width joiners, direction marks) never help a search. */
const INVISIBLE = /[\p{Cc}\p{Cf}]+/gu;
const SPACES = /\s+/gu;

export function foldName(name: string): string {
  return name
    .replace(MARKUP, '')
    .normalize('NFKD')
    .replace(MARKS, '')
    .toUpperCase()
    .toLowerCase()
    .replace(SPACES, ' ')
    .replace(INVISIBLE, '')
    .trim();
}

/** Name without the game's colour markup, for display in search results. */
export function plainName(name: string): string {
  return name.replace(MARKUP, '');
}

/**
 * 0 exact, 1 prefix, 2 word, 3 substring. "Word" means the query's words appear as consecutive
 * words of the name, the last one as a prefix ("dark kn" finds "The Dark-Knight"); "substring"
 * needs at least 3 characters (the trigram index cannot answer shorter ones).
 */
export type MatchClass = 0 | 1 | 2 | 3;

/** Letters, digits and private-use characters form words, as in SQLite's unicode61 tokenizer. */
const NON_WORD = /[^\p{L}\p{N}\p{Co}]+/u;

/** The words of a folded string as SQLite's unicode61 tokenizer sees them. */
export function words(folded: string): string[] {
  return folded.split(NON_WORD).filter((w) => w !== '');
}

export const SUBSTRING_MIN_CHARS = 3;

/** How a folded name matches a folded query, or null when it does not. */
export function matchClass(folded: string, query: string): MatchClass | null {
  if (query === '') return null;
  if (folded === query) return 0;
  if (folded.startsWith(query)) return 1;
  const qw = words(query);
  if (qw.length > 0) {
    const nw = words(folded);
    for (let i = 0; i + qw.length <= nw.length; i++) {
      let ok = true;
      for (let j = 0; j < qw.length && ok; j++) {
        const w = nw[i + j]!;
        ok = j === qw.length - 1 ? w.startsWith(qw[j]!) : w === qw[j];
      }
      if (ok) return 2;
    }
  }
  if ([...query].length >= SUBSTRING_MIN_CHARS && folded.includes(query)) return 3;
  return null;
}
