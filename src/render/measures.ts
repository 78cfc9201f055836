/**
 * Measures the pictures show that the official API does not hand over directly. Each is a pure
 * function of what Starr Stats has (the profile plus recorded history), defined once here so an
 * image and its chart always agree, and each definition is written out in plain words (DEFINITIONS)
 * for the OpenAPI description and the pictures themselves.
 */
import { parseApiTime } from '../upstream/api-format.ts';
import type { BattleLogItem, Player, PlayerBrawler } from '../upstream/schemas.ts';
import oldRanks from './data/old-ranks.json' with { type: 'json' };
import type { BrawlerRecord, Point, SeasonBaseline } from './types.ts';

export const DEFINITIONS = {
  mastery:
    'Mastery (historic): the game retired brawler mastery and its API never exposed it. Starr Stats counts ' +
    'victories with each brawler in the battles it recorded; tiers Bronze I to Gold III follow that count.',
  fame:
    'Fame: the official API has no fame. Starr Stats uses the sum of every brawler\'s highest trophies, ' +
    'a lifetime measure that only grows, read from each recorded profile.',
  oldRanks: 'Ranks on the pre-2025 scale (1 to 35), worked out from each brawler\'s highest trophies.',
  winRate:
    'Win rates come from the battles Starr Stats recorded: highest = the best run of 20 consecutive recorded ' +
    'battles with that brawler, current = its latest 20 (fewer when fewer are recorded, at least 5).',
  season: 'Season = the current calendar month (UTC); progress is measured from the first profile recorded in it.',
  activity: 'Activity counts the battles Starr Stats recorded from the battle log (up to the last 25 per poll).',
} as const;

/** Brawler names arrive in UPPERCASE and sometimes with a line break (skins); one clean line. */
export function displayName(name: string): string {
  return name.replace(/\s+/g, ' ').trim() || '?';
}

/** The player's total prestige: the API's total when present, else the sum over brawlers. */
export function prestigeOf(p: Player): number {
  return p.totalPrestigeLevel ?? p.brawlers.reduce((s, b) => s + (b.prestigeLevel ?? 0), 0);
}

/** Fame (see DEFINITIONS.fame): Σ highest trophies over all brawlers. */
export function fameOf(p: Pick<Player, 'brawlers'>): number {
  return p.brawlers.reduce((s, b) => s + Math.max(0, b.highestTrophies), 0);
}

// ------------------------------------------------------------------ ranks

export const OLD_RANK_MAX = oldRanks.thresholds.length;

/** Rank on the pre-2025 scale for a brawler's highest trophies. */
export function oldRank(highestTrophies: number): number {
  let rank = 1;
  oldRanks.thresholds.forEach((t, i) => {
    if (highestTrophies >= t) rank = i + 1;
  });
  return rank;
}

export function oldRankColor(rank: number): string {
  let color = oldRanks.tiers[0]!.color;
  for (const t of oldRanks.tiers) if (rank >= t.from) color = t.color;
  return color;
}

/** Trophies still missing to the next old rank, or null at the top. */
export function oldRankNext(highestTrophies: number): number | null {
  const r = oldRank(highestTrophies);
  const next = oldRanks.thresholds[r];
  return next === undefined ? null : next - highestTrophies;
}

/** Progress inside the current old rank towards the next, 0..1 (1 at the top rank). */
export function oldRankProgress(highestTrophies: number): number {
  const r = oldRank(highestTrophies);
  const lo = oldRanks.thresholds[r - 1]!;
  const hi = oldRanks.thresholds[r];
  if (hi === undefined) return 1;
  return Math.max(0, Math.min(1, (highestTrophies - lo) / (hi - lo)));
}

/**
 * Colour for a rank on the current scale, relative to the best rank in this roster: a ramp from
 * blue (lowest) through green to gold (best), so a higher rank always reads as "more".
 */
export function rankColor(rank: number, maxRank: number): string {
  const ratio = maxRank <= 1 ? 1 : Math.max(0, Math.min(1, (rank - 1) / (maxRank - 1)));
  return `hsl(${Math.round(210 - 165 * ratio)}, 85%, 60%)`;
}

