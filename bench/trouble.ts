/**
 * How long an HTTP client waits when the game's API misbehaves, one fault kind of the simulated
 * world at a time (429 with Retry-After: 3, a hang, dropped connections, 500s, maintenance), on the
 * service's HTTP server as `npm start` composes it. For each kind it prints the time to the answer:
 *
 * - of players with a last good copy (looked up once, then out of date), 6 clients at a time, each
 *   asking for a different player (target: within 1.5 s, a stale copy);
 * - of players never looked up (target: the 503 within 3 s).
 *
 *   npm run bench:trouble [-- --players 24 --concurrency 6]
 */
import { parseArgs } from 'node:util';
import { createHttpServer } from '../src/http/server.ts';
import type { FaultConfig } from '../src/sim/index.ts';
import { serve } from '../test/support/http.ts';
import { startWorld } from '../test/support/world.ts';
import { describeLatencies, pool } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '24' },
    concurrency: { type: 'string', default: '6' },
  },
});
const PLAYERS = Number(values.players);
const CONCURRENCY = Number(values.concurrency);

// The throttle goes last: after a burst of 429s the token runs slower for several seconds beyond
// its Retry-After (budget.ts), which would turn the next kind's look-ups into refusals.
const KINDS: [string, Partial<FaultConfig>][] = [
  ['hang (no answer at all)', { hang: true }],
  ['dropped connections', { resetRate: 1 }],
  ['500 unknownException', { errorRate: 1 }],
  ['maintenance', { maintenance: true }],
  ['429 with Retry-After: 3', { throttleRate: 1, retryAfterSeconds: 3 }],
];




const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const world = await startWorld({
    startMs: Date.UTC(2026, 10, 23, 12),
    renderWorkers: 0,
    env: { RATE_LIMIT_FREE: '1000000', UPSTREAM_STALE_WAIT_MS: '1000', UPSTREAM_USER_BUDGET_MS: '2500' },
  });
  const http = await serve(createHttpServer(world.core, { now: world.now }));
  let next = 0;
  const tags = (n: number) => Array.from({ length: n }, () => encodeURIComponent(world.sim.world.playerTag(next++)));
  const timed = async (tag: string) => {
    const t0 = performance.now();
    const r = await http.get(`/players/${tag}`);
    return { ms: performance.now() - t0, status: r.status, stale: r.headers['x-cache'] === 'STALE' };
  };

  console.log(`Starr Stats under upstream faults: GET /players/{tag}, ${CONCURRENCY} clients at a time, each a different player`);
  for (const [name, fault] of KINDS) {
    const cached = tags(PLAYERS);
    await pool(cached.map((t) => () => http.get(`/players/${t}`)), CONCURRENCY);
    world.clock.advance(121_000);
    world.sim.faults.set(fault);
    const before = world.sim.faults.requests;
    const stale = await pool(cached.map((t) => () => timed(t)), CONCURRENCY);
    const none = await pool(tags(Math.ceil(PLAYERS / 2)).map((t) => () => timed(t)), CONCURRENCY);
    const requests = world.sim.faults.requests - before;
    world.sim.faults.reset();
    console.log(`${name}:`);
    console.log(`  with a last good copy:  ${describeLatencies(stale.map((r) => r.ms))}   ${stale.filter((r) => r.stale).length}/${stale.length} stale copies   target ≤ 1.5 s`);
    console.log(`  with nothing cached:    ${describeLatencies(none.map((r) => r.ms))}   ${none.filter((r) => r.status === 503).length}/${none.length} answered 503   target ≤ 3 s`);
    console.log(`  requests that reached the game's API: ${requests}`);
    // let background refreshes end before the next kind
    while (world.stats.stats().refreshing > 0) await sleep(50);
    world.clock.advance(60_000);
  }
  await http.close();
  await world.close();
}

await main();
