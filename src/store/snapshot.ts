/**
 * Compact snapshots of players and clubs (pure functions, no I/O).
 *
 * A state is the upstream body in *canonical* form: collections named in a `StateSpec` (a player's
 * brawlers by id, a club's members by tag) become objects keyed by that id, so one brawler moving
 * up changes a few leaves instead of the whole array. A diff lists changed leaves by dotted path
 * (`trophies`, `club.tag`, `brawlers.16000005.power`, `members.#2PP.role`). The history store keeps
 * the newest state in full and every older snapshot as a *reverse* diff (what to put back to get
 * the older state), which makes reading history newest-first cheap and pruning a plain DELETE of
 * the oldest rows. States are never mutated: `applyDiff` copies only the nodes on changed paths.
 */
import { deflateRawSync, inflateRawSync, constants as zc } from 'node:zlib';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** A body in canonical form (see above). */
export type State = { [k: string]: Json };

/** Keyed collections at the top level of a body: field name → identity field of its items. */
export interface StateSpec {
  keyed: Record<string, { id: string; order: (a: Record<string, Json>, b: Record<string, Json>) => number }>;
}

const byNumericId = (a: Record<string, Json>, b: Record<string, Json>) => Number(a.id) - Number(b.id);

export const PLAYER_SPEC: StateSpec = { keyed: { brawlers: { id: 'id', order: byNumericId } } };
/** Members come from upstream sorted by trophies, highest first. */
export const CLUB_SPEC: StateSpec = {
  keyed: {
    members: {
      id: 'tag',
      order: (a, b) => Number(b.trophies) - Number(a.trophies) || String(a.tag).localeCompare(String(b.tag)),
    },
  },
};

export function isPlainObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * An inner node of the state tree: a non-empty object. (Keys are the API's field names, ids and
 * tags, none of which contains the path separator '.'.)
 */
function isNode(v: Json | undefined): v is Record<string, Json> {
  if (!isPlainObject(v)) return false;
  for (const _ in v) return true;
  return false;
}