// ------------------------------------------------------------------ mastery (historic)

/** The tiers the game had, by recorded victories; a picture names them in its language (pic.mastery.*). */
export const MASTERY_TIERS = [
  { wins: 5, family: 'bronze', level: 'I' },
  { wins: 10, family: 'bronze', level: 'II' },
  { wins: 20, family: 'bronze', level: 'III' },
  { wins: 35, family: 'silver', level: 'I' },
  { wins: 50, family: 'silver', level: 'II' },
  { wins: 75, family: 'silver', level: 'III' },
  { wins: 100, family: 'gold', level: 'I' },
  { wins: 150, family: 'gold', level: 'II' },
  { wins: 250, family: 'gold', level: 'III' },
] as const;

export type MasteryFamily = (typeof MASTERY_TIERS)[number]['family'];

const TIER_COLORS: Record<MasteryFamily, string> = { bronze: '#d08a4e', silver: '#cfd8e6', gold: '#ffd83b' };

export interface Mastery {
  wins: number;
  /** index into MASTERY_TIERS, -1 below the first tier */
  tier: number;
  /** the tier's metal and step ("bronze", "II"), null below the first tier */
  family: MasteryFamily | null;
  level: string | null;
  color: string;
  /** progress 0..1 towards the next tier (1 at the top) */
  progress: number;
  nextAt: number | null;
}

export function masteryOf(wins: number): Mastery {
  let tier = -1;
  MASTERY_TIERS.forEach((t, i) => {
    if (wins >= t.wins) tier = i;
  });
  const reached = tier >= 0 ? MASTERY_TIERS[tier]! : null;
  const cur = reached?.wins ?? 0;
  const next = MASTERY_TIERS[tier + 1]?.wins ?? null;
  return {
    wins,
    tier,
    family: reached?.family ?? null,
    level: reached?.level ?? null,
    color: reached ? TIER_COLORS[reached.family] : '#8c93b8',
    progress: next === null ? 1 : (wins - cur) / (next - cur),
    nextAt: next,
  };
}

export function winsOf(r: BrawlerRecord): number {
  let n = 0;
  for (const c of r.results) if (c === 'W') n++;
  return n;
}

// ------------------------------------------------------------------ win rates

export const WIN_RATE_WINDOW = 20;
export const WIN_RATE_MIN_BATTLES = 5;

export interface WinRate {
  rate: number;
  wins: number;
  battles: number;
}

/** The latest window of recorded battles; null below the minimum. */
export function currentWinRate(results: string): WinRate | null {
  if (results.length < WIN_RATE_MIN_BATTLES) return null;
  const last = results.slice(-WIN_RATE_WINDOW);
  const wins = [...last].filter((c) => c === 'W').length;
  return { rate: wins / last.length, wins, battles: last.length };
}

/** The best window of consecutive recorded battles; null below the minimum. */
export function highestWinRate(results: string): WinRate | null {
  if (results.length < WIN_RATE_MIN_BATTLES) return null;
  const n = Math.min(WIN_RATE_WINDOW, results.length);
  let wins = 0;
  for (let i = 0; i < n; i++) if (results[i] === 'W') wins++;
  let best = wins;
  for (let i = n; i < results.length; i++) {
    if (results[i] === 'W') wins++;
    if (results[i - n] === 'W') wins--;
    if (wins > best) best = wins;
  }
  return { rate: best / n, wins: best, battles: n };
}

// ------------------------------------------------------------------ season

/** The season containing `atMs` (see DEFINITIONS.season): [start, end) of its UTC month. */
export function seasonWindow(atMs: number): { start: number; end: number } {
  const d = new Date(atMs);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** The ISO week containing `atMs` (Monday 00:00 UTC to the next Monday): [start, end), and its name like 2026-W23. */
export function weekWindow(atMs: number): { start: number; end: number; id: string } {
  const day = 86_400_000;
  const midnight = Math.floor(atMs / day) * day;
  const weekday = (new Date(midnight).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const start = midnight - weekday * day;
  // The ISO week-year is the year of the week's Thursday; week 1 holds the year's first Thursday.
  const thursday = new Date(start + 3 * day);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * day)) + 1;
  return { start, end: start + 7 * day, id: `${year}-W${String(week).padStart(2, '0')}` };
}

