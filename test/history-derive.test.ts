/**
 * What the history endpoints compute (pure): change events and play sessions, the trophy push,
 * map statistics with shrinkage, rotation predictions and best builds.
 */
import { describe, expect, it } from 'vitest';
import { bestBuildOf, mapStats, MIN_SAMPLE, playerLogEvents, predictUpcoming, priorStrength, pushOf } from '../src/core/history-derive.ts';
import type { Snapshot } from '../src/store/history-snapshots.ts';
import { canonical, PLAYER_SPEC } from '../src/store/snapshot.ts';

const H = 3600;
const brawler = (id: number, power: number, rank: number, trophies: number, prestigeLevel = 0) => ({
  id, name: `B${id}`, power, rank, trophies, highestTrophies: trophies, prestigeLevel,
});
function snap(t: number, p: { name?: string; trophies: number; club?: string | null; brawlers: ReturnType<typeof brawler>[] }): Snapshot {
  return {
    t,
    state: canonical(
      { tag: '#P', name: p.name ?? 'me', trophies: p.trophies, club: p.club ? { tag: p.club, name: `club ${p.club}` } : {}, brawlers: p.brawlers },
      PLAYER_SPEC,
    ),
  };
}

describe('player log', () => {
  it('turns consecutive snapshots into events, merging trophy changes of one play session', () => {
    const s = [
      snap(0, { trophies: 100, club: '#A', brawlers: [brawler(1, 9, 3, 100)] }),
      snap(1 * H, { trophies: 108, club: '#A', brawlers: [brawler(1, 9, 3, 108)] }),
      snap(2 * H, { trophies: 103, club: '#A', brawlers: [brawler(1, 10, 4, 103)] }),
      snap(10 * H, { trophies: 103, name: 'new me', club: '#B', brawlers: [brawler(1, 10, 4, 103, 1), brawler(2, 1, 1, 0)] }),
      snap(30 * H, { trophies: 120, name: 'new me', club: null, brawlers: [brawler(1, 10, 4, 120, 1), brawler(2, 1, 1, 0)] }),
    ];
    const events = playerLogEvents(s, [0.5 * H, 1.5 * H, 1.7 * H, 29 * H], 1.5 * H);
    expect(events).toEqual([
      { type: 'trophies', timestamp: 30 * H, start: 30 * H, from: 103, to: 120, change: 17, battles: 1 },
      { type: 'clubLeft', timestamp: 30 * H, club: { tag: '#B', name: 'club #B' } },
      { type: 'nameChanged', timestamp: 10 * H, from: 'me', to: 'new me' },
      { type: 'clubLeft', timestamp: 10 * H, club: { tag: '#A', name: 'club #A' } },
      { type: 'clubJoined', timestamp: 10 * H, club: { tag: '#B', name: 'club #B' } },
      { type: 'prestigeUp', timestamp: 10 * H, brawler: { id: 1, name: 'B1' }, from: 0, to: 1 },
      { type: 'brawlerUnlocked', timestamp: 10 * H, brawler: { id: 2, name: 'B2' } },
      { type: 'trophies', timestamp: 2 * H, start: 1 * H, from: 100, to: 103, change: 3, battles: 3 },
      { type: 'powerUp', timestamp: 2 * H, brawler: { id: 1, name: 'B1' }, from: 9, to: 10 },
      { type: 'rankUp', timestamp: 2 * H, brawler: { id: 1, name: 'B1' }, from: 3, to: 4 },
    ]);
  });
});

describe('push', () => {
  it('measures gains from the value in force at the start of each window, the best day and the streak', () => {
    const day = 86_400;
    const now = 40 * day + 12 * H;
    const newest = [
      snap(now - H, { trophies: 500, brawlers: [brawler(1, 11, 1, 300), brawler(2, 11, 1, 200)] }),
      snap(now - 2 * day, { trophies: 450, brawlers: [brawler(1, 11, 1, 260), brawler(2, 11, 1, 190)] }),
      snap(now - 10 * day, { trophies: 300, brawlers: [brawler(1, 11, 1, 150), brawler(2, 11, 1, 150)] }),
    ];
    const battles = [1, 1, 1, 0, 1].map((result, i) => ({ t: now - i, result, brawlerId: 1, trophyChange: null, rank: null, star: false, mapId: null, mode: null, type: null })) as never;
    const push = pushOf('#P', newest, battles, now);
    expect(push.gains.day).toEqual({ change: 50, from: 450, to: 500, since: now - 2 * day });
    expect(push.gains.week).toEqual({ change: 200, from: 300, to: 500, since: now - 10 * day });
    expect(push.gains.month).toEqual({ change: 200, from: 300, to: 500, since: now - 10 * day });
    expect(push.bestDay).toEqual({ date: new Date(Math.floor((now - 2 * day) / day) * day * 1000).toISOString().slice(0, 10), change: 150 });
    expect(push.winStreak).toBe(3);
    expect(push.brawlers.map((b) => [b.id, b.change])).toEqual([[1, 150], [2, 50]]);
  });
});

