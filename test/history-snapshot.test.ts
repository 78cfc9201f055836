/**
 * Compact snapshots (pure): canonical form, reverse diffs, copy-on-write application, byte
 * encoding; battle parsing and club events derived from consecutive states.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { battleOutcome } from '../src/render/measures.ts';
import { World } from '../src/sim/world.ts';
import { parseBattle, battleKeyTag } from '../src/store/battles.ts';
import { clubEvents } from '../src/store/club-events.ts';
import {
  applyDiff,
  canonical,
  CLUB_SPEC,
  decodeDiff,
  decodeState,
  diffStates,
  encodeDiff,
  encodeState,
  fromCanonical,
  isEmptyDiff,
  jsonEqual,
  PLAYER_SPEC,
  type Json,
  type State,
} from '../src/store/snapshot.ts';
import { BattleLog, Club, Player } from '../src/upstream/schemas.ts';

const T0 = Date.UTC(2026, 5, 1, 12);
const world = new World({ seed: 'snap', players: 200, clubs: 20 });

/** Random JSON trees shaped like bodies: keys without dots, leaves of every JSON kind. */
const key = fc.stringMatching(/^[a-zA-Z0-9_#]{1,6}$/);
const leaf: fc.Arbitrary<Json> = fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
const tree: fc.Arbitrary<Json> = fc.letrec<{ node: Json }>((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, fc.dictionary(key, tie('node'), { maxKeys: 4 })),
})).node;
const state: fc.Arbitrary<State> = fc.dictionary(key, tree, { maxKeys: 6 });

describe('reverse diffs', () => {
  it('applying diff(prev, next) to next gives prev back, for any two states', () => {
    fc.assert(
      fc.property(state, state, (prev, next) => {
        const d = diffStates(prev, next);
        expect(jsonEqual(applyDiff(next, d), prev)).toBe(true);
        expect(isEmptyDiff(d)).toBe(jsonEqual(prev, next));
        // what is stored is what is read back
        expect(jsonEqual(applyDiff(next, decodeDiff(encodeDiff(d))), prev)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('never mutates the state it is applied to', () => {
    fc.assert(
      fc.property(state, state, (prev, next) => {
        const frozen = JSON.stringify(next);
        applyDiff(next, diffStates(prev, next));
        expect(JSON.stringify(next)).toBe(frozen);
      }),
      { numRuns: 200 },
    );
  });

  it('keys brawlers by id, so one brawler moving up is a one-leaf diff of a few bytes', () => {
    const before = world.playerBody(3, T0) as Record<string, unknown>;
    const after = structuredClone(before) as { brawlers: { id: number; trophies: number }[]; trophies: number };
    after.brawlers[2]!.trophies += 8;
    after.trophies += 8;
    const d = diffStates(canonical(before, PLAYER_SPEC), canonical(after as never, PLAYER_SPEC));
    expect(Object.keys(d.set).sort()).toEqual([`brawlers.${after.brawlers[2]!.id}.trophies`, 'trophies']);
    expect(encodeDiff(d).length).toBeLessThan(60);
  });

  it('round-trips a whole player and club through the canonical form and the state encoding', () => {
    for (const body of [world.playerBody(7, T0), world.club(world.clubTag(2), T0)!]) {
      const spec = 'members' in body ? CLUB_SPEC : PLAYER_SPEC;
      const s = canonical(body, spec);
      const back = fromCanonical(decodeState(encodeState(s)), spec);
      expect(back).toEqual(JSON.parse(JSON.stringify(body)));
    }
  });

  it('the world model and its body as the client parses it are the same state', () => {
    const raw = world.playerBody(11, T0);
    const parsed = Player.parse(JSON.parse(JSON.stringify(raw)));
    expect(jsonEqual(canonical(raw, PLAYER_SPEC), canonical(parsed as never, PLAYER_SPEC))).toBe(true);
  });
});

describe('battles', () => {
  it('agrees with the pictures on who won, and names a battle the same from every log', () => {
    let checked = 0;
    for (let i = 0; i < 30; i++) {
      const tag = world.playerTag(i);
      const log = BattleLog.parse(world.battlelog(tag, T0));
      for (const item of log.items) {
        const b = parseBattle(tag, item);
        const o = battleOutcome(item, tag);
        if (!b || !o) continue;
        checked++;
        expect(b.owner.result, JSON.stringify(item.battle)).toBe(o.result === 'W' ? 1 : o.result === 'L' ? -1 : 0);
        expect(b.owner.brawlerId).toBe(o.brawlerId);
        // the key is the smallest participant tag: the same whoever's log it came from
        for (const p of b.participants) expect(battleKeyTag(p.tag, b)).toBe(battleKeyTag(tag, b));
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('gives the other team the opposite result and skips items without a battle', () => {
    const item = {
      battleTime: '20260601T120000.000Z',
      event: { id: 15000026, mode: 'brawlBall', map: 'Pinhole Punt' },
      battle: {
        mode: 'brawlBall', type: 'ranked', result: 'defeat', starPlayer: { tag: '#B', name: 'b', brawler: { id: 16000001, name: 'COLT' } },
        teams: [
          [{ tag: '#A', name: 'a', brawler: { id: 16000000, name: 'SHELLY' } }],
          [{ tag: '#B', name: 'b', brawler: { id: 16000001, name: 'COLT' } }],
        ],
      },
    };
    const b = parseBattle('#A', item as never)!;
    expect(b.participants.map((p) => [p.tag, p.result, p.star])).toEqual([['#A', -1, false], ['#B', 1, true]]);
    expect(b.countsForMeta).toBe(true);
    expect(parseBattle('#A', { battleTime: item.battleTime, event: item.event } as never)).toBeNull();
    expect(parseBattle('#A', { ...item, battle: { ...item.battle, type: 'friendly' } } as never)!.countsForMeta).toBe(false);
  });
});

describe('club events', () => {
  const base = Club.parse({
    tag: '#C', name: 'Club', description: 'hi', type: 'open', badgeId: 8000000, requiredTrophies: 1000, trophies: 30,
    members: [
      { tag: '#A', name: 'a', role: 'president', trophies: 10 },
      { tag: '#B', name: 'b', role: 'member', trophies: 20 },
    ],
  });
  const s = (c: unknown) => canonical(c as Record<string, unknown>, CLUB_SPEC);

  it('lists joins, leaves, role and settings changes, and nothing for trophies moving', () => {
    const next = structuredClone(base);
    next.members = [
      { tag: '#A', name: 'a', role: 'president', trophies: 15 },
      { tag: '#B', name: 'b', role: 'senior', trophies: 25 },
      { tag: '#D', name: 'd', role: 'member', trophies: 1 },
    ];
    next.trophies = 41;
    next.requiredTrophies = 2000;
    expect(clubEvents(s(base), s(next))).toEqual([
      { kind: 'role', subject: '#B', old: 'member', new: 'senior' },
      { kind: 'join', subject: '#D', old: null, new: 'd' },
      { kind: 'settings', subject: 'requiredTrophies', old: 1000, new: 2000 },
    ]);
    const gone = structuredClone(base);
    gone.members = [base.members[0]!];
    expect(clubEvents(s(base), s(gone))).toEqual([{ kind: 'leave', subject: '#B', old: 'b', new: null }]);
    const moved = structuredClone(base);
    moved.members[0]!.trophies = 99;
    expect(clubEvents(s(base), s(moved))).toEqual([]);
  });
});
