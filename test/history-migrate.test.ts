/**
 * `starr migrate --to postgres://…` (runs when DATABASE_URL is set, as in CI): a SQLite history
 * store under DATA_DIR copied into a fresh PostgreSQL schema answers every question as the original
 * does, and the links and server settings of settings.sqlite are there too; an interrupted copy continues where it stopped; a second run copies nothing and still
 * matches; the copy then takes new writes without reusing an id. Bad arguments change nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../src/cli.ts';
import { migrateHistory } from '../src/store/history-migrate.ts';
import { HistoryStore } from '../src/store/history-store.ts';
import { openKeyvStores } from '../src/store/keyv.ts';
import type { Player } from '../src/upstream/schemas.ts';
import { answers, fill, T0, world } from './support/history-answers.ts';
import { backends, DATABASE_URL, RUN_POSTGRES, type BackendFixture } from './support/stores.ts';

function cli(env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (s) => out.push(s), err: (s) => err.push(s), env, cwd: env.DATA_DIR! };
  return { io, out, err };
}

describe.runIf(RUN_POSTGRES)('starr migrate', () => {
  let dir: string;
  let pg: BackendFixture;
  let where: { url: string; schema: string };
  let expected: Awaited<ReturnType<typeof answers>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'starr-migrate-'));
    pg = backends().find((b) => b.name === 'postgres')!;
    where = pg.fresh() as { url: string; schema: string };
    const source = await HistoryStore.open({ dir });
    await fill(source);
    expected = await answers(source, T0 + 1000);
    await source.close();
    // what users saved, where this version keeps it without DATABASE_URL
    const saved = await openKeyvStores({ cache: `sqlite://${join(dir, 'cache.sqlite')}`, durable: `sqlite://${join(dir, 'settings.sqlite')}` });
    await saved.namespace('links').set('guild-1:member-2', '#2PP0GQ9LU');
    await saved.namespace('guilds').set('guild-1', { locale: 'fr', boards: [{ channel: '42' }] });
    await saved.close();
  }, 120_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await pg?.dropAll();
  });

  it('refuses bad arguments and changes nothing', async () => {
    const a = cli({ DATA_DIR: dir });
    expect(await main(['migrate'], a.io)).toBe(2);
    expect(a.err.join('\n')).toMatch(/--to is required/);
    const b = cli({ DATA_DIR: dir });
    expect(await main(['migrate', '--to', 'mysql://x/y'], b.io)).toBe(2);
    expect(b.err.join('\n')).toMatch(/--to must be a postgres:\/\/ URL/);
    const c = cli({ DATA_DIR: join(dir, 'nothing-here') });
    expect(await main(['migrate', '--to', where.url, '--schema', where.schema], c.io)).toBe(78);
    expect(c.err.join('\n')).toMatch(/No history to copy/);
  });

  it('continues an interrupted copy and ends with every table counted equal on both sides', async () => {
    // Interrupt a first run after a few chunks.
    const from = await HistoryStore.open({ dir });
    const to = await HistoryStore.open(where);
    const abort = new AbortController();
    let chunks = 0;
    await expect(
      migrateHistory({ from, to, chunk: 50, signal: abort.signal, onProgress: () => ++chunks === 5 && abort.abort() }),
    ).rejects.toThrow(/interrupted/);
    await from.close();
    await to.close();

    const run = cli({ DATA_DIR: dir });
    expect(await main(['migrate', '--to', where.url, '--schema', where.schema, '--quiet'], run.io)).toBe(0);
    const text = run.out.join('\n');
    expect(text).toMatch(/Every history table matches/);
    expect(text).toMatch(/^ {2}links +1 entries, 1 copied, 0 already there$/m);
    expect(text).toMatch(/Everything matches/);
    expect(text).toMatch(/^player_snap +\d+ +\d+$/m);
    const copied = Number(/(\d+) rows copied/.exec(text)![1]);
    expect(copied).toBeGreaterThan(0);

    const target = await HistoryStore.open(where);
    expect(await answers(target, T0 + 1000)).toEqual(expected);
    await target.close();
    const settings = await openKeyvStores({ cache: `sqlite://${join(dir, 'cache.sqlite')}`, durable: where.url, durableSchema: where.schema });
    expect(await settings.namespace('links').get('guild-1:member-2')).toBe('#2PP0GQ9LU');
    expect(await settings.namespace('guilds').get('guild-1')).toEqual({ locale: 'fr', boards: [{ channel: '42' }] });
    await settings.close();
  });

  it('copies nothing the second time, and the copy takes new players without reusing an id', async () => {
    const again = cli({ DATA_DIR: dir });
    expect(await main(['migrate', '--to', where.url, '--schema', where.schema, '--quiet'], again.io)).toBe(0);
    expect(again.out.join('\n')).toMatch(/^0 rows copied in this run\.$/m);
    expect(again.out.join('\n')).toMatch(/^ {2}links +1 entries, 0 copied, 1 already there$/m);

    const target = await HistoryStore.open(where);
    const before = (await target.counts()).player!;
    const fresh = { tag: '#PGNEW1', name: 'Newcomer', trophies: 5, highestTrophies: 5, expLevel: 1, brawlers: [] } as unknown as Player;
    await target.record([{ kind: 'player', atMs: T0 + 2000, data: fresh }]);
    expect((await target.counts()).player).toBe(before + 1);
    expect((await target.search('player', 'newcomer', 5, 0)).items.map((h) => h.tag)).toEqual(['#PGNEW1']);
    expect((await target.snapshots('player', world.playerTag(7))).length).toBeGreaterThan(0);
    await target.close();
  });
});
