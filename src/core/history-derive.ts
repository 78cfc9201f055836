/**
 * What the history endpoints compute from recorded data (pure functions): snapshot views, the
 * player log, the trophy push, map statistics with shrinkage, the best build and the predicted
 * rotation. The HistoryService reads the store and hands the rows to these.
 */
import type { Snapshot } from '../store/history-snapshots.ts';
import type { BuildRow, MapBrawlerCount, PlayerBattleRow, RotationRow } from '../store/history-store.ts';
import { at, CLUB_SPEC, fromCanonical, items, PLAYER_SPEC, type Json, type State } from '../store/snapshot.ts';
import { formatApiTime, parseApiTime, type Brawler, type Club, type EventRotation, type Player } from '../upstream/schemas.ts';
import type {
  BestBuild,
  ClubSnapshot,
  EventItem,
  MapBrawlerStat,
  PlayerLogEvent,
  PlayerPush,
  PlayerSnapshot,
} from './history-schemas.ts';
import type { z } from 'zod';

export const DAY_S = 86_400;

const num = (v: Json | undefined, d = 0): number => (typeof v === 'number' ? v : d);
const str = (v: Json | undefined, d = ''): string => (typeof v === 'string' ? v : d);

export function playerOf(s: Snapshot): Player {
  return fromCanonical(s.state, PLAYER_SPEC) as unknown as Player;
}

export function clubOf(s: Snapshot): Club {
  return fromCanonical(s.state, CLUB_SPEC) as unknown as Club;
}

// ------------------------------------------------------------------ snapshot views

export function playerSnapshotView(s: Snapshot): PlayerSnapshot {
  const p = playerOf(s);
  const club = p.club && typeof (p.club as { tag?: unknown }).tag === 'string' ? (p.club as { tag: string; name: string }) : null;
  const out: PlayerSnapshot = {
    timestamp: s.t,
    name: p.name,
    trophies: p.trophies,
    highestTrophies: p.highestTrophies,
    expLevel: p.expLevel,
    '3vs3Victories': p['3vs3Victories'],
    soloVictories: p.soloVictories,
    duoVictories: p.duoVictories,
    club: club ? { tag: club.tag, name: club.name } : null,
    brawlerCount: (p.brawlers ?? []).length,
    brawlers: (p.brawlers ?? []).map((b) => ({
      id: b.id,
      name: b.name ?? '',
      power: b.power,
      rank: b.rank,
      trophies: b.trophies,
      highestTrophies: b.highestTrophies,
      ...(b.prestigeLevel !== undefined ? { prestigeLevel: b.prestigeLevel } : {}),
    })),
  };
  if (p.nameColor !== undefined) out.nameColor = p.nameColor;
  if (p.expPoints !== undefined) out.expPoints = p.expPoints;
  if (p.totalPrestigeLevel !== undefined) out.totalPrestigeLevel = p.totalPrestigeLevel;
  return out;
}

export function clubSnapshotView(s: Snapshot): ClubSnapshot {
  const c = clubOf(s);
  const members = (c.members ?? []).map((m) => ({ tag: m.tag, name: m.name, role: m.role, trophies: m.trophies }));
  const out: ClubSnapshot = {
    timestamp: s.t,
    name: c.name,
    type: c.type,
    badgeId: c.badgeId,
    requiredTrophies: c.requiredTrophies,
    trophies: c.trophies,
    memberCount: members.length,
    members,
  };
  if (c.description !== undefined) out.description = c.description;
  if (c.isFamilyFriendly !== undefined) out.isFamilyFriendly = c.isFamilyFriendly;
  return out;
}

// ------------------------------------------------------------------ player log

/**
 * Change events between consecutive snapshots (ascending), newest first. Trophy changes of
 * transitions closer than `sessionGapS` merge into one play session; `battleTimes` (unix seconds,
 * any order) count the recorded battles of each session.
 */
