/**
 * Battles of one player on one day. `daySkeleton` fixes when each battle ends and how many trophies
 * it moved (it is all the trophy count needs); `battleBody` fleshes one battle out into the official
 * battle log item (event, mode-specific shape, teammates and opponents) only when a log is asked for.
 *
 * Trophy battles of a day move that day's main brawler exactly from its value at the start of the
 * day to its value at the end (model.ts), so battle log trophyChanges add up with the profile.
 */
import { rankedMaps, modeByName, type BattleFormat } from './catalogue/index.ts';
import { activeEvents, type ActiveEvent } from './events.ts';
import { DAY_MS, dayChange, Salt, type Profile } from './model.ts';
import { formatApiTime } from '../upstream/schemas.ts';
import { Stream } from './rng.ts';

export type BattleKind = 'trophy' | 'ranked' | 'friendly' | 'pve';

export interface SkeletonBattle {
  /** battleTime, epoch ms (whole seconds) */
  at: number;
  kind: BattleKind;
  /** preference rank of the brawler the player used (trophy battles: the day's main) */
  k: number;
  /** trophy change (trophy battles only) */
  change: number;
  /** index of the battle within the day, keys its details */
  n: number;
}

const WIN = { min: 4, max: 12 };
const LOSS = { min: 3, max: 10 };

/**
 * k signed, non-zero trophy changes summing to exactly `net` (wins in [4,12], losses in [-10,-3]).
 * Needs k ≥ ⌈|net|/10⌉ (callers use a larger k).
 */
export function bridge(net: number, k: number, s: Stream): number[] {
  let w = Math.round((net + 6.5 * k) / 14.5);
  w = Math.max(0, Math.min(k, w));
  while (w < k && net > w * WIN.max - (k - w) * LOSS.min) w++;
  while (w > 0 && net < w * WIN.min - (k - w) * LOSS.max) w--;
  const order = Array.from({ length: k }, (_, j) => ({ j, key: s.next() })).sort((a, b) => a.key - b.key);
  const out = new Array<number>(k).fill(0);
  order.forEach(({ j }, pos) => (out[j] = pos < w ? 8 : -6));
  let delta = net - out.reduce((a, b) => a + b, 0);
  const cycle = order.map((o) => o.j);
  let guard = 0;
  while (delta !== 0 && guard++ < 10_000) {
    const j = cycle[guard % k]!;
    const v = out[j]!;
    if (delta > 0) {
      if (v > 0 ? v < WIN.max : v < -LOSS.min) {
        out[j] = v + 1;
        delta--;
      }
    } else if (v > 0 ? v > WIN.min : v > -LOSS.max) {
      out[j] = v - 1;
      delta++;
    }
  }
  return out;
}

const DURATION: Record<BattleFormat, [number, number]> = {
  team3: [80, 200], team5: [100, 180], solo: [90, 240], duo: [90, 240], trio: [90, 240], duels: [45, 150], pve: [120, 300],
};

/** The battles of player p on epoch day `day`, oldest first. */
export function daySkeleton(seed: number, p: Profile, day: number): SkeletonBattle[] {
  if (day >= p.dormantDay) return [];
  const change = dayChange(seed, p, day);
  const s = new Stream(seed, Salt.Battle, p.i, day);
  const kinds: { kind: BattleKind; change: number; k: number }[] = [];
  const strength = Math.min(1, p.S / 80_000);
  if (change) {
    const need = Math.max(1, Math.ceil(Math.abs(change.net) / 9));
    const pairs = Math.floor(s.next() * (1 + p.activity * 5));
    const count = need + 2 * pairs;
    for (const c of bridge(change.net, count, s)) kinds.push({ kind: 'trophy', change: c, k: change.k });
  }
  const playing = change !== null || s.next() < p.activity * 0.25;
  if (playing) {
    if (p.S > 8000) {
      const ranked = Math.floor(s.next() * (1 + p.activity * 6 * strength));
      for (let r = 0; r < ranked; r++) kinds.push({ kind: 'ranked', change: 0, k: s.int(0, Math.min(p.m, p.n0) - 1) });
    }
    if (s.next() < 0.12) kinds.push({ kind: 'friendly', change: 0, k: s.int(0, p.n0 - 1) });
    if (s.next() < 0.15) kinds.push({ kind: 'pve', change: 0, k: s.int(0, Math.min(p.m, p.n0) - 1) });
  }
  if (kinds.length === 0) return [];
  const keyed = kinds.map((x) => ({ x, key: s.next() })).sort((a, b) => a.key - b.key);
  const durations = keyed.map(() => s.int(100, 260));
  const total = durations.reduce((a, b) => a + b, 0) * 1000;
  const dayStart = day * DAY_MS;
  let t = dayStart + Math.floor((9 + s.next() * 12) * 3_600_000);
  if (t + total > dayStart + DAY_MS - 60_000) t = Math.max(dayStart, dayStart + DAY_MS - 60_000 - total);
  return keyed.map((e, n) => {
    t += durations[n]! * 1000;
    return { at: Math.floor(t / 1000) * 1000, kind: e.x.kind, k: e.x.k, change: e.x.change, n };
  });
}

