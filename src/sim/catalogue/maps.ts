/**
 * Maps of the simulated world: real map names with the mode they are played in. Event/map ids live
 * in the 15000000+ space. The ids of maps seen in captured API data are the real ones (15000005,
 * 15000007–15000011, 15000013, 15000015, 15000019, 15000025, 15000026, 15000050, 15000123, 15000292,
 * 15000306, 15000720, 15000923, 15001003, 15001036); the
 * others are allocated from 15009000 upwards, clear of the ids the game has used so far.
 */
export interface CatalogueMap {
  id: number;
  name: string;
  /** API mode string of the event (modes.ts) */
  mode: string;
}

type ModeMaps = [mode: string, maps: (string | [number, string])[]];

const byMode: ModeMaps[] = [
  ['gemGrab', [[15000007, 'Hard Rock Mine'], [15000008, 'Crystal Arcade'], [15000009, 'Deathcap Trap'], [15000010, 'Gem Fort'],
    [15000011, 'Undermine'], 'Double Swoosh', 'Last Stop', 'Rustic Arcade', 'Minecart Madness']],
  ['brawlBall', [[15000026, 'Pinhole Punt'], [15000025, 'Triple Dribble'], [15000050, 'Sneaky Fields'], 'Backyard Bowl',
    'Center Stage', 'Super Beach', 'Penalty Kick', 'Beach Ball', 'Pinball Dreams', 'Super Stadium']],
  ['heist', [[15000019, 'Safe Zone'], 'Hot Potato', 'Kaboom Canyon', 'Bridge Too Far', 'Pit Stop']],
  ['bounty', [[15000005, 'Shooting Star'], 'Hideout', 'Layer Cake', 'Dry Season', 'Excel']],
  ['hotZone', [[15000292, 'Open Business'], [15000306, 'Dueling Beetles'], 'Ring of Fire', 'Parallel Plays', 'Split']],
  ['knockout', ['Goldarm Gulch', "Belle's Rock", 'Flaring Phoenix', 'Out in the Open', 'New Horizons', 'Deep End']],
  ['soloShowdown', [[15000013, 'Skull Creek'], [15000015, 'Rockwall Brawl'], [15000123, 'Flying Fantasies'], 'Cavern Churn',
    'Double Trouble', 'Feast or Famine', 'Stocky Stockades', 'Safety Center', 'Acid Lakes', 'Dark Passage']],
  ['duoShowdown', ['Skull Creek', 'Rockwall Brawl', 'Flying Fantasies', 'Cavern Churn', 'Double Trouble', 'Feast or Famine',
    'Stocky Stockades', 'Safety Center', 'Acid Lakes', 'Dark Passage']],
  ['trioShowdown', ['Skull Creek', 'Cavern Churn', 'Double Trouble', 'Feast or Famine', 'Acid Lakes']],
  ['wipeout5V5', [[15000720, 'Riverbank Crossing']]],
  ['knockout5V5', [[15000923, 'Unhappy Arena']]],
  ['duels', ['Eggshell', "Warrior's Way"]],
  ['trophyThieves', [[15001036, 'Thin Walls']]],
  ['brawlHockey', ['Cool Box', 'Below Zero', 'Starr Garden', 'Super Center']],
  ['lastStand', [[15001003, 'Wasabi in the Eyes']]],
];

let next = 15009000;
export const maps: readonly CatalogueMap[] = byMode.flatMap(([mode, list]) =>
  list.map((m) => (typeof m === 'string' ? { id: next++, name: m, mode } : { id: m[0], name: m[1], mode })),
);