export function playerLogEvents(ascending: Snapshot[], battleTimes: number[], sessionGapS: number): PlayerLogEvent[] {
  const events: PlayerLogEvent[] = [];
  const sortedBattles = [...battleTimes].sort((a, b) => a - b);
  const battlesIn = (from: number, to: number) => {
    let n = 0;
    for (const t of sortedBattles) if (t > from && t <= to) n++;
    return n;
  };
  let session: { prevT: number; start: number; end: number; from: number; to: number } | null = null;
  const closeSession = () => {
    if (!session) return;
    events.push({
      type: 'trophies',
      timestamp: session.end,
      start: session.start,
      from: session.from,
      to: session.to,
      change: session.to - session.from,
      battles: battlesIn(session.prevT, session.end),
    });
    session = null;
  };
  for (let i = 1; i < ascending.length; i++) {
    const prev = ascending[i - 1]!.state;
    const next = ascending[i]!.state;
    const t = ascending[i]!.t;
    const before = num(prev.trophies);
    const after = num(next.trophies);
    if (after !== before) {
      if (session && t - session.end <= sessionGapS) {
        session.end = t;
        session.to = after;
      } else {
        closeSession();
        session = { prevT: ascending[i - 1]!.t, start: t, end: t, from: before, to: after };
      }
    }
    if (str(prev.name) !== str(next.name)) events.push({ type: 'nameChanged', timestamp: t, from: str(prev.name), to: str(next.name) });
    const prevClub = str(at(prev, 'club.tag'));
    const nextClub = str(at(next, 'club.tag'));
    if (prevClub !== nextClub) {
      if (prevClub) events.push({ type: 'clubLeft', timestamp: t, club: { tag: prevClub, name: str(at(prev, 'club.name')) } });
      if (nextClub) events.push({ type: 'clubJoined', timestamp: t, club: { tag: nextClub, name: str(at(next, 'club.name')) } });
    }
    const had = items(prev, 'brawlers');
    for (const [id, b] of Object.entries(items(next, 'brawlers'))) {
      const ref = { id: Number(id), name: str(b.name) };
      const was = had[id];
      if (!was) {
        events.push({ type: 'brawlerUnlocked', timestamp: t, brawler: ref });
        continue;
      }
      for (const [field, type] of [['power', 'powerUp'], ['rank', 'rankUp'], ['prestigeLevel', 'prestigeUp']] as const) {
        const from = num(was[field]);
        const to = num(b[field]);
        if (to > from) events.push({ type, timestamp: t, brawler: ref, from, to });
      }
    }
  }
  closeSession();
  // Newest first; at one instant the play session comes before what else changed.
  return events.sort((a, b) => b.timestamp - a.timestamp || Number(a.type !== 'trophies') - Number(b.type !== 'trophies'));
}

// ------------------------------------------------------------------ push

/** The snapshot in force at time t (newest with s.t <= t), from a newest-first list. */
function asOf(newestFirst: Snapshot[], t: number): Snapshot | undefined {
  return newestFirst.find((s) => s.t <= t);
}

export function pushOf(
  tag: string,
  newestFirst: Snapshot[],
  battlesNewestFirst: PlayerBattleRow[],
  nowS: number,
): Omit<PlayerPush, 'tracked' | 'trackedUntil' | 'since'> {
  const current = newestFirst[0];
  const trophies = current ? num(current.state.trophies) : null;
  const gain = (windowS: number) => {
    if (!current) return null;
    const start = nowS - windowS;
    const base = asOf(newestFirst, start) ?? [...newestFirst].reverse().find((s) => s.t >= start) ?? current;
    const from = num(base.state.trophies);
    return { change: num(current.state.trophies) - from, from, to: num(current.state.trophies), since: base.t };
  };
  let bestDay: PlayerPush['bestDay'] = null;
  if (current) {
    const today = Math.floor(nowS / DAY_S);
    for (let d = today - 29; d <= today; d++) {
      const startOf = asOf(newestFirst, d * DAY_S - 1);
      const endOf = asOf(newestFirst, Math.min(nowS, (d + 1) * DAY_S - 1));
      if (!startOf || !endOf) continue;
      const change = num(endOf.state.trophies) - num(startOf.state.trophies);
      if (!bestDay || change > bestDay.change) bestDay = { date: new Date(d * DAY_S * 1000).toISOString().slice(0, 10), change };
    }
  }
  let winStreak = 0;
  for (const b of battlesNewestFirst) {
    if (b.result === null) continue;
    if (b.result !== 1) break;
    winStreak++;
  }
  const brawlers: PlayerPush['brawlers'] = [];
  if (current) {
    const base = asOf(newestFirst, nowS - 7 * DAY_S) ?? newestFirst[newestFirst.length - 1]!;
    const then = items(base.state, 'brawlers');
    for (const [id, b] of Object.entries(items(current.state, 'brawlers'))) {
      const now = num(b.trophies);
      const before = num(then[id]?.trophies);
      if (now !== before) brawlers.push({ id: Number(id), name: str(b.name), change: now - before, trophies: now });
    }
    brawlers.sort((a, b) => Math.abs(b.change) - Math.abs(a.change) || b.change - a.change || a.id - b.id);
    brawlers.splice(5);
  }
  return { tag, trophies, gains: { day: gain(DAY_S), week: gain(7 * DAY_S), month: gain(30 * DAY_S) }, bestDay, winStreak, brawlers };
}

