/**
 * Club activity (pure): for each member of a club, trophies gained over a period and over 30 days,
 * battles recorded, the newest sign of play, when they joined, and the thresholds they are below.
 * The HistoryService reads the club's snapshots, its join events and the members' battle summaries
 * and hands them here; the HTTP API, the bot and the activity picture all show this one answer.
 *
 * Gains come from the club's own snapshots (every poll of a club records each member's trophies),
 * so they exist for every member of a tracked club; battles exist only for members whose battle log
 * is recorded. What is not recorded is null, never zero.
 */
import type { Snapshot } from '../store/history-snapshots.ts';
import type { BattleSummary } from '../store/history-store.ts';
import { items, type Json } from '../store/snapshot.ts';
import { DAY_S } from './history-derive.ts';
import type { ActivityMember, ActivitySort, ClubActivity } from './history-schemas.ts';

/** Periods a reader may ask for, in days. */
export const ACTIVITY_DAYS = { min: 1, max: 90, default: 7 } as const;

export interface ActivityThresholds {
  /** flag members who gained fewer trophies than this over the period */
  minGain?: number | null;
  /** flag members with no sign of play for this many days or more */
  maxIdleDays?: number | null;
}

export interface ActivityInput {
  tag: string;
  /** the club's snapshots newest first, reaching back to (and including) the state in force 30 days ago or at the period start, whichever is older */
  snapshots: Snapshot[];
  /** member tag → when they last joined (unix seconds) */
  joins: Map<string, number>;
  /** member tag → recorded battles since the period start */
  battles: Map<string, BattleSummary>;
  /** the end of the period (now, or a closed week's end), unix seconds */
  nowS: number;
  days: number;
  /** the start of the period when it is not `days` before its end (a calendar week or month) */
  fromS?: number;
  thresholds?: ActivityThresholds;
  sort?: ActivitySort;
}

const num = (v: Json | undefined): number => (typeof v === 'number' ? v : 0);
const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '');

/** The activity table (without the tracking note the service adds). */
export function clubActivityOf(input: ActivityInput): Omit<ClubActivity, 'tracked' | 'trackedUntil' | 'since'> {
  const { snapshots, nowS, days } = input;
  const from = input.fromS ?? nowS - days * DAY_S;
  const ascending = [...snapshots].reverse().filter((s) => s.t <= nowS);
  const current = ascending[ascending.length - 1];
  const recordedFrom = ascending[0]?.t ?? null;
  const covered = recordedFrom === null ? 0 : Math.max(0, nowS - Math.max(from, recordedFrom));
  const minGain = input.thresholds?.minGain ?? null;
  const maxIdleDays = input.thresholds?.maxIdleDays ?? null;

  // Per member, walking the club's recordings oldest first: trophies at each, and the last change.
  const seen = new Map<string, { first: number; points: { t: number; trophies: number }[]; lastChange: number | null }>();
  for (const s of ascending) {
    for (const [tag, m] of Object.entries(items(s.state, 'members'))) {
      const trophies = num(m.trophies);
      let h = seen.get(tag);
      if (!h) seen.set(tag, (h = { first: s.t, points: [], lastChange: null }));
      const prev = h.points[h.points.length - 1];
      if (prev && prev.trophies !== trophies) h.lastChange = s.t;
      h.points.push({ t: s.t, trophies });
    }
  }

  const members: ActivityMember[] = [];
  for (const [tag, m] of Object.entries(current ? items(current.state, 'members') : {})) {
    const h = seen.get(tag)!;
    const joined = input.joins.get(tag) ?? null;
    // Only recordings since the member's latest join count (a re-join restarts the member's history here).
    const points = joined === null ? h.points : h.points.filter((p) => p.t >= joined);
    const trophies = num(m.trophies);
    const period = periodGain(points, trophies, current!.t, from);
    const month = periodGain(points, trophies, current!.t, nowS - 30 * DAY_S);
    const b = input.battles.get(tag);
    const polled = b?.polled ?? false;
    const lastActive = Math.max(b?.lastT ?? -1, h.lastChange ?? -1);
    const firstSeen = points[0]?.t ?? h.first;
    let inactiveDays: number | null;
    let atLeast = false;
    if (lastActive >= 0) inactiveDays = Math.floor((nowS - lastActive) / DAY_S);
    else if (firstSeen < current!.t) {
      inactiveDays = Math.floor((nowS - firstSeen) / DAY_S);
      atLeast = true;
    } else inactiveDays = null;
    const flags: ActivityMember['flags'] = [];
    if (minGain !== null && period.gained !== null && period.gained < minGain) flags.push('lowGain');
    if (maxIdleDays !== null && inactiveDays !== null && inactiveDays >= maxIdleDays) flags.push('inactive');
    members.push({
      tag,
      name: str(m.name),
      role: str(m.role),
      trophies,
      joined,
      gained: period.gained,
      gainedSince: period.since,
      gained30d: month.gained,
      battles: polled ? (b?.battles ?? 0) : null,
      wins: polled ? (b?.wins ?? 0) : null,
      lastActive: lastActive >= 0 ? lastActive : null,
      inactiveDays,
      inactiveAtLeast: atLeast,
      flags,
    });
  }
  const sort = input.sort ?? 'inactivity';
  return {
    tag: input.tag,
    name: current ? str(current.state.name) : '',
    days,
    from,
    to: nowS,
    coverage: {
      recordedFrom,
      days: Math.round((covered / DAY_S) * 10) / 10,
      share: nowS > from ? Math.round(Math.min(1, covered / (nowS - from)) * 100) / 100 : 0,
      battlesRecorded: members.filter((m) => m.battles !== null).length,
    },
    thresholds: { minGain, maxIdleDays },
    sort,
    members: sortActivity(members, sort),
  };
}

