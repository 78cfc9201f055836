/**
 * Tracking, polling and recorded history against the simulated world on virtual time: what the
 * store holds at every poll is the world's truth, the logs list exactly the changes the world
 * made between polls, maintenance pauses polling and it resumes, and the loop stops cleanly.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HistoryService } from '../src/core/history.ts';
import { ManualSleeper, Poller, type PollerClock } from '../src/poller/index.ts';
import type { World } from '../src/sim/world.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { canonical, CLUB_SPEC, jsonEqual, PLAYER_SPEC, type State } from '../src/store/snapshot.ts';
import { Club, parseApiTime, Player } from '../src/upstream/schemas.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

interface Rig {
  w: TestWorld;
  store: HistoryStore;
  history: HistoryService;
  poller: Poller;
  close(): Promise<void>;
}

async function rig(env: Record<string, string> = {}, clock?: (now: () => number) => PollerClock): Promise<Rig> {
  const w = await startWorld({ startMs: T0, players: 300, clubs: 30, env: { RANKING_COUNTRIES: '', ...env } });
  const { historyStore: store, history } = w;
  const poller = new Poller({
    stats: w.stats,
    history,
    config: w.config,
    clock: clock ? clock(w.now) : { now: w.now, sleep: async () => {} },
    pinTopPlayers: 0,
  });
  return {
    w,
    store,
    history,
    poller,
    async close() {
      await poller.stop();
      await w.close();
    },
  };
}

/** The state the store holds as of `atMs`: the newest snapshot recorded at or before it. */
async function stateAt(store: HistoryStore, kind: 'player' | 'club', tag: string, atMs: number): Promise<State | undefined> {
  return (await store.snapshots(kind, tag)).find((s) => s.t * 1000 <= atMs)?.state;
}

const truth = (world: World, kind: 'player' | 'club', tag: string, atMs: number): State =>
  kind === 'player'
    ? canonical(Player.parse(world.player(tag, atMs)) as never, PLAYER_SPEC)
    : canonical(Club.parse(world.club(tag, atMs)) as never, CLUB_SPEC);

/** Changes of brawlers, club and name between two bodies of the world, in the log's words. */
function worldChanges(a: Player, b: Player): string[] {
  const out: string[] = [];
  const before = new Map(a.brawlers.map((x) => [x.id, x]));
  for (const x of b.brawlers) {
    const was = before.get(x.id);
    if (!was) out.push(`brawlerUnlocked ${x.id}`);
    else {
      if (x.power > was.power) out.push(`powerUp ${x.id} ${was.power}->${x.power}`);
      if (x.rank > was.rank) out.push(`rankUp ${x.id} ${was.rank}->${x.rank}`);
      if ((x.prestigeLevel ?? 0) > (was.prestigeLevel ?? 0)) out.push(`prestigeUp ${x.id} ${was.prestigeLevel}->${x.prestigeLevel}`);
    }
  }
  const ca = (a.club as { tag?: string }).tag;
  const cb = (b.club as { tag?: string }).tag;
  if (ca !== cb) {
    if (ca) out.push(`clubLeft ${ca}`);
    if (cb) out.push(`clubJoined ${cb}`);
  }
  if (a.name !== b.name) out.push(`nameChanged ${a.name}->${b.name}`);
  return out;
}

