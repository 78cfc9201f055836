/**
 * The history store's contract, on every backend (SQLite always, PostgreSQL when DATABASE_URL is
 * set, each store in its own file or schema): migrations, a writer killed with SIGKILL mid-write,
 * a lost database connection, battle deduplication across overlapping logs, pruning, the poll
 * schedule, and name search (ranking, case and accent folding). SQLite's own upgrade path is
 * tested here too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { World } from '../src/sim/world.ts';
import { LATEST_VERSION, migrate, MIGRATIONS, schemaVersion } from '../src/store/history-schema.ts';
import { ensureTrigram, PG_MIGRATIONS } from '../src/store/history-schema-pg.ts';
import { pgSchemaLock } from '../src/store/postgres.ts';
import { Postgres } from '../src/store/postgres.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { foldName, matchClass } from '../src/store/search-fold.ts';
import { Sqlite } from '../src/store/sqlite.ts';
import { BattleLog, type Player, type PlayerRankingItem } from '../src/upstream/schemas.ts';
import { backends, openStore, terminateConnections, writerArgs, type BackendFixture } from './support/stores.ts';

const T0 = Date.UTC(2026, 5, 1, 12);
const MIN = 60_000;
const DAY = 86_400_000;

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'starr-history-'));
  dirs.push(d);
  return d;
}
const BACKENDS = backends();
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const b of BACKENDS) await b.dropAll();
});

const ranking = (rows: [string, string, number][]): PlayerRankingItem[] =>
  rows.map(([tag, name, trophies], i) => ({ tag, name, trophies, rank: i + 1 }));

describe('SQLite page caches', () => {
  it("keeps the history writer's small (it holds every page it wrote) and the reader's at the default", async () => {
    const { openSqliteBackend, WRITER_CACHE_MB } = await import('../src/store/history-sqlite.ts');
    const backend = await openSqliteBackend(join(tempDir(), 'h.sqlite'));
    const size = async (db: Sqlite) => (await db.get<{ cache_size: number }>('PRAGMA cache_size'))!.cache_size;
    expect(await size(backend.w as Sqlite)).toBe(-WRITER_CACHE_MB * 1000);
    expect(await size(backend.r as Sqlite)).toBe(-32_000);
    await backend.close();
  });
});

describe('SQLite migrations', () => {
  it('creates the latest schema in an empty store', async () => {
    const db = await Sqlite.open(join(tempDir(), 'h.sqlite'));
    expect(await schemaVersion(db)).toBe(0);
    expect(await migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await schemaVersion(db)).toBe(LATEST_VERSION);
    expect(await migrate(db)).toEqual([]);
    await db.close();
  });

  it('upgrades a store of version 1 with its data: names recorded before search existed are found', async () => {
    const path = join(tempDir(), 'h.sqlite');
    const db = await Sqlite.open(path);
    await migrate(db, MIGRATIONS, 1);
    await db.run("INSERT INTO player (tag, name, trophies, seen_at) VALUES ('#P1', 'Jérôme', 500, 1), ('#P2', 'Other', 10, 1)");
    await db.run("INSERT INTO player_state (player_id, t, state) VALUES (1, 1, x'00')");
    await db.close();

    const store = await HistoryStore.open({ path });
    expect(await schemaVersion(store.r)).toBe(LATEST_VERSION);
    const hits = await store.search('player', 'JEROME', 10, 0);
    expect(hits.items.map((h) => [h.tag, h.match])).toEqual([['#P1', 0]]);
    expect((await store.counts()).player_state).toBe(1);
    await store.close();
  });

  it('upgrades a store whose catalogue was recorded before names were: its brawlers and items are named', async () => {
    const path = join(tempDir(), 'h.sqlite');
    const db = await Sqlite.open(path);
    await migrate(db, MIGRATIONS, 2);
    const catalogue = { at: 1_700_000_000, items: [{ id: 16000000, name: 'SHELLY', starPowers: [{ id: 23000076, name: 'SHELL SHOCK' }], gadgets: [], gears: [{ id: 62000000, name: 'SPEED', level: 3 }] }] };
    await db.run("INSERT INTO meta (key, value) VALUES ('catalogue.brawlers', ?)", [JSON.stringify(catalogue)]);
    await db.close();

    const store = await HistoryStore.open({ path });
    expect(Object.fromEntries(await store.gameNames([16000000, 23000076, 62000000, 16000001]))).toEqual({
      16000000: 'SHELLY',
      23000076: 'SHELL SHOCK',
      62000000: 'SPEED',
    });
    await store.close();
  });

  it('refuses a store written by a newer version', async () => {
    const path = join(tempDir(), 'h.sqlite');
    const db = await Sqlite.open(path);
    await migrate(db);
    await db.run('UPDATE schema_version SET version = ?', [LATEST_VERSION + 1]);
    await db.close();
    await expect(HistoryStore.open({ path })).rejects.toThrow(/newer than this version/);
  });
});

describe.each(BACKENDS)('history store on $name', (backend: BackendFixture) => {
describe('schema', () => {
  it('refuses a store written by a newer version, with a clear message', async () => {
    const where = backend.fresh();
    const store = await openStore(where);
    const latest = backend.name === 'sqlite' ? LATEST_VERSION : PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;
    expect(await schemaVersion(store.r)).toBe(latest);
    await store.w.run('UPDATE schema_version SET version = ?', [latest + 1]);
    await store.close();
    await expect(openStore(where)).rejects.toThrow(/schema version \d+, newer than this version of Starr Stats understands/);
  });

  // A cluster's processes start together on one PostgreSQL database; SQLite serves one process.
  it.runIf(backend.name === 'postgres')('several stores opened at once on a new schema all start, at the latest version (a cluster starting together)', async () => {
    const where = backend.fresh();
    const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(where)));
    try {
      const latest = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;
      for (const s of stores) expect(await schemaVersion(s.r)).toBe(latest);
      expect(await stores[0]!.r.all('SELECT version FROM schema_version')).toEqual([{ version: latest }]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it.runIf(backend.name === 'postgres')('runs again a transaction the server chose as a deadlock victim: both writers commit', async () => {
    const where = backend.fresh() as { url: string; schema: string };
    // two stores, as two processes: one store runs its transactions one after another
    const db = await Postgres.open(where.url, { schema: where.schema });
    const other = await Postgres.open(where.url, { schema: where.schema });
    try {
      await db.exec('CREATE TABLE pair (id INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO pair VALUES (1, 0), (2, 0);');
      // Each holds one row and then wants the other's: the server aborts one of them (40P01).
      let arrived = 0;
      let bothHold!: () => void;
      const holding = new Promise<void>((r) => (bothHold = r));
      let firstRuns = 0;
      const writer = (on: Postgres, first: number, second: number) =>
        on.transaction(async (tx) => {
          await tx.run('UPDATE pair SET v = v + 1 WHERE id = ?', [first]);
          if (firstRuns++ < 2 && ++arrived === 2) bothHold();
          if (firstRuns <= 2) await holding;
          await tx.run('UPDATE pair SET v = v + 1 WHERE id = ?', [second]);
        });
      await Promise.all([writer(db, 1, 2), writer(other, 2, 1)]);
      expect(firstRuns).toBeGreaterThan(2); // one of them ran again
      expect(await db.all('SELECT id, v FROM pair ORDER BY id')).toEqual([{ id: 1, v: 2 }, { id: 2, v: 2 }]);
    } finally {
      await db.close();
      await other.close();
    }
  });

  it.runIf(backend.name === 'postgres')('upgrades a PostgreSQL store of version 3: names recorded before are found by word and substring', async () => {
    const where = backend.fresh() as { url: string; schema: string };
    const db = await Postgres.open(where.url, { schema: where.schema });
    await ensureTrigram(db);
    await migrate(db, PG_MIGRATIONS, 3, pgSchemaLock);
    // as version 3 wrote them: words after a space, no `sub`
    await db.run(
      `INSERT INTO player (tag, name, trophies, seen_at, folded, words) VALUES
       ('#P1', 'BR|Sam_YT', 500, 1, 'br|sam_yt', ' br sam yt'), ('#P2', 'Samuel', 600, 1, 'samuel', ' samuel'), ('#P3', '星_YT', 10, 1, '星_yt', ' 星 yt')`,
    );
    await db.close();

    const store = await openStore(where);
    expect(await schemaVersion(store.r)).toBe(4);
    const find = async (q: string) => (await store.search('player', q, 10, 0)).items.map((h) => [h.tag, h.match]);
    expect(await find('sam')).toEqual([['#P2', 1], ['#P1', 2]]);
    expect(await find('br sam')).toEqual([['#P1', 2]]);
    expect(await find('m_y')).toEqual([['#P1', 3]]);
    expect(await find('星_y')).toEqual([['#P3', 1]]);
    // rows written after the upgrade carry the new columns too
    await store.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: ranking([['#P4', 'Dark-Sam', 700]]) }]);
    expect(await find('sam')).toEqual([['#P2', 1], ['#P4', 2], ['#P1', 2]]);
    await store.close();
  });
});

describe('a writer killed mid-write', () => {
  it('leaves a store that opens consistent, every committed round whole, and takes the next round', async () => {
    const where = backend.fresh();
    const perRound = 20;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/history-writer.ts', ...writerArgs(where), String(perRound)], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let committed = 0;
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = chunk.toString().trim().split('\n');
        committed = Number(lines[lines.length - 1]);
        // Kill while it writes: after some rounds, at an arbitrary point of the next one.
        if (committed >= 15) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', (code, signal) => (signal ? resolve() : reject(new Error(`writer exited early with ${code}`))));
    });
    await new Promise((r) => child.once('close', r));

    const store = await openStore(where);
    if (backend.name === 'sqlite') {
      expect(await store.r.get<{ integrity_check: string }>('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
    }
    const rounds = new Set<number>();
    for (let i = 0; i < perRound; i++) {
      const snaps = await store.snapshots('player', `#P${i}`);
      // newest first, one per round, each the round it was written in
      expect(snaps.map((s) => s.state.trophies)).toEqual(Array.from({ length: snaps.length }, (_, k) => snaps.length - k));
      rounds.add(snaps.length);
    }
    expect(rounds.size).toBe(1);
    const last = [...rounds][0]!;
    expect(last).toBeGreaterThanOrEqual(committed);
    // The restarted store answers and records the next round on top.
    const p = { tag: '#P0', name: 'Writer 0', trophies: last + 1, highestTrophies: last + 1, expLevel: 1, brawlers: [] } as unknown as Player;
    const next = await store.record([{ kind: 'player', atMs: Date.UTC(2026, 0, 1) + (last + 1) * MIN, data: p }]);
    expect(next.playerSnapshots).toBe(1);
    expect((await store.snapshots('player', '#P0')).length).toBe(last + 1);
    await store.close();
  });
});

describe('recording', () => {
  let store: HistoryStore;
  const world = new World({ seed: 'store', players: 200, clubs: 20 });
  beforeAll(async () => {
    store = await openStore(backend.fresh());
  });
  afterAll(async () => store.close());

  it('stores each battle once across overlapping logs and counts it once in the map statistics', async () => {
    const tag = world.playerTag(0);
    // Two polls 30 minutes apart: their logs overlap in all but the newest battles.
    const a = BattleLog.parse(world.battlelog(tag, T0 - 30 * MIN));
    const b = BattleLog.parse(world.battlelog(tag, T0));
    await store.record([{ kind: 'battlelog', atMs: T0 - 30 * MIN, tag, data: a }]);
    await store.record([{ kind: 'battlelog', atMs: T0, tag, data: b }]);
    // ...and the same log again from a retry.
    const again = await store.record([{ kind: 'battlelog', atMs: T0, tag, data: b }]);
    expect(again.newBattles).toBe(0);
    expect(again.playerBattles).toBe(0);
    const times = new Set([...a.items, ...b.items].map((i) => i.battleTime));
    expect((await store.counts()).battle).toBe(times.size);
    expect((await store.playerBattles(tag)).length).toBe(times.size);

    // The same battle seen from another participant's log is not a new battle.
    const item = b.items.find((i) => (i.battle?.teams?.flat().length ?? 0) > 1)!;
    const other = item.battle!.teams!.flat().find((p) => p.tag !== tag)!;
    const mirrored = await store.record([{ kind: 'battlelog', atMs: T0, tag: other.tag, data: { items: [item], paging: { cursors: {} } } }]);
    expect(mirrored.newBattles).toBe(0);
    expect(mirrored.playerBattles).toBe(1);

    // Picks on every map add up to the participants of the distinct battles that count.
    let picks = 0;
    for (const m of await store.maps()) picks += (await store.mapBrawlerCounts(m.id)).rows.reduce((s, r) => s + r.picks, 0);
    const expected = [...new Map([...a.items, ...b.items].map((i) => [i.battleTime, i])).values()]
      .filter((i) => i.event.id > 0 && ['ranked', 'soloRanked', 'teamRanked'].includes(i.battle?.type ?? ''))
      .reduce((s, i) => s + [...(i.battle!.teams?.flat() ?? []), ...(i.battle!.players ?? [])].reduce((x, p) => x + (p.brawlers?.length || (p.brawler ? 1 : 0)), 0), 0);
    expect(picks).toBe(expected);
  });

  it('writes nothing for a poll that saw no change, and only the changed leaves for one that did', async () => {
    const p = world.playerBody(5, T0) as unknown as Player;
    const first = await store.record([{ kind: 'player', atMs: T0, data: p }]);
    expect(first.playerSnapshots).toBe(1);
    const same = await store.record([{ kind: 'player', atMs: T0 + 30 * MIN, data: p }]);
    expect(same.playerSnapshots).toBe(0);
    const moved = { ...p, trophies: p.trophies + 7 };
    const changed = await store.record([{ kind: 'player', atMs: T0 + 60 * MIN, data: moved }]);
    expect(changed.playerSnapshots).toBe(1);
    expect(changed.snapshotBytes).toBeLessThan(40);
    const snaps = await store.snapshots('player', p.tag);
    expect(snaps.map((s) => [s.t, s.state.trophies])).toEqual([
      [(T0 + 60 * MIN) / 1000, p.trophies + 7],
      [T0 / 1000, p.trophies],
    ]);
  });
});

describe('names of brawlers and their items', () => {
  const at = (iso: string) => Date.parse(iso);
  const api = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '');
  const player = (tag: string, name: string, brawler: { id: number; name: string | null }) => ({ tag, name, brawler: { ...brawler, power: 11, trophies: 800 } });
  /** One ranked 3 vs 3 battle in which `b` plays on the first team. */
  const log = (ms: number, b: { id: number; name: string | null }) =>
    BattleLog.parse({
      items: [
        {
          battleTime: api(ms),
          event: { id: 15000122, mode: 'gemGrab', map: 'Minecart Madness' },
          battle: {
            mode: 'gemGrab',
            type: 'ranked',
            result: 'defeat',
            starPlayer: player('#PCJ89292J', 'res32', b),
            teams: [
              [player('#PCJ89292J', 'res32', b), player('#8CRJGCG0R', 'x', { id: 16000039, name: 'COLETTE' })],
              [player('#9V8LCUC0G', 'sukara', { id: 16000042, name: 'BYRON' }), player('#PQ90UGVLQ', 'y', { id: 16000001, name: 'COLT' })],
            ],
          },
        },
      ],
    });
  const BUZZ = { id: 16000088, name: 'BUZZ LIGHTYEAR' };

  it('records brawler names from battles, reports first sightings once, and keeps them across a reopen', async () => {
    const dir = tempDir();
    let store = await HistoryStore.open({ dir });
    const t = at('2024-12-24T20:06:24Z');
    const first = await store.record([{ kind: 'battlelog', atMs: t, tag: '#9V8LCUC0G', data: log(t, BUZZ) }]);
    expect(first.newBrawlers).toEqual([16000001, 16000039, 16000042, 16000088]);
    const again = await store.record([{ kind: 'battlelog', atMs: t + MIN, tag: '#9V8LCUC0G', data: log(t, BUZZ) }]);
    expect(again.newBrawlers).toEqual([]);
    await store.close();

    store = await HistoryStore.open({ dir });
    expect(Object.fromEntries(await store.gameNames([16000088, 16000042, 16000999]))).toEqual({ 16000088: 'BUZZ LIGHTYEAR', 16000042: 'BYRON' });
    const later = await store.record([{ kind: 'battlelog', atMs: t + DAY, tag: '#9V8LCUC0G', data: log(t + DAY, BUZZ) }]);
    expect(later.newBrawlers).toEqual([]);
    await store.close();
  });

  it('follows a rename seen later, and an older battle recorded afterwards does not undo it', async () => {
    const store = await HistoryStore.open({ dir: tempDir() });
    const t = at('2026-03-29T10:00:00Z');
    await store.record([{ kind: 'battlelog', atMs: t, tag: '#9V8LCUC0G', data: log(t, { id: 16000101, name: 'GLOWBERT' }) }]);
    await store.record([{ kind: 'battlelog', atMs: t + 10 * DAY, tag: '#9V8LCUC0G', data: log(t + 10 * DAY, { id: 16000101, name: 'GLOWY' }) }]);
    expect((await store.gameNames([16000101])).get(16000101)).toBe('GLOWY');
    await store.record([{ kind: 'battlelog', atMs: t + 11 * DAY, tag: '#PCJ89292J', data: log(t + 5 * DAY, { id: 16000101, name: 'GLOWBERT' }) }]);
    expect((await store.gameNames([16000101])).get(16000101)).toBe('GLOWY');
    await store.close();
  });

  it('names items from profiles, ignores empty names, and does not report what the same batch\'s catalogue lists', async () => {
    const store = await HistoryStore.open({ dir: tempDir() });
    const world = new World({ seed: 'names', players: 50, clubs: 5 });
    const p = world.playerBody(3, T0) as unknown as Player;
    const b = p.brawlers[0]!;
    const named = { ...p, brawlers: [{ ...b, id: 16000107, name: 'NORI', gadgets: [{ id: 23001000, name: 'SNACK' }] }, { ...b, id: 16000108, name: '' }] };
    const r = await store.record([
      { kind: 'player', atMs: T0, data: named },
      { kind: 'brawlers', atMs: T0, data: [{ id: 16000107, name: 'NORI', starPowers: [], gadgets: [] }] },
    ]);
    expect(r.newBrawlers).toEqual([]);
    expect(Object.fromEntries(await store.gameNames([16000107, 23001000, 16000108]))).toEqual({ 16000107: 'NORI', 23001000: 'SNACK' });
    await store.close();
  });
});

