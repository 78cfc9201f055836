/**
 * Gain boards end to end through the real discord.js client and the fake Discord, over the
 * simulated world moving in virtual time: a board of a club ranking trophies gained this week,
 * refreshed on schedule (each refresh reads the club, so history keeps being recorded), through the
 * week's boundary (Monday 00:00 UTC), where the week's results are posted exactly once — with two
 * bot processes ticking at once, and again after a restart; with DATABASE_URL and REDIS_URL also as
 * separate cores on PostgreSQL whose claims meet in Redis. The metrics' rows (unrecorded members
 * left out, win rates only from 20 battles) and the ISO week are checked on their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricRows } from '../src/bot/embeds/leaderboard.ts';
import { discordRest, RestChannels } from '../src/bot/discord-rest.ts';
import { createBotServices, type BotServices } from '../src/bot/services.ts';
import { backfill, clubsOf } from '../src/poller/backfill.ts';
import { weekWindow } from '../src/render/measures.ts';
import type { Club } from '../src/upstream/schemas.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { startWorld, worldBackends, type TestWorld } from './support/world.ts';
import type { OpenCore } from '../src/core/open.ts';

/** Thursday of ISO week 2026-W23; the week closes on Monday 8 June 00:00 UTC. */
const START = Date.UTC(2026, 5, 4, 12);
const HOUR = 3_600_000;
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
describe.each(worldBackends())('a weekly gain board on $name', ({ name, options }) => {
  let w: TestWorld;
  let h: BotHarness;
  let club = '';
  const cores: OpenCore[] = [];

  beforeAll(async () => {
    // Claims shared between processes need the cluster's Redis (REDIS_URL; the world's prefix keeps them apart).
    const env: Record<string, string> = options.redis && process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {};
    w = await startWorld({ startMs: START, players: 200, clubs: 10, ...options, env });
    for (let i = 0; !club; i++) club = clubsOf(w.sim.world, [w.sim.world.playerTag(i)], START)[0] ?? '';
    const members = (w.sim.world.club(club, START) as Club).members.map((m) => m.tag);
    await backfill({ world: w.sim.world, store: w.historyStore, days: 5, nowMs: START, playerTags: members.slice(0, 3), clubTags: [club], playerEveryMs: HOUR, clubEveryMs: HOUR, rotation: false });
    h = await startBotHarness(w.core, { now: w.now });
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    for (const c of cores) await c.close();
    await w?.close();
  });

  /**
   * Another bot process: its own settings cache; with Redis a core of its own too (its claims go
   * through the shared Redis); on SQLite alone, a second delivery loop on the same core.
   */
  async function anotherProcess(): Promise<BotServices> {
    let core = w.core;
    if (name !== 'sqlite') {
      const other = await w.another();
      cores.push(other);
      core = other.core;
    }
    const s = await createBotServices(core, { now: w.now });
    s.boards.setPoster(new RestChannels(discordRest(h.fake.apiUrl, h.fake.token), h.fake.bot.id));
    return s;
  }

  it('ranks trophies gained this week and posts the week’s results once when the week closes', async () => {
    const g = h.fake.addGuild({ name: 'Pushers', channels: [{ name: 'weekly' }] });
    const { deployCommands } = await import('../src/bot/deploy.ts');
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const ch = h.fake.channel(g, 'weekly');
    const made = h.fake.answer(await h.send(h.fake.commandInteraction(`/leaderboard create channel:${ch.id} club:${club} metric:weekGain interval:360`, { guild: g, permissions: ADMIN })));
    expect(made.embeds[0]!.title).toBe('Leaderboard created');
    const [board] = h.fake.channelMessages(ch);
    expect(board!.embeds[0]!.description).toMatch(/\*\*Trophies gained this week, since <t:1780272000:D>\*\*/);
    expect(board!.embeds[0]!.fields![0]!.name).toBe('Trophies gained this week');
    const listed = h.fake.answer(await h.send(h.fake.commandInteraction('/leaderboard list', { guild: g, permissions: ADMIN })));
    expect(listed.embeds[0]!.description).toContain(`${club} · Trophies gained this week`);

    // Thursday noon → Sunday 18:00: refreshed every 6 hours, no results yet.
    for (let i = 0; i < 13; i++) {
      w.clock.advance(6 * HOUR);
      await h.bot.services.boards.tick();
    }
    expect(new Date(w.now()).toISOString()).toBe('2026-06-07T18:00:00.000Z');
    expect(h.fake.channelMessages(ch)).toHaveLength(1);
    const lines = board!.embeds[0]!.description!.split('\n').filter((l) => l.includes('📈'));
    expect(lines.length).toBeGreaterThan(0);
    const gains = lines.map((l) => Number(/📈 ([+−-]?[\d,]+)/.exec(l)![1]!.replace(/,/g, '').replace('−', '-')));
    expect(gains).toEqual([...gains].sort((a, b) => b - a));

    // Monday 00:00 passes; two processes tick at once: one results post.
    w.clock.advance(6 * HOUR + 60_000);
    const second = await anotherProcess();
    await Promise.all([h.bot.services.boards.tick(), second.boards.tick()]);
    const posts = h.fake.channelMessages(ch);
    expect(posts).toHaveLength(2);
    const results = posts[1]!;
    expect(results.embeds[0]!.title).toContain('Week 2026-W23 results · ');
    expect(results.embeds[0]!.description).toContain('The week from <t:1780272000:D> to <t:1780876799:D> is over. Final ranking: Trophies gained this week.');
    expect(results.components).toEqual([]);

    // The ranking is the core's answer for the closed week, top three with medals.
    const week = weekWindow(START);
    const closed = (await w.core.history.clubActivity(club, { sinceMs: week.start, untilMs: week.end })).data.members.filter((m) => m.gained !== null);
    closed.sort((a, b) => b.gained! - a.gained! || b.trophies - a.trophies || (a.tag < b.tag ? -1 : 1));
    const top = results.embeds[0]!.description!.split('\n').filter((l) => l.includes('📈'));
    expect(top).toHaveLength(Math.min(10, closed.length));
    expect(top[0]).toMatch(/^🥇 /);
    top.forEach((l, i) => expect(l, closed[i]!.tag).toContain(`📈 ${closed[i]!.gained! > 0 ? '+' : ''}${closed[i]!.gained!.toLocaleString('en-US')}`));

    // Recorded durably on the board; later ticks, a restarted process after the claim ran out: nothing more.
    const [saved] = (await h.bot.services.boards.list(g.id)).filter((b) => b.metric === 'weekGain');
    expect(await w.stores.namespace('guilds').get(`week:${g.id}:${saved!.id}`)).toBe('2026-W23');
    w.clock.advance(HOUR);
    await Promise.all([h.bot.services.boards.tick(), second.boards.tick()]);
    const restarted = await anotherProcess();
    await restarted.boards.tick();
    expect(h.fake.channelMessages(ch)).toHaveLength(2);
    // The board itself goes on with the new week.
    expect(board!.embeds[0]!.description).toMatch(/since <t:1780876800:D>/);
    for (const b of await h.bot.services.boards.list(g.id)) await h.bot.services.boards.remove(g.id, b.id);
  });
});