// ------------------------------------------------------------------ maps

/** Battles below this count are flagged and their rates should be read adjusted. */
export const MIN_SAMPLE = 30;
const DEFAULT_PRIOR_STRENGTH = 30;

/**
 * Beta prior strength by the method of moments: the spread of per-brawler win rates beyond what
 * binomial noise explains. Falls back on a fixed strength when there is too little to estimate.
 */
export function priorStrength(rows: { wins: number; games: number }[], mean: number): number {
  const used = rows.filter((r) => r.games > 0);
  if (used.length < 3 || mean <= 0 || mean >= 1) return DEFAULT_PRIOR_STRENGTH;
  const total = used.reduce((a, r) => a + r.games, 0);
  const observed = used.reduce((a, r) => a + r.games * (r.wins / r.games - mean) ** 2, 0) / total;
  const noise = (mean * (1 - mean) * used.length) / total;
  const between = observed - noise;
  if (between <= 1e-6) return 500;
  return Math.max(2, Math.min(500, (mean * (1 - mean)) / between - 1));
}

export function mapStats(
  counts: MapBrawlerCount[],
  brawlerName: (id: number) => string,
): { stats: z.infer<typeof MapBrawlerStat>[]; prior: { winRate: number | null; strength: number } } {
  const by = new Map<number, { picks: number; wins: number; losses: number; draws: number; stars: number }>();
  for (const c of counts) {
    const b = by.get(c.brawlerId) ?? { picks: 0, wins: 0, losses: 0, draws: 0, stars: 0 };
    b.picks += c.picks;
    b.wins += c.wins;
    b.losses += c.losses;
    b.draws += c.draws;
    b.stars += c.stars;
    by.set(c.brawlerId, b);
  }
  const rows = [...by].map(([id, b]) => ({ id, ...b, games: b.wins + b.losses + b.draws }));
  const totalPicks = rows.reduce((a, r) => a + r.picks, 0);
  const totalGames = rows.reduce((a, r) => a + r.games, 0);
  const totalWins = rows.reduce((a, r) => a + r.wins, 0);
  const totalStars = rows.reduce((a, r) => a + r.stars, 0);
  const mean = totalGames > 0 ? totalWins / totalGames : null;
  const m = mean === null ? DEFAULT_PRIOR_STRENGTH : priorStrength(rows, mean);
  const starMean = totalPicks > 0 && totalStars > 0 ? totalStars / totalPicks : null;
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  const stats = rows.map((r) => ({
    brawler: { id: r.id, name: brawlerName(r.id) },
    picks: r.picks,
    useRate: totalPicks > 0 ? round(r.picks / totalPicks) : 0,
    wins: r.wins,
    losses: r.losses,
    draws: r.draws,
    winRate: r.games > 0 ? round(r.wins / r.games) : null,
    adjustedWinRate: mean === null ? null : round((r.wins + m * mean) / (r.games + m)),
    starPlayer: r.stars,
    starPlayerRate: starMean === null || r.picks === 0 ? null : round(r.stars / r.picks),
    adjustedStarPlayerRate: starMean === null ? null : round((r.stars + m * starMean) / (r.picks + m)),
    smallSample: r.games < MIN_SAMPLE,
  }));
  stats.sort((a, b) => (b.adjustedWinRate ?? 0) - (a.adjustedWinRate ?? 0) || b.picks - a.picks || a.brawler.id - b.brawler.id);
  return { stats, prior: { winRate: mean === null ? null : round(mean), strength: round(m) } };
}

// ------------------------------------------------------------------ rotation

/**
 * The next event of each running slot, guessed from what the slot ran before: what followed the
 * current map the last time it ran there, else what followed the current mode. Starts when the
 * current event ends and lasts as long.
 */
