/**
 * Versioned schema of the history store (`history.sqlite`). Each migration runs in its own
 * transaction together with the bump of `schema_version`, so a crash during an upgrade leaves the
 * store at the previous version, intact, and the next start simply runs it again.
 *
 * Times are unix seconds everywhere in this file (half the bytes of milliseconds in SQLite's
 * variable-length integers); the store converts at its boundary.
 */
import { insertMany, StoreError, type SqlDb, type SqlPool, type SqlValue } from './sql.ts';
import { foldName } from './search-fold.ts';
import { namesOfCatalogue } from './game-names.ts';
import type { Brawler } from '../upstream/schemas.ts';

export interface Migration {
  version: number;
  description: string;
  up(db: SqlDb): Promise<void>;
}

const V1_CORE = `
-- Every player and club ever seen (rankings, club member lists, battle logs, lookups).
CREATE TABLE player (
  id INTEGER PRIMARY KEY,
  tag TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  trophies INTEGER,
  club_tag TEXT,               -- '' = no club, NULL = not known
  club_name TEXT,
  seen_at INTEGER NOT NULL
);
CREATE TABLE club (
  id INTEGER PRIMARY KEY,
  tag TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  trophies INTEGER,
  member_count INTEGER,
  badge_id INTEGER,
  seen_at INTEGER NOT NULL
);

-- Snapshots: the newest state in full, every older one as a reverse diff against the next.
CREATE TABLE player_state (player_id INTEGER PRIMARY KEY, t INTEGER NOT NULL, state BLOB NOT NULL);
CREATE TABLE player_snap (
  player_id INTEGER NOT NULL, t INTEGER NOT NULL, diff BLOB NOT NULL,
  PRIMARY KEY (player_id, t)
) WITHOUT ROWID;
CREATE TABLE club_state (club_id INTEGER PRIMARY KEY, t INTEGER NOT NULL, state BLOB NOT NULL);
CREATE TABLE club_snap (
  club_id INTEGER NOT NULL, t INTEGER NOT NULL, diff BLOB NOT NULL,
  PRIMARY KEY (club_id, t)
) WITHOUT ROWID;
CREATE TABLE club_event (
  club_id INTEGER NOT NULL, t INTEGER NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
  old TEXT, new TEXT,
  PRIMARY KEY (club_id, t, kind, subject)
) WITHOUT ROWID;

-- Small dictionary of repeated strings (modes, battle types).
CREATE TABLE label (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);

-- A battle once, however many logs it appears in: its time plus the smallest participant id.
CREATE TABLE battle (
  t INTEGER NOT NULL, key INTEGER NOT NULL, map_id INTEGER, mode INTEGER,
  PRIMARY KEY (t, key)
) WITHOUT ROWID;
-- The battle as the polled player saw it.
CREATE TABLE player_battle (
  player_id INTEGER NOT NULL, t INTEGER NOT NULL,
  brawler_id INTEGER, result INTEGER, trophy_change INTEGER, rank INTEGER, star INTEGER,
  map_id INTEGER, mode INTEGER, type INTEGER,
  PRIMARY KEY (player_id, t)
) WITHOUT ROWID;

CREATE TABLE map (
  id INTEGER PRIMARY KEY, name TEXT, mode INTEGER, first_seen INTEGER NOT NULL, last_active INTEGER NOT NULL
);
-- Per-map, per-mode, per-brawler counts by UTC day (days make retention exact).
CREATE TABLE map_brawler_day (
  map_id INTEGER NOT NULL, mode INTEGER NOT NULL, brawler_id INTEGER NOT NULL, day INTEGER NOT NULL,
  picks INTEGER NOT NULL, wins INTEGER NOT NULL, losses INTEGER NOT NULL, draws INTEGER NOT NULL,
  stars INTEGER NOT NULL,
  PRIMARY KEY (map_id, mode, brawler_id, day)
) WITHOUT ROWID;
CREATE TABLE map_day (
  map_id INTEGER NOT NULL, mode INTEGER NOT NULL, day INTEGER NOT NULL, battles INTEGER NOT NULL,
  PRIMARY KEY (map_id, mode, day)
) WITHOUT ROWID;

CREATE TABLE rotation (
  slot_id INTEGER NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
  map_id INTEGER NOT NULL, mode INTEGER, modifiers TEXT, seen_at INTEGER NOT NULL,
  PRIMARY KEY (slot_id, start)
) WITHOUT ROWID;

-- What each recorded player owns on each brawler, for best builds.
CREATE TABLE player_build (
  brawler_id INTEGER NOT NULL, player_id INTEGER NOT NULL, trophies INTEGER NOT NULL, power INTEGER,
  gadgets TEXT, star_powers TEXT, hyper_charges TEXT, gears TEXT,
  PRIMARY KEY (brawler_id, player_id)
) WITHOUT ROWID;
CREATE INDEX player_build_top ON player_build (brawler_id, trophies DESC);

-- Tracking: kind 0 = player, 1 = club. Tracked while viewed_until is ahead or any pin exists.
CREATE TABLE tracked (
  kind INTEGER NOT NULL, id INTEGER NOT NULL, viewed_until INTEGER NOT NULL,
  next_poll INTEGER NOT NULL, last_poll INTEGER,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE INDEX tracked_due ON tracked (next_poll);
CREATE TABLE pin (
  kind INTEGER NOT NULL, id INTEGER NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY (kind, id, reason)
) WITHOUT ROWID;

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Ids below 2^28 and trophies below 2^25 keep rank keys under 2^53. */
export const RANK_ID_BITS = 28;
export const RANK_TROPHIES_MAX = 2 ** 25 - 1;

/**
 * Search index rows are keyed by a *rank key* that grows as trophies fall: (2^25 - 1 - trophies)
 * × 2^28 + id. FTS5 walks matches in ascending rowid order natively, so every query reads its
 * matches best-first and stops after one page. The trigram index holds the folded name after a
 * \x01, which turns prefix matches ("\x01q") into substring matches it can answer, even for
 * 2-character queries. Exact (and long prefix) matches use the B-tree index on `folded`.
 */
export const rankKeySql = (row: string) =>
  `(((${RANK_TROPHIES_MAX} - min(max(coalesce(${row}trophies, 0), 0), ${RANK_TROPHIES_MAX})) << ${RANK_ID_BITS}) | ${row}id)`;
const FTS = (entity: 'player' | 'club') => `
CREATE VIRTUAL TABLE ${entity}_sub USING fts5(
  folded, content='', contentless_delete=1, tokenize='trigram case_sensitive 1'
);
CREATE VIRTUAL TABLE ${entity}_words USING fts5(
  folded, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0', prefix='2 3'
);
INSERT INTO ${entity}_sub (rowid, folded) SELECT ${rankKeySql('')}, char(1) || folded FROM ${entity};
INSERT INTO ${entity}_words (rowid, folded) SELECT ${rankKeySql('')}, folded FROM ${entity};
CREATE TRIGGER ${entity}_search_ai AFTER INSERT ON ${entity} BEGIN
  INSERT INTO ${entity}_sub (rowid, folded) VALUES (${rankKeySql('new.')}, char(1) || new.folded);
  INSERT INTO ${entity}_words (rowid, folded) VALUES (${rankKeySql('new.')}, new.folded);