describe('board metrics', () => {
  const g = (tag: string, gained: number | null, battles: number | null, wins: number | null) => ({ tag, name: tag, trophies: 1000, gained, battles, wins });

  it('leaves out members not recorded, and win rates under 20 battles', () => {
    const gains = [g('#A', 120, 30, 18), g('#B', null, null, null), g('#C', -40, 19, 19), g('#D', 0, 20, 5)];
    expect(metricRows('weekGain', gains)).toMatchObject({ rows: [{ tag: '#A', value: 120 }, { tag: '#C', value: -40 }, { tag: '#D', value: 0 }], unrecorded: 1, tooFew: 0 });
    expect(metricRows('weekBattles', gains)).toMatchObject({ rows: [{ tag: '#A', value: 30 }, { tag: '#C', value: 19 }, { tag: '#D', value: 20 }], unrecorded: 1 });
    expect(metricRows('weekWinRate', gains)).toMatchObject({ rows: [{ tag: '#A', value: 0.6, battles: 30 }, { tag: '#D', value: 0.25, battles: 20 }], unrecorded: 1, tooFew: 1 });
  });

  it('names ISO weeks by the year of their Thursday', () => {
    expect(weekWindow(START)).toEqual({ start: Date.UTC(2026, 5, 1), end: Date.UTC(2026, 5, 8), id: '2026-W23' });
    expect(weekWindow(Date.UTC(2027, 0, 3, 23)).id).toBe('2026-W53');
    expect(weekWindow(Date.UTC(2026, 0, 1)).id).toBe('2026-W01');
    expect(weekWindow(Date.UTC(2026, 0, 1)).start).toBe(Date.UTC(2025, 11, 29));
  });
});