export function predictUpcoming(active: EventRotation, history: RotationRow[]): EventItem[] {
  const out: EventItem[] = [];
  for (const e of active) {
    const start = parseApiTime(e.startTime);
    const end = parseApiTime(e.endTime);
    if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
    const startS = Math.floor(start / 1000);
    const past = history.filter((h) => h.slotId === e.slotId && h.start < startS).sort((a, b) => a.start - b.start);
    const slot = [...past, { slotId: e.slotId, start: startS, end: Math.floor(end / 1000), mapId: e.event.id, map: e.event.map ?? null, mode: e.event.mode ?? null, modifiers: e.event.modifiers ?? null }];
    const follower = (match: (h: RotationRow) => boolean): RotationRow | undefined => {
      for (let i = slot.length - 2; i >= 0; i--) if (match(slot[i]!)) return slot[i + 1];
      return undefined;
    };
    const next = follower((h) => h.mapId === e.event.id) ?? (e.event.mode ? follower((h) => h.mode === e.event.mode) : undefined);
    if (!next) continue;
    const event: EventItem['event'] = { id: next.mapId, map: next.map };
    if (next.mode) event.mode = next.mode;
    if (next.modifiers) event.modifiers = next.modifiers;
    out.push({
      slotId: e.slotId,
      startTime: formatApiTime(end),
      endTime: formatApiTime(end + (end - start)),
      event,
      predicted: true,
      historyLength: past.length,
    });
  }
  return out;
}

// ------------------------------------------------------------------ best build

export function bestBuildOf(
  brawler: { id: number; name: string },
  rows: BuildRow[],
  results: { playerId: number; result: number | null }[],
  itemName: (id: number) => string,
): BestBuild {
  const n = rows.length;
  const shares = (pick: (r: BuildRow) => number[]) => {
    const count = new Map<number, number>();
    for (const r of rows) for (const id of new Set(pick(r))) count.set(id, (count.get(id) ?? 0) + 1);
    return [...count]
      .map(([id, players]) => ({ id, name: itemName(id), players, share: Math.round((players / n) * 10_000) / 10_000 }))
      .sort((a, b) => b.players - a.players || a.id - b.id);
  };
  const byPlayer = new Map<number, { battles: number; wins: number; decided: number }>();
  for (const r of results) {
    const x = byPlayer.get(r.playerId) ?? { battles: 0, wins: 0, decided: 0 };
    x.battles++;
    if (r.result !== null) x.decided++;
    if (r.result === 1) x.wins++;
    byPlayer.set(r.playerId, x);
  }
  const builds = new Map<string, { row: BuildRow; players: number; battles: number; wins: number; decided: number }>();
  for (const r of rows) {
    const key = [r.gadgets, r.starPowers, r.hyperCharges].map((l) => [...l].sort((a, b) => a - b).join(',')).join('|');
    const b = builds.get(key) ?? { row: r, players: 0, battles: 0, wins: 0, decided: 0 };
    b.players++;
    const x = byPlayer.get(r.playerId);
    if (x) {
      b.battles += x.battles;
      b.wins += x.wins;
      b.decided += x.decided;
    }
    builds.set(key, b);
  }
  const ref = (ids: number[]) => [...ids].sort((a, b) => a - b).map((id) => ({ id, name: itemName(id) }));
  return {
    brawler,
    sampleSize: n,
    minTrophies: n > 0 ? rows[n - 1]!.trophies : null,
    gadgets: shares((r) => r.gadgets),
    starPowers: shares((r) => r.starPowers),
    hyperCharges: shares((r) => r.hyperCharges),
    gears: shares((r) => r.gears),
    builds: [...builds.values()]
      .map((b) => ({
        gadgets: ref(b.row.gadgets),
        starPowers: ref(b.row.starPowers),
        hyperCharges: ref(b.row.hyperCharges),
        players: b.players,
        battles: b.battles,
        wins: b.wins,
        winRate: b.decided > 0 ? Math.round((b.wins / b.decided) * 10_000) / 10_000 : null,
      }))
      .sort((a, b) => b.players - a.players || b.battles - a.battles),
  };
}

/** Names of every gadget, star power, hypercharge and gear of the catalogue, by id. */
export function itemNames(catalogue: Brawler[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const b of catalogue) {
    for (const list of [b.gadgets, b.starPowers, b.hyperCharges ?? [], b.gears ?? []]) {
      for (const it of list) out.set(it.id, it.name ?? '');
    }
  }
  return out;
}
