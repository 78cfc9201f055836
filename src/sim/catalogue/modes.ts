/**
 * Game modes (reference/upstream-api.md §12): modeId ↔ API mode string, the UPPERCASE name
 * `/gamemodes` reports (null for modes the game has not named publicly), and for playable modes the
 * battle format the world generates.
 *
 * `battleMode` is what `battle.mode` says when it differs from the event's mode (5v5 events play the
 * 3v3 rules); `eventMode` is what `event.mode` says when the API reports the event as something else
 * (Brawl Hockey and the PvE events come back as "unknown").
 */
export type BattleFormat =
  | 'team3' // 2 teams of 3, result + duration + starPlayer
  | 'team5' // 2 teams of 5
  | 'solo' // solo showdown: 10 players by placement
  | 'duo' // duo showdown: 5 teams of 2
  | 'trio' // trio showdown: 4 teams of 3
  | 'duels' // 2 players, 3 brawlers each, trophyChange per brawler
  | 'pve'; // 3 players against bots, difficulty level, no type

export interface CatalogueMode {
  id: number;
  mode: string;
  name: string | null;
  format?: BattleFormat;
  battleMode?: string;
  eventMode?: string;
}

export const modes: readonly CatalogueMode[] = [
  { id: 0, mode: 'gemGrab', name: 'GEM GRAB', format: 'team3' },
  { id: 2, mode: 'heist', name: 'HEIST', format: 'team3' },
  { id: 3, mode: 'bounty', name: 'BOUNTY', format: 'team3' },
  { id: 5, mode: 'brawlBall', name: 'BRAWL BALL', format: 'team3' },
  { id: 6, mode: 'soloShowdown', name: 'SOLO SHOWDOWN', format: 'solo' },
  { id: 7, mode: 'bigGame', name: 'BIG GAME' },
  { id: 8, mode: 'roboRumble', name: 'ROBO RUMBLE', format: 'pve' },
  { id: 9, mode: 'duoShowdown', name: 'DUO SHOWDOWN', format: 'duo' },
  { id: 10, mode: 'bossFight', name: 'BOSS FIGHT', format: 'pve' },
  { id: 11, mode: 'spiritWars', name: 'SPIRIT WARS' },
  { id: 14, mode: 'takedown', name: 'TAKEDOWN' },
  { id: 15, mode: 'loneStar', name: 'LONE STAR' },
  { id: 16, mode: 'trophyThieves', name: 'PRESENT PLUNDER', format: 'team3' },
  { id: 17, mode: 'hotZone', name: 'HOT ZONE', format: 'team3' },
  { id: 18, mode: 'superCityRampage', name: 'SUPER CITY RAMPAGE' },
  { id: 20, mode: 'knockout', name: 'KNOCKOUT', format: 'team3' },
  { id: 21, mode: 'carryTheGift', name: 'CARRY THE GIFT' },
  { id: 22, mode: 'basketBrawl', name: 'BASKET BRAWL', format: 'team3' },
  { id: 23, mode: 'volleyBrawl', name: 'VOLLEY BRAWL', format: 'team3' },
  { id: 24, mode: 'duels', name: 'DUELS', format: 'duels' },
  { id: 25, mode: 'wipeout', name: 'WIPEOUT', format: 'team3' },
  { id: 26, mode: 'payload', name: 'PAYLOAD', format: 'team3' },
  { id: 27, mode: 'botDrop', name: 'BOT DROP' },
  { id: 28, mode: 'hunters', name: 'HUNTERS' },
  { id: 29, mode: 'lastStand', name: 'LAST STAND', format: 'pve', eventMode: 'unknown' },
  { id: 31, mode: 'wipeout5V5', name: 'WIPEOUT 5V5', format: 'team5', battleMode: 'wipeout' },
  { id: 32, mode: 'brawlBall5V5', name: 'BRAWL BALL 5V5', format: 'team5', battleMode: 'brawlBall' },
  { id: 33, mode: 'gemGrab5V5', name: 'GEM GRAB 5V5', format: 'team5', battleMode: 'gemGrab' },
  { id: 34, mode: 'trophyEscape', name: 'TROPHY ESCAPE' },
  { id: 35, mode: 'knockout5V5', name: 'KNOCKOUT 5V5', format: 'team5', battleMode: 'knockout' },
  { id: 36, mode: 'godzillaCitySmash', name: 'GODZILLA CITY SMASH' },
  { id: 37, mode: 'paintBrawl', name: 'PAINT BRAWL', format: 'team3' },
  { id: 38, mode: 'trioShowdown', name: 'TRIO SHOWDOWN', format: 'trio' },
  { id: 39, mode: 'drumRoll', name: 'DRUM ROLL' },
  { id: 40, mode: 'soulCollector', name: 'SOUL COLLECTOR' },
  { id: 41, mode: 'cleaningDuty', name: 'CLEANING DUTY' },
  { id: 42, mode: 'soloShowdownLimbo', name: null },
  { id: 43, mode: 'knockoutLimbo', name: null },
  { id: 45, mode: 'brawlHockey', name: 'BRAWL HOCKEY', format: 'team3', battleMode: 'brawlBall', eventMode: 'unknown' },
  { id: 46, mode: 'gemGrab2v2', name: null },
  { id: 47, mode: 'specialDelivery', name: 'SPECIAL DELIVERY' },
  { id: 48, mode: 'brawlArena', name: 'BRAWL ARENA' },
  { id: 49, mode: 'brawlBall2v2', name: null },
  { id: 50, mode: 'knockout2v2', name: null },
  { id: 51, mode: 'hotZone2v2', name: null },
  { id: 52, mode: 'basketBrawl2v2', name: null },
  { id: 53, mode: 'brawlHockey2v2', name: null },
  { id: 54, mode: 'specialDelivery2v2', name: null },
  { id: 55, mode: 'tokenRun', name: 'TOKEN RUN' },
  { id: 56, mode: 'treasureHunt', name: 'TREASURE HUNT' },
  { id: 58, mode: 'vipHunt', name: 'VIP HUNT' },
  { id: 60, mode: 'samuraiSmash', name: 'SAMURAI SMASH' },
  { id: 61, mode: 'oniHunt', name: 'ONI HUNT' },
  { id: 63, mode: 'dodgebrawl', name: 'DODGEBRAWL', format: 'team3' },
];

/** Modes of the competitive Ranked ladder (soloRanked battles); draws maps from these modes. */
export const rankedModes: readonly string[] = ['gemGrab', 'brawlBall', 'heist', 'hotZone', 'bounty', 'knockout'];