export interface SeasonProgress {
  total: number;
  brawlers: { brawler: PlayerBrawler; gained: number }[];
}

/** Trophies gained since the season baseline, in total and per brawler (new brawlers count from 0). */
export function seasonProgress(p: Player, base: SeasonBaseline): SeasonProgress {
  const before = new Map(base.brawlers.map((b) => [b.id, b.trophies]));
  const brawlers = p.brawlers
    .map((b) => ({ brawler: b, gained: b.trophies - (before.get(b.id) ?? 0) }))
    .sort((a, b) => b.gained - a.gained || a.brawler.id - b.brawler.id);
  return { total: p.trophies - base.trophies, brawlers };
}

// ------------------------------------------------------------------ battles

export interface BattleOutcome {
  /** epoch ms of the battle */
  t: number;
  brawlerId: number;
  brawlerName: string;
  result: 'W' | 'L' | 'D';
}

/**
 * What one battle-log entry means for mastery, win rates and activity: the brawler the player used
 * and whether they won. Team modes have a result; showdown counts as a win when it gained trophies
 * or, without a trophy change, when the player finished in the top half. Null when the entry has no
 * battle or does not include the player.
 */
export function battleOutcome(item: BattleLogItem, tag: string): BattleOutcome | null {
  const b = item.battle;
  const t = parseApiTime(item.battleTime);
  if (!b || Number.isNaN(t)) return null;
  const everyone = [...(b.teams ?? []).flat(), ...(b.players ?? [])];
  const me = everyone.find((p) => p.tag === tag);
  const brawler = me?.brawler ?? me?.brawlers?.[0];
  if (!brawler) return null;
  let result: BattleOutcome['result'];
  if (b.result === 'victory') result = 'W';
  else if (b.result === 'defeat') result = 'L';
  else if (b.result === 'draw') result = 'D';
  else if (b.rank !== undefined) {
    const groups = b.teams?.length || b.players?.length || 10;
    result = (b.trophyChange ?? 0) > 0 || (b.trophyChange === undefined && b.rank <= Math.ceil(groups / 2)) ? 'W' : 'L';
  } else return null;
  return { t, brawlerId: brawler.id, brawlerName: brawler.name, result };
}

/** Outcomes grouped into per-brawler result strings, oldest battle first. */
export function brawlerRecordsOf(outcomes: BattleOutcome[]): BrawlerRecord[] {
  const by = new Map<number, { name: string; results: string }>();
  for (const o of [...outcomes].sort((a, b) => a.t - b.t)) {
    const r = by.get(o.brawlerId) ?? { name: o.brawlerName, results: '' };
    r.results += o.result;
    by.set(o.brawlerId, r);
  }
  return [...by.entries()].map(([id, r]) => ({ id, name: r.name, results: r.results })).sort((a, b) => a.id - b.id);
}

/** Battles per UTC day (or month) in [from, to], one point per period including empty ones. */
export function battlesPer(outcomes: { t: number }[], period: 'day' | 'month', from: number, to: number): Point[] {
  const start = (t: number) => {
    const d = new Date(t);
    return period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  };
  const next = (t: number) => {
    const d = new Date(t);
    return period === 'day' ? t + 86_400_000 : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  };
  const counts = new Map<number, number>();
  for (const o of outcomes) if (o.t >= from && o.t <= to) counts.set(start(o.t), (counts.get(start(o.t)) ?? 0) + 1);
  const out: Point[] = [];
  for (let t = start(from); t <= to; t = next(t)) out.push({ t, v: counts.get(t) ?? 0 });
  return out;
}

/** The running total of recorded wins over time (the mastery chart), one point per winning battle. */
export function cumulativeWins(outcomes: BattleOutcome[], from: number, to: number): Point[] {
  const sorted = [...outcomes].sort((a, b) => a.t - b.t);
  let wins = 0;
  const out: Point[] = [];
  for (const o of sorted) {
    if (o.result !== 'W') continue;
    wins++;
    if (o.t >= from && o.t <= to) out.push({ t: o.t, v: wins });
  }
  return out;
}
