/**
 * What the renderers take. Everything a picture shows is in its input, so a picture is a pure
 * function of (input, option, quality) and its hash is a sound cache key.
 */
import type { ClubActivity } from '../core/history-schemas.ts';
import type { Club, Player } from '../upstream/schemas.ts';
import type { Language } from '../i18n/index.ts';
import type { Quality } from './draw.ts';

/** One brawler's recorded battles, oldest first: 'W' victory, 'L' defeat, 'D' draw. */
export interface BrawlerRecord {
  id: number;
  name: string;
  results: string;
}

/** A point of a recorded series: epoch ms and value. */
export interface Point {
  t: number;
  v: number;
}

/** The player as first recorded in the current season, for season progress. */
export interface SeasonBaseline {
  /** epoch ms of that snapshot */
  at: number;
  trophies: number;
  brawlers: { id: number; trophies: number }[];
}

export interface PlayerImageInput {
  player: Player;
  /** what Starr Stats recorded about the player beyond the current profile */
  record?: {
    /** epoch ms of the first recorded snapshot/battle, null when nothing is recorded yet */
    since: number | null;
    /** per-brawler battle results from recorded battle logs (mastery, win rates) */
    brawlers?: BrawlerRecord[];
    /** the current season: its window and the first snapshot inside it */
    season?: { start: number; end: number; baseline: SeasonBaseline | null; trophies: Point[] };
  };
  /** decoded art bytes by art key (see art.ts); empty/absent = drawn art */
  art?: Record<string, Uint8Array>;
}

export interface ClubImageInput {
  club: Club;
  art?: Record<string, Uint8Array>;
  /** the core's activity table (option 3); null when nothing is recorded */
  activity?: ClubActivity | null;
}

/** What a series shows; a picture names it in its language (pic.series.*). */
export type SeriesLabel =
  | 'trophies'
  | 'highestTrophies'
  | 'bestBrawler'
  | 'fame'
  | 'victories'
  | 'battles'
  | 'recordedVictories'
  | 'members'
  | 'memberVictories';

export interface ChartSeries {
  label: SeriesLabel;
  points: Point[];
  color?: string;
}

export interface ChartInput {
  /** the player's or club's name (markup allowed) and tag, for the header */
  name: string;
  tag: string;
  nameColor?: string;
  /** the window the chart covers, epoch ms */
  from: number;
  to: number;
  series: ChartSeries[];
}

/** `lang`: the language of the picture's words (labels, dates; default English); names from the game stay as they are. */
export type RenderJob =
  | { kind: 'playerImage'; option: number; quality: Quality; lang?: Language; input: PlayerImageInput }
  | { kind: 'clubImage'; option: number; quality: Quality; lang?: Language; input: ClubImageInput }
  | { kind: 'playerChart'; option: number; quality: Quality; lang?: Language; input: ChartInput }
  | { kind: 'clubChart'; option: number; quality: Quality; lang?: Language; input: ChartInput };
