/**
 * The game catalogue the simulated world is built from. Everything game-specific (brawlers, cards,
 * gears, maps, modes, the slot schedule, countries, name parts) is data in this folder; the world
 * code only combines it.
 */
import { brawlers, type CatalogueBrawler } from './brawlers.ts';
import { gears, type CatalogueGear } from './gears.ts';
import { maps, type CatalogueMap } from './maps.ts';
import { modes, rankedModes, type CatalogueMode } from './modes.ts';

export * from './brawlers.ts';
export * from './gears.ts';
export * from './maps.ts';
export * from './modes.ts';
export * from './people.ts';
export * from './rotation.ts';

export const brawlerById: ReadonlyMap<number, CatalogueBrawler> = new Map(brawlers.map((b) => [b.id, b]));
export const gearById: ReadonlyMap<number, CatalogueGear> = new Map(gears.map((g) => [g.id, g]));
export const modeByName: ReadonlyMap<string, CatalogueMode> = new Map(modes.map((m) => [m.mode, m]));

const mapsByMode = new Map<string, CatalogueMap[]>();
for (const m of maps) {
  const list = mapsByMode.get(m.mode) ?? [];
  list.push(m);
  mapsByMode.set(m.mode, list);
}
export function mapsOfMode(mode: string): readonly CatalogueMap[] {
  return mapsByMode.get(mode) ?? [];
}

/** Maps of the competitive Ranked pool. */
export const rankedMaps: readonly CatalogueMap[] = rankedModes.flatMap((m) => mapsOfMode(m));

/** Gears a brawler can use: the generic ones plus its own. */
export function gearsOf(b: CatalogueBrawler): CatalogueGear[] {
  return gears.filter((g) => g.generic || b.gears.includes(g.id));
}
