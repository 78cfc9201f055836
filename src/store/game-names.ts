/**
 * Names of game things (brawlers, gadgets, star powers, hypercharges, gears) as the game last wrote
 * them, from every body that carries them: the `/brawlers` catalogue, player profiles and battle
 * logs. The catalogue alone is not enough: it lacks limited brawlers for good (BUZZ LIGHTYEAR,
 * 16000088, in a 2024-12-24 ranked battle) and every new brawler on its release day until the next
 * catalogue is fetched, while battles and profiles already name them.
 *
 * Ids are the game's global ids (class × 1,000,000 + instance: brawlers 16…, gadgets, star powers and
 * hypercharges 23…, gears 62…), unique across kinds, so one table keyed by id holds them all.
 * A later sighting wins (renames: 16000101 was GLOWBERT, then GLOWY); empty names (the 2024-06
 * null-name quirk) are never recorded.
 */
import type { BattleLogItem, BattlePlayer, Brawler, Player } from '../upstream/schemas.ts';
import { insertMany, type SqlDb, type SqlValue } from './sql.ts';

export interface NameSighting {
  id: number;
  name: string;
  /** unix seconds of the body (or battle) that carried it */
  seen: number;
  /** true for a brawler (false for its items) */
  brawler: boolean;
}

type Named = { id: number; name: string | null } | undefined;

function push(out: NameSighting[], x: Named, seen: number, brawler: boolean): void {
  if (x && typeof x.id === 'number' && typeof x.name === 'string' && x.name.trim() !== '') out.push({ id: x.id, name: x.name, seen, brawler });
}

function pushItems(out: NameSighting[], b: { gadgets?: Named[]; starPowers?: Named[]; hyperCharges?: Named[]; gears?: Named[] }, seen: number): void {
  for (const list of [b.gadgets, b.starPowers, b.hyperCharges, b.gears]) for (const it of list ?? []) push(out, it, seen, false);
}

/** A profile's brawlers and what each has unlocked. */
export function namesOfPlayer(p: Player, seen: number): NameSighting[] {
  const out: NameSighting[] = [];
  for (const b of p.brawlers) {
    push(out, b, seen, true);
    pushItems(out, b, seen);
  }
  return out;
}

/** The catalogue's brawlers and their items. */
export function namesOfCatalogue(list: Brawler[], seen: number): NameSighting[] {
  const out: NameSighting[] = [];
  for (const b of list) {
    push(out, b, seen, true);
    pushItems(out, b, seen);
  }
  return out;
}

/** Every brawler a battle-log item shows (teams, players, duels, the star player, the big brawler). */
export function namesOfBattle(item: BattleLogItem, seen: number): NameSighting[] {
  const out: NameSighting[] = [];
  const b = item.battle;
  if (!b) return out;
  const player = (p: BattlePlayer | null | undefined) => {
    if (!p) return;
    push(out, p.brawler, seen, true);
    for (const x of p.brawlers ?? []) push(out, x, seen, true);
  };
  for (const team of b.teams ?? []) team.forEach(player);
  (b.players ?? []).forEach(player);
  player(b.starPlayer);
  player(b.bigBrawler);
  return out;
}

/**
 * Records sightings (one transaction's worth) and returns the brawler ids recorded for the first
 * time. `known` is the writer's memory of the table (id → name and when it was seen), loaded once;
 * a sighting that repeats what is known is not rewritten unless it is a day newer, which keeps an
 * old backfilled battle from undoing a rename seen since.
 */
export async function recordNames(
  db: SqlDb,
  sightings: NameSighting[],
  known: Map<number, { name: string; seen: number }>,
): Promise<number[]> {
  const latest = new Map<number, NameSighting>();
  for (const s of sightings) {
    const prev = latest.get(s.id);
    if (!prev || s.seen >= prev.seen) latest.set(s.id, s);
  }
  const rows: SqlValue[][] = [];
  const fresh: number[] = [];
  for (const s of latest.values()) {
    const k = known.get(s.id);
    if (k && (s.seen < k.seen || (k.name === s.name && s.seen < k.seen + 86_400))) continue;
    if (!k && s.brawler) fresh.push(s.id);
    rows.push([s.id, s.name, s.seen]);
    known.set(s.id, { name: s.name, seen: s.seen });
  }
  await insertMany(
    db,
    'INSERT INTO game_name (id, name, seen_at)',
    3,
    rows,
    'ON CONFLICT (id) DO UPDATE SET name = excluded.name, seen_at = excluded.seen_at WHERE excluded.seen_at >= game_name.seen_at',
  );
  return fresh.sort((a, b) => a - b);
}
