/**
 * The simulated world over real HTTP: determinism, consistency between endpoints at one instant,
 * movement over time, official shapes (every body checked against the client's zod schemas).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimClock, startSim, type SimServer } from '../src/sim/index.ts';
import * as S from '../src/upstream/schemas.ts';
import { parseApiTime } from '../src/upstream/schemas.ts';

const T0 = Date.UTC(2026, 10, 20, 18, 30, 0);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type Body = any;

async function get(sim: SimServer, path: string): Promise<{ status: number; text: string; body: Body }> {
  const res = await fetch(sim.url + path, { headers: { authorization: `Bearer ${sim.token}` } });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

async function ok(sim: SimServer, path: string, schema?: { parse(v: unknown): unknown }): Promise<Body> {
  const r = await get(sim, path);
  expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(200);
  if (schema) schema.parse(r.body);
  return r.body;
}

const enc = (tag: string) => encodeURIComponent(tag);

/** Every member through the paging cursors, limit 7 per page. */
async function allMembers(sim: SimServer, clubTag: string): Promise<Body[]> {
  const out: Body[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 10; guard++) {
    const page = await ok(sim, `/clubs/${enc(clubTag)}/members?limit=7${after ? `&after=${after}` : ''}`, S.ClubMembers);
    out.push(...page.items);
    after = page.paging.cursors.after;
    if (!after) break;
  }
  return out;
}

describe('simulated world: determinism', () => {
  let a: SimServer;
  let b: SimServer;
  let other: SimServer;
  beforeAll(async () => {
    a = await startSim({ seed: 'det', players: 2000, clubs: 120, clock: new SimClock(T0) });
    b = await startSim({ seed: 'det', players: 2000, clubs: 120, clock: new SimClock(T0) });
    other = await startSim({ seed: 'other', players: 2000, clubs: 120, clock: new SimClock(T0) });
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), other.close()]);
  });

  it('answers the same question at the same time with the same bytes, on two servers', async () => {
    const p = a.world.playerTag(17);
    const c = a.world.clubTag(4);
    const paths = [
      `/players/${enc(p)}`,
      `/players/${enc(p)}/battlelog`,
      `/clubs/${enc(c)}`,
      `/clubs/${enc(c)}/members?limit=5`,
      '/rankings/global/players',
      '/rankings/DE/clubs?limit=20',
      '/rankings/global/brawlers/16000001?limit=50',
      '/brawlers',
      '/events/rotation',
      '/gamemodes',
    ];
    for (const path of paths) {
      const first = await get(a, path);
      const again = await get(a, path);
      const twin = await get(b, path);
      expect(first.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(twin.text).toBe(first.text);
    }
  });

  it('gives a different world for a different seed', async () => {
    const mine = await ok(a, '/rankings/global/players?limit=5');
    const theirs = await ok(other, '/rankings/global/players?limit=5');
    expect(theirs.items.map((x: Body) => x.tag)).not.toEqual(mine.items.map((x: Body) => x.tag));
  });

  it('maps tags to players and back for every player', () => {
    for (let i = 0; i < a.world.playerCount; i++) expect(a.world.playerIndex(a.world.playerTag(i))).toBe(i);
    for (let c = 0; c < a.world.clubCount; c++) expect(a.world.clubIndex(a.world.clubTag(c))).toBe(c);
    expect(a.world.playerIndex(a.world.clubTag(0))).toBeNull();
  });
});

