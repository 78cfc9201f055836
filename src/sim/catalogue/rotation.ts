/**
 * The event slot schedule of the simulated world, modelled on the game's: the main slots change
 * map every 24 hours at 08:00 UTC, special slots run for several days from 09:00 UTC, and the PvE
 * slot only runs at weekends. Each period of a slot plays the next mode of `modes` (when it has
 * several) on the next map of that mode.
 */
export interface RotationSlot {
  slotId: number;
  modes: string[];
  /** a new event starts every periodHours */
  periodHours: number;
  /** how long each event runs (≤ periodHours; shorter leaves the slot empty in between) */
  durationHours: number;
  /** first start, in hours after Monday 1970-01-05 00:00 UTC */
  offsetHours: number;
  /** modifiers sent with this slot's events (the API only sends the field on some slots) */
  modifiers?: string[];
  /** how often players pick this slot when they play (relative) */
  popularity: number;
}

export const rotation: readonly RotationSlot[] = [
  { slotId: 1, modes: ['gemGrab'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 14 },
  { slotId: 2, modes: ['soloShowdown'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 16 },
  { slotId: 3, modes: ['brawlBall'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 14 },
  { slotId: 4, modes: ['heist', 'hotZone'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 8 },
  { slotId: 5, modes: ['bounty', 'knockout'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 9 },
  { slotId: 6, modes: ['duoShowdown'], periodHours: 24, durationHours: 24, offsetHours: 8, popularity: 10 },
  { slotId: 8, modes: ['trioShowdown', 'soloShowdown'], periodHours: 24, durationHours: 24, offsetHours: 8, modifiers: ['showdown+'], popularity: 4 },
  { slotId: 10, modes: ['wipeout5V5', 'knockout5V5'], periodHours: 48, durationHours: 48, offsetHours: 8, popularity: 6 },
  { slotId: 20, modes: ['trophyThieves', 'brawlHockey'], periodHours: 168, durationHours: 144, offsetHours: 9, popularity: 5 },
  { slotId: 21, modes: ['duels'], periodHours: 72, durationHours: 72, offsetHours: 9, popularity: 5 },
  { slotId: 22, modes: ['lastStand'], periodHours: 168, durationHours: 72, offsetHours: 4 * 24 + 9, modifiers: ['unknown'], popularity: 3 },
];

/** Share of battles played in the competitive Ranked mode (soloRanked), on the ranked map pool. */
export const rankedShare = 0.12;
/** Share of battles that are friendly games (no trophies, often on map-maker maps). */
export const friendlyShare = 0.03;
