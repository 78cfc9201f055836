/**
 * The history store: everything Starr Stats records about the game, in one SQLite file
 * (`DATA_DIR/history.sqlite`) through the `sqlite3` driver.
 *
 * Writes arrive as batches of observations (a player profile, a battle log, a club, the rotation,
 * a ranking, the catalogue, each with the time it was fetched) and each batch is one transaction:
 * a crash loses at most the batch in flight, never corrupts what was committed (WAL). Reads go
 * through a second connection, so they only ever see whole batches.
 */
import { join } from 'node:path';
import { Lru } from '../lib/lru.ts';
import type {
  BattleLog,
  Brawler,
  Club,
  ClubRankingItem,
  EventRotation,
  Player,
  PlayerRankingItem,
} from '../upstream/schemas.ts';
import { parseApiTime, playerClub } from '../upstream/schemas.ts';
import { battleKeyTag, parseBattle, type ParsedBattle } from './battles.ts';
import { clubEvents } from './club-events.ts';
import {
  appendSnapshots,
  loadCurrent,
  prependSnapshots,
  pruneSnapshots,
  readSnapshots,
  type Change,
  type EntityKind,
  type Snapshot,
} from './history-snapshots.ts';
import { foldName } from './search-fold.ts';
import { namesOfBattle, namesOfCatalogue, namesOfPlayer, recordNames, type NameSighting } from './game-names.ts';
import { toSearchRow, type RawEntityRow, type SearchPage, type SearchRow } from './history-search.ts';
import { canonical, CLUB_SPEC, items, jsonEqual, PLAYER_SPEC, type Json, type State } from './snapshot.ts';
import { greater, insertMany, isPostgresUrl, lesser, marks, NO_LIMIT, type SqlDb, type SqlPool, type SqlValue } from './sql.ts';
import type { HistoryBackend } from './history-backend.ts';

export const HISTORY_FILE = 'history.sqlite';
export const DAY_S = 86_400;

export const sec = (ms: number): number => Math.floor(ms / 1000);

// ------------------------------------------------------------------ observations

export type Observation =
  | { kind: 'player'; atMs: number; data: Player }
  | { kind: 'battlelog'; atMs: number; tag: string; data: BattleLog }
  | { kind: 'club'; atMs: number; data: Club }
  | { kind: 'rotation'; atMs: number; data: EventRotation }
  | { kind: 'playerRanking'; atMs: number; region: string; data: PlayerRankingItem[] }
  | { kind: 'clubRanking'; atMs: number; region: string; data: ClubRankingItem[] }
  | { kind: 'brawlers'; atMs: number; data: Brawler[] };

export interface RecordReport {
  /** snapshots written (first snapshots and changes) */
  playerSnapshots: number;
  clubSnapshots: number;
  /** bytes of reverse diffs written */
  snapshotBytes: number;
  /** battles seen for the first time */
  newBattles: number;
  /** battle-log entries stored for their player (first time seen from that player) */
  playerBattles: number;
  clubEvents: number;
  /** brawler ids whose name was recorded for the first time (ascending) */
  newBrawlers: number[];
}

interface DiscoveredPlayer {
  tag: string;
  name: string;
  trophies: number | null;
  /** null = not known from this source, '' = no club */
  clubTag: string | null;
  clubName: string | null;
  seen: number;
}

interface DiscoveredClub {
  tag: string;
  name: string;
  trophies: number | null;
  memberCount: number | null;
  badgeId: number | null;
  seen: number;
}

interface PlayerRef {
  id: number;
  name: string;
  trophies: number | null;
  clubTag: string | null;
  seen: number;
}

const KIND_CODE: Record<EntityKind, number> = { player: 0, club: 1 };

const UPSERT_META = 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
const INSERT_PIN = 'INSERT INTO pin (kind, id, reason) VALUES (?, ?, ?) ON CONFLICT DO NOTHING';
const INSERT_TRACKED = 'INSERT INTO tracked (kind, id, viewed_until, next_poll) VALUES (?, ?, 0, ?) ON CONFLICT DO NOTHING';

/** One build column: the item ids, comma-separated (null when the brawler has none). */
function ids(v: Json | undefined): string | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  return v.map((x) => (x && typeof x === 'object' && !Array.isArray(x) ? String((x as { id?: Json }).id) : '')).join(',');
}

/**
 * The writer's memory of players and clubs it has written (id, and what it last wrote, so an
 * unchanged sighting writes nothing), bounded in bytes: about 260 bytes a player on the heap with
 * its tag as key (measured: 200,000 players, 49.7 MB), so the 200,000 players it once kept grew to
 * ~50 MB as a poller met players through battle logs. 8 MB is ~32,000 players, the active ones; one
 * it forgot is looked up by tag in the next write's batched SELECT.
 */
const WRITTEN_PLAYERS_BYTES = 8 * 2 ** 20;
const WRITTEN_CLUBS_BYTES = 2 * 2 ** 20;
/** a written entry's weight: the map's entry, the object and its key, plus its strings (UTF-16 at worst) */
const writtenWeight = (strings: number) => 200 + 2 * strings;

type ClubRef = { id: number; name: string; trophies: number | null; seen: number };

export class HistoryStore {
  private readonly players = new Lru<string, PlayerRef>(Number.MAX_SAFE_INTEGER, {
    max: WRITTEN_PLAYERS_BYTES,
    weigh: (p) => writtenWeight(p.name.length + (p.clubTag?.length ?? 0)),
  });
  private readonly clubs = new Lru<string, ClubRef>(Number.MAX_SAFE_INTEGER, { max: WRITTEN_CLUBS_BYTES, weigh: (c) => writtenWeight(c.name.length) });
  private readonly labels = new Map<string, number>();
  /** the writer's copy of `game_name` (a few hundred rows), loaded at the first write */
  private names: Map<number, { name: string; seen: number }> | null = null;

  /** writes: every one goes through `write` (one transaction) */
  readonly w: SqlPool;
  /** reads: see committed batches only */
  readonly r: SqlDb;

  constructor(readonly backend: HistoryBackend) {
    this.w = backend.w;
    this.r = backend.r;
  }

  /**
   * Opens (creating and migrating when needed) the history store: on PostgreSQL when `url` is a
   * postgres:// URL (tables in `schema` when given), else `history.sqlite` in `dir`, or the file `path`.
   */
  static async open(opts: { dir?: string; path?: string; url?: string; schema?: string }): Promise<HistoryStore> {
    if (opts.url && isPostgresUrl(opts.url)) {
      const { openPostgresBackend } = await import('./history-postgres.ts');
      return new HistoryStore(await openPostgresBackend(opts.url, opts.schema !== undefined ? { schema: opts.schema } : {}));
    }
    const { openSqliteBackend } = await import('./history-sqlite.ts');
    return new HistoryStore(await openSqliteBackend(opts.path ?? join(opts.dir ?? '.', HISTORY_FILE)));
  }

  /** Opens the store the settings name: PostgreSQL when DATABASE_URL is set, else SQLite under DATA_DIR. */
  static openFor(config: { DATA_DIR: string; DATABASE_URL?: string | undefined; DATABASE_SCHEMA?: string | undefined }): Promise<HistoryStore> {
    return HistoryStore.open({
      dir: config.DATA_DIR,
      ...(config.DATABASE_URL ? { url: config.DATABASE_URL } : {}),
      ...(config.DATABASE_SCHEMA ? { schema: config.DATABASE_SCHEMA } : {}),
    });
  }

