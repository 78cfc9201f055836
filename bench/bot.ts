/**
 * The bot's HTTP interactions endpoint under signed requests from the fake Discord, on the
 * service's own HTTP server over the simulated world. The fake shares the bot's process and event
 * loop (it signs requests and parses every multipart upload), so the figures are pessimistic.
 * Prints:
 *
 * - first-response latency (the HTTP answer Discord waits for) with a warm cache, p50/p99
 *   (target p99 ≤ 250 ms);
 * - the same cold: the first interaction after start-up and the first picture of each kind, each
 *   run in a fresh process (`--cold-runs`, default 5) started as the app starts (the render pool
 *   warming in the background while the first command arrives), same target;
 * - full reply with an image (until the multipart PATCH of @original has landed) with 150 ms of
 *   upstream latency and a cold cache, p50/p99 (target p99 ≤ 1.5 s);
 * - resident memory with 1,000 servers' settings loaded (each with a sealed key, two boards and
 *   twenty linked members);
 * - club feeds of 1,000 clubs (100 servers × 10 feeds, over the gateway): per poll cycle of the
 *   clubs (30 minutes of virtual time), the time the delivery run takes, the REST calls it makes
 *   and the changes it posts, and the memory the feeds add (`--part feeds` runs only this).
 * - automatic roles: role sync for 1,000 servers × 50 linked members, per poll cycle: time, REST
 *   calls, members changed, memory (support/role-sync.ts; `--part roles` runs only this).
 *
 *   npm run bench:bot [-- --requests 400 --images 60 --concurrency 4 --cold-runs 5 --feeds 1000 --cycles 8 --part all|feeds|roles --role-servers 1000 --role-members 50]
 */
import { LANGUAGES } from '../src/i18n/index.ts';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFER_AFTER_MS } from '../src/bot/router.ts';
import { startWorld } from '../test/support/world.ts';
import { startBotHarness } from '../test/support/fake-discord-bot.ts';
import type { InteractionRecord } from '../test/support/fake-discord.ts';
import { describeLatencies, pool } from './support/stats.ts';
import { roleSyncBench } from './support/role-sync.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    images: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '4' },
    servers: { type: 'string', default: '1000' },
    'cold-runs': { type: 'string', default: '5' },
    feeds: { type: 'string', default: '1000' },
    cycles: { type: 'string', default: '8' },
    part: { type: 'string', default: 'all' },
    'role-servers': { type: 'string', default: '1000' },
    'role-members': { type: 'string', default: '50' },
    /** internal: run the cold sequence once in this (fresh) process and print it as JSON */
    'cold-child': { type: 'boolean', default: false },
  },
});
const REQUESTS = Number(values.requests);
const IMAGES = Number(values.images);
const CONCURRENCY = Number(values.concurrency);
const SERVERS = Number(values.servers);
const FEEDS = Number(values.feeds);
const CYCLES = Number(values.cycles);




const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** What a fresh process answers first: the first interaction, then the first picture of each kind. */
const COLD_SEQUENCE: [label: string, command: (player: string, club: string) => string][] = [
  ['first interaction (/player, its card)', (p) => `/player tag:${p}`],
  ['first brawlers picture', (p) => `/player tag:${p} view:brawlers`],
  ['first player chart', (p) => `/player tag:${p} view:charts`],
  ['first club picture', (_, c) => `/club show tag:${c}`],
  ['first club chart', (_, c) => `/club show tag:${c} view:trophies`],
];

type ColdFigures = { label: string; first: number; full: number }[];

/** One cold start: the service composed as the app composes it, and the sequence sent at once. */
async function coldChild(): Promise<ColdFigures> {
  const world = await startWorld({ players: 5000, clubs: 500, renderWorkers: 0, env: { RATE_LIMIT_FREE: '1000000' } });
  const h = await startBotHarness(world.core, { transport: 'http', realTime: true, deferAfterMs: DEFER_AFTER_MS, config: { STARR_SECRET: 'bench-secret-value-1234' } });
  // as startApp does once it listens
  void world.images.warm();
  const out: ColdFigures = [];
  const player = world.sim.world.playerTag(7);
  const club = world.sim.world.clubTag(3);
  for (const [label, command] of COLD_SEQUENCE) {
    const rec = h.fake.commandInteraction(command(player, club), { guild: h.guild });
    const t0 = performance.now();
    await h.fake.post(h.endpoint!, rec);
    const first = performance.now() - t0;
    await h.fake.settled(rec);
    out.push({ label, first, full: performance.now() - t0 });
  }
  await h.close();
  await world.close();
  return out;
}