describe('polling tracked players', () => {
  let r: Rig;
  const polls: number[] = [];
  let tag = '';
  const every = 3 * HOUR;
  const span = 8 * DAY;

  beforeAll(async () => {
    r = await rig({ POLL_PLAYER_MINUTES: String(every / MIN) });
    const world = r.w.sim.world;
    // Of the first 12 players, the one whose profile changes in most ways (then most often) over
    // the window: a log worth checking.
    let best = -1;
    for (let i = 0; i < 12; i++) {
      const t = world.playerTag(i);
      const changes: string[] = [];
      for (let at = T0; at + every <= T0 + span; at += every) {
        changes.push(...worldChanges(world.player(t, at) as Player, world.player(t, at + every) as Player));
      }
      const score = new Set(changes.map((c) => c.split(' ')[0])).size * 1000 + changes.length;
      if (score > best) [best, tag] = [score, t];
    }
    // A user looks the player up: it is recorded and tracked from then on.
    await r.w.stats.player(tag);
    await r.history.flush();
    polls.push(T0);
    for (let at = T0 + every; at <= T0 + span; at += every) {
      r.w.clock.set(at);
      const report = await r.poller.runOnce();
      expect(report.players).toBe(1);
      polls.push(at);
    }
  });
  afterAll(async () => r.close());

  it('holds exactly the world at every poll', async () => {
    for (const at of polls) {
      expect(jsonEqual(await stateAt(r.store, 'player', tag, at), truth(r.w.sim.world, 'player', tag, at)), new Date(at).toISOString()).toBe(true);
    }
    const history = (await r.history.playerHistory(tag, 1000)).data;
    expect(history.tracked).toBe(true);
    expect(history.items.length).toBeGreaterThan(1);
    expect(history.items.length).toBeLessThanOrEqual(polls.length);
    expect(history.items[0]!.trophies).toBe((r.w.sim.world.player(tag, polls[polls.length - 1]!) as Player).trophies);
  });

  it('logs exactly the changes the world made between the polls, each once', async () => {
    const world = r.w.sim.world;
    const expected: string[] = [];
    for (let k = 1; k < polls.length; k++) {
      for (const c of worldChanges(world.player(tag, polls[k - 1]!) as Player, world.player(tag, polls[k]!) as Player)) expected.push(`${polls[k]! / 1000} ${c}`);
    }
    expect(expected.length).toBeGreaterThan(3);
    expect(new Set(expected.map((e) => e.split(' ')[1]))).toEqual(new Set(['brawlerUnlocked', 'powerUp']));
    // Polling again at the same instants and looking the player up again adds nothing.
    await r.poller.runOnce();
    await r.w.stats.player(tag);
    await r.history.flush();
    const log = (await r.history.playerLog(tag, 10_000)).data.items;
    const got = log
      .filter((e) => e.type !== 'trophies')
      .map((e) => {
        switch (e.type) {
          case 'brawlerUnlocked':
            return `${e.timestamp} brawlerUnlocked ${e.brawler.id}`;
          case 'powerUp':
          case 'rankUp':
          case 'prestigeUp':
            return `${e.timestamp} ${e.type} ${e.brawler.id} ${e.from}->${e.to}`;
          case 'clubJoined':
          case 'clubLeft':
            return `${e.timestamp} ${e.type} ${e.club.tag}`;
          case 'nameChanged':
            return `${e.timestamp} nameChanged ${e.from}->${e.to}`;
          default:
            return '';
        }
      });
    expect(got.sort()).toEqual(expected.sort());
    // Trophy sessions: every change once, adding up to the world's total over the window.
    const sessions = log.filter((e) => e.type === 'trophies');
    const first = (world.player(tag, polls[0]!) as Player).trophies;
    const last = (world.player(tag, polls[polls.length - 1]!) as Player).trophies;
    expect(sessions.reduce((s, e) => s + (e.type === 'trophies' ? e.change : 0), 0)).toBe(last - first);
    const moves = polls.slice(1).filter((at, k) => (world.player(tag, at) as Player).trophies !== (world.player(tag, polls[k]!) as Player).trophies);
    for (const at of moves) expect(sessions.some((e) => e.type === 'trophies' && e.start <= at / 1000 && at / 1000 <= e.timestamp)).toBe(true);
  });

  it('records each battle of the logs it polled once, with the battle time of the world', async () => {
    const battles = await r.store.playerBattles(tag);
    const times = battles.map((b) => b.t);
    expect(new Set(times).size).toBe(times.length);
    const world = r.w.sim.world;
    const seen = new Set<number>();
    for (const at of polls) for (const item of (world.battlelog(tag, at) as { items: { battleTime: string }[] }).items) seen.add(parseApiTime(item.battleTime) / 1000);
    expect(new Set(times)).toEqual(seen);
  });

  it('computes the push from the recorded trophies', async () => {
    const now = polls[polls.length - 1]!;
    const push = (await r.history.playerPush(tag)).data;
    const world = r.w.sim.world;
    const at = (t: number) => (world.player(tag, t) as Player).trophies;
    // Polls every 3 hours: the value in force a day ago is the poll at or before then.
    const before = (t: number) => polls.filter((p) => p <= t).pop()!;
    expect(push.trophies).toBe(at(now));
    expect(push.gains.day!.change).toBe(at(now) - at(before(now - DAY)));
    expect(push.gains.week!.change).toBe(at(now) - at(before(now - 7 * DAY)));
    expect(push.gains.month!.change).toBe(at(now) - at(polls[0]!));
  });
});

