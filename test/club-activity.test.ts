/**
 * Club activity computed from recorded club snapshots, join events and battle summaries (pure):
 * gains over the period and 30 days, members not recorded yet shown as null, inactivity with and
 * without a sign of play, thresholds, coverage, and the three sort orders.
 */
import { describe, expect, it } from 'vitest';
import { clubActivityOf, sortActivity } from '../src/core/club-activity.ts';
import type { Snapshot } from '../src/store/history-snapshots.ts';
import type { BattleSummary } from '../src/store/history-store.ts';

const DAY = 86_400;
const NOW = 1_780_000_000;

type M = { name: string; role?: string; trophies: number };
const snap = (t: number, members: Record<string, M>): Snapshot => ({
  t,
  state: {
    tag: '#CLUB',
    name: 'Club, "the"',
    members: Object.fromEntries(Object.entries(members).map(([tag, m]) => [tag, { tag, name: m.name, role: m.role ?? 'member', trophies: m.trophies }])),
  },
});

/** Ten days of a club: A pushes, B never moves, C joined two days ago, D appeared just now. */
function fixture() {
  const newestFirst = [
    snap(NOW - 60, { '#A': { name: 'Ann', trophies: 1500, role: 'president' }, '#B': { name: 'Bob', trophies: 800 }, '#C': { name: 'Cé, 🙂', trophies: 620 }, '#D': { name: 'Dee', trophies: 300 } }),
    snap(NOW - 1 * DAY, { '#A': { name: 'Ann', trophies: 1400, role: 'president' }, '#B': { name: 'Bob', trophies: 800 }, '#C': { name: 'Cé, 🙂', trophies: 600 } }),
    snap(NOW - 2 * DAY, { '#A': { name: 'Ann', trophies: 1300, role: 'president' }, '#B': { name: 'Bob', trophies: 800 }, '#C': { name: 'Cé, 🙂', trophies: 590 } }),
    snap(NOW - 10 * DAY, { '#A': { name: 'Ann', trophies: 1000, role: 'president' }, '#B': { name: 'Bob', trophies: 800 } }),
  ];
  const joins = new Map([
    ['#C', NOW - 2 * DAY],
    ['#D', NOW - 60],
  ]);
  const battles = new Map<string, BattleSummary>([
    ['#A', { battles: 40, wins: 25, lastT: NOW - 3600, polled: true }],
    ['#B', { battles: 0, wins: 0, lastT: NOW - 9 * DAY, polled: true }],
  ]);
  return { newestFirst, joins, battles };
}

describe('club activity', () => {
  it('measures gains from the recording in force at the period start, or the first after it', () => {
    const { newestFirst, joins, battles } = fixture();
    const a = clubActivityOf({ tag: '#CLUB', snapshots: newestFirst, joins, battles, nowS: NOW, days: 7 });
    const by = Object.fromEntries(a.members.map((m) => [m.tag, m]));
    // A: 1000 at the recording in force 7 days ago (10 days old); last seen moving in the newest recording.
    expect(by['#A']).toMatchObject({ gained: 500, gainedSince: NOW - 7 * DAY, gained30d: 500, battles: 40, wins: 25, lastActive: NOW - 60, inactiveDays: 0, role: 'president' });
    // B never moved; his last recorded battle was 9 days ago.
    expect(by['#B']).toMatchObject({ gained: 0, battles: 0, lastActive: NOW - 9 * DAY, inactiveDays: 9, inactiveAtLeast: false });
    // C joined 2 days ago: gain since joining; battle log not recorded → null, not 0.
    expect(by['#C']).toMatchObject({ joined: NOW - 2 * DAY, gained: 30, gainedSince: NOW - 2 * DAY, battles: null, wins: null, lastActive: NOW - 60, inactiveDays: 0 });
    // D appeared in the newest recording only: nothing is known yet.
    expect(by['#D']).toMatchObject({ gained: null, gainedSince: null, gained30d: null, battles: null, lastActive: null, inactiveDays: null });
    expect(a.coverage).toEqual({ recordedFrom: NOW - 10 * DAY, days: 7, share: 1, battlesRecorded: 2 });
    expect(a.name).toBe('Club, "the"');
  });

  it('says how much of the period is covered when history is shorter, and counts inactivity as a lower bound without a sign of play', () => {
    const newestFirst = [snap(NOW, { '#B': { name: 'Bob', trophies: 800 } }), snap(NOW - 3 * DAY, { '#B': { name: 'Bob', trophies: 800 } })];
    const a = clubActivityOf({ tag: '#CLUB', snapshots: newestFirst, joins: new Map(), battles: new Map(), nowS: NOW, days: 30 });
    expect(a.coverage).toEqual({ recordedFrom: NOW - 3 * DAY, days: 3, share: 0.1, battlesRecorded: 0 });
    expect(a.members[0]).toMatchObject({ gained: 0, gainedSince: NOW - 3 * DAY, lastActive: null, inactiveDays: 3, inactiveAtLeast: true });
  });

  it('flags members below the thresholds, and only on what is recorded', () => {
    const { newestFirst, joins, battles } = fixture();
    const a = clubActivityOf({ tag: '#CLUB', snapshots: newestFirst, joins, battles, nowS: NOW, days: 7, thresholds: { minGain: 200, maxIdleDays: 3 } });
    expect(Object.fromEntries(a.members.map((m) => [m.tag, m.flags]))).toEqual({ '#A': [], '#B': ['lowGain', 'inactive'], '#C': ['lowGain'], '#D': [] });
    expect(a.thresholds).toEqual({ minGain: 200, maxIdleDays: 3 });
  });

  it('sorts by inactivity (default), by gain and by battles, unrecorded values last', () => {
    const { newestFirst, joins, battles } = fixture();
    const a = clubActivityOf({ tag: '#CLUB', snapshots: newestFirst, joins, battles, nowS: NOW, days: 7 });
    expect(a.sort).toBe('inactivity');
    expect(a.members.map((m) => m.tag)).toEqual(['#B', '#C', '#A', '#D']);
    expect(sortActivity(a.members, 'gain').map((m) => m.tag)).toEqual(['#A', '#C', '#B', '#D']);
    expect(sortActivity(a.members, 'battles').map((m) => m.tag)).toEqual(['#A', '#B', '#C', '#D']);
  });

  it('answers an empty table for a club with nothing recorded', () => {
    const a = clubActivityOf({ tag: '#CLUB', snapshots: [], joins: new Map(), battles: new Map(), nowS: NOW, days: 7 });
    expect(a.members).toEqual([]);
    expect(a.coverage).toEqual({ recordedFrom: null, days: 0, share: 0, battlesRecorded: 0 });
  });
});