describe('simulated world: one instant, every endpoint agrees', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ seed: 'consistency', players: 2500, clubs: 150, clock: new SimClock(T0) });
  });
  afterAll(() => sim.close());

  it('profile trophies are the sum of its brawlers, within the official shape', async () => {
    for (const i of [0, 3, 250, 1200, 2499]) {
      const p = await ok(sim, `/players/${enc(sim.world.playerTag(i))}`, S.Player);
      expect(p.tag).toBe(sim.world.playerTag(i));
      expect(p.trophies).toBe(p.brawlers.reduce((a: number, b: Body) => a + b.trophies, 0));
      expect(p.highestTrophies).toBeGreaterThanOrEqual(p.trophies);
      expect(p.totalPrestigeLevel).toBe(p.brawlers.reduce((a: number, b: Body) => a + b.prestigeLevel, 0));
      const ids = p.brawlers.map((b: Body) => b.id);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      for (const b of p.brawlers) {
        expect(b.power).toBeGreaterThanOrEqual(1);
        expect(b.power).toBeLessThanOrEqual(11);
        expect(b.highestTrophies).toBeGreaterThanOrEqual(b.trophies);
        expect(b.skin.id).toBeGreaterThanOrEqual(29000000);
        expect(Object.keys(b.buffies).sort()).toEqual(['gadget', 'hyperCharge', 'starPower']);
        for (const g of b.gears) expect(g.id).toBeGreaterThanOrEqual(62000000);
        for (const c of [...b.gadgets, ...b.starPowers, ...b.hyperCharges]) expect(Math.floor(c.id / 1e6)).toBe(23);
      }
    }
  });

  it('clubs, their member lists and the members\' profiles agree', async () => {
    let checkedMembers = 0;
    for (const c of [0, 1, 7, 40]) {
      const tag = sim.world.clubTag(c);
      const club = await ok(sim, `/clubs/${enc(tag)}`, S.Club);
      const paged = await allMembers(sim, tag);
      expect(paged).toEqual(club.members);
      expect(club.members.length).toBeLessThanOrEqual(30);
      expect(club.trophies).toBe(club.members.reduce((a: number, m: Body) => a + m.trophies, 0));
      const trophies = club.members.map((m: Body) => m.trophies);
      expect(trophies).toEqual([...trophies].sort((x, y) => y - x));
      if (club.members.length > 0) expect(club.members.filter((m: Body) => m.role === 'president')).toHaveLength(1);
      for (const m of club.members.slice(0, 8)) {
        const p = await ok(sim, `/players/${enc(m.tag)}`);
        expect(p.club).toEqual({ tag, name: club.name });
        expect([p.name, p.nameColor, p.trophies, p.icon]).toEqual([m.name, m.nameColor, m.trophies, m.icon]);
        checkedMembers++;
      }
    }
    expect(checkedMembers).toBeGreaterThan(10);
  });

  it('a player not listed by its club has no club, and one listed has that club', async () => {
    const t = sim.clock.now();
    let inClub = 0;
    let without = 0;
    for (let i = 0; i < 300; i += 3) {
      const p = await ok(sim, `/players/${enc(sim.world.playerTag(i))}`);
      if (p.club.tag) {
        inClub++;
        const members = sim.world.clubMembers(p.club.tag, t)!;
        expect(members.map((m) => m.tag)).toContain(p.tag);
      } else {
        without++;
        expect(p.club).toEqual({});
      }
    }
    expect(inClub).toBeGreaterThan(0);
    expect(without).toBeGreaterThan(0);
  });

  it('player rankings are the true top 200 and match the profiles', async () => {
    const t = sim.clock.now();
    const all = Array.from({ length: sim.world.playerCount }, (_, i) => ({ i, v: sim.world.trophies(i, t) }));
    all.sort((x, y) => y.v - x.v || x.i - y.i);
    const ranking = await ok(sim, '/rankings/global/players', S.PlayerRankings);
    expect(ranking.items).toHaveLength(200);
    expect(ranking.paging.cursors).toEqual({});
    expect(ranking.items.map((x: Body) => x.tag)).toEqual(all.slice(0, 200).map((x) => sim.world.playerTag(x.i)));
    expect(ranking.items.map((x: Body) => x.rank)).toEqual(Array.from({ length: 200 }, (_, n) => n + 1));
    for (const item of ranking.items.slice(0, 12)) {
      const p = await ok(sim, `/players/${enc(item.tag)}`);
      expect(item.trophies).toBe(p.trophies);
      expect(item.name).toBe(p.name);
      if (p.club.tag) expect(item.club).toEqual({ name: p.club.name });
      else expect(item.club).toBeUndefined();
    }
  });

  it('has rankings for at least 20 countries, each a subset ordered by trophies', async () => {
    expect(sim.world.countryCodes.length).toBeGreaterThanOrEqual(20);
    const global = new Set((await ok(sim, '/rankings/global/players')).items.map((x: Body) => x.tag));
    for (const cc of ['US', 'fr', 'KR', 'SA', 'IL', 'TH', 'GR', 'JP']) {
      const r = await ok(sim, `/rankings/${cc}/players`, S.PlayerRankings);
      expect(r.items.length).toBeGreaterThan(0);
      const trophies = r.items.map((x: Body) => x.trophies);
      expect(trophies).toEqual([...trophies].sort((x, y) => y - x));
      // A country's best player is in the global top 200 or below everyone there.
      const best = r.items[0];
      if (!global.has(best.tag)) expect(best.trophies).toBeLessThanOrEqual((await ok(sim, '/rankings/global/players')).items[199].trophies);
    }
  });

  it('club rankings match the clubs', async () => {
    const r = await ok(sim, '/rankings/global/clubs?limit=10', S.ClubRankings);
    expect(r.items).toHaveLength(10);
    for (const item of r.items) {
      const club = await ok(sim, `/clubs/${enc(item.tag)}`);
      expect([item.name, item.trophies, item.memberCount, item.badgeId]).toEqual([club.name, club.trophies, club.members.length, club.badgeId]);
    }
  });

  it('brawler rankings are the true top by that brawler and match the profiles', async () => {
    const t = sim.clock.now();
    const id = 16000001;
    const all: { tag: string; v: number; i: number }[] = [];
    for (let i = 0; i < sim.world.playerCount; i++) {
      const b = (sim.world.playerBody(i, t).brawlers as Body[]).find((x) => x.id === id);
      if (b) all.push({ tag: sim.world.playerTag(i), v: b.trophies, i });
    }
    all.sort((x, y) => y.v - x.v || x.i - y.i);
    const r = await ok(sim, `/rankings/global/brawlers/${id}`, S.BrawlerRankings);
    expect(r.items.map((x: Body) => [x.tag, x.trophies])).toEqual(all.slice(0, 200).map((x) => [x.tag, x.v]));
  });

  it('battle logs hold the 25 newest battles, newest first, in the 2026 variants', async () => {
    const kinds = new Set<string>();
    for (let i = 0; i < 400; i += 9) {
      const tag = sim.world.playerTag(i);
      const log = await ok(sim, `/players/${enc(tag)}/battlelog`, S.BattleLog);
      expect(log.items.length).toBeLessThanOrEqual(25);
      expect(log.paging).toEqual({ cursors: {} });
      const times = log.items.map((x: Body) => parseApiTime(x.battleTime));
      expect(times).toEqual([...times].sort((x, y) => y - x));
      for (const item of log.items) {
        expect(parseApiTime(item.battleTime)).toBeLessThanOrEqual(T0);
        const b = item.battle;
        const everyone: Body[] = [...(b.players ?? []), ...(b.teams ?? []).flat()];
        expect(everyone.map((p) => p.tag)).toContain(tag);
        if (b.type === 'soloRanked') {
          kinds.add('soloRanked');
          expect(b.trophyChange).toBeUndefined();
          expect('starPlayer' in b).toBe(true);
          if (b.starPlayer === null) kinds.add('starPlayerNull');
          for (const p of everyone) expect(p.brawler.trophies).toBeLessThanOrEqual(22);
        } else if (b.mode === 'duels') {
          kinds.add('duels');
          expect(b.trophyChange).toBeUndefined();
          expect(b.players).toHaveLength(2);
          for (const p of b.players) expect(p.brawlers).toHaveLength(3);
        } else if (b.mode === 'soloShowdown') {
          kinds.add('solo');
          expect(b.players).toHaveLength(10);
          expect(b.players[b.rank - 1].tag).toBe(tag);
        } else if (b.mode === 'duoShowdown') {
          kinds.add('duo');
          expect(b.teams).toHaveLength(5);
          expect(b.teams[b.rank - 1].map((p: Body) => p.tag)).toContain(tag);
        } else if (b.type === undefined) {
          kinds.add('pve');
          expect(b.level).toEqual({ name: expect.any(String), id: expect.any(Number) });
        } else if (b.teams?.[0]?.length === 5) {
          kinds.add('5v5');
        } else if (b.mode === 'trioShowdown') {
          kinds.add('trio');
          expect(b.teams).toHaveLength(4);
          expect(b.teams[b.rank - 1].map((p: Body) => p.tag)).toContain(tag);
        } else if (b.teams?.[0]?.length === 3 && b.type === 'ranked') {
          kinds.add('3v3');
          expect(b.result === 'victory' ? b.trophyChange > 0 : b.trophyChange < 0).toBe(true);
        }
      }
    }
    for (const k of ['3v3', '5v5', 'solo', 'duo', 'trio', 'duels', 'pve', 'soloRanked', 'starPlayerNull']) expect(kinds).toContain(k);
  });

  it('event rotation is a bare array of the slots running now', async () => {
    const rot = await ok(sim, '/events/rotation', S.EventRotation);
    expect(Array.isArray(rot)).toBe(true);
    expect(rot.length).toBeGreaterThanOrEqual(8);
    const modes = await ok(sim, '/gamemodes', S.GameModeList);
    const modeIds = new Set(modes.items.map((m: Body) => m.id));
    for (const e of rot) {
      expect(parseApiTime(e.startTime)).toBeLessThanOrEqual(T0);
      expect(parseApiTime(e.endTime)).toBeGreaterThan(T0);
      expect(e.event.id).toBeGreaterThanOrEqual(15000000);
      expect(modeIds.has(e.event.modeId)).toBe(true);
    }
    expect(rot.map((e: Body) => e.slotId)).toEqual([...rot.map((e: Body) => e.slotId)].sort((x, y) => x - y));
  });

  it('names use many scripts, colour markup and emoji, and the reference nameColor values', () => {
    const t = sim.clock.now();
    const names = Array.from({ length: 2500 }, (_, i) => sim.world.playerName(i)).join(' ');
    const scripts: Record<string, RegExp> = {
      latin: /[A-Za-z]/, cyrillic: /\p{Script=Cyrillic}/u, greek: /\p{Script=Greek}/u, arabic: /\p{Script=Arabic}/u,
      hebrew: /\p{Script=Hebrew}/u, cjk: /\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul}/u,
      thai: /\p{Script=Thai}/u, emoji: /\p{Extended_Pictographic}/u, markup: /<c\d>[^<]+<\/c>/,
    };
    for (const [name, re] of Object.entries(scripts)) expect(re.test(names), name).toBe(true);
    const colours = new Set(Array.from({ length: 200 }, (_, i) => sim.world.playerBody(i, t).nameColor));
    for (const c of colours) expect(c).toMatch(/^0xff[0-9a-f]{6}$/);
    expect(colours.size).toBeGreaterThan(4);
  });
});