/** Runs the cold sequence in `runs` fresh processes, one after another. */
async function coldRuns(runs: number): Promise<ColdFigures[]> {
  const self = fileURLToPath(import.meta.url);
  const results: ColdFigures[] = [];
  for (let i = 0; i < runs; i++) {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [...process.execArgv, self, '--cold-child'], { maxBuffer: 1 << 20 }, (err, out) => (err ? reject(err) : resolve(out))),
    );
    results.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as ColdFigures);
  }
  return results;
}

async function roles(): Promise<void> {
  const servers = Number(values['role-servers']);
  const members = Number(values['role-members']);
  const r = await roleSyncBench(servers, members);
  console.log(`automatic roles: ${servers.toLocaleString('en-US')} servers × ${members} linked members, 3 rules each (game data read into the cache first: ${(r.warmMs / 1000).toFixed(1)} s)`);
  for (const c of r.cycles) {
    console.log(
      `  ${`${c.label}:`.padEnd(40)} ${(c.ms / 1000).toFixed(2)} s, ${c.calls.toLocaleString('en-US')} REST calls (≥ ${(c.calls / 50).toFixed(0)} s at Discord's 50 requests/s), ` +
        `${c.changed.toLocaleString('en-US')} members changed, ${c.asked.toLocaleString('en-US')} looked up, ${c.reconciled} servers reconciled, RSS ${c.rssMb.toFixed(0)} MB (heap ${c.heapMb.toFixed(0)} MB)`,
    );
  }
  console.log(`  requests Discord refused: ${r.refused}`);
}

