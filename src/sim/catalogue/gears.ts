/**
 * Gears (62000000+, reference/upstream-api.md §12). `generic` gears can be put on every brawler;
 * the others belong to the brawlers that list them in brawlers.ts.
 */
export interface CatalogueGear {
  id: number;
  name: string;
  generic: boolean;
}

export const gears: readonly CatalogueGear[] = [
  { id: 62000000, name: 'SPEED', generic: true },
  { id: 62000001, name: 'HEALTH', generic: true },
  { id: 62000002, name: 'DAMAGE', generic: true },
  { id: 62000003, name: 'VISION', generic: true },
  { id: 62000004, name: 'SHIELD', generic: true },
  { id: 62000005, name: 'RELOAD SPEED', generic: true },
  { id: 62000006, name: 'SUPER CHARGE', generic: true },
  { id: 62000007, name: 'THICC HEAD', generic: false },
  { id: 62000008, name: 'TALK TO THE HAND', generic: false },
  { id: 62000009, name: 'ENDURING TOXINS', generic: false },
  { id: 62000010, name: 'STICKY SPIKES', generic: false },
  { id: 62000012, name: 'EXHAUSTING STORM', generic: false },
  { id: 62000014, name: 'PET POWER', generic: false },
  { id: 62000016, name: 'SUPER TURRET', generic: false },
  { id: 62000017, name: 'GADGET COOLDOWN', generic: true },
  { id: 62000018, name: 'BAT STORM', generic: false },
];

/** Level of an owned gear (every captured sample shows 3). */
export const GEAR_LEVEL = 3;