describe('pruning', () => {
  it('drops what is older than the retention and keeps every newest state readable', async () => {
    const store = await openStore(backend.fresh());
    const world = new World({ seed: 'prune', players: 100, clubs: 10 });
    const tag = world.playerTag(1);
    const times = [T0 - 40 * DAY, T0 - 20 * DAY, T0 - 5 * DAY, T0];
    for (const t of times) {
      await store.record([
        { kind: 'player', atMs: t, data: world.playerBody(1, t) as unknown as Player },
        { kind: 'battlelog', atMs: t, tag, data: BattleLog.parse(world.battlelog(tag, t)) },
      ]);
    }
    await store.track('player', world.playerTag(2), T0 - 2 * DAY, T0 - 30 * DAY);
    const before = await store.snapshots('player', tag);
    expect(before.length).toBe(4);

    const report = await store.prune(T0, 10);
    expect(report.snapshots).toBe(2);
    expect(report.trackings).toBe(1);
    const after = await store.snapshots('player', tag);
    expect(after.map((s) => s.t)).toEqual(before.slice(0, 2).map((s) => s.t));
    expect(after[1]!.state).toEqual(before[1]!.state);
    const battles = await store.playerBattles(tag);
    expect(battles.length).toBeGreaterThan(0);
    expect(Math.min(...battles.map((b) => b.t))).toBeGreaterThanOrEqual((T0 - 10 * DAY) / 1000);
    const days = await store.r.all<{ day: number }>('SELECT DISTINCT day FROM map_brawler_day');
    expect(days.every((d) => d.day >= Math.floor((T0 - 10 * DAY) / DAY))).toBe(true);
    await store.close();
  });
});

