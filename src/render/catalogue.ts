/**
 * The option tables of the image and chart endpoints: what each option shows, its size, and which
 * recorded data it needs. The HTTP routes, the OpenAPI text, the ImageService and the renderers all
 * read this one table. No canvas import here, so the front doors can load it cheaply.
 */
import { DEFINITIONS } from './measures.ts';

/** A club holds at most this many members in the game. */
export const CLUB_SIZE = 30;

export interface Size {
  width: number;
  height: number;
}

/** What an image needs beyond the current profile or club. */
export type PlayerNeed = 'brawlerRecords' | 'season' | 'activity';

export interface ImageOption {
  title: string;
  description: string;
  size: Size;
  needs: readonly PlayerNeed[];
}

const LANDSCAPE: Size = { width: 1200, height: 675 };
const GRID: Size = { width: 1400, height: 1000 };

export const PLAYER_IMAGE_OPTIONS = {
  1: { title: 'Classic player image', size: LANDSCAPE, needs: [],
    description: 'Profile card: icon, name in its colour, tag, level, trophies and highest, prestige, 3v3/solo/duo victories, club and best brawlers.' },
  3: { title: 'Detailed brawler image', size: { width: 1800, height: 1200 }, needs: [],
    description: 'Every owned brawler with trophies, power, rank, gadgets, star powers, gears and hypercharges.' },
  4: { title: 'Brawler ranks image', size: GRID, needs: [],
    description: 'Every owned brawler by its rank as the game reports it now.' },
  41: { title: 'Brawler old ranks image', size: GRID, needs: [],
    description: `Every owned brawler on the old rank scale. ${DEFINITIONS.oldRanks}` },
  6: { title: 'Brawler mastery (historic) image', size: GRID, needs: ['brawlerRecords'],
    description: DEFINITIONS.mastery },
  8: { title: 'Brawler trophy image', size: GRID, needs: [],
    description: 'Every owned brawler sorted by current trophies.' },
  9: { title: 'Brawler highest trophy image', size: GRID, needs: [],
    description: 'Every owned brawler sorted by highest trophies.' },
  10: { title: 'Player season progress image', size: LANDSCAPE, needs: ['season'],
    description: `Trophies gained this season, in total and per brawler. ${DEFINITIONS.season}` },
  13: { title: 'Brawler highest win rate image', size: GRID, needs: ['brawlerRecords'],
    description: `Brawlers by the highest win rate recorded. ${DEFINITIONS.winRate}` },
  14: { title: 'Brawler current win rate image', size: GRID, needs: ['brawlerRecords'],
    description: `Brawlers by their current (recent) win rate. ${DEFINITIONS.winRate}` },
} as const satisfies Record<number, ImageOption>;

export const CLUB_IMAGE_OPTIONS = {
  2: { title: 'Classic club image', size: LANDSCAPE, needs: [],
    description: 'Club card: badge, name, description, type, required and total trophies, members with role and trophies.' },
  200: { title: 'Classic club image (portrait)', size: { width: 900, height: 1600 }, needs: [],
    description: 'The classic club card in portrait format, one member per row.' },
  3: { title: 'Club activity image', size: LANDSCAPE, needs: ['activity'],
    description: "Each member's trophies gained over the last 7 days, battles recorded and days since play, most inactive first, with how much of the week recorded history covers (the table of /clubs/{tag}/activity)." },
} as const satisfies Record<number, ImageOption>;

/** Recorded metric a chart draws, resolved by the ImageService against history. */
export type PlayerChartMetric =
  | 'trophies'
  | 'battlesPerDay'
  | 'battlesPerMonth'
  | '3vs3Victories'
  | 'soloVictories'
  | 'duoVictories'
  | 'masteryWins'
  | 'fame'
  | 'records';

export type ClubChartMetric = 'trophies' | 'memberCount' | 'memberWins';

export interface ChartOption<M extends string> {
  title: string;
  description: string;
  metric: M;
  /** line for levels, bar for counts per period */
  style: 'line' | 'bar';
  /** unit under the axis */
  unit: string;
  /** points needed before a chart is drawn (otherwise it says there is too little history) */
  minPoints: number;
}

export const CHART_SIZE: Size = LANDSCAPE;

export const PLAYER_CHART_OPTIONS = {
  1: { title: 'Trophies', metric: 'trophies', style: 'line', unit: 'trophies', minPoints: 2,
    description: 'Trophies over time, from recorded profiles.' },
  2: { title: 'Activity', metric: 'battlesPerDay', style: 'bar', unit: 'battles per day', minPoints: 1,
    description: `Battles per day. ${DEFINITIONS.activity}` },
  3: { title: 'Monthly activity', metric: 'battlesPerMonth', style: 'bar', unit: 'battles per month', minPoints: 1,
    description: `Battles per month. ${DEFINITIONS.activity}` },
  4: { title: '3 vs 3 wins', metric: '3vs3Victories', style: 'line', unit: 'victories', minPoints: 2,
    description: '3 vs 3 victories over time, from recorded profiles.' },
  5: { title: 'Solo wins', metric: 'soloVictories', style: 'line', unit: 'victories', minPoints: 2,
    description: 'Solo Showdown victories over time, from recorded profiles.' },
  6: { title: 'Duo wins', metric: 'duoVictories', style: 'line', unit: 'victories', minPoints: 2,
    description: 'Duo Showdown victories over time, from recorded profiles.' },
  7: { title: 'Mastery (historic)', metric: 'masteryWins', style: 'line', unit: 'recorded victories', minPoints: 2,
    description: `Running total of the mastery measure of image option 6. ${DEFINITIONS.mastery}` },
  8: { title: 'Fame', metric: 'fame', style: 'line', unit: 'fame', minPoints: 2,
    description: DEFINITIONS.fame },
  9: { title: 'Records', metric: 'records', style: 'line', unit: 'trophies', minPoints: 2,
    description: 'Personal bests over time: highest trophies of the player and of their best brawler.' },
} as const satisfies Record<number, ChartOption<PlayerChartMetric>>;

export const CLUB_CHART_OPTIONS = {
  1: { title: 'Club trophies', metric: 'trophies', style: 'line', unit: 'trophies', minPoints: 2,
    description: 'Total club trophies over time, from recorded club profiles.' },
  2: { title: 'Members', metric: 'memberCount', style: 'line', unit: 'members', minPoints: 2,
    description: 'Member count over time, from recorded club profiles.' },
  3: { title: 'Member wins', metric: 'memberWins', style: 'line', unit: 'victories', minPoints: 2,
    description: 'Victories (3 vs 3 + solo + duo) of the members at each recording added up, from their recorded profiles; members joining or leaving move the line.' },
} as const satisfies Record<number, ChartOption<ClubChartMetric>>;

export type PlayerImageOption = keyof typeof PLAYER_IMAGE_OPTIONS;
export type ClubImageOption = keyof typeof CLUB_IMAGE_OPTIONS;
export type PlayerChartOption = keyof typeof PLAYER_CHART_OPTIONS;
export type ClubChartOption = keyof typeof CLUB_CHART_OPTIONS;

export function optionsOf(table: Record<number, unknown>): number[] {
  return Object.keys(table).map(Number);
}

/** "1 = Classic player image; 3 = …" for OpenAPI descriptions. */
export function describeOptions(table: Record<number, { title: string; description: string }>): string {
  return Object.entries(table)
    .map(([k, v]) => `${k} = ${v.title}: ${v.description}`)
    .join('\n');
}