  /** Where the store lives (a file path, or the PostgreSQL database and schema), for logs. */
  get location(): string {
    return this.backend.location;
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  /**
   * Runs `fn` as one write transaction. The discovery caches remember ids and names written inside
   * it; when the transaction fails (or is retried after a lost connection) they may describe rows
   * that were rolled back, so they are forgotten.
   */
  private write<T>(fn: (tx: SqlDb) => Promise<T>): Promise<T> {
    let attempts = 0;
    return this.w
      .transaction(async (tx) => {
        if (attempts++ > 0) this.forget();
        try {
          return await fn(tx);
        } catch (err) {
          this.forget();
          throw err;
        }
      })
      .catch((err: unknown) => {
        this.forget();
        throw err;
      });
  }

  private forget(): void {
    this.players.clear();
    this.clubs.clear();
    this.labels.clear();
    this.names = null;
  }

  // ------------------------------------------------------------------ ids and labels

  private async label(db: SqlDb, name: string): Promise<number> {
    const hit = this.labels.get(name);
    if (hit !== undefined) return hit;
    await db.run('INSERT INTO label (name) VALUES (?) ON CONFLICT (name) DO NOTHING', [name]);
    const row = await db.get<{ id: number }>('SELECT id FROM label WHERE name = ?', [name]);
    this.labels.set(name, row!.id);
    return row!.id;
  }

  async labelNames(): Promise<Map<number, string>> {
    const rows = await this.r.all<{ id: number; name: string }>('SELECT id, name FROM label');
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /**
   * Adds or refreshes players in the search index and returns their ids. Later sightings win over
   * earlier ones (a backfill never overwrites a newer name); unchanged rows are not rewritten.
   */
  private async discoverPlayers(db: SqlDb, rows: DiscoveredPlayer[]): Promise<Map<string, number>> {
    const latest = new Map<string, DiscoveredPlayer>();
    for (const r of rows) {
      const prev = latest.get(r.tag);
      if (!prev) latest.set(r.tag, r);
      else if (r.seen >= prev.seen) {
        latest.set(r.tag, {
          ...r,
          trophies: r.trophies ?? prev.trophies,
          clubTag: r.clubTag ?? prev.clubTag,
          clubName: r.clubTag !== null ? r.clubName : prev.clubName,
        });
      }
    }
    const write: SqlValue[][] = [];
    const unknown: string[] = [];
    for (const r of latest.values()) {
      const ref = this.players.get(r.tag);
      if (!ref) unknown.push(r.tag);
      const same =
        ref &&
        (r.seen < ref.seen ||
          (ref.name === r.name &&
            (r.trophies === null || r.trophies === ref.trophies) &&
            (r.clubTag === null || r.clubTag === ref.clubTag) &&
            r.seen < ref.seen + DAY_S));
      if (same) continue;
      const folded = foldName(r.name);
      write.push([r.tag, r.name, folded, r.trophies, r.clubTag, r.clubName, r.seen, ...this.indexValues(folded)]);
      if (ref) {
        ref.name = r.name;
        ref.trophies = r.trophies ?? ref.trophies;
        ref.clubTag = r.clubTag ?? ref.clubTag;
        ref.seen = r.seen;
      }
    }
    const extra = this.backend.searchColumns;
    await insertMany(
      db,
      `INSERT INTO player (tag, name, folded, trophies, club_tag, club_name, seen_at${extra.map((c) => `, ${c.name}`).join('')})`,
      7 + extra.length,
      write,
      `ON CONFLICT (tag) DO UPDATE SET
         name = excluded.name, folded = excluded.folded,${extra.map((c) => ` ${c.name} = excluded.${c.name},`).join('')}
         trophies = coalesce(excluded.trophies, player.trophies),
         club_tag = coalesce(excluded.club_tag, player.club_tag),
         club_name = CASE WHEN excluded.club_tag IS NULL THEN player.club_name ELSE excluded.club_name END,
         seen_at = excluded.seen_at
       WHERE excluded.seen_at >= player.seen_at`,
    );
    return idsOf(db, latest.keys(), this.players, unknown, 'SELECT id, tag, name, trophies, club_tag, seen_at FROM player', (f: PlayerRow) => ({
      id: f.id,
      name: f.name,
      trophies: f.trophies,
      clubTag: f.club_tag,
      seen: f.seen_at,
    }));
  }

  private async discoverClubs(db: SqlDb, rows: DiscoveredClub[]): Promise<Map<string, number>> {
    const latest = new Map<string, DiscoveredClub>();
    for (const r of rows) {
      const prev = latest.get(r.tag);
      if (!prev || r.seen >= prev.seen) {
        latest.set(r.tag, prev ? { ...r, trophies: r.trophies ?? prev.trophies, memberCount: r.memberCount ?? prev.memberCount, badgeId: r.badgeId ?? prev.badgeId } : r);
      }
    }
    const write: SqlValue[][] = [];
    const unknown: string[] = [];
    for (const r of latest.values()) {
      const ref = this.clubs.get(r.tag);
      if (!ref) unknown.push(r.tag);
      if (ref && (r.seen < ref.seen || (ref.name === r.name && (r.trophies === null || r.trophies === ref.trophies) && r.seen < ref.seen + DAY_S))) {
        continue;
      }
      const folded = foldName(r.name);
      write.push([r.tag, r.name, folded, r.trophies, r.memberCount, r.badgeId, r.seen, ...this.indexValues(folded)]);
      if (ref) {
        ref.name = r.name;
        ref.trophies = r.trophies ?? ref.trophies;
        ref.seen = r.seen;
      }
    }
    const extra = this.backend.searchColumns;
    await insertMany(
      db,
      `INSERT INTO club (tag, name, folded, trophies, member_count, badge_id, seen_at${extra.map((c) => `, ${c.name}`).join('')})`,
      7 + extra.length,
      write,
      `ON CONFLICT (tag) DO UPDATE SET
         name = excluded.name, folded = excluded.folded,${extra.map((c) => ` ${c.name} = excluded.${c.name},`).join('')}
         trophies = coalesce(excluded.trophies, club.trophies),
         member_count = coalesce(excluded.member_count, club.member_count),
         badge_id = coalesce(excluded.badge_id, club.badge_id),
         seen_at = excluded.seen_at
       WHERE excluded.seen_at >= club.seen_at`,
    );
    return idsOf(db, latest.keys(), this.clubs, unknown, 'SELECT id, tag, name, trophies, seen_at FROM club', (f: ClubRow) => ({
      id: f.id,
      name: f.name,
      trophies: f.trophies,
      seen: f.seen_at,
    }));
  }

  /** Values of the backend's own search columns for a folded name. */
  private indexValues(folded: string): SqlValue[] {
    return this.backend.searchColumns.map((c) => c.value(folded));
  }

  /** Ids of known players/clubs (null when never seen); read-only. */
  async idOf(kind: EntityKind, tag: string): Promise<number | null> {
    const row = await this.r.get<{ id: number }>(`SELECT id FROM ${kind} WHERE tag = ?`, [tag]);
    return row?.id ?? null;
  }

  // ------------------------------------------------------------------ recording

  /** Records a batch of observations in one transaction. */
  record(batch: Observation[]): Promise<RecordReport> {
    return this.write((tx) => this.recordIn(tx, batch));
  }

  private async writeNames(db: SqlDb, sightings: NameSighting[]): Promise<number[]> {
    if (sightings.length === 0) return [];
    if (!this.names) {
      const rows = await db.all<{ id: number; name: string; seen_at: number }>('SELECT id, name, seen_at FROM game_name');
      this.names = new Map(rows.map((r) => [r.id, { name: r.name, seen: r.seen_at }]));
    }
    return recordNames(db, sightings, this.names);
  }

  private async recordIn(db: SqlDb, batch: Observation[]): Promise<RecordReport> {
    const report: RecordReport = { playerSnapshots: 0, clubSnapshots: 0, snapshotBytes: 0, newBattles: 0, playerBattles: 0, clubEvents: 0, newBrawlers: [] };
    const names: NameSighting[] = [];
    /** brawlers the catalogue of this batch lists: not news whoever else names them */
    const catalogued = new Set<number>();
    const players: DiscoveredPlayer[] = [];
    const clubs: DiscoveredClub[] = [];
    const parsedLogs: { tag: string; battles: ParsedBattle[] }[] = [];

    for (const o of batch) {
      const seen = sec(o.atMs);
      switch (o.kind) {
        case 'player': {
          const c = playerClub(o.data);
          players.push({ tag: o.data.tag, name: o.data.name, trophies: o.data.trophies, clubTag: c?.tag ?? '', clubName: c?.name ?? null, seen });
          if (c) clubs.push({ tag: c.tag, name: c.name, trophies: null, memberCount: null, badgeId: null, seen });
          names.push(...namesOfPlayer(o.data, seen));
          break;
        }
        case 'battlelog': {
          const battles: ParsedBattle[] = [];
          for (const item of o.data.items) {
            const b = parseBattle(o.tag, item);
            if (!b) continue;
            battles.push(b);
            names.push(...namesOfBattle(item, b.t));
            // A battle's time is when it was seen being played: names are as of then.
            for (const p of b.participants) players.push({ tag: p.tag, name: p.name, trophies: null, clubTag: null, clubName: null, seen: b.t });
          }
          // The owner needs an id even when its log is empty (it is then only known by tag).
          if (!battles.some((b) => b.participants.some((p) => p.tag === o.tag))) {
            players.push({ tag: o.tag, name: this.players.get(o.tag)?.name ?? '', trophies: null, clubTag: null, clubName: null, seen: 0 });
          }
          parsedLogs.push({ tag: o.tag, battles });
          break;
        }
        case 'club': {
          const d = o.data;
          clubs.push({ tag: d.tag, name: d.name, trophies: d.trophies, memberCount: d.members.length, badgeId: d.badgeId, seen });
          for (const m of d.members) players.push({ tag: m.tag, name: m.name, trophies: m.trophies, clubTag: d.tag, clubName: d.name, seen });
          break;
        }
        case 'playerRanking':
          for (const it of o.data) players.push({ tag: it.tag, name: it.name, trophies: it.trophies, clubTag: it.club ? null : '', clubName: null, seen });
          break;
        case 'clubRanking':
          for (const it of o.data) clubs.push({ tag: it.tag, name: it.name, trophies: it.trophies, memberCount: it.memberCount, badgeId: it.badgeId, seen });
          break;
        case 'brawlers':
          names.push(...namesOfCatalogue(o.data, seen));
          for (const b of o.data) catalogued.add(b.id);
          break;
        default:
          break;
      }
    }
    // Rankings report trophies of 1 for top players at times (an upstream bug): never index those.
    for (const p of players) if (p.trophies !== null && p.trophies <= 1) p.trophies = null;

    const playerIds = await this.discoverPlayers(db, players);
    const clubIds = await this.discoverClubs(db, clubs);

    // player snapshots
    const pObs = batch.flatMap((o) =>
      o.kind === 'player' ? [{ id: playerIds.get(o.data.tag)!, t: sec(o.atMs), state: canonical(o.data as Record<string, unknown>, PLAYER_SPEC) }] : [],
    );
    const pChanges = await appendSnapshots(db, 'player', pObs);
    report.playerSnapshots = pChanges.length;
    report.snapshotBytes += pChanges.reduce((a, c) => a + c.bytes, 0);
    await this.updateBuilds(db, pChanges);

    // club snapshots and events
    const cObs = batch.flatMap((o) =>
      o.kind === 'club' ? [{ id: clubIds.get(o.data.tag)!, t: sec(o.atMs), state: canonical(o.data as Record<string, unknown>, CLUB_SPEC) }] : [],
    );
    const cChanges = await appendSnapshots(db, 'club', cObs);
    report.clubSnapshots = cChanges.length;
    report.snapshotBytes += cChanges.reduce((a, c) => a + c.bytes, 0);
    report.clubEvents = await this.writeClubEvents(db, cChanges);

    // battles
    for (const log of parsedLogs) {
      const r = await this.writeBattles(db, playerIds.get(log.tag)!, log.tag, log.battles, playerIds);
      report.newBattles += r.newBattles;
      report.playerBattles += r.playerBattles;
    }

    report.newBrawlers = (await this.writeNames(db, names)).filter((id) => !catalogued.has(id));

    for (const o of batch) {
      if (o.kind === 'rotation') await this.writeRotation(db, o.data, sec(o.atMs));
      if (o.kind === 'brawlers') {
        await db.run(UPSERT_META, ['catalogue.brawlers', JSON.stringify({ at: sec(o.atMs), items: o.data })]);
      }
    }
    return report;
  }

  private async updateBuilds(db: SqlDb, changes: Change[]): Promise<void> {
    const rows = new Map<string, SqlValue[] | null>();
    for (const c of changes) {
      const now = items(c.next, 'brawlers');
      const before = c.prev ? items(c.prev, 'brawlers') : {};
      for (const id of new Set([...Object.keys(now), ...Object.keys(before)])) {
        const b = now[id];
        if (c.prev && jsonEqual(b, before[id])) continue;
        const build = b ? [ids(b.gadgets), ids(b.starPowers), ids(b.hyperCharges), ids(b.gears)] : [];
        const key = `${id}:${c.id}`;
        if (!b || typeof b.trophies !== 'number' || build.every((x) => x === null)) rows.set(key, null);
        else rows.set(key, [Number(id), c.id, b.trophies, typeof b.power === 'number' ? b.power : null, ...build]);
      }
    }
    const upserts: SqlValue[][] = [];
    for (const [key, row] of rows) {
      if (row) upserts.push(row);
      else {
        const [b, p] = key.split(':').map(Number);
        await db.run('DELETE FROM player_build WHERE brawler_id = ? AND player_id = ?', [b!, p!]);
      }
    }
    await insertMany(
      db,
      'INSERT INTO player_build (brawler_id, player_id, trophies, power, gadgets, star_powers, hyper_charges, gears)',
      8,
      upserts,
      `ON CONFLICT (brawler_id, player_id) DO UPDATE SET trophies = excluded.trophies, power = excluded.power, gadgets = excluded.gadgets,
         star_powers = excluded.star_powers, hyper_charges = excluded.hyper_charges, gears = excluded.gears`,
    );
  }

  private async writeClubEvents(db: SqlDb, changes: Change[]): Promise<number> {
    const rows: SqlValue[][] = [];
    for (const c of changes) {
      if (!c.prev) continue;
      for (const e of clubEvents(c.prev, c.next)) {
        rows.push([c.id, c.t, e.kind, e.subject, e.old === null ? null : JSON.stringify(e.old), e.new === null ? null : JSON.stringify(e.new)]);
      }
    }
    return insertMany(db, 'INSERT INTO club_event (club_id, t, kind, subject, old, new)', 6, rows, 'ON CONFLICT DO NOTHING');
  }

  private async writeBattles(
    db: SqlDb,
    ownerId: number,
    ownerTag: string,
    battles: ParsedBattle[],
    ids: Map<string, number>,
  ): Promise<{ newBattles: number; playerBattles: number }> {
    if (battles.length === 0) return { newBattles: 0, playerBattles: 0 };
    // The owner's own rows: once per (player, time).
    const own: SqlValue[][] = [];
    for (const b of battles) {
      own.push([
        ownerId, b.t, b.owner.brawlerId, b.owner.result, b.owner.trophyChange, b.owner.rank, b.owner.star ? 1 : 0,
        b.mapId, await this.label(db, b.mode), b.type === null ? null : await this.label(db, b.type),
      ]);
    }
    const playerBattles = await insertMany(
      db,
      'INSERT INTO player_battle (player_id, t, brawler_id, result, trophy_change, rank, star, map_id, mode, type)',
      10,
      own,
      'ON CONFLICT DO NOTHING',
    );
    // Battles across logs: the first sighting counts in the map statistics.
    const keyed = battles.map((b) => ({ b, key: ids.get(battleKeyTag(ownerTag, b)) ?? ownerId }));
    const existing = new Set<string>();
    for (let i = 0; i < keyed.length; i += 400) {
      const part = keyed.slice(i, i + 400);
      const found = await db.all<{ t: number; key: number }>(
        // Typed pairs: PostgreSQL would read untyped VALUES as text.
        `SELECT t, key FROM battle WHERE (t, key) IN (VALUES ${part.map(() => '(CAST(? AS BIGINT), CAST(? AS BIGINT))').join(',')})`,
        part.flatMap((k) => [k.b.t, k.key]),
      );
      for (const f of found) existing.add(`${f.t}:${f.key}`);
    }
    const fresh = keyed.filter((k) => {
      const id = `${k.b.t}:${k.key}`;
      if (existing.has(id)) return false;
      existing.add(id);
      return true;
    });
    const battleRows: SqlValue[][] = [];
    const maps = new Map<number, SqlValue[]>();
    const counts = new Map<string, number[]>();
    const mapDays = new Map<string, number>();
    for (const { b, key } of fresh) {
      const mode = await this.label(db, b.mode);
      battleRows.push([b.t, key, b.mapId, mode]);
      if (b.mapId !== null) {
        const mapMode = await this.label(db, b.mapMode);
        const m = maps.get(b.mapId);
        if (!m || (m[4] as number) < b.t) maps.set(b.mapId, [b.mapId, b.mapName, mapMode, b.t, b.t]);
      }
      if (!b.countsForMeta || b.mapId === null) continue;
      const day = Math.floor(b.t / DAY_S);
      const dk = `${b.mapId}|${mode}|${day}`;
      mapDays.set(dk, (mapDays.get(dk) ?? 0) + 1);
      for (const p of b.participants) {
        for (const brawler of p.brawlers) {
          const k = `${b.mapId}|${mode}|${brawler}|${day}`;
          let c = counts.get(k);
          if (!c) counts.set(k, (c = [0, 0, 0, 0, 0]));
          c[0]!++;
          if (p.result === 1) c[1]!++;
          else if (p.result === -1) c[2]!++;
          else if (p.result === 0) c[3]!++;
          if (p.star) c[4]!++;
        }
      }
    }
    await insertMany(db, 'INSERT INTO battle (t, key, map_id, mode)', 4, battleRows, 'ON CONFLICT DO NOTHING');
    await this.upsertMaps(db, [...maps.values()]);
    await insertMany(
      db,
      'INSERT INTO map_brawler_day (map_id, mode, brawler_id, day, picks, wins, losses, draws, stars)',
      9,
      [...counts].map(([k, c]) => [...k.split('|').map(Number), ...c]),
      `ON CONFLICT (map_id, mode, brawler_id, day) DO UPDATE SET picks = map_brawler_day.picks + excluded.picks,
         wins = map_brawler_day.wins + excluded.wins, losses = map_brawler_day.losses + excluded.losses,
         draws = map_brawler_day.draws + excluded.draws, stars = map_brawler_day.stars + excluded.stars`,
    );
    await insertMany(
      db,
      'INSERT INTO map_day (map_id, mode, day, battles)',
      4,
      [...mapDays].map(([k, n]) => [...k.split('|').map(Number), n]),
      'ON CONFLICT (map_id, mode, day) DO UPDATE SET battles = map_day.battles + excluded.battles',
    );
    return { newBattles: fresh.length, playerBattles };
  }

  /**
   * rows: [id, name, mode label, first seen, last active]. Rows of one map merge first (as the
   * upsert would merge them into the stored row): one statement may not update a row twice.
   */
  private async upsertMaps(db: SqlDb, rows: SqlValue[][]): Promise<void> {
    const merged = new Map<SqlValue, SqlValue[]>();
    for (const r of rows) {
      const m = merged.get(r[0]!);
      if (!m) merged.set(r[0]!, [...r]);
      else merged.set(r[0]!, [r[0]!, r[1] ?? m[1]!, r[2] ?? m[2]!, Math.min(m[3] as number, r[3] as number), Math.max(m[4] as number, r[4] as number)]);
    }
    await insertMany(
      db,
      'INSERT INTO map (id, name, mode, first_seen, last_active)',
      5,
      // in id order: concurrent writers lock the rows in one order and do not deadlock
      [...merged.values()].sort((a, b) => (a[0] as number) - (b[0] as number)),
      `ON CONFLICT (id) DO UPDATE SET name = coalesce(excluded.name, map.name), mode = coalesce(excluded.mode, map.mode),
         first_seen = ${lesser('map.first_seen', 'excluded.first_seen')}, last_active = ${greater('map.last_active', 'excluded.last_active')}`,
    );
  }

  private async writeRotation(db: SqlDb, events: EventRotation, seen: number): Promise<void> {
    const rows = new Map<string, SqlValue[]>();
    const maps: SqlValue[][] = [];
    for (const e of events) {
      const start = parseApiTime(e.startTime);
      const end = parseApiTime(e.endTime);
      if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
      const mode = e.event.mode ? await this.label(db, e.event.mode) : null;
      rows.set(`${e.slotId}:${sec(start)}`, [e.slotId, sec(start), sec(end), e.event.id, mode, e.event.modifiers ? JSON.stringify(e.event.modifiers) : null, seen]);
      if (e.event.id > 0) maps.push([e.event.id, e.event.map ?? null, mode, Math.min(seen, sec(start)), Math.min(seen, sec(end))]);
    }
    await insertMany(
      db,
      'INSERT INTO rotation (slot_id, start, "end", map_id, mode, modifiers, seen_at)',
      7,
      [...rows.values()],
      `ON CONFLICT (slot_id, start) DO UPDATE SET "end" = excluded."end", map_id = excluded.map_id, mode = excluded.mode,
         modifiers = excluded.modifiers, seen_at = ${greater('rotation.seen_at', 'excluded.seen_at')}`,
    );
    await this.upsertMaps(db, maps);
  }

  /**
   * Backfill: adds snapshots older than everything recorded for one player or club, in one
   * transaction with the battles and club events they bring. `states` ascending in time.
   */
  backfillEntity(
    kind: EntityKind,
    tag: string,
    states: { atMs: number; data: Player | Club }[],
    extra: Observation[] = [],
  ): Promise<number> {
    return this.write(async (tx) => {
      if (states.length === 0) return 0;
      const last = states[states.length - 1]!;
      // discovery from the newest state only (older names must not win) plus whatever comes along
      await this.recordIn(tx, extra);
      const id =
        kind === 'player'
          ? (await this.discoverPlayers(tx, [{ tag, name: last.data.name, trophies: last.data.trophies, clubTag: playerClub(last.data as Player)?.tag ?? '', clubName: playerClub(last.data as Player)?.name ?? null, seen: sec(last.atMs) }])).get(tag)!
          : (await this.discoverClubs(tx, [{ tag, name: last.data.name, trophies: last.data.trophies, memberCount: null, badgeId: null, seen: sec(last.atMs) }])).get(tag)!;
      if (kind === 'player') await this.writeNames(tx, namesOfPlayer(last.data as Player, sec(last.atMs)));
      const spec = kind === 'player' ? PLAYER_SPEC : CLUB_SPEC;
      const snaps: Snapshot[] = states.map((s) => ({ t: sec(s.atMs), state: canonical(s.data as Record<string, unknown>, spec) }));
      const { bytes, changes } = await prependSnapshots(tx, kind, id, snaps);
      if (kind === 'club') await this.writeClubEvents(tx, changes);
      // Builds follow the newest state: only an entity that had none before takes them from here.
      if (kind === 'player' && changes[0]?.prev === null) await this.updateBuilds(tx, changes);
      return bytes;
    });
  }

  // ------------------------------------------------------------------ tracking

  /** The id of a tag, adding it (nameless until seen) when new. */
  private async entityId(db: SqlDb, kind: EntityKind, tag: string): Promise<number> {
    if (kind === 'player') {
      return (await this.discoverPlayers(db, [{ tag, name: this.players.get(tag)?.name ?? '', trophies: null, clubTag: null, clubName: null, seen: 0 }])).get(tag)!;
    }
    return (await this.discoverClubs(db, [{ tag, name: this.clubs.get(tag)?.name ?? '', trophies: null, memberCount: null, badgeId: null, seen: 0 }])).get(tag)!;
  }

  /** Tracks until `untilMs` (never shortens); a new entry is due for polling at once. */
  track(kind: EntityKind, tag: string, untilMs: number, nowMs: number): Promise<void> {
    return this.write(async (tx) => {
      const id = await this.entityId(tx, kind, tag);
      await tx.run(
        `INSERT INTO tracked (kind, id, viewed_until, next_poll) VALUES (?, ?, ?, ?)
         ON CONFLICT (kind, id) DO UPDATE SET viewed_until = ${greater('tracked.viewed_until', 'excluded.viewed_until')}`,
        [KIND_CODE[kind], id, sec(untilMs), sec(nowMs)],
      );
    });
  }

  /** Keeps an entity tracked while the pin exists (a linked Discord member, a channel leaderboard). */
  pin(kind: EntityKind, tag: string, reason: string, nowMs: number): Promise<void> {
    return this.write(async (tx) => {
      const id = await this.entityId(tx, kind, tag);
      await tx.run(INSERT_PIN, [KIND_CODE[kind], id, reason]);
      await tx.run(INSERT_TRACKED, [KIND_CODE[kind], id, sec(nowMs)]);
    });
  }

  unpin(kind: EntityKind, tag: string, reason: string): Promise<void> {
    return this.write(async (tx) => {
      const row = await tx.get<{ id: number }>(`SELECT id FROM ${kind} WHERE tag = ?`, [tag]);
      if (row) await tx.run('DELETE FROM pin WHERE kind = ? AND id = ? AND reason = ?', [KIND_CODE[kind], row.id, reason]);
    });
  }

  /** Replaces the set of entities pinned for one reason (e.g. the global ranking's top players). */
  replacePins(kind: EntityKind, reason: string, tags: string[], nowMs: number): Promise<void> {
    return this.write(async (tx) => {
      await tx.run('DELETE FROM pin WHERE kind = ? AND reason = ?', [KIND_CODE[kind], reason]);
      for (const tag of tags) {
        const id = await this.entityId(tx, kind, tag);
        await tx.run(INSERT_PIN, [KIND_CODE[kind], id, reason]);
        await tx.run(INSERT_TRACKED, [KIND_CODE[kind], id, sec(nowMs)]);
      }
    });
  }

  async tracking(kind: EntityKind, tag: string, nowMs: number): Promise<{ tracked: boolean; until: number | null; pins: string[]; lastPollMs: number | null }> {
    const row = await this.r.get<{ id: number; viewed_until: number | null; last_poll: number | null }>(
      `SELECT e.id, t.viewed_until, t.last_poll FROM ${kind} e LEFT JOIN tracked t ON t.kind = ? AND t.id = e.id WHERE e.tag = ?`,
      [KIND_CODE[kind], tag],
    );
    if (!row) return { tracked: false, until: null, pins: [], lastPollMs: null };
    const pins = (await this.r.all<{ reason: string }>('SELECT reason FROM pin WHERE kind = ? AND id = ? ORDER BY reason', [KIND_CODE[kind], row.id])).map((p) => p.reason);
    const until = row.viewed_until ? row.viewed_until * 1000 : null;
    return {
      tracked: row.viewed_until !== null && (pins.length > 0 || (until !== null && until > nowMs)),
      until,
      pins,
      lastPollMs: row.last_poll === null ? null : row.last_poll * 1000,
    };
  }

  /** Tracked entities due for a poll at `nowMs`, most overdue first, with when each became due (ms). */
  async due(kind: EntityKind, nowMs: number, limit: number): Promise<{ id: number; tag: string; dueAt: number }[]> {
    const now = sec(nowMs);
    const rows = await this.r.all<{ id: number; tag: string; next_poll: number }>(
      `SELECT t.id, e.tag, t.next_poll FROM tracked t JOIN ${kind} e ON e.id = t.id
       WHERE t.kind = ? AND t.next_poll <= ?
         AND (t.viewed_until > ? OR EXISTS (SELECT 1 FROM pin p WHERE p.kind = t.kind AND p.id = t.id))
       ORDER BY t.next_poll, t.id LIMIT ?`,
      [KIND_CODE[kind], now, now, limit],
    );
    return rows.map((r) => ({ id: Number(r.id), tag: r.tag, dueAt: Number(r.next_poll) * 1000 }));
  }

  /** When the next poll of any tracked entity of this kind is due (ms), or null when none is tracked. */
  async nextDue(kind: EntityKind, nowMs: number): Promise<number | null> {
    const now = sec(nowMs);
    const row = await this.r.get<{ n: number | null }>(
      `SELECT min(t.next_poll) AS n FROM tracked t WHERE t.kind = ?
         AND (t.viewed_until > ? OR EXISTS (SELECT 1 FROM pin p WHERE p.kind = t.kind AND p.id = t.id))`,
      [KIND_CODE[kind], now],
    );
    return row?.n == null ? null : row.n * 1000;
  }

  markPolled(kind: EntityKind, ids: number[], nowMs: number, nextMs: number): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    return this.write(async (tx) => {
      for (let i = 0; i < ids.length; i += 500) {
        const part = ids.slice(i, i + 500);
        await tx.run(
          `UPDATE tracked SET last_poll = ?, next_poll = ? WHERE kind = ? AND id IN (${part.map(() => '?').join(',')})`,
          [sec(nowMs), sec(nextMs), KIND_CODE[kind], ...part],
        );
      }
    });
  }

  /** Tags of everything tracked at `nowMs`. */
  async trackedTags(nowMs: number): Promise<{ player: string[]; club: string[] }> {
    const now = sec(nowMs);
    const out = { player: [] as string[], club: [] as string[] };
    for (const kind of ['player', 'club'] as const) {
      const rows = await this.r.all<{ tag: string }>(
        `SELECT e.tag FROM tracked t JOIN ${kind} e ON e.id = t.id WHERE t.kind = ?
           AND (t.viewed_until > ? OR EXISTS (SELECT 1 FROM pin p WHERE p.kind = t.kind AND p.id = t.id)) ORDER BY e.tag`,
        [KIND_CODE[kind], now],
      );
      out[kind] = rows.map((r) => r.tag);
    }
    return out;
  }

  async trackedCount(kind: EntityKind, nowMs: number): Promise<number> {
    const now = sec(nowMs);
    const row = await this.r.get<{ n: number }>(
      `SELECT count(*) AS n FROM tracked t WHERE t.kind = ? AND (t.viewed_until > ? OR EXISTS (SELECT 1 FROM pin p WHERE p.kind = t.kind AND p.id = t.id))`,
      [KIND_CODE[kind], now],
    );
    return row?.n ?? 0;
  }

  // ------------------------------------------------------------------ meta

  async getMeta<T>(key: string): Promise<T | undefined> {
    const row = await this.r.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [key]);
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  setMeta(key: string, value: unknown): Promise<void> {
    return this.write(async (tx) => {
      await tx.run(UPSERT_META, [key, JSON.stringify(value)]);
    });
  }

  // ------------------------------------------------------------------ bulk copy (starr migrate)

  /**
   * Inserts rows copied from another store (rows already here are kept as they are) and notes how
   * far the copy got under the meta key `progressKey`, in one transaction. Returns rows inserted.
   */
  copyRows(table: string, columns: string[], rows: SqlValue[][], progressKey: string, progress: unknown): Promise<number> {
    return this.write(async (tx) => {
      const n = await insertMany(tx, `INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(', ')})`, columns.length, rows, 'ON CONFLICT DO NOTHING');
      await tx.run(UPSERT_META, [progressKey, JSON.stringify(progress)]);
      return n;
    });
  }

  /** After a bulk copy: ids the copy brought must never be handed out again. */
  async afterCopy(identityTables: string[]): Promise<void> {
    await this.backend.afterCopy?.(identityTables);
    this.forget();
  }

  // ------------------------------------------------------------------ reads

  /** Recorded names of game things (brawlers and their items) by id; ids never named are absent. */
  async gameNames(ids: Iterable<number>): Promise<Map<number, string>> {
    const list = [...new Set(ids)];
    const out = new Map<number, string>();
    for (let i = 0; i < list.length; i += 500) {
      const part = list.slice(i, i + 500);
      const rows = await this.r.all<{ id: number; name: string }>(`SELECT id, name FROM game_name WHERE id IN (${part.map(() => '?').join(',')})`, part);
      for (const r of rows) out.set(r.id, r.name);
    }
    return out;
  }

  async snapshots(kind: EntityKind, tag: string, opts: { limit?: number; sinceMs?: number; includeBefore?: boolean } = {}): Promise<Snapshot[]> {
    const id = await this.idOf(kind, tag);
    if (id === null) return [];
    return readSnapshots(this.r, kind, id, {
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      ...(opts.sinceMs !== undefined ? { sinceT: sec(opts.sinceMs) } : {}),
      ...(opts.includeBefore !== undefined ? { includeBefore: opts.includeBefore } : {}),
    });
  }

  /** Unix seconds of the oldest snapshot of a player or club, null when none is recorded. */
  async firstRecorded(kind: EntityKind, tag: string): Promise<number | null> {
    const id = await this.idOf(kind, tag);
    if (id === null) return null;
    const col = kind === 'player' ? 'player_id' : 'club_id';
    const snap = await this.r.get<{ t: number | null }>(`SELECT min(t) AS t FROM ${kind}_snap WHERE ${col} = ?`, [id]);
    if (snap?.t != null) return snap.t;
    const state = await this.r.get<{ t: number }>(`SELECT t FROM ${kind}_state WHERE ${col} = ?`, [id]);
    return state?.t ?? null;
  }

  async currentState(kind: EntityKind, tag: string): Promise<Snapshot | null> {
    const id = await this.idOf(kind, tag);
    if (id === null) return null;
    const c = (await loadCurrent(this.r, kind, [id])).get(id);
    return c ? { t: c.t, state: c.state } : null;
  }

  async playerBattles(
    tag: string,
    opts: { sinceMs?: number; untilMs?: number; limit?: number } = {},
  ): Promise<PlayerBattleRow[]> {
    const id = await this.idOf('player', tag);
    if (id === null) return [];
    const labels = await this.labelNames();
    const rows = await this.r.all<{
      t: number; brawler_id: number | null; result: number | null; trophy_change: number | null; rank: number | null;
      star: number; map_id: number | null; mode: number | null; type: number | null;
    }>(
      `SELECT t, brawler_id, result, trophy_change, rank, star, map_id, mode, type FROM player_battle
       WHERE player_id = ? AND t >= ? AND t <= ? ORDER BY t DESC LIMIT ?`,
      [id, opts.sinceMs === undefined ? 0 : sec(opts.sinceMs), opts.untilMs === undefined ? NO_LIMIT : sec(opts.untilMs), opts.limit ?? NO_LIMIT],
    );
    return rows.map((r) => ({
      t: r.t,
      brawlerId: r.brawler_id,
      result: r.result as PlayerBattleRow['result'],
      trophyChange: r.trophy_change,
      rank: r.rank,
      star: r.star === 1,
      mapId: r.map_id,
      mode: r.mode === null ? null : (labels.get(r.mode) ?? null),
      type: r.type === null ? null : (labels.get(r.type) ?? null),
    }));
  }

  async clubEvents(tag: string, limit: number): Promise<ClubEventRow[]> {
    const id = await this.idOf('club', tag);
    if (id === null) return [];
    const rows = await this.r.all<{ t: number; kind: string; subject: string; old: string | null; new: string | null }>(
      'SELECT t, kind, subject, old, new FROM club_event WHERE club_id = ? ORDER BY t DESC, kind, subject LIMIT ?',
      [id, limit],
    );
    return rows.map((r) => ({
      t: r.t,
      kind: r.kind as ClubEventRow['kind'],
      subject: r.subject,
      old: r.old === null ? null : (JSON.parse(r.old) as Json),
      new: r.new === null ? null : (JSON.parse(r.new) as Json),
    }));
  }

  /** When each member of a club last joined it (unix seconds), from the recorded join events. */
  async clubJoins(tag: string): Promise<Map<string, number>> {
    const id = await this.idOf('club', tag);
    if (id === null) return new Map();
    const rows = await this.r.all<{ subject: string; t: number }>(
      "SELECT subject, max(t) AS t FROM club_event WHERE club_id = ? AND kind = 'join' GROUP BY subject",
      [id],
    );
    return new Map(rows.map((r) => [r.subject, r.t]));
  }

  /**
   * Recorded battles of some players: how many (and won) in [sinceMs, untilMs), the newest before
   * `untilMs` (default: no end), and
   * whether the poller reads their battle log (a player never polled has no battles to count, which
   * is not the same as none). Tags never seen are absent.
   */
  async battleSummary(tags: string[], sinceMs: number, untilMs?: number): Promise<Map<string, BattleSummary>> {
    const out = new Map<string, BattleSummary>();
    const since = sec(sinceMs);
    const until = untilMs === undefined ? NO_LIMIT : sec(untilMs);
    for (let i = 0; i < tags.length; i += 500) {
      const part = tags.slice(i, i + 500);
      const rows = await this.r.all<{ tag: string; n: number; wins: number; last: number | null; polled: number | null }>(
        `SELECT p.tag AS tag,
           (SELECT count(*) FROM player_battle b WHERE b.player_id = p.id AND b.t >= ? AND b.t < ?) AS n,
           (SELECT count(*) FROM player_battle b WHERE b.player_id = p.id AND b.t >= ? AND b.t < ? AND b.result = 1) AS wins,
           (SELECT max(b.t) FROM player_battle b WHERE b.player_id = p.id AND b.t < ?) AS last,
           (SELECT k.last_poll FROM tracked k WHERE k.kind = 0 AND k.id = p.id) AS polled
         FROM player p WHERE p.tag IN (${part.map(() => '?').join(',')})`,
        [since, until, since, until, until, ...part],
      );
      for (const r of rows) out.set(r.tag, { battles: r.n, wins: r.wins, lastT: r.last, polled: r.polled !== null || r.last !== null });
    }
    return out;
  }

  /**
   * A club's events after a position, oldest first: what a feed has not posted yet. Events of one
   * poll share their `t` and were written in one transaction, so a position never splits a poll
   * that is still being written; the order (t, kind, subject) is the primary key's.
   */
  async clubEventsAfter(tag: string, after: ClubEventPosition, limit: number): Promise<ClubEventRow[]> {
    const id = await this.idOf('club', tag);
    if (id === null || limit <= 0) return [];
    const rows = await this.r.all<{ t: number; kind: string; subject: string; old: string | null; new: string | null }>(
      `SELECT t, kind, subject, old, new FROM club_event
        WHERE club_id = ? AND (t > ? OR (t = ? AND (kind > ? OR (kind = ? AND subject > ?))))
        ORDER BY t, kind, subject LIMIT ?`,
      [id, after.t, after.t, after.kind, after.kind, after.subject, limit],
    );
    return rows.map((r) => ({
      t: Number(r.t),
      kind: r.kind as ClubEventRow['kind'],
      subject: r.subject,
      old: r.old === null ? null : (JSON.parse(r.old) as Json),
      new: r.new === null ? null : (JSON.parse(r.new) as Json),
    }));
  }

  /** Members whose membership or club role changed at or after `sinceT` (unix seconds): joins, leaves, role changes. */
  async clubMembersChangedSince(tag: string, sinceT: number): Promise<string[]> {
    const id = await this.idOf('club', tag);
    if (id === null) return [];
    const rows = await this.r.all<{ subject: string }>(
      "SELECT DISTINCT subject FROM club_event WHERE club_id = ? AND t >= ? AND kind IN ('join', 'leave', 'role')",
      [id, sinceT],
    );
    return rows.map((r) => r.subject);
  }

  /**
   * Entities pinned for a reason starting with `prefix` (like `link:`) whose recorded state changed
   * at or after `sinceT` (unix seconds; the state's t is when it was first observed), with the reason.
   */
  async pinnedChangedSince(kind: EntityKind, prefix: string, sinceT: number): Promise<{ tag: string; reason: string }[]> {
    return this.r.all<{ tag: string; reason: string }>(
      `SELECT e.tag, p.reason FROM pin p JOIN ${kind}_state s ON s.${kind}_id = p.id JOIN ${kind} e ON e.id = p.id
        WHERE p.kind = ? AND substr(p.reason, 1, ?) = ? AND s.t >= ?`,
      [KIND_CODE[kind], prefix.length, prefix, sinceT],
    );
  }

  /** The pins of these entities whose reason starts with `prefix`: who linked each account. */
  async pinsOf(kind: EntityKind, tags: string[], prefix: string): Promise<{ tag: string; reason: string }[]> {
    const out: { tag: string; reason: string }[] = [];
    for (let i = 0; i < tags.length; i += 500) {
      const part = tags.slice(i, i + 500);
      out.push(
        ...(await this.r.all<{ tag: string; reason: string }>(
          `SELECT e.tag, p.reason FROM ${kind} e JOIN pin p ON p.kind = ? AND p.id = e.id
            WHERE e.tag IN (${part.map(() => '?').join(', ')}) AND substr(p.reason, 1, ?) = ?`,
          [KIND_CODE[kind], ...part, prefix.length, prefix],
        )),
      );
    }
    return out;
  }

  /** Unix seconds of a member's latest recorded join of a club before `beforeT`, null when none is recorded. */
  async lastJoin(clubTag: string, memberTag: string, beforeT: number): Promise<number | null> {
    const id = await this.idOf('club', clubTag);
    if (id === null) return null;
    const row = await this.r.get<{ t: number | null }>(
      "SELECT max(t) AS t FROM club_event WHERE club_id = ? AND kind = 'join' AND subject = ? AND t < ?",
      [id, memberTag, beforeT],
    );
    return row?.t == null ? null : Number(row.t);
  }

  async maps(): Promise<MapRow[]> {
    const labels = await this.labelNames();
    const rows = await this.r.all<{ id: number; name: string | null; mode: number | null; first_seen: number; last_active: number }>(
      'SELECT id, name, mode, first_seen, last_active FROM map ORDER BY id',
    );
    return rows.map((r) => ({ id: r.id, name: r.name, mode: r.mode === null ? null : (labels.get(r.mode) ?? null), firstSeen: r.first_seen, lastActive: r.last_active }));
  }

  async map(id: number): Promise<MapRow | null> {
    return (await this.maps()).find((m) => m.id === id) ?? null;
  }

  /** Per-brawler counts on one map (all its modes), since a day (UTC day number). */
  async mapBrawlerCounts(mapId: number, sinceDay = 0): Promise<{ battles: number; rows: MapBrawlerCount[] }> {
    const labels = await this.labelNames();
    const total = await this.r.get<{ n: number | null }>('SELECT sum(battles) AS n FROM map_day WHERE map_id = ? AND day >= ?', [mapId, sinceDay]);
    const rows = await this.r.all<{ mode: number; brawler_id: number; picks: number; wins: number; losses: number; draws: number; stars: number }>(
      `SELECT mode, brawler_id, sum(picks) AS picks, sum(wins) AS wins, sum(losses) AS losses, sum(draws) AS draws, sum(stars) AS stars
       FROM map_brawler_day WHERE map_id = ? AND day >= ? GROUP BY mode, brawler_id`,
      [mapId, sinceDay],
    );
    return {
      battles: total?.n ?? 0,
      rows: rows.map((r) => ({ mode: labels.get(r.mode) ?? '', brawlerId: r.brawler_id, picks: r.picks, wins: r.wins, losses: r.losses, draws: r.draws, stars: r.stars })),
    };
  }

  async rotationHistory(sinceMs: number): Promise<RotationRow[]> {
    const labels = await this.labelNames();
    const rows = await this.r.all<{ slot_id: number; start: number; end: number; map_id: number; mode: number | null; modifiers: string | null; name: string | null }>(
      `SELECT r.slot_id, r.start, r."end", r.map_id, r.mode, r.modifiers, m.name FROM rotation r LEFT JOIN map m ON m.id = r.map_id
       WHERE r."end" >= ? ORDER BY r.slot_id, r.start`,
      [sec(sinceMs)],
    );
    return rows.map((r) => ({
      slotId: r.slot_id,
      start: r.start,
      end: r.end,
      mapId: r.map_id,
      map: r.name,
      mode: r.mode === null ? null : (labels.get(r.mode) ?? null),
      modifiers: r.modifiers ? (JSON.parse(r.modifiers) as string[]) : null,
    }));
  }

  /** The players with the most trophies on a brawler among recorded profiles, with what they own. */
  async topBuilds(brawlerId: number, limit: number): Promise<BuildRow[]> {
    const rows = await this.r.all<{ player_id: number; tag: string; trophies: number; power: number | null; gadgets: string | null; star_powers: string | null; hyper_charges: string | null; gears: string | null }>(
      `SELECT b.player_id, p.tag, b.trophies, b.power, b.gadgets, b.star_powers, b.hyper_charges, b.gears
       FROM player_build b JOIN player p ON p.id = b.player_id
       WHERE b.brawler_id = ? ORDER BY b.trophies DESC LIMIT ?`,
      [brawlerId, limit],
    );
    const split = (s: string | null) => (s ? s.split(',').map(Number) : []);
    return rows.map((r) => ({
      playerId: r.player_id,
      tag: r.tag,
      trophies: r.trophies,
      power: r.power,
      gadgets: split(r.gadgets),
      starPowers: split(r.star_powers),
      hyperCharges: split(r.hyper_charges),
      gears: split(r.gears),
    }));
  }

  /** Battles of some players with one brawler (for win rates per build). */
  async brawlerResults(playerIds: number[], brawlerId: number): Promise<{ playerId: number; result: number | null }[]> {
    if (playerIds.length === 0) return [];
    const rows = await this.r.all<{ player_id: number; result: number | null }>(
      `SELECT player_id, result FROM player_battle WHERE brawler_id = ? AND player_id IN (${marks(playerIds.length)})`,
      [brawlerId, ...playerIds],
    );
    return rows.map((r) => ({ playerId: r.player_id, result: r.result }));
  }

  async entity(kind: EntityKind, tag: string): Promise<SearchRow | null> {
    const cols = kind === 'player' ? 'id, tag, name, trophies, club_tag, club_name, NULL AS member_count, NULL AS badge_id' : 'id, tag, name, trophies, NULL AS club_tag, NULL AS club_name, member_count, badge_id';
    const row = await this.r.get<RawEntityRow>(`SELECT ${cols} FROM ${kind} WHERE tag = ?`, [tag]);
    return row ? toSearchRow(row) : null;
  }

  /** Name search (see history-search.ts for the ranking). */
  search(kind: EntityKind, name: string, limit: number, offset: number): Promise<SearchPage> {
    return this.backend.search(kind, name, limit, offset);
  }

  // ------------------------------------------------------------------ retention and size

  /**
   * Deletes history older than `keepDays`: snapshots (every entity keeps its newest state), battles,
   * club events, daily aggregates, rotation; forgets trackings that expired; drops players and clubs
   * last seen before the cutoff that have no state left.
   */
  async prune(nowMs: number, keepDays: number): Promise<PruneReport> {
    const cutoff = sec(nowMs) - keepDays * DAY_S;
    const cutoffDay = Math.floor(cutoff / DAY_S);
    const report: PruneReport = { snapshots: 0, battles: 0, playerBattles: 0, clubEvents: 0, aggregates: 0, rotation: 0, trackings: 0, entities: 0 };
    const chunked = async (sql: string, params: SqlValue[]): Promise<number> => {
      let n = 0;
      for (;;) {
        const r = await this.write((tx) => tx.run(sql, params));
        n += r.changes;
        if (r.changes < 5000) return n;
      }
    };
    report.snapshots += await this.write((tx) => pruneSnapshots(tx, 'player', cutoff));
    report.snapshots += await this.write((tx) => pruneSnapshots(tx, 'club', cutoff));
    report.battles = await chunked('DELETE FROM battle WHERE (t, key) IN (SELECT t, key FROM battle WHERE t < ? LIMIT 5000)', [cutoff]);
    report.playerBattles = await chunked(
      'DELETE FROM player_battle WHERE (player_id, t) IN (SELECT player_id, t FROM player_battle WHERE t < ? LIMIT 5000)',
      [cutoff],
    );
    report.clubEvents = await chunked(
      'DELETE FROM club_event WHERE (club_id, t, kind, subject) IN (SELECT club_id, t, kind, subject FROM club_event WHERE t < ? LIMIT 5000)',
      [cutoff],
    );
    report.aggregates = await chunked(
      'DELETE FROM map_brawler_day WHERE (map_id, mode, brawler_id, day) IN (SELECT map_id, mode, brawler_id, day FROM map_brawler_day WHERE day < ? LIMIT 5000)',
      [cutoffDay],
    );
    report.aggregates += await chunked('DELETE FROM map_day WHERE day < ?', [cutoffDay]);
    report.rotation = await chunked('DELETE FROM rotation WHERE "end" < ?', [cutoff]);
    report.trackings = await chunked(
      `DELETE FROM tracked WHERE viewed_until <= ? AND NOT EXISTS (SELECT 1 FROM pin p WHERE p.kind = tracked.kind AND p.id = tracked.id)`,
      [sec(nowMs)],
    );
    // Entities with nothing left: not seen since the cutoff, no state, not tracked.
    for (const kind of ['player', 'club'] as const) {
      const code = KIND_CODE[kind];
      const stateTable = kind === 'player' ? 'player_state' : 'club_state';
      const stateId = kind === 'player' ? 'player_id' : 'club_id';
      await this.write(async (tx) => {
        await tx.run(
          `DELETE FROM ${stateTable} WHERE t < ? AND ${stateId} NOT IN (SELECT id FROM tracked WHERE kind = ${code})`,
          [cutoff],
        );
        if (kind === 'player') {
          await tx.run('DELETE FROM player_build WHERE player_id NOT IN (SELECT player_id FROM player_state)');
        }
      });
      report.entities += await chunked(
        `DELETE FROM ${kind} WHERE id IN (SELECT id FROM ${kind} e WHERE e.seen_at < ?
           AND NOT EXISTS (SELECT 1 FROM ${stateTable} s WHERE s.${stateId} = e.id)
           AND NOT EXISTS (SELECT 1 FROM tracked t WHERE t.kind = ${code} AND t.id = e.id)
           AND NOT EXISTS (SELECT 1 FROM pin p WHERE p.kind = ${code} AND p.id = e.id) LIMIT 5000)`,
        [cutoff],
      );
    }
    // Cached ids may point at deleted rows now.
    this.players.clear();
    this.clubs.clear();
    return report;
  }

  /** Bytes used by each table and index, for the benchmark and /healthz. */
  tableBytes(): Promise<Record<string, number>> {
    return this.backend.tableBytes();
  }

  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of ['player', 'club', 'player_state', 'player_snap', 'club_state', 'club_snap', 'club_event', 'battle', 'player_battle', 'map', 'rotation', 'tracked']) {
      out[t] = (await this.r.get<{ n: number }>(`SELECT count(*) AS n FROM ${t}`))!.n;
    }
    return out;
  }
}