describe('name search', () => {
  let store: HistoryStore;
  beforeAll(async () => {
    store = await openStore(backend.fresh());
    await store.record([
      {
        kind: 'playerRanking',
        atMs: T0,
        region: 'global',
        data: ranking([
          ['#J1', 'Jérôme', 100],
          ['#J2', 'jerome', 200],
          ['#J3', 'JEROME the great', 300],
          ['#J4', 'Big Jérôme', 400],
          ['#J5', 'xjeromex', 500],
          ['#J6', '<c5>Jer</c>', 50],
          ['#S1', 'Straße', 60],
          ['#S2', 'STRASSE king', 70],
          ['#D1', 'Dark-Knight', 80],
        ]),
      },
    ]);
  });
  afterAll(async () => store.close());

  const find = async (q: string) => (await store.search('player', q, 50, 0)).items.map((h) => [h.name, h.match]);

  it('ranks exact, prefix, word, then substring matches, each by trophies, ignoring case and accents', async () => {
    expect(await find('JÉROME')).toEqual([
      ['jerome', 0],
      ['Jérôme', 0],
      ['JEROME the great', 1],
      ['Big Jérôme', 2],
      ['xjeromex', 3],
    ]);
    expect(await find('jer')).toEqual([
      ['<c5>Jer</c>', 0],
      ['JEROME the great', 1],
      ['jerome', 1],
      ['Jérôme', 1],
      ['Big Jérôme', 2],
      ['xjeromex', 3],
    ]);
  });

  it('folds ß to ss, finds words across punctuation, and pages with a total', async () => {
    expect(await find('strasse')).toEqual([['Straße', 0], ['STRASSE king', 1]]);
    expect(await find('dark kn')).toEqual([['Dark-Knight', 2]]);
    const page = await store.search('player', 'jer', 2, 1);
    expect(page.items.map((h) => h.name)).toEqual(['JEROME the great', 'jerome']);
    expect(page.total).toBe(6);
    expect((await store.search('player', 'zz', 10, 0)).total).toBe(0);
  });

  it('keeps the index current when a name or trophies change', async () => {
    await store.record([{ kind: 'playerRanking', atMs: T0 + DAY, region: 'global', data: ranking([['#J2', 'Renamed', 900], ['#J1', 'Jérôme', 1000]]) }]);
    expect(await find('jerome')).toEqual([['Jérôme', 0], ['JEROME the great', 1], ['Big Jérôme', 2], ['xjeromex', 3]]);
    expect(await find('renamed')).toEqual([['Renamed', 0]]);
    // an older sighting never overwrites a newer name
    await store.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: ranking([['#J2', 'jerome', 200]]) }]);
    expect(await find('renamed')).toEqual([['Renamed', 0]]);
  });

  it('ranks a pattern matching more names than the total counts, on every page, as the match classes say', async () => {
    const s = await openStore(backend.fresh());
    const shapes = ['Sam', 'BR|Sam', 'Samu', 'Dark Sam', 'xsamx', 'Sámi_YT', 'Tom', 'br sam', 'Sam', 'Isam'];
    const rows = Array.from({ length: 3000 }, (_, i) => {
      const shape = shapes[i % shapes.length]!;
      return [`#M${i}`, i % 3 === 0 ? shape : `${shape}${i}`, (i * 7919) % 5000] as [string, string, number];
    });
    for (let i = 0; i < rows.length; i += 500) await s.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: ranking(rows.slice(i, i + 500)) }]);
    for (const query of ['sam', 'SAM', 'br sam', 'sa', 'am_y', 'tom1']) {
      const q = foldName(query);
      const expected = rows
        .map(([tag, name, trophies], i) => ({ tag, cls: matchClass(foldName(name), q), trophies, i }))
        .filter((r) => r.cls !== null)
        .sort((x, y) => x.cls! - y.cls! || y.trophies - x.trophies || x.i - y.i);
      for (const [limit, offset] of [[50, 0], [100, 250], [250, 1000]] as const) {
        const got = await s.search('player', query, limit, offset);
        expect(got.items.map((h) => [h.tag, h.match]), `${query} ${limit}/${offset}`).toEqual(expected.slice(offset, offset + limit).map((e) => [e.tag, e.cls]));
        expect(got.total, query).toBe(Math.min(2500, expected.length));
      }
    }
    await s.close();
  });

  it('agrees with the match classes for any names and queries', async () => {
    const s = await openStore(backend.fresh());
    const alphabet = ['a', 'b', 'á', 'B', ' ', '-', 'ab', 'ß'];
    const nameArb = fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 6 }).map((p) => p.join(''));
    const names = fc.sample(nameArb, { numRuns: 150, seed: 7 });
    const rows = names.map((n, i) => [`#N${i}`, n, 1000 + ((i * 37) % 150)] as [string, string, number]);
    await s.record([{ kind: 'playerRanking', atMs: T0, region: 'global', data: ranking(rows) }]);
    await fc.assert(
      fc.asyncProperty(nameArb, async (query) => {
        const q = foldName(query);
        if ([...q].length < 2) return;
        const got = await s.search('player', query, 250, 0);
        const expected = rows
          .map(([tag, name, trophies], i) => ({ tag, cls: matchClass(foldName(name), q), trophies, i }))
          .filter((r) => r.cls !== null)
          .sort((x, y) => x.cls! - y.cls! || y.trophies - x.trophies || x.i - y.i);
        expect(got.items.map((h) => [h.tag, h.match])).toEqual(expected.map((e) => [e.tag, e.cls]));
        expect(got.total).toBe(expected.length);
      }),
      { numRuns: 60, seed: 11 },
    );
    await s.close();
  });
});
});