// ---------------------------------------------------------------- battle bodies

export interface Participant {
  tag: string;
  name: string;
  brawler: { id: number; name: string; power: number; trophies: number };
}

export interface BattleContext {
  seed: number;
  /** the requesting player as it appears in battles, with the brawler it used */
  self: Participant;
  /** brawler trophies of the player's other brawlers, for duels (id, name, power, trophies) */
  spareBrawlers: { id: number; name: string; power: number; trophies: number }[];
  /** a random other player near the requester's strength, with a brawler */
  other: (s: Stream, soloRanked: boolean) => Participant;
  /** the requester's ranked tier (soloRanked battles report it in brawler.trophies) */
  rankTier: number;
}

/** Event the player picks at a time: weighted by slot popularity among running trophy events. */
export function pickEvent(seed: number, atMs: number, s: Stream, pve: boolean): ActiveEvent | null {
  const events = activeEvents(seed, atMs).filter((e) => (modeByName.get(e.mode)?.format === 'pve') === pve);
  if (events.length === 0) return null;
  let total = 0;
  for (const e of events) total += e.slot.popularity;
  let x = s.next() * total;
  for (const e of events) {
    x -= e.slot.popularity;
    if (x < 0) return e;
  }
  return events[events.length - 1]!;
}

function showdownRank(change: number, places: number): number {
  const solo = change > 0 ? Math.max(1, Math.min(5, 6 - Math.ceil(change / 2.4))) : Math.min(10, 6 + Math.ceil(-change / 2));
  return places === 10 ? solo : Math.max(1, Math.min(places, Math.ceil((solo * places) / 10)));
}

const PVE_LEVELS = ['Normal', 'Hard', 'Expert', 'Master', 'Insane', 'Insane II', 'Insane III', 'Insane IV', 'Insane V', 'Insane VI'];

