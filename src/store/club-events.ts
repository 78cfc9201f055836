/**
 * Club change events between two consecutive recorded states (pure): members who joined or left,
 * role changes, and settings changes. The store writes them with the newer state in the same
 * transaction, keyed by (club, time, kind, subject), so each change is recorded exactly once.
 */
import { items, type Json, type State } from './snapshot.ts';

export type ClubEventKind = 'join' | 'leave' | 'role' | 'settings';

export interface ClubEvent {
  kind: ClubEventKind;
  /** member tag for join/leave/role, field name for settings */
  subject: string;
  old: Json | null;
  new: Json | null;
}

/** Fields that move with every battle of every member are history, not events. */
const NOT_SETTINGS = new Set(['tag', 'trophies']);

function settingsFields(s: State): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const [k, v] of Object.entries(s)) {
    if (k === 'members' || NOT_SETTINGS.has(k) || v === undefined) continue;
    out.set(k, v);
  }
  return out;
}

export function clubEvents(prev: State, next: State): ClubEvent[] {
  const events: ClubEvent[] = [];
  const before = items(prev, 'members');
  const after = items(next, 'members');
  for (const [tag, m] of Object.entries(after)) {
    const was = before[tag];
    if (!was) events.push({ kind: 'join', subject: tag, old: null, new: m.name ?? null });
    else if (was.role !== m.role) events.push({ kind: 'role', subject: tag, old: was.role ?? null, new: m.role ?? null });
  }
  for (const [tag, m] of Object.entries(before)) {
    if (!after[tag]) events.push({ kind: 'leave', subject: tag, old: m.name ?? null, new: null });
  }
  const sb = settingsFields(prev);
  const sa = settingsFields(next);
  for (const k of new Set([...sb.keys(), ...sa.keys()])) {
    const o = sb.get(k) ?? null;
    const n = sa.get(k) ?? null;
    if (JSON.stringify(o) !== JSON.stringify(n)) events.push({ kind: 'settings', subject: k, old: o, new: n });
  }
  return events;
}
