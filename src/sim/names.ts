/** Invented player names: a nickname in one of the country's scripts, sometimes decorated or coloured. */
import { countries, decorations, markupCodes, nameParts } from './catalogue/index.ts';
import { Salt } from './model.ts';
import { Stream } from './rng.ts';

const byCode = new Map(countries.map((c) => [c.code, c]));

export function playerName(seed: number, i: number, country: string): string {
  const s = new Stream(seed, Salt.Name, i);
  const scripts = byCode.get(country)?.scripts ?? ['latin'];
  // Most players write in their country's first script; some use another one it has, a few Latin.
  const u = s.next();
  const script = u < 0.7 ? scripts[0]! : u < 0.9 ? s.pick(scripts) : 'latin';
  let base = s.pick(nameParts[script]);
  if (s.chance(0.25)) base += s.int(1, 99);
  const prefix = s.pick(decorations.prefixes);
  const suffix = s.pick(decorations.suffixes);
  // A few players colour their name with the game's markup.
  if (s.chance(0.04)) return `<c${s.pick(markupCodes)}>${base}</c>${suffix}`;
  if (s.chance(0.03)) return `${prefix}${base}${suffix} ${s.pick(['🔥', '⭐', '👑', '💎'])}`;
  return `${prefix}${base}${suffix}`;
}