export interface PruneReport {
  snapshots: number;
  battles: number;
  playerBattles: number;
  clubEvents: number;
  aggregates: number;
  rotation: number;
  trackings: number;
  entities: number;
}

export interface PlayerBattleRow {
  /** unix seconds */
  t: number;
  brawlerId: number | null;
  result: 1 | 0 | -1 | null;
  trophyChange: number | null;
  rank: number | null;
  star: boolean;
  mapId: number | null;
  mode: string | null;
  type: string | null;
}

export interface ClubEventRow {
  t: number;
  kind: 'join' | 'leave' | 'role' | 'settings';
  subject: string;
  old: Json | null;
  new: Json | null;
}

/** A place in a club's event order: events strictly after it come next. */
export interface ClubEventPosition {
  t: number;
  kind: string;
  subject: string;
}

export interface MapRow {
  id: number;
  name: string | null;
  mode: string | null;
  /** unix seconds */
  firstSeen: number;
  lastActive: number;
}

export interface MapBrawlerCount {
  mode: string;
  brawlerId: number;
  picks: number;
  wins: number;
  losses: number;
  draws: number;
  stars: number;
}

export interface RotationRow {
  slotId: number;
  start: number;
  end: number;
  mapId: number;
  map: string | null;
  mode: string | null;
  modifiers: string[] | null;
}