describe('simulated world: time moves it forward', () => {
  let sim: SimServer;
  let clock: SimClock;
  beforeAll(async () => {
    clock = new SimClock(T0);
    sim = await startSim({ seed: 'movement', players: 2000, clubs: 120, clock });
  });
  afterAll(() => sim.close());

  it('battle log trophy changes add up to the profile\'s movement between two times', async () => {
    let windows = 0;
    let moved = 0;
    for (let i = 0; i < 200 && windows < 25; i += 7) {
      const tag = sim.world.playerTag(i);
      for (const step of [6 * HOUR, 11 * HOUR]) {
        clock.set(T0);
        const before = await ok(sim, `/players/${enc(tag)}`);
        clock.set(T0 + step);
        const after = await ok(sim, `/players/${enc(tag)}`);
        const log = await ok(sim, `/players/${enc(tag)}/battlelog`);
        const inWindow = log.items.filter((x: Body) => parseApiTime(x.battleTime) > T0);
        // Only windows the 25-battle log covers completely can be checked.
        if (inWindow.length === log.items.length && log.items.length === 25) continue;
        windows++;
        let sum = 0;
        const perBrawler = new Map<number, number>();
        for (const x of inWindow) {
          const b = x.battle;
          const me = [...(b.players ?? []), ...(b.teams ?? []).flat()].find((p: Body) => p.tag === tag);
          if (me.brawlers) {
            for (const br of me.brawlers) {
              sum += br.trophyChange;
              perBrawler.set(br.id, (perBrawler.get(br.id) ?? 0) + br.trophyChange);
            }
          } else if (b.trophyChange !== undefined) {
            sum += b.trophyChange;
            perBrawler.set(me.brawler.id, (perBrawler.get(me.brawler.id) ?? 0) + b.trophyChange);
          }
        }
        expect(after.trophies - before.trophies).toBe(sum);
        for (const br of after.brawlers) {
          const was = before.brawlers.find((x: Body) => x.id === br.id)?.trophies ?? 0;
          expect(br.trophies - was, `brawler ${br.id}`).toBe(perBrawler.get(br.id) ?? 0);
        }
        if (sum !== 0) moved++;
      }
    }
    expect(windows).toBeGreaterThan(5);
    expect(moved).toBeGreaterThan(2);
  });

  it('new battles appear as time passes and a battle\'s trophies are the brawler\'s at that time', async () => {
    const tag = sim.world.playerTag(5);
    clock.set(T0);
    const first = await ok(sim, `/players/${enc(tag)}/battlelog`);
    clock.set(T0 + 3 * DAY);
    const later = await ok(sim, `/players/${enc(tag)}/battlelog`);
    const newest = parseApiTime(later.items[0].battleTime);
    expect(newest).toBeGreaterThan(parseApiTime(first.items[0].battleTime));
    // The profile just before a ladder battle shows the trophies the battle reports.
    const ladder = later.items.find((x: Body) => x.battle.type === 'ranked' && x.battle.trophyChange !== undefined && x.battle.mode !== 'duels');
    expect(ladder).toBeDefined();
    const at = parseApiTime(ladder.battleTime);
    const me = [...(ladder.battle.players ?? []), ...(ladder.battle.teams ?? []).flat()].find((p: Body) => p.tag === tag);
    clock.set(at - 1000);
    const p = await ok(sim, `/players/${enc(tag)}`);
    expect(p.brawlers.find((b: Body) => b.id === me.brawler.id).trophies).toBe(me.brawler.trophies);
  });

  it('unlocks, power levels, levels and victories only grow; rotation, membership and rankings change', async () => {
    // A player still playing 120 days later (some accounts stop playing for good).
    clock.set(T0 + 120 * DAY);
    let tag = '';
    for (let i = 1500; i < 1600 && !tag; i++) {
      const log = await ok(sim, `/players/${enc(sim.world.playerTag(i))}/battlelog`);
      if (log.items.length > 0 && parseApiTime(log.items[0].battleTime) > T0 + 100 * DAY) tag = sim.world.playerTag(i);
    }
    clock.set(T0);
    const a = await ok(sim, `/players/${enc(tag)}`);
    const rotA = await ok(sim, '/events/rotation');
    const rankA = await ok(sim, '/rankings/global/players?limit=50');
    const clubsA = await Promise.all([0, 1, 2, 3, 4].map((c) => ok(sim, `/clubs/${enc(sim.world.clubTag(c))}`)));
    clock.set(T0 + 120 * DAY);
    const b = await ok(sim, `/players/${enc(tag)}`);
    const rotB = await ok(sim, '/events/rotation');
    const rankB = await ok(sim, '/rankings/global/players?limit=50');
    const clubsB = await Promise.all([0, 1, 2, 3, 4].map((c) => ok(sim, `/clubs/${enc(sim.world.clubTag(c))}`)));
    expect(b.brawlers.length).toBeGreaterThan(a.brawlers.length);
    for (const br of a.brawlers) {
      const now = b.brawlers.find((x: Body) => x.id === br.id);
      expect(now.power).toBeGreaterThanOrEqual(br.power);
      expect(now.highestTrophies).toBeGreaterThanOrEqual(br.highestTrophies);
      expect(now.gadgets.length).toBeGreaterThanOrEqual(br.gadgets.length);
    }
    expect(b.brawlers.some((x: Body) => x.power > (a.brawlers.find((y: Body) => y.id === x.id)?.power ?? 0))).toBe(true);
    expect(b.expLevel).toBeGreaterThan(a.expLevel);
    expect(b['3vs3Victories']).toBeGreaterThan(a['3vs3Victories']);
    expect(rotB.map((e: Body) => e.event.id)).not.toEqual(rotA.map((e: Body) => e.event.id));
    expect(rankB.items.map((x: Body) => x.trophies)).not.toEqual(rankA.items.map((x: Body) => x.trophies));
    const tags = (cs: Body[]) => cs.map((c) => c.members.map((m: Body) => m.tag).sort().join());
    expect(tags(clubsB)).not.toEqual(tags(clubsA));
    const roles = (cs: Body[]) => cs.map((c) => c.members.map((m: Body) => `${m.tag}:${m.role}`).sort().join());
    expect(roles(clubsB)).not.toEqual(roles(clubsA));
  });

  it('players leave, rejoin and move between clubs, and clubs agree with them at every instant', async () => {
    const seen = new Map<number, Set<string>>();
    let leftAndBack = 0;
    for (let step = 0; step < 24; step++) {
      const t = T0 + step * 15 * DAY;
      for (let i = 0; i < 1000; i += 25) {
        const p = sim.world.playerBody(i, t);
        const club = p.club as { tag?: string };
        const set = seen.get(i) ?? new Set<string>();
        set.add(club.tag ?? 'none');
        seen.set(i, set);
        if (club.tag) {
          const members = sim.world.clubMembers(club.tag, t)!;
          expect(members.map((m) => m.tag)).toContain(p.tag);
          expect(members.length).toBeLessThanOrEqual(30);
        }
      }
    }
    const movers = [...seen.values()].filter((s) => [...s].filter((x) => x !== 'none').length >= 2);
    for (const s of seen.values()) if (s.has('none') && s.size > 1) leftAndBack++;
    expect(movers.length).toBeGreaterThan(0);
    expect(leftAndBack).toBeGreaterThan(0);
    // Every member listed by a club names that club as its own.
    clock.set(T0 + 40 * DAY);
    for (const c of [0, 5, 30]) {
      const club = await ok(sim, `/clubs/${enc(sim.world.clubTag(c))}`);
      for (const m of club.members) expect(sim.world.playerBody(sim.world.playerIndex(m.tag)!, T0 + 40 * DAY).club).toEqual({ tag: club.tag, name: club.name });
    }
  });

  it('keeps trophies within believable bounds over a long time', () => {
    const samples = [0, 10, 100, 1000, 1999];
    for (const i of samples) {
      const values = Array.from({ length: 60 }, (_, d) => sim.world.trophies(i, T0 + d * 5 * DAY));
      const min = Math.min(...values);
      const max = Math.max(...values);
      expect(min).toBeGreaterThan(0);
      // Movement is a few percent for established accounts, more (relatively) for new ones.
      expect(max - min).toBeLessThan(0.15 * max + 400);
    }
  });
});