/**
 * Trophies gained since `start`: now minus the recording in force at `start`, or the first one after
 * it when history is shorter (then `since` says from when). Null when nothing older than the current
 * recording exists: a member seen for the first time has no gain yet, which is not a gain of 0.
 */
export function periodGain(ascending: { t: number; trophies: number }[], trophiesNow: number, currentT: number, start: number): { gained: number | null; since: number | null } {
  let base = ascending[0];
  for (const p of ascending) {
    if (p.t > start) break;
    base = p;
  }
  if (!base || base.t >= currentT) return { gained: null, since: null };
  return { gained: trophiesNow - base.trophies, since: Math.max(base.t, start) };
}

export interface PlayerGain {
  tag: string;
  name: string;
  trophies: number;
  gained: number | null;
  battles: number | null;
  wins: number | null;
}

/** One player's gain and battles over [fromS, toS] from their own recordings (linked members of a server). */
export function playerGainOf(tag: string, newestFirst: Snapshot[], battles: BattleSummary | undefined, fromS: number, toS: number): PlayerGain | null {
  const ascending = [...newestFirst].reverse().filter((s) => s.t <= toS);
  const current = ascending[ascending.length - 1];
  if (!current) return null;
  const trophies = num(current.state.trophies);
  const { gained } = periodGain(
    ascending.map((s) => ({ t: s.t, trophies: num(s.state.trophies) })),
    trophies,
    current.t,
    fromS,
  );
  const polled = battles?.polled ?? false;
  return { tag, name: str(current.state.name), trophies, gained, battles: polled ? (battles?.battles ?? 0) : null, wins: polled ? (battles?.wins ?? 0) : null };
}

/** Nulls (not recorded) after every recorded value, whichever way the column sorts. */
const desc = (a: number | null, b: number | null) => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : b - a);
const asc = (a: number | null, b: number | null) => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : a - b);

/**
 * Most inactive first (then least gained); most gained first; most battles first. Ties by name, then
 * tag, so every front door lists the same order.
 */
export function sortActivity(members: ActivityMember[], by: ActivitySort): ActivityMember[] {
  const tie = (a: ActivityMember, b: ActivityMember) => a.name.localeCompare(b.name, 'en') || (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0);
  const cmp: Record<ActivitySort, (a: ActivityMember, b: ActivityMember) => number> = {
    inactivity: (a, b) => desc(a.inactiveDays, b.inactiveDays) || asc(a.gained, b.gained) || tie(a, b),
    gain: (a, b) => desc(a.gained, b.gained) || tie(a, b),
    battles: (a, b) => desc(a.battles, b.battles) || desc(a.gained, b.gained) || tie(a, b),
  };
  return [...members].sort(cmp[by]);
}
