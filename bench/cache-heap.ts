/**
 * What the answers' memory layer costs on the heap per megabyte of JSON (CACHE_MEMORY_MB counts
 * JSON): the profiles and battle logs of the simulated world's first players (the world `npm start`
 * runs), parsed as they arrive from upstream and put in a TieredCache without a store; prints the
 * JSON's size and the heap it takes after a full collection, without and with the sharing of what
 * copies repeat (src/core/cache.ts, `Sharing`).
 *
 *   npm run bench:cache [-- --players 500]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { TieredCache } from '../src/core/cache.ts';
import { World } from '../src/sim/world.ts';

const { values } = parseArgs({ options: { players: { type: 'string', default: '500' } } });
const players = Number(values.players);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:cache does)');

const world = new World({ seed: 'starr', players: 5000, clubs: 500 });
const now = Date.now();
const texts: string[] = [];
for (let i = 0; i < players; i++) {
  const tag = world.playerTag(i);
  texts.push(JSON.stringify(world.player(tag, now)), JSON.stringify(world.battlelog(tag, now)));
}
const jsonBytes = texts.reduce((n, t) => n + t.length, 0);

function heapOf(share: boolean): number {
  gc!();
  gc!();
  const before = process.memoryUsage().heapUsed;
  const cache = new TieredCache({ memoryBytes: 2 ** 40, retainMs: 0 });
  texts.forEach((t, i) => {
    const entry = { fetchedAt: now, data: JSON.parse(t) as unknown };
    // without sharing: the copies as JSON.parse made them, held the same way
    if (share) void cache.set(`k${i}`, entry);
    else held.push(entry);
  });
  gc!();
  gc!();
  const used = process.memoryUsage().heapUsed - before;
  held.length = 0;
  cache.clearMemory();
  return used;
}
const held: unknown[] = [];
const MB = 2 ** 20;
const plain = heapOf(false);
const shared = heapOf(true);
console.log(
  `${new Date().toISOString()}  ${players} players' profiles and battle logs: ${(jsonBytes / MB).toFixed(1)} MB of JSON; ` +
    `heap as parsed ${(plain / MB).toFixed(1)} MB (${(plain / jsonBytes).toFixed(2)}× the JSON), ` +
    `in the memory layer with sharing ${(shared / MB).toFixed(1)} MB (${(shared / jsonBytes).toFixed(2)}×); load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