async function main(): Promise<void> {
  const cold = await coldRuns(Number(values['cold-runs']));
  const world = await startWorld({ players: 5000, clubs: 500, renderWorkers: 0, env: { RATE_LIMIT_FREE: '1000000' } });
  const h = await startBotHarness(world.core, { transport: 'http', realTime: true, deferAfterMs: DEFER_AFTER_MS, config: { STARR_SECRET: 'bench-secret-value-1234' } });
  const { fake, guild } = h;
  const tags = Array.from({ length: 40 }, (_, i) => world.sim.world.playerTag(i));
  const clubs = Array.from({ length: 10 }, (_, i) => world.sim.world.clubTag(i));
  const commands = (i: number): string => {
    const t = tags[i % tags.length]!;
    switch (i % 8) {
      case 0:
        return `/player tag:${t}`;
      case 1:
        return `/player tag:${t} view:brawlers`;
      case 2:
        return `/player tag:${t} view:battlelog`;
      case 3:
        return `/club show tag:${clubs[i % clubs.length]} view:members`;
      case 4:
        return '/ranking type:players';
      case 5:
        return '/events';
      case 6:
        return '/brawler name:shelly';
      default:
        return `/club show tag:${clubs[i % clubs.length]}`;
    }
  };

  /** Posts a signed interaction: ms until the HTTP answer, and until the final reply. */
  async function timed(text: string, locale = 'en-US'): Promise<{ first: number; full: number; rec: InteractionRecord }> {
    const rec = fake.commandInteraction(text, { guild, locale });
    const t0 = performance.now();
    await fake.post(h.endpoint!, rec);
    const first = performance.now() - t0;
    await fake.settled(rec);
    return { first, full: performance.now() - t0, rec };
  }

  // Warm the cache (data and pictures) with every command once, then measure; the member's
  // language changes with every interaction, over all of the bot's languages.
  const localeOf = (i: number) => LANGUAGES[i % LANGUAGES.length]!;
  await pool(Array.from({ length: 80 * 2 }, (_, i) => () => timed(commands(i), localeOf(i))), CONCURRENCY);
  const warm = await pool(Array.from({ length: REQUESTS }, (_, i) => () => timed(commands(i), localeOf(i))), CONCURRENCY);
  const one = await pool(Array.from({ length: REQUESTS / 2 }, (_, i) => () => timed(commands(i))), 1);

  // Cold players behind a slow game API, each reply carrying its player card.
  world.sim.faults.set({ latency: { minMs: 150, maxMs: 150, spikeRate: 0, spikeMs: 0 } });
  const coldCache = await pool(
    Array.from({ length: IMAGES }, (_, i) => () => timed(`/player tag:${world.sim.world.playerTag(1000 + i)}`)),
    CONCURRENCY,
  );
  world.sim.faults.reset();
  const withImage = coldCache.filter((r) => fake.answer(r.rec).attachments.length === 1);
  const refused = fake.rejections.length;

  // Settings of many servers, loaded the way interactions load them.
  const settings = h.bot.services.settings;
  const key = (await world.keys.issue({ email: 'bench@example.com', password: 'bench password', ip: '127.0.0.1' })).key;
  const info = (await world.keys.verify(key))!;
  const ids = Array.from({ length: SERVERS }, (_, i) => String(900_000_000_000_000_000n + BigInt(i)));
  for (const id of ids) {
    await settings.setKey(id, key, info, '1', Date.now());
    await settings.update(id, (s) => {
      s.country = 'DE';
      s.members = Array.from({ length: 20 }, (_, m) => String(800_000_000_000_000_000n + BigInt(m)));
      for (const b of ['a', 'b']) {
        s.boards.push({ id: `${b}${id.slice(-6)}`, channelId: id, messageId: id, source: { kind: 'club', tag: clubs[0]! }, intervalMinutes: 30, createdBy: '1', createdAt: Date.now(), locale: 'en-US', failures: 0, metric: 'trophies' });
      }
    });
  }
  // A fresh store, as after a restart: the settings come back from SQLite into memory.
  const { GuildSettingsStore } = await import('../src/bot/settings.ts');
  const fresh = new GuildSettingsStore(world.stores.namespace('guilds'), h.bot.services.vault, world.keys);
  globalThis.gc?.();
  const before = process.memoryUsage();
  const loaded = await Promise.all(ids.map((id) => fresh.get(id)));
  const premium = await Promise.all(loaded.map((s) => fresh.premium(s)));
  globalThis.gc?.();
  const after = process.memoryUsage();

  console.log('Starr Stats bot, HTTP interactions endpoint (signed requests, service HTTP server, simulated world)');
  console.log(`first response, warm cache (${CONCURRENCY} at a time, locale varying over ${LANGUAGES.length} languages): ${describeLatencies(warm.map((r) => r.first))}   target p99 ≤ 250 ms`);
  console.log(`first response, warm cache (one at a time):       ${describeLatencies(one.map((r) => r.first))}`);
  if (cold.length > 0) {
    console.log(`first response, cold start (${cold.length} fresh processes):`);
    for (const [k, [label]] of COLD_SEQUENCE.entries()) {
      console.log(`  ${`${label}:`.padEnd(48)} ${describeLatencies(cold.map((run) => run[k]!.first))}   full reply ${describeLatencies(cold.map((run) => run[k]!.full))}`);
    }
    console.log(`  ${'all of them:'.padEnd(48)} ${describeLatencies(cold.flatMap((run) => run.map((r) => r.first)))}   target p99 ≤ 250 ms`);
  }
  console.log(`full reply with image, 150 ms upstream, cold cache:  ${describeLatencies(withImage.map((r) => r.full))}   target p99 ≤ 1.5 s`);
  console.log(`  first response of those:                           ${describeLatencies(withImage.map((r) => r.first))}`);
  console.log(
    `RSS with ${SERVERS.toLocaleString('en-US')} servers' settings loaded: ${mb(after.rss)} ` +
      `(heap ${mb(after.heapUsed)}; loading them added ${mb(after.rss - before.rss)} RSS, ${mb(after.heapUsed - before.heapUsed)} heap; ` +
      `${fresh.cachedCount} cached, ${premium.filter((p) => p.premium).length} with premium)`,
  );
  console.log(`requests Discord refused: ${refused}${globalThis.gc ? '' : '   (run with --expose-gc for steadier memory figures)'}`);

  await h.close();
  await world.close();
  await roles();
}