describe('map statistics', () => {
  const row = (brawlerId: number, wins: number, losses: number, stars = 0) => ({ mode: 'gemGrab', brawlerId, picks: wins + losses, wins, losses, draws: 0, stars });

  it('shrinks small samples toward the map mean and flags them', () => {
    const { stats, prior } = mapStats([row(1, 3, 0, 2), row(2, 300, 200, 90), row(3, 200, 300, 50), row(4, 250, 250, 60)], (id) => `B${id}`);
    expect(prior.winRate).toBeCloseTo(753 / 1503, 4);
    const small = stats.find((s) => s.brawler.id === 1)!;
    expect(small.winRate).toBe(1);
    expect(small.smallSample).toBe(true);
    expect(small.adjustedWinRate!).toBeLessThan(0.6);
    expect(small.adjustedWinRate!).toBeGreaterThan(prior.winRate!);
    const big = stats.find((s) => s.brawler.id === 2)!;
    expect(big.smallSample).toBe(false);
    expect(Math.abs(big.adjustedWinRate! - 0.6)).toBeLessThan(0.01);
    expect(stats.reduce((a, s) => a + s.useRate, 0)).toBeCloseTo(1, 3);
    expect(stats[0]!.brawler.id).toBe(2);
    expect(MIN_SAMPLE).toBeGreaterThan(3);
  });

  it('estimates a weaker prior when brawlers really differ', () => {
    const alike = [row(1, 50, 50), row(2, 51, 49), row(3, 49, 51)].map((r) => ({ wins: r.wins, games: r.picks }));
    const apart = [row(1, 80, 20), row(2, 50, 50), row(3, 20, 80)].map((r) => ({ wins: r.wins, games: r.picks }));
    expect(priorStrength(apart, 0.5)).toBeLessThan(priorStrength(alike, 0.5));
  });
});

describe('rotation prediction', () => {
  it('predicts what followed the current map last time, starting when the current event ends', () => {
    const history = [
      { slotId: 1, start: 0, end: 100, mapId: 10, map: 'A', mode: 'gemGrab', modifiers: null },
      { slotId: 1, start: 100, end: 200, mapId: 11, map: 'B', mode: 'brawlBall', modifiers: null },
      { slotId: 1, start: 200, end: 300, mapId: 12, map: 'C', mode: 'heist', modifiers: null },
    ];
    const active = [{ startTime: '19700101T000500.000Z', endTime: '19700101T000640.000Z', slotId: 1, event: { id: 10, mode: 'gemGrab', map: 'A' } }];
    expect(predictUpcoming(active, history)).toEqual([
      { slotId: 1, startTime: '19700101T000640.000Z', endTime: '19700101T000820.000Z', event: { id: 11, map: 'B', mode: 'brawlBall' }, predicted: true, historyLength: 3 },
    ]);
    // an unseen map in a known mode: what followed that mode
    const other = [{ ...active[0]!, event: { id: 99, mode: 'brawlBall', map: 'Z' } }];
    expect(predictUpcoming(other, history)[0]!.event.id).toBe(12);
    expect(predictUpcoming([{ ...active[0]!, slotId: 7 }], history)).toEqual([]);
  });
});

describe('best build', () => {
  it('counts what the top players own, with win rates per build', () => {
    const rows = [
      { playerId: 1, tag: '#1', trophies: 900, power: 11, gadgets: [100], starPowers: [200], hyperCharges: [], gears: [300, 301] },
      { playerId: 2, tag: '#2', trophies: 800, power: 11, gadgets: [100], starPowers: [200], hyperCharges: [], gears: [300] },
      { playerId: 3, tag: '#3', trophies: 700, power: 11, gadgets: [101], starPowers: [200], hyperCharges: [400], gears: [] },
    ];
    const results = [
      { playerId: 1, result: 1 }, { playerId: 1, result: -1 }, { playerId: 2, result: 1 }, { playerId: 3, result: null },
    ];
    const b = bestBuildOf({ id: 5, name: 'X' }, rows, results, (id) => `item ${id}`);
    expect(b.sampleSize).toBe(3);
    expect(b.minTrophies).toBe(700);
    expect(b.gadgets).toEqual([{ id: 100, name: 'item 100', players: 2, share: 0.6667 }, { id: 101, name: 'item 101', players: 1, share: 0.3333 }]);
    expect(b.gears[0]).toEqual({ id: 300, name: 'item 300', players: 2, share: 0.6667 });
    expect(b.builds[0]).toMatchObject({ players: 2, battles: 3, wins: 2, winRate: 0.6667 });
    expect(b.builds[1]).toMatchObject({ players: 1, battles: 1, wins: 0, winRate: null });
  });
});