export interface BuildRow {
  playerId: number;
  tag: string;
  trophies: number;
  power: number | null;
  gadgets: number[];
  starPowers: number[];
  hyperCharges: number[];
  gears: number[];
}

export type { State, Snapshot, EntityKind };

interface PlayerRow {
  id: number;
  tag: string;
  name: string;
  trophies: number | null;
  club_tag: string | null;
  seen_at: number;
}

interface ClubRow {
  id: number;
  tag: string;
  name: string;
  trophies: number | null;
  seen_at: number;
}

/**
 * The ids of `tags` after a discovery write: those already in `refs`, the rest (`unknown`) read
 * with `select` in chunks of 500 and remembered in `refs`.
 */
async function idsOf<Row extends { id: number; tag: string }, Ref extends { id: number }>(
  db: SqlDb,
  tags: Iterable<string>,
  refs: Pick<Lru<string, Ref>, 'get' | 'set'>,
  unknown: string[],
  select: string,
  remember: (row: Row) => Ref,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const tag of tags) {
    const ref = refs.get(tag);
    if (ref) out.set(tag, ref.id);
  }
  for (let i = 0; i < unknown.length; i += 500) {
    const part = unknown.slice(i, i + 500);
    for (const row of await db.all<Row>(`${select} WHERE tag IN (${marks(part.length)})`, part)) {
      refs.set(row.tag, remember(row));
      out.set(row.tag, row.id);
    }
  }
  return out;
}

export interface BattleSummary {
  /** battles recorded since the asked time */
  battles: number;
  /** of which victories */
  wins: number;
  /** unix seconds of the newest recorded battle, null when none is */
  lastT: number | null;
  /** whether the player's battle log is read (polled at least once, or battles recorded) */
  polled: boolean;
}