END;
CREATE TRIGGER ${entity}_search_au AFTER UPDATE OF folded, trophies ON ${entity}
WHEN old.folded IS NOT new.folded OR ${rankKeySql('old.')} IS NOT ${rankKeySql('new.')} BEGIN
  DELETE FROM ${entity}_sub WHERE rowid = ${rankKeySql('old.')};
  DELETE FROM ${entity}_words WHERE rowid = ${rankKeySql('old.')};
  INSERT INTO ${entity}_sub (rowid, folded) VALUES (${rankKeySql('new.')}, char(1) || new.folded);
  INSERT INTO ${entity}_words (rowid, folded) VALUES (${rankKeySql('new.')}, new.folded);
END;
CREATE TRIGGER ${entity}_search_ad AFTER DELETE ON ${entity} BEGIN
  DELETE FROM ${entity}_sub WHERE rowid = ${rankKeySql('old.')};
  DELETE FROM ${entity}_words WHERE rowid = ${rankKeySql('old.')};
END;
CREATE INDEX ${entity}_folded ON ${entity} (folded);
`;

/** Fills `folded` for rows written before the search index existed (folding is JavaScript, not SQL). */
async function foldExisting(db: SqlDb, entity: 'player' | 'club'): Promise<void> {
  let after = 0;
  for (;;) {
    const rows = await db.all<{ id: number; name: string }>(
      `SELECT id, name FROM ${entity} WHERE id > ? ORDER BY id LIMIT 2000`,
      [after],
    );
    if (rows.length === 0) return;
    for (const r of rows) await db.run(`UPDATE ${entity} SET folded = ? WHERE id = ?`, [foldName(r.name), r.id]);
    after = rows[rows.length - 1]!.id;
  }
}

/** Names of brawlers and their items by global id (game-names.ts), seeded from the recorded catalogue. */
const V3_NAMES = `
CREATE TABLE game_name (id INTEGER PRIMARY KEY, name TEXT NOT NULL, seen_at INTEGER NOT NULL);
`;

async function seedNames(db: SqlDb): Promise<void> {
  const row = await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'catalogue.brawlers'");
  if (!row) return;
  const saved = JSON.parse(row.value) as { at?: number; items?: Brawler[] };
  const latest = new Map<number, SqlValue[]>();
  for (const s of namesOfCatalogue(saved.items ?? [], saved.at ?? 0)) latest.set(s.id, [s.id, s.name, s.seen]);
  await insertMany(db, 'INSERT INTO game_name (id, name, seen_at)', 3, [...latest.values()]);
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'players, clubs, snapshots, battles, maps, rotation, builds, tracking',
    up: (db) => db.exec(V1_CORE),
  },
  {
    version: 2,
    description: 'name search: folded names, trigram and word indexes',
    async up(db) {
      await db.exec(`ALTER TABLE player ADD COLUMN folded TEXT NOT NULL DEFAULT '';
                     ALTER TABLE club ADD COLUMN folded TEXT NOT NULL DEFAULT '';`);
      await foldExisting(db, 'player');
      await foldExisting(db, 'club');
      await db.exec(FTS('player') + FTS('club'));
    },
  },
  {
    version: 3,
    description: 'names of brawlers and their items seen in the catalogue, profiles and battles',
    async up(db) {
      await db.exec(V3_NAMES);
      await seedNames(db);
    },
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export async function schemaVersion(db: SqlDb): Promise<number> {
  await db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = await db.get<{ v: number | null }>('SELECT max(version) AS v FROM schema_version');
  return row?.v ?? 0;
}

/**
 * Brings the store to `target` (the latest by default); returns the versions applied. Each
 * migration runs in its own transaction with the bump of `schema_version`; `lock` (PostgreSQL: an
 * advisory lock) runs first in each, so two processes starting together apply a migration once.
 */
export async function migrate(
  db: SqlPool,
  migrations: readonly Migration[] = MIGRATIONS,
  target = migrations[migrations.length - 1]?.version ?? 0,
  lock?: (tx: SqlDb) => Promise<void>,
): Promise<number[]> {
  const known = migrations[migrations.length - 1]?.version ?? 0;
  const refuse = (current: number) => {
    if (current > known) {
      throw new StoreError(
        `history store is at schema version ${current}, newer than this version of Starr Stats understands (${known}); ` +
          'upgrade Starr Stats or point DATA_DIR / DATABASE_URL elsewhere',
      );
    }
  };
  // The first look creates `schema_version` when it is missing: under the lock too, or two
  // processes starting together both create it and one fails on PostgreSQL's catalog.
  refuse(lock ? await db.transaction(async (tx) => (await lock(tx), schemaVersion(tx))) : await schemaVersion(db));
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version > target) continue;
    const ran = await db.transaction(async (tx) => {
      if (lock) await lock(tx);
      const current = await schemaVersion(tx);
      refuse(current);
      if (m.version <= current) return false;
      await m.up(tx);
      await tx.run('DELETE FROM schema_version');
      await tx.run('INSERT INTO schema_version (version) VALUES (?)', [m.version]);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}