describe('simulated world: a million players', () => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSim({ seed: 'big', players: 1_000_000, clubs: 40_000, clock: new SimClock(T0) });
  });
  afterAll(() => sim.close());

  it('answers players, battle logs, clubs and rankings without materialising the world', async () => {
    for (const i of [0, 499_999, 999_999]) {
      const tag = sim.world.playerTag(i);
      const p = await ok(sim, `/players/${enc(tag)}`, S.Player);
      expect(p.tag).toBe(tag);
      await ok(sim, `/players/${enc(tag)}/battlelog`, S.BattleLog);
      if (p.club.tag) {
        const club = await ok(sim, `/clubs/${enc(p.club.tag)}`, S.Club);
        expect(club.members.map((m: Body) => m.tag)).toContain(tag);
      }
    }
    const top = await ok(sim, '/rankings/global/players?limit=5', S.PlayerRankings);
    expect(top.items[0].trophies).toBeGreaterThan(top.items[4].trophies);
    expect(top.items[0].trophies).toBeGreaterThan(200_000);
    const us = await ok(sim, '/rankings/US/players?limit=200', S.PlayerRankings);
    expect(us.items).toHaveLength(200);
    await ok(sim, '/rankings/global/clubs?limit=3', S.ClubRankings);
    expect(sim.world.playerCount).toBe(1_000_000);
  });
});
