/**
 * Snapshot chains in SQL (SQLite or PostgreSQL), for players and clubs alike.
 *
 * `<kind>_state` holds the newest state in full (time t = when that state was first observed);
 * `<kind>_snap` holds one row per older snapshot: the reverse diff that turns the next snapshot's
 * state back into it. A poll that sees no change writes nothing. Reading newest-first walks back
 * from the full state; pruning deletes the oldest rows and leaves the rest valid.
 */
import { insertMany, marks, NO_LIMIT, type SqlDb } from './sql.ts';
import {
  applyDiff,
  decodeDiff,
  decodeState,
  diffStates,
  encodeDiff,
  encodeState,
  isEmptyDiff,
  jsonEqual,
  type State,
} from './snapshot.ts';

export type EntityKind = 'player' | 'club';

const TABLES = {
  player: { state: 'player_state', snap: 'player_snap', id: 'player_id' },
  club: { state: 'club_state', snap: 'club_snap', id: 'club_id' },
} as const;

const REPLACE_STATE = (kind: EntityKind) => `ON CONFLICT (${TABLES[kind].id}) DO UPDATE SET t = excluded.t, state = excluded.state`;
const REPLACE_DIFF = (kind: EntityKind) => `ON CONFLICT (${TABLES[kind].id}, t) DO UPDATE SET diff = excluded.diff`;

export interface Current {
  t: number;
  state: State;
}

export async function loadCurrent(db: SqlDb, kind: EntityKind, ids: number[]): Promise<Map<number, Current>> {
  const out = new Map<number, Current>();
  const t = TABLES[kind];
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const rows = await db.all<{ id: number; t: number; state: Buffer }>(
      `SELECT ${t.id} AS id, t, state FROM ${t.state} WHERE ${t.id} IN (${marks(part.length)})`,
      part,
    );
    for (const r of rows) out.set(r.id, { t: r.t, state: decodeState(r.state) });
  }
  return out;
}

export interface Observation {
  id: number;
  /** unix seconds */
  t: number;
  state: State;
}

/** A snapshot written by `append`: `prev` is null for the first one of an entity. */
export interface Change {
  id: number;
  t: number;
  prev: State | null;
  next: State;
  /** bytes written to the snapshot table for this change (the reverse diff) */
  bytes: number;
}

/**
 * Appends observations in time order. An observation no newer than the entity's newest snapshot is
 * ignored (it adds nothing: the chain already covers that time), and so is one equal to it.
 */
export async function appendSnapshots(db: SqlDb, kind: EntityKind, obs: Observation[]): Promise<Change[]> {
  if (obs.length === 0) return [];
  const t = TABLES[kind];
  const current = await loadCurrent(db, kind, [...new Set(obs.map((o) => o.id))]);
  const sorted = [...obs].sort((a, b) => a.t - b.t);
  const changes: Change[] = [];
  const snapRows: (number | Buffer)[][] = [];
  const touched = new Set<number>();
  for (const o of sorted) {
    const cur = current.get(o.id);
    if (!cur) {
      current.set(o.id, { t: o.t, state: o.state });
      touched.add(o.id);
      changes.push({ id: o.id, t: o.t, prev: null, next: o.state, bytes: 0 });
      continue;
    }
    if (o.t <= cur.t) continue;
    const reverse = diffStates(cur.state, o.state);
    if (isEmptyDiff(reverse)) continue;
    const blob = encodeDiff(reverse);
    snapRows.push([o.id, cur.t, blob]);
    changes.push({ id: o.id, t: o.t, prev: cur.state, next: o.state, bytes: blob.length });
    current.set(o.id, { t: o.t, state: o.state });
    touched.add(o.id);
  }
  await insertMany(db, `INSERT INTO ${t.snap} (${t.id}, t, diff)`, 3, snapRows, REPLACE_DIFF(kind));
  const stateRows = [...touched].map((id) => {
    const c = current.get(id)!;
    return [id, c.t, encodeState(c.state)];
  });
  await insertMany(db, `INSERT INTO ${t.state} (${t.id}, t, state)`, 3, stateRows, REPLACE_STATE(kind));
  return changes;
}

/** Every reverse diff of an entity, newest first, optionally only those at or after `sinceT`. */
async function diffsNewestFirst(
  db: SqlDb,
  kind: EntityKind,
  id: number,
  opts: { sinceT?: number; limit?: number; beforeT?: number } = {},
): Promise<{ t: number; diff: Buffer }[]> {
  const t = TABLES[kind];
  return db.all<{ t: number; diff: Buffer }>(
    `SELECT t, diff FROM ${t.snap} WHERE ${t.id} = ? AND t >= ? AND t < ? ORDER BY t DESC LIMIT ?`,
    [id, opts.sinceT ?? -1, opts.beforeT ?? NO_LIMIT, opts.limit ?? NO_LIMIT],
  );
}

