/**
 * Starr Stats as a cluster of OS processes on 127.0.0.1 (test/support/cluster.ts): the simulated
 * world with its request log and 50 ms latency, 2 api, 2 worker and 2 bot processes (2 shards of 2)
 * against the fake Discord, one PostgreSQL schema and one Redis prefix of this run. One cluster for
 * the whole file, started once: each part of issue 10 adds its assertions here.
 *
 * Runs when DATABASE_URL and REDIS_URL are set; under CI=true a missing one fails the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { PollEvents } from './support/poll-events.ts';
import { clusterUnavailable, startCluster, type Cluster, type ClusterProcess, type LogLine } from './support/cluster.ts';
import type { FakeChannel, FakeDiscord, FakeGuild, InteractionRecord, StoredMessage } from './support/fake-discord.ts';
import { loadCommands } from '../src/bot/command.ts';
import { deployCommands } from '../src/bot/deploy.ts';
import { discordRest } from '../src/bot/discord-rest.ts';

const unavailable = clusterUnavailable();
const inCi = process.env.CI === 'true' || process.env.CI === '1';

// Start-up of seven processes on a busy 2-core machine: a hang guard, not a speed check.
const START_GUARD_MS = 600_000;
const FREE_LIMIT = 120;

describe.skipIf(unavailable !== null && !inCi)(`a cluster of processes${unavailable ? ` (${unavailable})` : ''}`, () => {
  let c: Cluster;

  beforeAll(async () => {
    // max_concurrency 1: the two bot processes start together but must IDENTIFY 5 s apart (one bucket).
    c = await startCluster({
      api: 2,
      worker: 2,
      bot: 2,
      discord: { maxConcurrency: 1 },
      sim: { latencyMs: 50 },
      // A test that counts requests against the free limit sends them as a client of its own
      // (X-Forwarded-For); everything else shares 127.0.0.1's 120 a minute.
      env: { RATE_LIMIT_FREE: String(FREE_LIMIT), TRUST_PROXY: 'true' },
      // Workers: a poll the test holds back at the sim must not time out meanwhile (the timeout also
      // bounds how long a dead worker's single-flight claim holds the others back), and the jobs of a
      // killed worker are taken over within seconds (POLL_JOB_LOCK_SECONDS, as an operator may set it);
      // a poll the test makes due in PostgreSQL is found within two seconds (POLL_SCAN_SECONDS).
      // Bots look for due boards and unposted feed changes every second (BOARD_CHECK_SECONDS,
      // FEED_CHECK_SECONDS) and log each look at debug
      // level, so a test sees both processes check several times without waiting minutes.
      envOf: (role): Record<string, string> =>
        role === 'worker'
          ? { UPSTREAM_TIMEOUT_MS: '30000', POLL_JOB_LOCK_SECONDS: '10', POLL_SCAN_SECONDS: '2' }
          : role === 'bot'
            ? { BOARD_CHECK_SECONDS: '1', FEED_CHECK_SECONDS: '1', LOG_LEVEL: 'debug' }
            : {},
    });
  }, START_GUARD_MS);

  afterAll(async () => {
    await c?.close();
  }, START_GUARD_MS);

  /** A player of the simulated world, found through the API (the world's tags come from its seed). */
  async function somePlayer(p: ClusterProcess, rank = 1): Promise<string> {
    const r = await p.get(`/rankings/global/players?limit=${rank}`);
    expect(r.status).toBe(200);
    return encodeURIComponent((r.json.items as { tag: string }[])[rank - 1]!.tag);
  }

  /** The sum of a counter on a process's /metrics over the series whose labels include every `labels`. */
  async function counter(p: ClusterProcess, name: string, ...labels: string[]): Promise<number> {
    const r = await p.get('/metrics');
    let sum = 0;
    for (const line of r.text.split('\n')) {
      const m = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
      if (m && m[1] === name && labels.every((l) => (m[2] ?? '').includes(l))) sum += Number(m[3]);
    }
    return sum;
  }

  describe('health of every role', () => {
    it('each process reports its role and every dependency ready on /readyz', async () => {
      for (const p of c.all()) {
        const r = await p.get('/readyz');
        expect({ name: p.name, status: r.status }).toEqual({ name: p.name, status: 200 });
        expect(r.json).toEqual({
          status: 'ready',
          role: p.role,
          checks: {
            store: { ok: true },
            upstream: { ok: true },
            postgres: { ok: true },
            redis: { ok: true },
            // a bot process is ready once the shard it runs is connected
            ...(p.role === 'bot' ? { gateway: { ok: true } } : {}),
          },
        });
      }
    });

    it('worker and bot processes serve /healthz, /readyz and /metrics only; api processes serve the API', async () => {
      for (const p of [...c.worker, ...c.bot]) {
        const health = await p.get('/healthz');
        expect(health.status).toBe(200);
        expect(health.json).toMatchObject({ status: 'ok', upstream: 'official', cacheStore: 'redis', durableStore: 'postgres' });
        const metrics = await p.get('/metrics');
        expect(metrics.status).toBe(200);
        expect(metrics.text).toContain('starr_http_requests_total');
        expect((await p.get('/brawlers')).status).toBe(404);
        expect((await p.get('/docs')).status).toBe(404);
        expect((await p.fetch('/generate-api-keys?ip=127.0.0.1&email=x%40example.com&password=longenough1', { method: 'POST' })).status).toBe(404);
      }
      for (const p of c.api) expect((await p.get('/brawlers')).status).toBe(200);
    });
  });

  describe('durable data shared through PostgreSQL', () => {
    it('a key issued by one api process works on the other; a wrong key is refused by both', async () => {
      const [a, b] = c.api as [ClusterProcess, ClusterProcess];
      const issued = await a.fetch('/generate-api-keys?ip=127.0.0.1&email=cluster%40example.com&password=cluster-password-1', { method: 'POST' });
      expect(issued.status).toBe(200);
      const key = issued.json.api_key as string;
      const player = await somePlayer(a);
      expect((await b.get(`/players/${player}/push?api_key=${key}`)).status).toBe(200);
      expect((await b.get(`/players/${player}/push?api_key=${key}x`)).status).toBe(401);
      expect((await a.get(`/players/${player}/push?api_key=${key}x`)).status).toBe(401);
      // the same account on the other process: the password is checked against what the first saved
      expect((await b.fetch('/generate-api-keys?ip=127.0.0.1&email=cluster%40example.com&password=wrong-password-1', { method: 'POST' })).status).toBe(401);
    });

    it('history recorded through one api process is answered by the other, without asking the game API again', async () => {
      const [a, b] = c.api as [ClusterProcess, ClusterProcess];
      const key = (await a.fetch('/generate-api-keys?ip=127.0.0.1&email=history%40example.com&password=history-password-1', { method: 'POST' })).json.api_key as string;
      const player = await somePlayer(b, 7);
      const path = `/v1/players/${player}`;

      const recorded = await a.get(`/players/${player}/history?api_key=${key}`);
      expect(recorded.status).toBe(200);
      const items = recorded.json.items as { t: string }[];
      expect(items.length).toBeGreaterThan(0);
      // the first look-up asked the game API (through the sim, counted there)
      expect((await c.sim.log(path)).requests.some((r) => r.path === path)).toBe(true);

      const bCalls = await counter(b, 'starr_core_upstream_calls_total', 'resource="player"');
      const answered = await b.get(`/players/${player}/history?api_key=${key}`);
      expect(answered.status).toBe(200);
      expect(answered.json.tag).toBe(recorded.json.tag);
      expect((answered.json.items as { t: string }[]).map((i) => i.t)).toContain(items[0]!.t);
      // b found the snapshot a recorded: it did not fetch the player itself
      expect(await counter(b, 'starr_core_upstream_calls_total', 'resource="player"')).toBe(bCalls);
    });
  });

  describe('shared limits', () => {
    it('a concurrent burst for one player over both api processes makes one upstream call per TTL', async () => {
      // below the global top 100, which the workers keep polling (best builds need them)
      const player = await somePlayer(c.api[0]!, 180);
      const path = `/v1/players/${player}`;
      const burst = () => Promise.all(Array.from({ length: 16 }, (_, i) => c.api[i % 2]!.get(`/players/${player}`)));
      const first = await burst();
      expect(first.map((r) => r.status)).toEqual(first.map(() => 200));
      expect(new Set(first.map((r) => r.json.tag)).size).toBe(1);
      // again within the TTL: answered from the shared cache
      const second = await burst();
      expect(second.map((r) => r.status)).toEqual(second.map(() => 200));
      // a worker may poll the player once it is tracked: the api processes' calls say who they are
      const calls = (await c.sim.log(path)).requests.filter((r) => r.path === path && r.userAgent?.startsWith('starr-stats/api '));
      expect(calls).toHaveLength(1);
    });

    it('a burst for a tag that does not exist makes one upstream call: the 404 is remembered for all', async () => {
      const path = '/v1/players/%2399999999Q';
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => c.api[i % 2]!.get('/players/%2399999999Q')));
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 404));
      expect((await c.sim.log(path)).requests.filter((r) => r.path === path)).toHaveLength(1);
    });

    it(`the free rate limit counts requests over both api processes together: 429 after ${FREE_LIMIT} in all`, async () => {
      const client = { headers: { 'x-forwarded-for': '203.0.113.7' } };
      const remaining: number[] = [];
      // in order, alternating: each answer's RateLimit-Remaining continues the other process's count
      for (let i = 0; i < FREE_LIMIT; i++) {
        const r = await c.api[i % 2]!.fetch('/', client);
        expect(r.status).toBe(200);
        remaining.push(Number(r.headers.get('ratelimit-remaining')));
      }
      expect(remaining).toEqual(Array.from({ length: FREE_LIMIT }, (_, i) => FREE_LIMIT - 1 - i));
      for (const p of c.api) {
        const over = await p.fetch('/', client);
        expect(over.status).toBe(429);
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // another client is not affected
      expect((await c.api[1]!.fetch('/', { headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(200);
    });
  });

  describe('Discord across processes', () => {
    let fake: FakeDiscord;
    /** a server on each shard of 2, with the commands deployed globally */
    const onShard: FakeGuild[] = [];

    beforeAll(async () => {
      fake = c.discord!.fake;
      for (const shard of [0, 1]) onShard.push(fake.addGuild({ name: `shard ${shard}`, onShard: [shard, 2] }));
      await deployCommands({ rest: discordRest(fake.apiUrl, fake.token), appId: fake.appId, definitions: (await loadCommands()).definitions() });
    });

    /**
     * Waits for `expected`'s log line about the interaction (it follows the answer), then checks that
     * no other serve process handled it too.
     */
    async function handledOnlyBy(rec: InteractionRecord, expected: ClusterProcess): Promise<void> {
      const about = (l: LogLine) => l.msg === 'interaction' && l.json?.ref === rec.id;
      await expected.waitForLine(about, { from: 0 });
      expect(c.all().filter((p) => p.lines.some(about)).map((p) => p.name)).toEqual([expected.name]);
    }

    /** Waits until bot process `p` has finished `n` more runs of a scheduled delivery (debug log `tick done`). */
    async function ticks(p: ClusterProcess, tick: 'leaderboard tick' | 'feed tick', n: number): Promise<void> {
      let from = p.lines.length;
      for (let k = 0; k < n; k++) {
        const line = await p.waitForLine((l) => l.msg === 'tick done' && l.json?.tick === tick, { from });
        from = p.lines.indexOf(line) + 1;
      }
    }

    function component(m: StoredMessage, label: string): string {
      const all = m.components.flatMap((r) => ('components' in r ? (r.components as { custom_id?: string; label?: string }[]) : []));
      const id = all.find((x) => x.label === label)?.custom_id;
      if (!id) throw new Error(`no ${label} on the message: ${JSON.stringify(all.map((x) => x.label))}`);
      return id;
    }

    it('each bot process runs one shard of 2; they took turns to IDENTIFY in the one bucket of max_concurrency 1', async () => {
      await fake.whenShards([0, 1]);
      expect([...fake.shards.values()].map((s) => s.shard).sort()).toEqual([[0, 2], [1, 2]]);
      expect(fake.identifyRejections, JSON.stringify(fake.identifies)).toEqual([]);
      const at = fake.identifies.map((i) => i.at).sort((a, b) => a - b);
      for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(5_000);
      for (const [i, p] of c.bot.entries()) {
        const ready = p.lines.find((l) => l.msg === 'gateway ready');
        expect(ready?.json).toMatchObject({ shards: [i], shardCount: 2 });
      }
    });

    it("answers each interaction once, from the process holding the guild's shard only", async () => {
      for (const [shard, guild] of onShard.entries()) {
        const rec = await fake.settled(fake.slash('/help', { guild }));
        expect(rec.callbacks).toHaveLength(1);
        await handledOnlyBy(rec, c.bot[shard]!);
      }
      // /interactions on the two api processes: each POST is answered by the process it reached
      for (const p of c.api) {
        const rec = fake.commandInteraction('/help', { guild: onShard[0]! });
        await fake.post(`${p.url}/interactions`, rec);
        await fake.settled(rec);
        expect(rec.callbacks).toHaveLength(1);
        await handledOnlyBy(rec, p);
      }
      // one interaction POSTed to both (a load balancer retrying): one answers, the other says 409
      const twice = fake.commandInteraction('/help', { guild: onShard[1]! });
      const statuses = await Promise.all(c.api.map((p) => fake.post(`${p.url}/interactions`, twice)));
      expect(statuses.map((s) => s.status).sort()).toEqual([200, 409]);
      await fake.settled(twice);
      expect(twice.callbacks).toHaveLength(1);
      await handledOnlyBy(twice, c.api[statuses.findIndex((s) => s.status === 200)]!);
      expect(fake.rejections).toEqual([]);
    });

    it('a button on a reply made by one process is handled by another (component state in Redis)', async () => {
      const tag = (await c.api[0]!.get('/rankings/global/players?limit=3')).json.items[2].tag as string;
      // the reply: over the gateway, from the bot process of shard 0
      const asked = await fake.settled(fake.slash(`/player tag:${tag} view:brawlers`, { guild: onShard[0]! }));
      await handledOnlyBy(asked, c.bot[0]!);
      const m = fake.answer(asked);
      expect(m.embeds[0]!.description!.split('\n')[0]).toMatch(/^` 1` /);
      // the click: to api-1's /interactions, a process that never saw the reply
      const click = fake.componentInteraction(m, component(m, 'Next'));
      await fake.post(`${c.api[1]!.url}/interactions`, click);
      await fake.settled(click);
      expect(click.callbacks).toHaveLength(1);
      await handledOnlyBy(click, c.api[1]!);
      expect(m.embeds[0]!.description!.split('\n')[0]).toMatch(/^`11` /);
      // and back: a reply made by api-0, its button pressed over the gateway (bot-1 holds that server)
      const viaHttp = fake.commandInteraction(`/player tag:${tag} view:brawlers`, { guild: onShard[1]! });
      await fake.post(`${c.api[0]!.url}/interactions`, viaHttp);
      await fake.settled(viaHttp);
      const n = fake.answer(viaHttp);
      const next = await fake.settled(fake.click(n, component(n, 'Next')));
      expect(next.callbacks).toHaveLength(1);
      await handledOnlyBy(next, c.bot[1]!);
      expect(n.embeds[0]!.description!.split('\n')[0]).toMatch(/^`11` /);
      expect(fake.rejections).toEqual([]);
    });

    it("a member's command cooldown holds across bot processes (a claim in Redis)", async () => {
      const member = fake.addUser('hasty');
      // the same member, at the same moment, in a server of each shard: two processes, one cooldown
      const recs = await Promise.all(onShard.map((guild) => fake.settled(fake.slash('/events', { guild, user: member }))));
      const titles = recs.map((r) => fake.answer(r).embeds[0]?.title ?? '');
      expect(titles.filter((t) => t === 'Slow down')).toHaveLength(1);
      expect(recs.map((r) => r.callbacks.length)).toEqual([1, 1]);
      await handledOnlyBy(recs[0]!, c.bot[0]!);
      await handledOnlyBy(recs[1]!, c.bot[1]!);
      expect(fake.rejections).toEqual([]);
    });

    it("killing one bot process leaves the other's shard connected and answering; the restarted one takes its shard back", async () => {
      const gone = new Promise((resolve) => fake.gatewayEvents.once('disconnect', resolve));
      await c.bot[0]!.kill();
      expect(await gone).toEqual({ shard: [0, 2] });
      expect([...fake.shards.keys()]).toEqual([1]);
      expect((await c.bot[1]!.get('/readyz')).json.checks.gateway).toEqual({ ok: true });
      const rec = await fake.settled(fake.slash('/help', { guild: onShard[1]! }));
      expect(rec.callbacks).toHaveLength(1);
      await handledOnlyBy(rec, c.bot[1]!);
      // a server on the dead shard gets no answer until its process is back (Discord would say the app did not respond)
      expect(() => fake.slash('/help', { guild: onShard[0]! })).toThrow('no gateway shard connected');

      await c.bot[0]!.restart();
      await fake.whenShards([0, 1]);
      const back = await fake.settled(fake.slash('/help', { guild: onShard[0]! }));
      expect(back.callbacks).toHaveLength(1);
      await handledOnlyBy(back, c.bot[0]!);
      expect(fake.identifyRejections).toEqual([]);
    });

    describe('leaderboards', () => {
      const INTERVAL_MIN = 30;
      /** the board of each shard's server, and its message on the fake Discord */
      const boards: { guild: FakeGuild; id: string; message: StoredMessage }[] = [];

      /** Resolves once `m` has been edited `n` times in all. */
      function edited(m: StoredMessage, n: number): Promise<void> {
        return new Promise((resolve) => {
          const check = () => {
            if (m.edits < n) return;
            fake.channelEvents.off('edit', check);
            resolve();
          };
          fake.channelEvents.on('edit', check);
          check();
        });
      }

      const checks = (p: ClusterProcess, n: number) => ticks(p, 'leaderboard tick', n);

      /**
       * One interval passes for `board`: its durable record (the server's settings, a row of the
       * keyv table in PostgreSQL) says it last ran one interval earlier than it did, so it is due now.
       */
      async function intervalPasses(board: { guild: FakeGuild; id: string }): Promise<void> {
        const key = `guilds:guild:${board.guild.id}`;
        const [row] = await c.sql<{ value: string }>('SELECT value FROM keyv WHERE key = $1', [key]);
        const stored = JSON.parse(row!.value) as { value: { boards: { id: string; lastRunAt: number }[] } };
        const b = stored.value.boards.find((x) => x.id === board.id)!;
        const moved = await c.sql('UPDATE keyv SET value = $2 WHERE key = $1 AND value = $3 RETURNING key', [
          key,
          JSON.stringify({ ...stored, value: { ...stored.value, boards: stored.value.boards.map((x) => (x === b ? { ...b, lastRunAt: b.lastRunAt - INTERVAL_MIN * 60_000 } : x)) } }),
          row!.value,
        ]);
        expect(moved).toHaveLength(1);
      }

      beforeAll(async () => {
        const clubs = (await c.api[0]!.get('/rankings/global/clubs?limit=2')).json.items as { tag: string }[];
        for (const [i, guild] of onShard.entries()) {
          const channel = guild.channels[0]!;
          const admin = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
          const made = await fake.settled(fake.slash(`/leaderboard create channel:${channel.id} club:${clubs[i]!.tag} interval:${INTERVAL_MIN}`, { guild, permissions: admin }));
          expect(fake.answer(made).embeds[0]!.title).toBe('Leaderboard created');
          const [message, ...more] = fake.channelMessages(channel);
          expect(more).toEqual([]);
          const [row] = await c.sql<{ value: string }>('SELECT value FROM keyv WHERE key = $1', [`guilds:guild:${guild.id}`]);
          const id = (JSON.parse(row!.value).value.boards as { id: string; messageId: string }[]).find((b) => b.messageId === message!.id)!.id;
          boards.push({ guild, id, message: message! });
        }
      });

      it('each board is posted once, then edited exactly once per interval while both bot processes keep checking', async () => {
        for (const b of boards) expect(b.message.edits).toBe(0);
        // Nothing is due: several checks of both processes edit nothing.
        await Promise.all(c.bot.map((p) => checks(p, 3)));
        expect(boards.map((b) => b.message.edits)).toEqual([0, 0]);
        for (let round = 1; round <= 2; round++) {
          for (const b of boards) await intervalPasses(b);
          await Promise.all(boards.map((b) => edited(b.message, round)));
          // both processes look again and again: the interval's edit stays the only one
          await Promise.all(c.bot.map((p) => checks(p, 3)));
          expect(boards.map((b) => b.message.edits)).toEqual([round, round]);
        }
        for (const b of boards) expect(fake.channelMessages(b.guild.channels[0]!)).toEqual([b.message]);
        expect(fake.rejections).toEqual([]);
      });

      it("a board due while its server's bot process is down is edited once when the process is back; the other's board meanwhile once", async () => {
        const [down, up] = boards as [(typeof boards)[0], (typeof boards)[0]];
        const before = boards.map((b) => b.message.edits);
        await c.bot[0]!.kill();
        for (const b of boards) await intervalPasses(b);
        await edited(up.message, before[1]! + 1);
        // Discord sends the server of shard 0 to no one now: no process holds it, none edits its board
        await checks(c.bot[1]!, 3);
        expect(boards.map((b) => b.message.edits)).toEqual([before[0], before[1]! + 1]);

        await c.bot[0]!.restart();
        await fake.whenShards([0, 1]);
        await edited(down.message, before[0]! + 1);
        await Promise.all(c.bot.map((p) => checks(p, 3)));
        expect(boards.map((b) => b.message.edits)).toEqual([before[0]! + 1, before[1]! + 1]);
        expect(fake.rejections).toEqual([]);
      });
    });

    describe('club feeds', () => {
      /** a feed of the same club in a server of each shard: its channel on the fake Discord */
      const channels: FakeChannel[] = [];
      let events: PollEvents;
      let club: string;
      /** a member below the president, and the role it gets */
      let member: { tag: string; role: string; to: string };
      /** a player in no club, who joins and later leaves */
      let joiner: string;

      const simAuth = () => ({ authorization: `Bearer ${c.sim.token}`, 'content-type': 'application/json' });
      /** A body of the game's API, read from the sim directly (the processes' caches and counts stay as they are). */
      async function game(path: string): Promise<any> {
        const r = await fetch(`${c.sim.url}${path}`, { headers: simAuth() });
        expect(r.status).toBe(200);
        return r.json();
      }
      /** A change in the game: POST /_sim/players/{tag}/club. */
      async function inGame(tag: string, change: { club: string | null } | { role: string }): Promise<void> {
        const r = await fetch(`${c.sim.process.url}/_sim/players/${encodeURIComponent(tag)}/club`, { method: 'POST', headers: simAuth(), body: JSON.stringify(change) });
        expect(r.status, await r.clone().text()).toBe(200);
      }
      /** The club's poll is due now (its durable schedule says so); resolves once a worker completed it. */
      //
      // A poll already under way when the schedule is moved (the club became due when its feed was
      // created) writes its own next time when it completes, over ours, and the job awaited is then
      // never made: when it has not completed within 20 s the schedule is moved again.
      async function pollClub(): Promise<void> {
        for (;;) {
          const dueSec = Math.floor(Date.now() / 1000);
          const rows = await c.sql<{ id: string }>('UPDATE tracked t SET next_poll = $1 FROM club e WHERE t.kind = 1 AND e.id = t.id AND e.tag = $2 RETURNING e.id', [dueSec, club]);
          expect(rows).toHaveLength(1);
          const done = events.completedAll([`club:${rows[0]!.id}:${dueSec * 1000}`]).then(() => true);
          if (await Promise.race([done, new Promise<false>((r) => setTimeout(() => r(false), 20_000))])) return;
          await new Promise((r) => setTimeout(r, 1000)); // a new due second: a new job id
        }
      }
      /** Resolves once every feed channel holds `n` messages. */
      function posted(n: number): Promise<void> {
        return new Promise((resolve) => {
          const check = () => {
            if (channels.some((ch) => fake.channelMessages(ch).length < n)) return;
            fake.channelEvents.off('post', check);
            resolve();
          };
          fake.channelEvents.on('post', check);
          check();
        });
      }
      /** Each channel's messages, as the lines of their embeds (one per change). */
      const feedPosts = () => channels.map((ch) => fake.channelMessages(ch).map((m) => m.embeds.map((e) => e.description ?? '').sort()));
      const bothTick = (n: number) => Promise.all(c.bot.map((p) => ticks(p, 'feed tick', n)));

      beforeAll(async () => {
        events = await PollEvents.open({ url: process.env.REDIS_URL!, prefix: c.redisPrefix });
        // A club with room for one more, among those no other test here uses (the boards take the
        // first two of the ranking, the SIGTERM test the last six); a player joining only moves it up.
        const ranked = (await game('/rankings/global/clubs?limit=30')).items as { tag: string; memberCount: number }[];
        const candidates = ranked.slice(2, -6).filter((x) => x.memberCount < 30);
        expect(candidates.length).toBeGreaterThan(0);
        club = candidates[0]!.tag;
        const members = (await game(`/clubs/${encodeURIComponent(club)}/members`)).items as { tag: string; role: string }[];
        const m = members.find((x) => x.role !== 'president')!;
        member = { tag: m.tag, role: m.role, to: m.role === 'member' ? 'senior' : m.role === 'senior' ? 'vicePresident' : 'member' };
        const players = (await game('/rankings/global/players?limit=200')).items as { tag: string; club?: unknown }[];
        joiner = players.slice(100).find((x) => !x.club)!.tag;
        expect(joiner).toBeTruthy();

        for (const shard of [0, 1]) {
          const guild = fake.addGuild({ name: `feeds on shard ${shard}`, onShard: [shard, 2], channels: [{ name: 'club-log' }] });
          const channel = guild.channels[0]!;
          const admin = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
          const made = await fake.settled(fake.slash(`/feed create channel:${channel.id} club:${club}`, { guild, permissions: admin }));
          expect(fake.answer(made).embeds[0]!.title).toBe('Club feed created');
          channels.push(channel);
        }
        // the club's first recorded state: what the changes are told against
        await pollClub();
      });

      afterAll(async () => {
        await events?.close();
      });

      it('posts each change in the club once, batched per poll, while both bot processes keep checking; a SIGKILLed and restarted one re-posts nothing', { timeout: 400_000 }, async () => {
        const nonceHits = fake.nonceHits;
        await bothTick(3);
        expect(feedPosts()).toEqual([[], []]);

        // two changes seen by one poll: one message of two embeds in each server
        await inGame(member.tag, { role: member.to });
        await inGame(joiner, { club });
        await pollClub();
        await posted(1);
        await bothTick(3);
        const first = feedPosts();
        for (const posts of first) {
          expect(posts).toHaveLength(1);
          expect(posts[0]).toHaveLength(2);
          expect(posts[0]!.find((t) => t.includes(joiner))).toMatch(/^🟢 .* joined$/);
          expect(posts[0]!.find((t) => t.includes(member.tag))).toMatch(/^(⬆️|⬇️) .* was (promoted|demoted): /);
        }

        // the process of shard 0 dies mid-run and comes back: its feed posts nothing again
        await c.bot[0]!.kill();
        await c.bot[0]!.restart();
        await fake.whenShards([0, 1]);
        await bothTick(3);
        expect(feedPosts()).toEqual(first);

        // the next change: one more message in each server, with that change only
        await inGame(joiner, { club: null });
        await pollClub();
        await posted(2);
        await bothTick(3);
        const second = feedPosts();
        for (const [i, posts] of second.entries()) {
          expect(posts.slice(0, 1)).toEqual(first[i]);
          expect(posts).toHaveLength(2);
          expect(posts[1]).toHaveLength(1);
          expect(posts[1]![0]).toMatch(new RegExp(`^🔴 .*${joiner} left\\n`));
        }
        // no post was even tried twice (a retry would have met its nonce)
        expect(fake.nonceHits).toBe(nonceHits);
        expect(fake.rejections).toEqual([]);
      });
    });

    it('SIGTERM of an api and a bot process mid-answer: each answers everything it had accepted, exits 0, and restarted serves again', { timeout: 400_000 }, async () => {
      const api = c.api[1]!;
      const bot = c.bot[1]!;
      // clubs no one asked for yet; the game's API holds every club request until the signals are sent
      const clubs = ((await c.api[0]!.get('/rankings/global/clubs?limit=30')).json.items as { tag: string }[]).map((x) => x.tag).slice(-6);
      const [forPost, forGateway, ...forGets] = clubs as [string, string, ...string[]];
      const client = { headers: { 'x-forwarded-for': '203.0.113.30' } };
      await c.sim.faults({ hang: true, match: '/clubs/%23' });
      try {
        const gets = forGets.map((t) => api.fetch(`/clubs/${encodeURIComponent(t)}`, client));
        const post = fake.commandInteraction(`/club show tag:${forPost} view:members`, { guild: onShard[0]! });
        const deferred = await fake.post(`${api.url}/interactions`, post);
        // the HTTP answer is the deferral ("thinking…"); the reply follows once the club is read
        expect(deferred).toMatchObject({ status: 200, json: { type: 5 } });
        const viaGateway = fake.slash(`/club show tag:${forGateway} view:members`, { guild: onShard[1]! });
        // every one is under way: its request is held at the game's API
        await Promise.all(clubs.map((t) => c.sim.log(`/v1/clubs/${encodeURIComponent(t)}`, { atLeast: 1 })));

        const from = [api.lines.length, bot.lines.length];
        const stopped = [api.stop('SIGTERM'), bot.stop('SIGTERM')];
        await Promise.all([api, bot].map((p, i) => p.waitForLine((l) => l.msg === 'shutting down', { from: from[i]! })));
        await c.sim.faults({ hang: false });
        for (const exit of await Promise.all(stopped)) expect(exit).toEqual({ code: 0, signal: null });

        const answers = await Promise.all(gets);
        expect(answers.map((r) => [r.status, r.json?.tag])).toEqual(forGets.map((t) => [200, t]));
        for (const [rec, tag] of [[post, forPost], [viaGateway, forGateway]] as const) {
          await fake.settled(rec);
          expect(rec.callbacks).toHaveLength(1);
          expect(JSON.stringify(fake.answer(rec).embeds)).toContain(tag);
        }
        expect(fake.rejections).toEqual([]);
      } finally {
        await c.sim.faults({ hang: false, match: '' });
      }

      await api.restart();
      await bot.restart();
      await fake.whenShards([0, 1]);
      expect((await api.get('/readyz')).status).toBe(200);
      expect((await api.fetch(`/clubs/${encodeURIComponent(forGets[0]!)}`, client)).json.tag).toBe(forGets[0]);
      const back = await fake.settled(fake.slash('/help', { guild: onShard[1]! }));
      expect(back.callbacks).toHaveLength(1);
      await handledOnlyBy(back, bot);
      expect(fake.identifyRejections).toEqual([]);
    });
  });

  describe('polling as jobs over both workers', () => {
    const MAX_ACTIVE_PER_WORKER = 8;
    let events: PollEvents;
    beforeAll(async () => {
      events = await PollEvents.open({ url: process.env.REDIS_URL!, prefix: c.redisPrefix });
    });
    afterAll(async () => {
      await c?.sim.faults({ hang: false, match: '' });
      await events?.close();
    });

    /**
     * The next interval for every tracked player, now: the durable schedule says each is due (the
     * workers' next scan, a minute away at most, finds them). Returns the players and the job id
     * each due poll gets.
     */
    async function nextInterval(): Promise<{ tags: string[]; jobOf: Map<string, string>; dueSec: number }> {
      const dueSec = Math.floor(Date.now() / 1000);
      const rows = await c.sql<{ id: number; tag: string }>(
        `UPDATE tracked t SET next_poll = $1 FROM player e
          WHERE t.kind = 0 AND e.id = t.id
            AND (t.viewed_until > $1 OR EXISTS (SELECT 1 FROM pin p WHERE p.kind = t.kind AND p.id = t.id))
          RETURNING e.id, e.tag`,
        [dueSec],
      );
      return { tags: rows.map((r) => r.tag), jobOf: new Map(rows.map((r) => [r.tag, `player:${r.id}:${dueSec * 1000}`])), dueSec };
    }

    /** Profile requests per tag that reached the sim since its log was reset. */
    async function profileCalls(tags: string[]): Promise<Map<string, number>> {
      const log = (await c.sim.log('/v1/players/')).requests;
      const count = new Map(tags.map((t) => [t, 0]));
      const byPath = new Map(tags.map((t) => [`/v1/players/${encodeURIComponent(t)}`, t]));
      for (const r of log) {
        const tag = byPath.get(r.path);
        if (tag) count.set(tag, count.get(tag)! + 1);
      }
      return count;
    }

    const activeOf = (jobOf: Map<string, string>) => {
      const mine = new Set(jobOf.values());
      return () => events.active.filter((j) => mine.has(j));
    };

    // hang guards: a worker's next scan of the schedule is up to a minute away, a takeover ~40 s
    it('polls every tracked player once per interval — no miss, and a repeat only of what a SIGKILLed worker had under way', { timeout: 400_000 }, async () => {
      // Every player's poll is held at the sim, so both workers are mid-job when one dies.
      await c.sim.faults({ hang: true, match: '/players/' });
      await c.sim.resetLog();
      const { tags, jobOf } = await nextInterval();
      expect(tags.length).toBeGreaterThan(2 * MAX_ACTIVE_PER_WORKER);
      const active = activeOf(jobOf);
      await events.until(() => active().length >= 2 * MAX_ACTIVE_PER_WORKER);
      const underWay = new Set(active());
      await c.worker[0]!.kill();
      await c.sim.faults({ hang: false });
      // the killed worker's jobs are taken over (stalled-job check) and every poll completes
      await events.completedAll([...jobOf.values()]);

      const calls = await profileCalls(tags);
      const missed = tags.filter((t) => calls.get(t) === 0);
      const repeated = tags.filter((t) => calls.get(t)! > 1);
      expect(missed).toEqual([]);
      expect(tags.filter((t) => calls.get(t)! > 2)).toEqual([]);
      // only a poll the dead worker had started is asked twice: it never got its answer
      for (const t of repeated) expect(underWay.has(jobOf.get(t)!)).toBe(true);
      expect(repeated.length).toBeLessThanOrEqual(MAX_ACTIVE_PER_WORKER);
      await c.worker[0]!.restart();
    });

    it('loses no poll when every worker gets SIGTERM mid-run: restarted, they poll the rest, each once', { timeout: 400_000 }, async () => {
      await c.sim.faults({ hang: true, match: '/players/' });
      await c.sim.resetLog();
      const { tags, jobOf, dueSec } = await nextInterval();
      const active = activeOf(jobOf);
      await events.until(() => active().length >= 2 * MAX_ACTIVE_PER_WORKER);
      const from = c.worker.map((w) => w.lines.length);
      const stopped = c.worker.map((w) => w.stop('SIGTERM'));
      // Once both take no new job, the polls under way may finish: they do, before the exit.
      await Promise.all(c.worker.map((w, i) => w.waitForLine(/poll worker stopping/, { from: from[i]! })));
      await c.sim.faults({ hang: false });
      for (const exit of await Promise.all(stopped)) expect(exit).toEqual({ code: 0, signal: null });
      // exactly the polls under way were recorded; the rest wait in the queue
      const recorded = await c.sql<{ n: string }>('SELECT count(*) AS n FROM tracked WHERE kind = 0 AND last_poll >= $1', [dueSec]);
      expect(Number(recorded[0]!.n)).toBe(2 * MAX_ACTIVE_PER_WORKER);

      for (const w of c.worker) await w.restart();
      await events.completedAll([...jobOf.values()]);
      const calls = await profileCalls(tags);
      expect(tags.filter((t) => calls.get(t) !== 1).map((t) => [t, calls.get(t), events.active.filter((j) => j === jobOf.get(t)).length])).toEqual([]);
    });
  });
});
