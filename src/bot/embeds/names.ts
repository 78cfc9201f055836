/**
 * Display names for the game's API identifiers. The API writes modes in camelCase
 * (`brawlBall`, `wipeout5V5`) and brawlers and gear in capitals (`EL PRIMO`); Discord text reads
 * better in title case. Names come from the data; nothing here lists brawlers or modes.
 */

import type { Format } from '../format.ts';

const SMALL = new Set(['of', 'the', 'and', 'a', 'in', 'on', 'to', 'for']);

/** `EL PRIMO` → `El Primo`, `8-BIT` → `8-Bit`, `MR. P` → `Mr. P`. */
export function titleCase(s: string): string {
  return s
    .toLowerCase()
    .split(/(\s+|-)/)
    .map((w, i) => (i > 0 && SMALL.has(w) ? w : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('')
    .replace(/\n/g, ' ');
}

/**
 * `brawlBall` → `Brawl Ball`, `wipeout5V5` → `Wipeout 5v5`, `soloShowdown` → `Solo Showdown`. A
 * mode the API does not name is a special event, in the reader's words.
 */
export function modeName(mode: string | undefined, fmt: Format): string {
  if (!mode || mode === 'unknown') return fmt.t('mode.unknown');
  const spaced = mode
    .replace(/([a-z])(\d)/g, '$1 $2')
    .replace(/(\d)V(\d)/g, '$1v$2')
    .replace(/([a-z])([A-Z])/g, '$1 $2');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** `inviteOnly` → `Invite only`, `vicePresident` → `Vice president`. */
export function enumName(s: string): string {
  const spaced = s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}