/** The canonical form of an upstream body (shares the items' objects; never mutate either). */
export function canonical(body: Record<string, unknown>, spec: StateSpec): State {
  const out: State = {};
  for (const k of Object.keys(body)) {
    const v = body[k] as Json | undefined;
    if (v === undefined) continue;
    const keyed = spec.keyed[k];
    if (keyed && Array.isArray(v) && v.length > 0 && v.every((it) => isPlainObject(it) && it[keyed.id] !== undefined && !String(it[keyed.id]).includes('.'))) {
      const byId: Record<string, Json> = {};
      for (const item of v as Record<string, Json>[]) byId[String(item[keyed.id])] = item;
      out[k] = byId;
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** Back to the upstream shape (collections as arrays in the spec's order). */
export function fromCanonical(state: State, spec: StateSpec): Record<string, Json> {
  const out: Record<string, Json> = { ...state };
  for (const [name, keyed] of Object.entries(spec.keyed)) {
    const v = state[name];
    if (isPlainObject(v)) out[name] = (Object.values(v) as Record<string, Json>[]).sort(keyed.order);
  }
  return out;
}

export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let n = 0;
  for (const k in a) {
    if (a[k] === undefined) continue;
    n++;
    if (!jsonEqual(a[k], (b as Record<string, Json>)[k])) return false;
  }
  let m = 0;
  for (const k in b) if ((b as Record<string, Json>)[k] !== undefined) m++;
  return n === m;
}

/** What to apply to `next` to get `prev` back: changed or removed leaves with their old values, and leaves `next` added. */
export interface Diff {
  set: Record<string, Json>;
  del: string[];
}

function diffInto(a: Record<string, Json>, b: Record<string, Json>, prefix: string, d: Diff): void {
  for (const k in a) {
    const av = a[k];
    if (av === undefined) continue;
    const bv = b[k];
    if (bv === undefined) d.set[prefix + k] = av;
    else if (isNode(av) && isNode(bv)) diffInto(av, bv, `${prefix}${k}.`, d);
    else if (!jsonEqual(av, bv)) d.set[prefix + k] = av;
  }
  for (const k in b) {
    if (b[k] !== undefined && a[k] === undefined) d.del.push(prefix + k);
  }
}

export function diffStates(prev: State, next: State): Diff {
  const d: Diff = { set: {}, del: [] };
  diffInto(prev, next, '', d);
  return d;
}

export function isEmptyDiff(d: Diff): boolean {
  return d.del.length === 0 && Object.keys(d.set).length === 0;
}

/** `state` with the diff applied; only the objects on changed paths are copied. */
export function applyDiff(state: State, d: Diff): State {
  const root: State = { ...state };
  const fresh = new Set<object>([root]);
  const parentOf = (parts: string[], create: boolean): Record<string, Json> | null => {
    let node: Record<string, Json> = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i]!;
      let child = node[p];
      if (!isPlainObject(child)) {
        if (!create) return null;
        child = {};
      } else if (!fresh.has(child)) {
        child = { ...child };
      }
      fresh.add(child);
      node[p] = child;
      node = child;
    }
    return node;
  };
  for (const path of d.del) {
    const parts = path.split('.');
    const parent = parentOf(parts, false);
    if (parent) delete parent[parts[parts.length - 1]!];
  }
  for (const path of Object.keys(d.set)) {
    const parts = path.split('.');
    parentOf(parts, true)![parts[parts.length - 1]!] = d.set[path]!;
  }
  return root;
}

/** Leaf value at a dotted path (undefined when absent). */
export function at(state: State, path: string): Json | undefined {
  let node: Json | undefined = state;
  for (const p of path.split('.')) {
    if (!isPlainObject(node)) return undefined;
    node = node[p];
  }
  return node;
}

/** The items of a keyed collection of a state, by id (empty when absent). */
export function items(state: State, collection: string): Record<string, Record<string, Json>> {
  const v = state[collection];
  return isPlainObject(v) ? (v as Record<string, Record<string, Json>>) : {};
}

// ------------------------------------------------------------------ byte encoding

/**
 * Diffs are small JSON objects full of the same field names, which plain deflate cannot shrink (too
 * little input to learn from). A preset dictionary of those names makes a typical poll's diff a few
 * dozen bytes. The dictionary is part of the stored format: a new one needs a new format byte.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '"members.#', '.role":"member"', '.role":"senior"', '.role":"vicePresident"', '.role":"president"',
    '.trophies":', '.name":"', '.nameColor":"0xff', '.icon.id":280000', '"requiredTrophies":', '"description":"',
    '"type":"inviteOnly"', '"type":"open"', '"type":"closed"', '"badgeId":80000', '"isFamilyFriendly":',
    '"club.tag":"#', '"club.name":"', '"name":"', '"nameColor":"0xff', '"icon.id":280000', '"expLevel":',
    '"expPoints":', '"totalPrestigeLevel":', '"highestPowerPlayPoints":', '"powerPlayPoints":',
    '"bestRoboRumbleTime":', '"bestTimeAsBigBrawler":', '"isQualifiedFromChampionshipChallenge":',
    '"duoVictories":', '"soloVictories":', '"3vs3Victories":', '"highestTrophies":', '"trophies":',
    '.gears":[{"id":6200000', '"level":', '.hyperCharges":[{"id":2300', '.starPowers":[{"id":2300',
    '.gadgets":[{"id":2300', '.skin.name":"', '.skin.id":290', '.maxWinStreak":', '.currentWinStreak":',
    '.prestigeLevel":', '.highestTrophies":', '.rank":', '.power":', '"brawlers.160000', '"\\u0000del":["',
  ].join(''),
);

const RAW = 0;
const DEFLATE_V1 = 1;
const DEL_KEY = '\u0000del';

export function encodeDiff(d: Diff): Buffer {
  const obj: Record<string, Json> = d.del.length > 0 ? { ...d.set, [DEL_KEY]: d.del } : d.set;
  const json = Buffer.from(JSON.stringify(obj), 'utf8');
  if (json.length > 24) {
    const packed = deflateRawSync(json, { dictionary: DICTIONARY_V1, level: zc.Z_BEST_COMPRESSION, memLevel: 9 });
    if (packed.length + 1 < json.length + 1) return Buffer.concat([Buffer.of(DEFLATE_V1), packed]);
  }
  return Buffer.concat([Buffer.of(RAW), json]);
}

export function decodeDiff(buf: Uint8Array): Diff {
  const obj = decodeJson(buf) as Record<string, Json>;
  const del = (obj[DEL_KEY] as string[] | undefined) ?? [];
  delete obj[DEL_KEY];
  return { set: obj, del };
}

/** Full states: deflate (they are large enough to compress on their own). */
export function encodeState(s: State): Buffer {
  const json = Buffer.from(JSON.stringify(s), 'utf8');
  return Buffer.concat([Buffer.of(DEFLATE_V1), deflateRawSync(json, { dictionary: DICTIONARY_V1, level: 6 })]);
}

export function decodeState(buf: Uint8Array): State {
  return decodeJson(buf) as State;
}

function decodeJson(buf: Uint8Array): Json {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const format = b[0];
  const body = b.subarray(1);
  if (format === RAW) return JSON.parse(body.toString('utf8')) as Json;
  if (format === DEFLATE_V1) return JSON.parse(inflateRawSync(body, { dictionary: DICTIONARY_V1 }).toString('utf8')) as Json;
  throw new Error(`unknown snapshot format ${String(format)}`);
}
