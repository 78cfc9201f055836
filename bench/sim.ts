/**
 * The simulated world at scale: start-up time and per-request latency over real HTTP for a world of
 * a million players (default), cold (first question about an entity) and warm (same question again
 * at the same instant), plus RSS. Prints figures; no assertions.
 *
 *   npm run bench:sim [-- --players 1000000 --clubs 50000 --samples 200]
 */
import { parseArgs } from 'node:util';
import { SimClock, startSim } from '../src/sim/index.ts';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '1000000' },
    clubs: { type: 'string', default: '50000' },
    samples: { type: 'string', default: '200' },
  },
});
const players = Number(values.players);
const clubs = Number(values.clubs);
const samples = Number(values.samples);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (n=${xs.length})`;

const t0 = performance.now();
const sim = await startSim({ seed: 'bench', players, clubs, clock: new SimClock(Date.UTC(2026, 10, 20, 12)) });
const startMs = performance.now() - t0;
const headers = { authorization: `Bearer ${sim.token}` };

async function time(path: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(sim.url + path, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return performance.now() - t;
}

const pick = (n: number, k: number) => Math.floor(((k * 2654435761) % 4294967296) / 4294967296 * n);
const enc = encodeURIComponent;
const rows: [string, number[]][] = [];
for (const [name, path] of [
  ['player', (k: number) => `/players/${enc(sim.world.playerTag(pick(players, k)))}`],
  ['battlelog', (k: number) => `/players/${enc(sim.world.playerTag(pick(players, k)))}/battlelog`],
  ['club', (k: number) => `/clubs/${enc(sim.world.clubTag(pick(clubs, k)))}`],
] as const) {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let k = 1; k <= samples; k++) {
    cold.push(await time(path(k)));
    warm.push(await time(path(k)));
  }
  rows.push([`${name} cold`, cold], [`${name} warm`, warm]);
}
for (const path of ['/rankings/global/players', '/rankings/FR/players', '/rankings/global/clubs', '/rankings/global/brawlers/16000000', '/events/rotation']) {
  const first = await time(path);
  const again = await time(path);
  rows.push([`${path} first`, [first]], [`${path} again`, [again]]);
}

console.log(`simulated world: ${players} players, ${clubs} clubs`);
console.log(`startSim: ${startMs.toFixed(1)} ms`);
for (const [name, xs] of rows) console.log(`${name.padEnd(44)} ${fmt(xs)}`);
console.log(`RSS: ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`);
await sim.close();