/**
 * Club feeds of FEEDS clubs: the poller records the clubs every POLL_CLUB_MINUTES of virtual time,
 * then one delivery run posts what changed. The poller's own cost is the worker's, not measured.
 */
async function feedBench(): Promise<void> {
  const { Poller } = await import('../src/poller/index.ts');
  const start = Date.UTC(2026, 5, 1);
  const world = await startWorld({ startMs: start, players: FEEDS * 25, clubs: FEEDS, renderWorkers: 1, env: { RANKING_COUNTRIES: '' } });
  const h = await startBotHarness(world.core, { now: world.now, config: { STARR_SECRET: 'bench-secret-value-1234' } });
  const poller = new Poller({ stats: world.stats, history: world.history, config: world.config, clock: { now: world.now, sleep: async () => {} }, pinTopPlayers: 0, perTick: FEEDS * 2, concurrency: 16 });
  const feeds = h.bot.services.feeds;
  const perServer = 10;
  globalThis.gc?.();
  const before = process.memoryUsage();
  for (let g = 0; g * perServer < FEEDS; g++) {
    const guild = h.fake.addGuild({ name: `Feeds ${g}`, channels: [{ name: 'feed' }] });
    const channel = h.fake.channel(guild, 'feed');
    for (let i = g * perServer; i < Math.min(FEEDS, (g + 1) * perServer); i++) {
      const tag = world.sim.world.clubTag(i);
      const club = (await world.stats.club(tag)).data;
      await feeds.create(guild.id, { channelId: channel.id, club: { tag, name: club.name }, events: ['join', 'leave', 'role', 'settings'], createdBy: '1', locale: 'en-US' }, { keyed: true, premium: true });
    }
  }
  await world.history.flush();
  const every = world.config.POLL_CLUB_MINUTES * 60_000;
  const cycles: { ms: number; rest: number; messages: number; changes: number; failed: number }[] = [];
  let peakHeap = 0;
  for (let c = 0; c < CYCLES; c++) {
    world.clock.advance(every);
    await poller.runOnce();
    await world.history.flush();
    const requests = h.fake.requests.length;
    const t0 = performance.now();
    const r = await feeds.tick();
    const ms = performance.now() - t0;
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    cycles.push({ ms, rest: h.fake.requests.length - requests, messages: r.messages, changes: r.changes, failed: r.failed });
  }
  globalThis.gc?.();
  const after = process.memoryUsage();
  const sum = (f: (x: (typeof cycles)[number]) => number) => cycles.reduce((a, x) => a + f(x), 0);
  const sorted = cycles.map((x) => x.ms).sort((a, b) => a - b);
  console.log(`club feeds: ${FEEDS.toLocaleString('en-US')} clubs (${Math.ceil(FEEDS / perServer)} servers × ${perServer}), ${CYCLES} poll cycles of ${world.config.POLL_CLUB_MINUTES} min (virtual time)`);
  console.log(
    `  delivery run per cycle: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; ` +
      `REST calls per cycle ${(sum((x) => x.rest) / CYCLES).toFixed(1)} (max ${Math.max(...cycles.map((x) => x.rest))}); ` +
      `${(sum((x) => x.changes) / CYCLES).toFixed(1)} changes in ${(sum((x) => x.messages) / CYCLES).toFixed(1)} messages per cycle; ${sum((x) => x.failed)} failed`,
  );
  console.log(`  per cycle: ${cycles.map((x) => `${x.ms.toFixed(0)} ms/${x.rest} calls/${x.changes} changes`).join(', ')}`);
  console.log(
    `  memory: RSS ${mb(after.rss)} (feeds, their clubs' history and the run added ${mb(after.rss - before.rss)} RSS, ${mb(after.heapUsed - before.heapUsed)} heap after GC; ` +
      `peak heap during runs ${mb(peakHeap)})${globalThis.gc ? '' : '   (run with --expose-gc for steadier memory figures)'}`,
  );
  console.log(`  requests Discord refused: ${h.fake.rejections.length}`);
  await poller.stop();
  await h.close();
  await world.close();
}

if (values['cold-child']) console.log(JSON.stringify(await coldChild()));
else if (values.part === 'feeds') await feedBench();
else if (values.part === 'roles') await roles();
else {
  await main();
  await feedBench();
}
