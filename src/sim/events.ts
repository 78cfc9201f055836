/**
 * The event rotation: which slot runs which mode on which map at a time, from the slot schedule
 * and the map catalogue. Pure function of (seed, time).
 */
import { mapsOfMode, modeByName, rotation, type RotationSlot } from './catalogue/index.ts';
import { hashInts } from './rng.ts';

const HOUR_MS = 3_600_000;
/** Monday 1970-01-05 00:00 UTC, the origin of the slot schedule. */
const SCHEDULE_ORIGIN_MS = 4 * 24 * HOUR_MS;

export interface ActiveEvent {
  slot: RotationSlot;
  startMs: number;
  endMs: number;
  /** API mode string of the event */
  mode: string;
  modeId: number;
  mapId: number;
  map: string;
}

/** The event a slot runs in its period p (whether or not that period is running now). */
function slotEvent(seed: number, slot: RotationSlot, p: number): ActiveEvent | null {
  const mode = slot.modes[((p % slot.modes.length) + slot.modes.length) % slot.modes.length]!;
  const maps = mapsOfMode(mode);
  const info = modeByName.get(mode);
  if (maps.length === 0 || !info) return null;
  const turn = Math.floor(p / slot.modes.length);
  const offset = hashInts(seed, slot.slotId, 77) % maps.length;
  const map = maps[(((turn + offset) % maps.length) + maps.length) % maps.length]!;
  const startMs = SCHEDULE_ORIGIN_MS + (slot.offsetHours + p * slot.periodHours) * HOUR_MS;
  return { slot, startMs, endMs: startMs + slot.durationHours * HOUR_MS, mode, modeId: info.id, mapId: map.id, map: map.name };
}

/** Events running at a time, by slot id. */
export function activeEvents(seed: number, atMs: number): ActiveEvent[] {
  const out: ActiveEvent[] = [];
  for (const slot of rotation) {
    const p = Math.floor((atMs - SCHEDULE_ORIGIN_MS - slot.offsetHours * HOUR_MS) / (slot.periodHours * HOUR_MS));
    const ev = slotEvent(seed, slot, p);
    if (ev && ev.startMs <= atMs && atMs < ev.endMs) out.push(ev);
  }
  return out.sort((a, b) => a.slot.slotId - b.slot.slotId);
}
