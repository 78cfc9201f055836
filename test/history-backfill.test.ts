/**
 * Backfill: `starr backfill` through the CLI (refuses the official API, idempotent), an
 * interrupted backfill resumed to the same result as an uninterrupted one, and the demo start-up
 * backfill.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../src/cli.ts';
import { backfill, clubsOf, demoBackfill, samplePlayers } from '../src/poller/backfill.ts';
import { World } from '../src/sim/world.ts';
import { HistoryStore } from '../src/store/history-store.ts';

const T0 = Date.UTC(2026, 5, 2, 18);
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'starr-backfill-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function io(env: Record<string, string>): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (s) => lines.push(s), err: (s) => errors.push(s), env, cwd: tempDir() };
}

async function everything(store: HistoryStore, players: string[], clubs: string[]) {
  const out: Record<string, unknown> = {};
  for (const p of players) out[p] = await store.snapshots('player', p);
  for (const c of clubs) out[c] = await store.snapshots('club', c);
  out.battles = (await Promise.all(players.map((p) => store.playerBattles(p)))).flat().length;
  out.clubEvents = (await Promise.all(clubs.map((c) => store.clubEvents(c, 10_000)))).flat();
  out.counts = await store.counts();
  return out;
}

describe('starr backfill', () => {
  it('refuses to run against the official API', async () => {
    const x = io({ DATA_DIR: tempDir(), BRAWLSTARS_API_TOKEN: 'a-real-token' });
    expect(await main(['backfill', '--days', '1'], x)).toBe(78);
    expect(x.errors.join('\n')).toMatch(/BRAWLSTARS_API_TOKEN is set/);
  });

  it('explains its options', async () => {
    const x = io({ DATA_DIR: tempDir() });
    expect(await main(['backfill'], x)).toBe(2);
    expect(x.errors.join('\n')).toMatch(/--days is required/);
    expect(await main(['backfill', '--days', '0'], x)).toBe(2);
    expect(await main(['backfill', '--days', '1', '--all', '--players', '3'], x)).toBe(2);
  });

  it('fills history of the sample and their clubs, and a second run adds nothing', async () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, SIM_PLAYERS: '120', SIM_CLUBS: '12', POLL_PLAYER_MINUTES: '60' };
    const first = io(env);
    expect(await main(['backfill', '--days', '1', '--players', '4', '--quiet'], first)).toBe(0);
    expect(first.lines.join('\n')).toMatch(/Backfilled 4 players and \d+ clubs over 1 days/);
    const world = new World({ seed: 'starr', players: 120, clubs: 12 });
    const store = await HistoryStore.open({ dir });
    const before = await store.counts();
    expect(before.player_state).toBe(4);
    expect((await store.snapshots('player', world.playerTag(0))).length).toBeGreaterThan(5);
    expect((await store.trackedTags(Date.now())).player).toHaveLength(4);
    await store.close();

    const second = io(env);
    expect(await main(['backfill', '--days', '1', '--players', '4', '--quiet'], second)).toBe(0);
    expect(second.lines.join('\n')).toMatch(/Backfilled 0 players and 0 clubs .* already had that history/);
    const again = await HistoryStore.open({ dir });
    const after = await again.counts();
    expect({ ...after, rotation: 0 }).toEqual({ ...before, rotation: 0 });
    await again.close();
  });
});

describe('an interrupted backfill', () => {
  it('resumes to exactly what an uninterrupted one records', async () => {
    const world = new World({ seed: 'resume', players: 150, clubs: 15 });
    const players = samplePlayers(world, 5);
    const clubs = clubsOf(world, players, T0);
    const run = (store: HistoryStore, signal?: AbortSignal, onProgress?: (done: number) => void) =>
      backfill({ world, store, days: 2, nowMs: T0, playerTags: players, clubTags: clubs, playerEveryMs: 3_600_000, clubEveryMs: 7_200_000, ...(signal ? { signal } : {}), ...(onProgress ? { onProgress } : {}) });

    const whole = await HistoryStore.open({ dir: tempDir() });
    await run(whole);
    const resumed = await HistoryStore.open({ dir: tempDir() });
    const abort = new AbortController();
    const partial = await run(resumed, abort.signal, (done) => {
      if (done === 3) abort.abort();
    });
    expect(partial.players).toBe(2);
    const rest = await run(resumed);
    expect(rest.players).toBe(3);
    expect(rest.skipped).toBe(2);
    expect(await everything(resumed, players, clubs)).toEqual(await everything(whole, players, clubs));
    await whole.close();
    await resumed.close();
  });

  it('adds only what is older than live history, which it leaves as it was', async () => {
    const world = new World({ seed: 'older', players: 100, clubs: 10 });
    const tag = world.playerTag(2);
    const store = await HistoryStore.open({ dir: tempDir() });
    const live = [T0 - 3_600_000, T0];
    for (const t of live) await store.record([{ kind: 'player', atMs: t, data: world.playerBody(2, t) as never }]);
    const before = await store.snapshots('player', tag);
    await backfill({ world, store, days: 1, nowMs: T0, playerTags: [tag], clubTags: [], playerEveryMs: 3_600_000, clubEveryMs: 3_600_000, rotation: false });
    const after = await store.snapshots('player', tag);
    expect(after.slice(0, before.length).map((s) => s.state)).toEqual(before.map((s) => s.state));
    expect(after.length).toBeGreaterThan(before.length);
    expect(Math.min(...after.map((s) => s.t))).toBeLessThanOrEqual((T0 - 86_400_000 + 3_600_000) / 1000);
    await store.close();
  });
});

describe('demo start-up backfill', () => {
  it('gives a small sample a few days of history and keeps it tracked, cheaply on a second start', async () => {
    const world = new World({ seed: 'demo', players: 200, clubs: 20 });
    const store = await HistoryStore.open({ dir: tempDir() });
    const config = { POLL_PLAYER_MINUTES: 30, POLL_CLUB_MINUTES: 30, TRACK_DAYS: 14 };
    const first = await demoBackfill({ world, store, config, nowMs: T0, players: 5 });
    expect(first.players).toBe(5);
    expect((await store.trackedTags(T0)).player).toHaveLength(5);
    expect((await store.maps()).length).toBeGreaterThan(5);
    const second = await demoBackfill({ world, store, config, nowMs: T0 + 60_000, players: 5 });
    expect(second.players + second.clubs).toBe(0);
    await store.close();
  });
});