export interface Snapshot {
  /** unix seconds when this state was first observed */
  t: number;
  state: State;
}

/**
 * Snapshots newest first: at most `limit`, only those observed at or after `sinceT`, and — when
 * `includeBefore` — also the one in force at `sinceT` (so a range query knows the starting value).
 */
export async function readSnapshots(
  db: SqlDb,
  kind: EntityKind,
  id: number,
  opts: { limit?: number; sinceT?: number; includeBefore?: boolean } = {},
): Promise<Snapshot[]> {
  const cur = (await loadCurrent(db, kind, [id])).get(id);
  if (!cur) return [];
  const limit = opts.limit ?? Number.MAX_SAFE_INTEGER;
  if (limit <= 0) return [];
  const out: Snapshot[] = [{ t: cur.t, state: cur.state }];
  const since = opts.sinceT ?? -1;
  if (cur.t < since) return opts.includeBefore ? out : [];
  const diffs = await diffsNewestFirst(db, kind, id, { sinceT: since, limit: Math.min(limit - 1, NO_LIMIT) });
  if (opts.includeBefore && diffs.length < limit - 1) {
    diffs.push(...(await diffsNewestFirst(db, kind, id, { beforeT: Math.max(since, 0), limit: 1 })));
  }
  let state = cur.state;
  for (const d of diffs) {
    state = applyDiff(state, decodeDiff(d.diff));
    out.push({ t: d.t, state });
  }
  return out;
}

/**
 * Adds snapshots older than everything recorded for an entity (backfill). `states` must be in
 * ascending time; those not older than the entity's oldest snapshot are ignored, consecutive equal
 * states collapse into the first, and when the last one equals the oldest recorded state, that
 * snapshot simply starts earlier. Returns the bytes written and the transitions that are new
 * (ascending; `prev` null for an entity that had nothing), for deriving events.
 */
export async function prependSnapshots(
  db: SqlDb,
  kind: EntityKind,
  id: number,
  states: Snapshot[],
): Promise<{ bytes: number; changes: Change[] }> {
  const t = TABLES[kind];
  const all = await readSnapshots(db, kind, id);
  const oldest = all.length > 0 ? all[all.length - 1]! : null;
  const seq: Snapshot[] = [];
  for (const s of states) {
    if (oldest && s.t >= oldest.t) break;
    const last = seq[seq.length - 1];
    if (last && jsonEqual(last.state, s.state)) continue;
    seq.push(s);
  }
  if (seq.length === 0) return { bytes: 0, changes: [] };
  let next: Snapshot;
  if (!oldest) {
    next = seq.pop()!;
    await db.run(`INSERT INTO ${t.state} (${t.id}, t, state) VALUES (?, ?, ?) ${REPLACE_STATE(kind)}`, [id, next.t, encodeState(next.state)]);
  } else if (jsonEqual(seq[seq.length - 1]!.state, oldest.state)) {
    // The oldest recorded state was already there earlier: move its start back.
    const start = seq.pop()!.t;
    if (all.length === 1) await db.run(`UPDATE ${t.state} SET t = ? WHERE ${t.id} = ?`, [start, id]);
    else await db.run(`UPDATE ${t.snap} SET t = ? WHERE ${t.id} = ? AND t = ?`, [start, id, oldest.t]);
    next = { t: start, state: oldest.state };
  } else {
    next = oldest;
  }
  const rows: (number | Buffer)[][] = [];
  const changes: Change[] = [];
  let bytes = 0;
  for (let i = seq.length - 1; i >= 0; i--) {
    const s = seq[i]!;
    const blob = encodeDiff(diffStates(s.state, next.state));
    bytes += blob.length;
    rows.push([id, s.t, blob]);
    changes.push({ id, t: next.t, prev: s.state, next: next.state, bytes: blob.length });
    next = s;
  }
  if (!oldest) changes.push({ id, t: next.t, prev: null, next: next.state, bytes: 0 });
  await insertMany(db, `INSERT INTO ${t.snap} (${t.id}, t, diff)`, 3, rows, REPLACE_DIFF(kind));
  return { bytes, changes: changes.reverse() };
}

/** Deletes snapshots older than `cutoffT`; the newest state of each entity always stays. */
export async function pruneSnapshots(db: SqlDb, kind: EntityKind, cutoffT: number): Promise<number> {
  const t = TABLES[kind];
  let total = 0;
  for (;;) {
    const r = await db.run(
      `DELETE FROM ${t.snap} WHERE (${t.id}, t) IN (SELECT ${t.id}, t FROM ${t.snap} WHERE t < ? LIMIT 5000)`,
      [cutoffT],
    );
    total += r.changes;
    if (r.changes < 5000) return total;
  }
}
