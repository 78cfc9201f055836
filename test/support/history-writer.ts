/**
 * Child process for the crash test (test/history-store.test.ts): records rounds of observations
 * into a history store as fast as it can, one transaction per round, and prints each committed
 * round, until the parent kills it.
 *
 *   node --import tsx test/support/history-writer.ts <store file> <players per round>
 *   node --import tsx test/support/history-writer.ts <postgres://…> <schema> <players per round>
 */
import { HistoryStore } from '../../src/store/history-store.ts';
import type { Player } from '../../src/upstream/schemas.ts';

const args = process.argv.slice(2);
const pg = /^postgres(ql)?:\/\//.test(args[0] ?? '');
const perRound = pg ? args[2] : args[1];
const n = Number(perRound ?? 20);
const store = pg ? await HistoryStore.open({ url: args[0]!, schema: args[1]! }) : await HistoryStore.open({ path: args[0]! });
const T0 = Date.UTC(2026, 0, 1);

function writerPlayer(i: number, round: number): Player {
  return {
    tag: `#P${i}`,
    name: `Writer ${i}`,
    trophies: round,
    highestTrophies: round,
    expLevel: 1,
    '3vs3Victories': round,
    soloVictories: 0,
    duoVictories: 0,
    brawlers: Array.from({ length: 40 }, (_, b) => ({
      id: 16000000 + b, name: `B${b}`, power: 11, rank: 1, trophies: round + b, highestTrophies: round + b, gadgets: [], gears: [], starPowers: [],
    })),
  } as Player;
}

for (let round = 1; ; round++) {
  await store.record(Array.from({ length: n }, (_, i) => ({ kind: 'player' as const, atMs: T0 + round * 60_000, data: writerPlayer(i, round) })));
  process.stdout.write(`${round}\n`);
}