describe('polling tracked clubs', () => {
  let r: Rig;
  afterAll(async () => r?.close());

  it('holds the club at every poll and logs every membership change once', async () => {
    const every = 6 * HOUR;
    r = await rig({ POLL_CLUB_MINUTES: String(every / MIN) });
    const world = r.w.sim.world;
    const members = (t: number, c: string) => new Map(((world.club(c, t) as Club).members).map((m) => [m.tag, m.role]));
    let tag = '';
    let best = -1;
    for (let c = 0; c < 30; c++) {
      const ct = world.clubTag(c);
      let n = 0;
      for (let at = T0; at + every <= T0 + 10 * DAY; at += every) {
        const a = members(at, ct);
        const b = members(at + every, ct);
        for (const [m, role] of b) if (a.get(m) !== role) n++;
        for (const m of a.keys()) if (!b.has(m)) n++;
      }
      if (n > best) [best, tag] = [n, ct];
    }
    await r.w.stats.club(tag);
    const polls = [T0];
    for (let at = T0 + every; at <= T0 + 10 * DAY; at += every) {
      r.w.clock.set(at);
      expect((await r.poller.runOnce()).clubs).toBe(1);
      polls.push(at);
    }
    const expected: string[] = [];
    for (let k = 1; k < polls.length; k++) {
      const a = members(polls[k - 1]!, tag);
      const b = members(polls[k]!, tag);
      const t = polls[k]! / 1000;
      for (const [m, role] of b) {
        if (!a.has(m)) expected.push(`${t} join ${m}`);
        else if (a.get(m) !== role) expected.push(`${t} role ${m} ${a.get(m)}->${role}`);
      }
      for (const m of a.keys()) if (!b.has(m)) expected.push(`${t} leave ${m}`);
      expect(jsonEqual(await stateAt(r.store, 'club', tag, polls[k]!), truth(world, 'club', tag, polls[k]!))).toBe(true);
    }
    expect(expected.length).toBeGreaterThan(2);
    const log = (await r.history.clubLog(tag, 10_000)).data.items.filter((e) => e.type !== 'settings');
    const got = log.map((e) => (e.type === 'role' ? `${e.timestamp} role ${e.player!.tag} ${String(e.from)}->${String(e.to)}` : `${e.timestamp} ${e.type} ${e.player!.tag}`));
    expect(got.sort()).toEqual(expected.sort());
  });
});

describe('tracking', () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
  });
  afterAll(async () => r.close());

  it('polls a looked-up player for TRACK_DAYS, a pinned one while pinned', async () => {
    const world = r.w.sim.world;
    const viewed = world.playerTag(10);
    const pinned = world.playerTag(11);
    await r.w.stats.player(viewed);
    await r.history.pin('player', pinned, 'link:guild:member');
    await r.history.flush();
    expect((await r.poller.runOnce()).players).toBe(2);
    // nothing is due again before the poll interval
    r.w.clock.advance(10 * MIN);
    expect((await r.poller.runOnce()).players).toBe(0);
    // after TRACK_DAYS without a look-up only the pinned player is still polled
    r.w.clock.set(T0 + (r.w.config.TRACK_DAYS * DAY) + HOUR);
    const due = await r.store.due('player', r.w.now(), 10);
    expect(due.map((d) => d.tag)).toEqual([pinned]);
    await r.history.unpin('player', pinned, 'link:guild:member');
    expect(await r.store.due('player', r.w.now(), 10)).toEqual([]);
  });
});

describe('maintenance', () => {
  let r: Rig;
  afterEach(async () => r?.close());

  it('pauses polling while upstream is in maintenance, backing off, and resumes after', async () => {
    r = await rig();
    const tag = r.w.sim.world.playerTag(3);
    await r.w.stats.player(tag);
    await r.history.flush();
    await r.poller.runOnce();
    r.w.sim.faults.set({ maintenance: true });
    r.w.clock.advance(31 * MIN);
    const calls = r.w.stats.stats().upstreamCalls;
    const first = await r.poller.runOnce();
    expect(first.maintenance).toBe(true);
    expect(r.poller.paused).toBe(true);
    // while paused, nothing is asked upstream
    r.w.clock.advance(30_000);
    const during = r.w.stats.stats().upstreamCalls;
    expect((await r.poller.runOnce()).maintenance).toBe(true);
    expect(r.w.stats.stats().upstreamCalls).toBe(during);
    expect(during - calls).toBeLessThanOrEqual(2);
    // still in maintenance after the first back-off: the next one is longer
    r.w.clock.advance(31_000);
    expect((await r.poller.runOnce()).maintenance).toBe(true);
    r.w.clock.advance(61_000);
    expect(r.poller.paused).toBe(true);
    r.w.sim.faults.set({ maintenance: false });
    r.w.clock.advance(60_000);
    expect(r.poller.paused).toBe(false);
    const after = await r.poller.runOnce();
    expect(after.maintenance).toBe(false);
    expect(after.players).toBe(1);
    expect((await r.store.snapshots('player', tag))[0]!.t * 1000).toBe(r.w.now());
  });
});

describe('the loop', () => {
  it('runs ticks on its clock and stops cleanly', async () => {
    let sleeper!: ManualSleeper;
    const r = await rig({}, (now) => (sleeper = new ManualSleeper(now)));
    try {
      await r.w.stats.player(r.w.sim.world.playerTag(4));
      await r.history.flush();
      r.poller.start();
      const ms = await sleeper.untilAsleep();
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(60_000);
      expect((await r.store.snapshots('player', r.w.sim.world.playerTag(4))).length).toBe(1);
      expect((await r.store.tracking('player', r.w.sim.world.playerTag(4), r.w.now())).lastPollMs).toBe(r.w.now());
      r.w.clock.advance(ms);
      sleeper.wake();
      await sleeper.untilAsleep();
      await r.poller.stop();
      expect(sleeper.sleeping).toBeNull();
    } finally {
      await r.close();
    }
  });
});