/** One battle log item. Returns the official shape for the battle's format. */
export function battleBody(ctx: BattleContext, b: SkeletonBattle, dayKey: number, playerIndex: number): Record<string, unknown> {
  const s = new Stream(ctx.seed, Salt.Battle, playerIndex, dayKey, b.n, 1);
  const battleTime = b.at;
  const self = ctx.self;
  if (b.kind === 'ranked') {
    const map = s.pick(rankedMaps);
    const modeInfo = modeByName.get(map.mode)!;
    const me: Participant = { ...self, brawler: { ...self.brawler, trophies: ctx.rankTier } };
    const result = s.next() < 0.48 ? 'victory' : s.next() < 0.93 ? 'defeat' : 'draw';
    const teams = teamsWith(ctx, s, me, 3, true);
    const star = s.next() < 0.6 ? null : pickStar(teams, result, s, me);
    return item(battleTime, { id: map.id, mode: map.mode, modeId: modeInfo.id, map: map.name }, {
      mode: map.mode, type: 'soloRanked', result, duration: s.int(60, 210), starPlayer: star, teams: teams.list,
    });
  }
  if (b.kind === 'pve') {
    const ev = pickEvent(ctx.seed, battleTime, s, true);
    if (ev) {
      const info = modeByName.get(ev.mode)!;
      const players = [self, ctx.other(s, false), ctx.other(s, false)];
      const lvl = s.int(0, PVE_LEVELS.length - 1);
      return item(battleTime, { id: ev.mapId, mode: info.eventMode ?? ev.mode, modeId: info.id, map: ev.map }, {
        mode: info.battleMode ?? ev.mode, result: s.next() < 0.6 ? 'victory' : 'defeat', players, level: { name: PVE_LEVELS[lvl], id: lvl },
      });
    }
  }
  if (b.kind === 'friendly' || b.kind === 'pve') {
    // Friendly games: often on a map-maker map, which the API reports as {"id":0,"map":null}.
    const ev = pickEvent(ctx.seed, battleTime, s, false);
    const mapMaker = !ev || s.next() < 0.4;
    const mode = ev && modeByName.get(ev.mode)?.format === 'team3' ? ev.mode : 'brawlBall';
    const teams = teamsWith(ctx, s, self, 3, false);
    const result = s.next() < 0.5 ? 'victory' : 'defeat';
    const event = mapMaker ? { id: 0, map: null } : { id: ev!.mapId, mode: ev!.mode, modeId: ev!.modeId, map: ev!.map };
    return item(battleTime, event, {
      mode, type: 'friendly', result, duration: s.int(60, 200), starPlayer: pickStar(teams, result, s, self), teams: teams.list,
    });
  }
  // Trophy (ladder) battle.
  const ev = pickEvent(ctx.seed, battleTime, s, false);
  const info = ev ? modeByName.get(ev.mode) : undefined;
  const format: BattleFormat = info?.format ?? 'team3';
  const eventMode = info?.eventMode ?? ev?.mode ?? 'gemGrab';
  const battleMode = info?.battleMode ?? ev?.mode ?? 'gemGrab';
  const event = ev ? { id: ev.mapId, mode: eventMode, modeId: ev.modeId, map: ev.map } : { id: 0, map: null };
  const change = b.change;
  const [dmin, dmax] = DURATION[format];
  switch (format) {
    case 'solo': {
      const rank = showdownRank(change, 10);
      const players: Participant[] = [];
      for (let r = 1; r <= 10; r++) players.push(r === rank ? self : ctx.other(s, false));
      return item(battleTime, event, { mode: battleMode, type: 'ranked', rank, trophyChange: change, players });
    }
    case 'duo':
    case 'trio': {
      const size = format === 'duo' ? 2 : 3;
      const places = format === 'duo' ? 5 : 4;
      const rank = showdownRank(change, places);
      const teams: Participant[][] = [];
      for (let r = 1; r <= places; r++) {
        const team: Participant[] = [];
        for (let m = 0; m < size; m++) team.push(r === rank && m === 0 ? self : ctx.other(s, false));
        teams.push(team);
      }
      return item(battleTime, event, { mode: battleMode, type: 'ranked', rank, trophyChange: change, teams });
    }
    case 'duels': {
      const mine = [{ ...self.brawler, trophyChange: change }];
      for (const spare of ctx.spareBrawlers.slice(0, 2)) mine.push({ ...spare, trophyChange: 0 });
      const opp = ctx.other(s, false);
      // The opponent's three brawlers; only the one that met ours moved trophies.
      const theirs = [opp.brawler, ctx.other(s, false).brawler, ctx.other(s, false).brawler].map((br, x) => ({
        ...br,
        trophyChange: x === 0 ? -Math.sign(change) * s.int(3, 9) : 0,
      }));
      const players = s.next() < 0.5
        ? [{ tag: self.tag, name: self.name, brawlers: mine }, { tag: opp.tag, name: opp.name, brawlers: theirs }]
        : [{ tag: opp.tag, name: opp.name, brawlers: theirs }, { tag: self.tag, name: self.name, brawlers: mine }];
      return item(battleTime, event, {
        mode: battleMode, type: 'ranked', result: change > 0 ? 'victory' : 'defeat', duration: s.int(dmin, dmax), players,
      });
    }
    default: {
      const result = change > 0 ? 'victory' : 'defeat';
      const teams = teamsWith(ctx, s, self, format === 'team5' ? 5 : 3, false);
      return item(battleTime, event, {
        mode: battleMode, type: 'ranked', result, duration: s.int(dmin, dmax), trophyChange: change,
        starPlayer: pickStar(teams, result, s, self), teams: teams.list,
      });
    }
  }
}

function teamsWith(ctx: BattleContext, s: Stream, me: Participant, size: number, soloRanked: boolean) {
  const mine: Participant[] = [];
  const theirs: Participant[] = [];
  const pos = s.int(0, size - 1);
  for (let m = 0; m < size; m++) mine.push(m === pos ? me : ctx.other(s, soloRanked));
  for (let m = 0; m < size; m++) theirs.push(ctx.other(s, soloRanked));
  const first = s.next() < 0.5;
  return { mine, theirs, list: first ? [mine, theirs] : [theirs, mine] };
}

function pickStar(teams: { mine: Participant[]; theirs: Participant[] }, result: string, s: Stream, me: Participant): Participant {
  if (result === 'victory') return s.next() < 0.4 ? me : s.pick(teams.mine);
  return s.next() < 0.85 ? s.pick(teams.theirs) : s.pick(teams.mine);
}

function item(battleTime: number, event: Record<string, unknown>, battle: Record<string, unknown>) {
  return { battleTime: formatApiTime(battleTime), event, battle };
}
