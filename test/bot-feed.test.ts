/**
 * Club feeds end to end: the real discord.js client and the fake Discord, over the simulated
 * world moving in virtual time with the poller recording it. Members join and leave, roles and
 * settings change; each recorded change is posted once, batched per poll, across a lost response,
 * a restart, two delivering processes, and a channel that breaks and comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { APIEmbed } from 'discord-api-types/v10';
import { startWorld, type TestWorld } from './support/world.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import type { FakeGuild, StoredMessage } from './support/fake-discord.ts';
import { createBot, type Bot } from '../src/bot/index.ts';
import { discordRest, RestChannels } from '../src/bot/discord-rest.ts';
import { deployCommands } from '../src/bot/deploy.ts';
import { feedNonce } from '../src/bot/feeds.ts';
import { feedMessages } from '../src/bot/embeds/feed.ts';
import { format } from '../src/bot/format.ts';
import { checkMessage } from '../src/bot/limits.ts';
import type { ClubChange } from '../src/core/history.ts';
import type { ChannelPoster } from '../src/bot/leaderboards.ts';
import type { Core } from '../src/core/index.ts';
import type { Config } from '../src/config.ts';
import { Poller } from '../src/poller/index.ts';
import type { World } from '../src/sim/world.ts';
import type { ClubLogEvent } from '../src/core/history-schemas.ts';
import { RUN_REDIS } from './support/stores.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const POLL = 6 * HOUR;
/** Club types change at 60-day periods in the sim: start three days before one. */
const BOUNDARY = Math.ceil(Date.UTC(2026, 5, 1) / (60 * DAY)) * 60 * DAY;
const START = BOUNDARY - 3 * DAY;
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;

interface Club {
  members: { tag: string; role: string }[];
  type: string;
}

/** Days the main test covers: the sim's clubs change members slowly (a few joins and leaves in two weeks). */
const SPAN = 16 * DAY;

/** A club whose members join, leave and change roles, and whose type changes, over SPAN. */
function busiestClub(world: World): string {
  let best = '';
  let most = -1;
  for (let c = 0; c < 30; c++) {
    const tag = world.clubTag(c);
    const at = (t: number) => world.club(tag, t) as unknown as Club;
    if (at(START).type === at(START + SPAN).type) continue;
    let joins = 0;
    let leaves = 0;
    let roles = 0;
    for (let t = START; t + POLL <= START + SPAN; t += POLL) {
      const a = new Map(at(t).members.map((m) => [m.tag, m.role]));
      const b = new Map(at(t + POLL).members.map((m) => [m.tag, m.role]));
      for (const [m, r] of b) {
        if (!a.has(m)) joins++;
        else if (a.get(m) !== r) roles++;
      }
      for (const m of a.keys()) if (!b.has(m)) leaves++;
    }
    if (joins > 0 && leaves > 0 && joins + leaves + roles > most) [most, best] = [joins + leaves + roles, tag];
  }
  if (!best) throw new Error('no club of the sim has every kind of change over the period');
  return best;
}

interface ClubMembers {
  members: { tag: string; trophies: number }[];
}

/**
 * The big pushes a feed of threshold `n` should post, from the world's truth at the poll times:
 * at each poll, members at least `n` trophies above the poll at the start of that UTC day, the
 * first poll of the day they get there. As `${poll time in s} ${member tag}`.
 */
function truePushes(world: World, tag: string, fromMs: number, toMs: number, n: number): string[] {
  const out: string[] = [];
  const trophies = (t: number) => new Map((world.club(tag, t) as unknown as ClubMembers).members.map((m) => [m.tag, m.trophies]));
  let day = -1;
  let base = new Map<string, number>();
  let best = new Map<string, number>();
  for (let t = fromMs + POLL; t <= toMs; t += POLL) {
    if (Math.floor(t / DAY) !== day) {
      day = Math.floor(t / DAY);
      base = trophies(day * DAY);
      best = new Map();
    }
    for (const [m, now] of trophies(t)) {
      const from = base.get(m);
      if (from === undefined) continue;
      const before = best.get(m) ?? 0;
      if (now - from > before) best.set(m, now - from);
      if (now - from >= n && before < n) out.push(`${t / 1000} ${m}`);
    }
  }
  return out.sort();
}

/** What a posted embed says about the change it shows: its poll time and its text. */
const key = (e: APIEmbed) => `${e.timestamp} ${e.description}`;

function embedsIn(messages: StoredMessage[]): APIEmbed[] {
  return messages.flatMap((m) => m.embeds);
}

/** Each recorded change has exactly one embed at its poll time naming it (member tag or the setting). */
function expectEachOnce(embeds: APIEmbed[], recorded: ClubLogEvent[]): void {
  expect(new Set(embeds.map(key)).size).toBe(embeds.length);
  expect(embeds).toHaveLength(recorded.length);
  for (const e of recorded) {
    const at = new Date(e.timestamp * 1000).toISOString();
    const name = e.type === 'settings' ? ({ type: 'Type', requiredTrophies: 'Required trophies', description: 'Description' } as Record<string, string>)[e.field!] ?? e.field! : e.player!.tag;
    expect(embeds.filter((x) => x.timestamp === at && x.description!.includes(name)).length, `${e.type} ${name} at ${at}`).toBeGreaterThanOrEqual(1);
  }
}

let w: TestWorld;
let h: BotHarness;
let poller: Poller;
let club: string;

beforeAll(async () => {
  w = await startWorld({ startMs: START, env: { RANKING_COUNTRIES: '', POLL_CLUB_MINUTES: String(POLL / 60_000) } });
  h = await startBotHarness(w.core, { now: w.now, config: { STARR_SECRET: 'test-secret-of-the-bot' } });
  poller = new Poller({ stats: w.stats, history: w.history, config: w.config, clock: { now: w.now, sleep: async () => {} }, pinTopPlayers: 0 });
  club = busiestClub(w.sim.world);
});

afterAll(async () => {
  await poller?.stop();
  await h?.close();
  await w?.close();
});

const slash = (text: string, o: Parameters<BotHarness['fake']['commandInteraction']>[1] = {}) =>
  h.send(h.fake.commandInteraction(text, { guild: h.guild, ...o }));
const admin = (text: string, guild: FakeGuild = h.guild) => slash(text, { guild, permissions: ADMIN });

async function newGuild(name: string, channels: string[]): Promise<FakeGuild> {
  const g = h.fake.addGuild({ name, channels: channels.map((c) => ({ name: c })) });
  await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
  return g;
}

/** Polls on the virtual clock up to `untilMs`, one club poll every six hours, and commits what was recorded. */
async function pollUntil(untilMs: number, each?: () => Promise<unknown>): Promise<void> {
  for (let at = Math.floor(w.now() / POLL) * POLL + POLL; at <= untilMs; at += POLL) {
    w.clock.set(at);
    await poller.runOnce();
    await w.history.flush();
    await each?.();
  }
}

/** The club's recorded changes after a time (unix seconds), oldest first. */
async function recordedSince(tag: string, afterS: number): Promise<ClubLogEvent[]> {
  return (await w.history.clubLog(tag, 10_000)).data.items.filter((e) => e.timestamp > afterS).reverse();
}

describe('/feed', () => {
  it('is for admins: refused without Manage Server, with unknown clubs, and where the bot cannot post', async () => {
    const refused = h.fake.answer(await slash(`/feed list`, { bypassCommandPermissions: true }));
    expect(refused.embeds[0]!.title).toBe('Manage Server needed');
    const feedCh = h.fake.channel(h.guild, 'general');
    const unknown = h.fake.answer(await admin(`/feed create channel:${feedCh.id} club:#QQQQQQQQ`));
    expect(unknown.embeds[0]!.title).not.toBe('Club feed created');

    const g = h.fake.addGuild({ name: 'Strict', channels: [{ name: 'locked', denyBot: PermissionFlagsBits.EmbedLinks }] });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const m = h.fake.answer(await admin(`/feed create channel:${h.fake.channel(g, 'locked').id} club:${club}`, g));
    expect(m.embeds[0]!.title).toBe('Missing permissions in that channel');
    expect(m.embeds[0]!.description).toContain('**Embed Links**');
    expect(await h.bot.services.feeds.list(g.id)).toEqual([]);
  });

  it('posts each change the poller records once, one message per poll, within Discord’s limits', async () => {
    const g = await newGuild('Club HQ', ['feed', 'joins', 'pushes']);
    const ch = h.fake.channel(g, 'feed');
    const joins = h.fake.channel(g, 'joins');
    const pushes = h.fake.channel(g, 'pushes');
    const made = h.fake.answer(await admin(`/feed create channel:${ch.id} club:${club}`, g));
    expect(made.embeds[0]!.title).toBe('Club feed created');
    expect(made.embeds[0]!.description).toContain(`<#${ch.id}>`);
    // a second feed of the same club for joins and leaves only
    expect(h.fake.answer(await admin(`/feed create channel:${joins.id} club:${club} events:members`, g)).embeds[0]!.description).toContain('(Joins and leaves)');
    // and a third for settings and big pushes: the largest threshold some member reaches in the span
    const threshold = [1000, 600, 400, 300, 200, 150, 100].find((n) => truePushes(w.sim.world, club, START, START + SPAN, n).length > 0)!;
    const expectedPushes = truePushes(w.sim.world, club, START, START + SPAN, threshold);
    expect(h.fake.answer(await admin(`/feed create channel:${pushes.id} club:${club} events:settings push:${threshold}`, g)).embeds[0]!.description).toContain(
      `(Club settings + pushes of ${threshold}+ trophies)`,
    );
    const createdS = Math.floor(w.now() / 1000);
    // the same club in the same channel once
    expect(h.fake.answer(await admin(`/feed create channel:${ch.id} club:${club}`, g)).embeds[0]!.title).toBe('Already posted there');
    // nothing recorded yet, nothing posted
    expect((await h.bot.services.feeds.tick()).messages).toBe(0);

    // Delivery after every poll for most of the span: one message per poll with changes.
    await pollUntil(START + SPAN - 3 * DAY, () => h.bot.services.feeds.tick());
    const first = h.fake.channelMessages(ch);
    for (const m of first) {
      expect(m.embeds.length).toBeLessThanOrEqual(10);
      expect(new Set(m.embeds.map((e) => e.timestamp)).size).toBe(1);
    }
    expect(new Set(first.map((m) => m.embeds[0]!.timestamp)).size).toBe(first.length);

    // Then three days at once (the bot was busy): all of it in the next run, still a message per poll.
    await pollUntil(START + SPAN);
    const report = await h.bot.services.feeds.tick();
    expect(report.failed).toBe(0);
    const all = h.fake.channelMessages(ch);
    const recorded = await recordedSince(club, createdS);
    const members = recorded.filter((e) => e.type === 'join' || e.type === 'leave');
    expect(report.messages).toBe(all.length - first.length + new Set(members.filter((e) => e.timestamp * 1000 > START + SPAN - 3 * DAY).map((e) => e.timestamp)).size);
    expectEachOnce(embedsIn(all), recorded);
    expectEachOnce(embedsIn(h.fake.channelMessages(joins)), members);
    const pushed = embedsIn(h.fake.channelMessages(pushes));
    const pushEmbeds = pushed.filter((e) => e.description!.startsWith('🚀 '));
    expect(pushEmbeds.map((e) => `${Date.parse(e.timestamp!) / 1000} ${/#[0-9A-Z]+/.exec(e.description!)![0]}`).sort()).toEqual(expectedPushes);
    for (const e of pushEmbeds) expect(e.description).toMatch(new RegExp(`pushed \\+[\\d,]+ trophies today \\([\\d,]+ → [\\d,]+\\)$`));
    expect(pushed.length - pushEmbeds.length).toBe(recorded.filter((e) => e.type === 'settings').length);
    // every kind happened, and reads as it should
    const kinds = new Set(recorded.map((e) => e.type));
    expect([...kinds].sort()).toEqual(['join', 'leave', 'role', 'settings']);
    const text = embedsIn(all).map((e) => e.description!);
    expect(text.some((t) => /^🔴 .* left\nIn the club for (at least )?\d+ days?/.test(t) && /trophies when leaving$/.test(t))).toBe(true);
    expect(text.some((t) => /^🟢 \*\*.+\*\* #[0-9A-Z]+ joined$/.test(t))).toBe(true);
    expect(text.some((t) => /was (promoted|demoted): /.test(t))).toBe(true);
    expect(text.some((t) => /^⚙️ Type: (Open|Invite only|Closed) → (Open|Invite only|Closed)$/.test(t))).toBe(true);
    expect(embedsIn(all).every((e) => e.footer!.text.endsWith(club))).toBe(true);

    // Nothing new: nothing posted, and no duplicate was even attempted.
    expect((await h.bot.services.feeds.tick()).messages).toBe(0);
    expect(h.fake.nonceHits).toBe(0);
    expect(h.fake.rejections).toEqual([]);

    const list = h.fake.answer(await admin('/feed list', g));
    expect(list.embeds[0]!.description).toContain(club);
    expect(list.embeds[0]!.description).toContain('last post');

    // Removing it stops the posts and unpins the club.
    const [main, other, third] = await h.bot.services.feeds.list(g.id);
    await h.bot.services.feeds.remove(g.id, third!.id);
    expect(h.fake.answer(await admin(`/feed remove feed:${main!.id}`, g)).embeds[0]!.title).toBe('Club feed removed');
    expect(h.fake.answer(await admin(`/feed remove feed:${main!.id}`, g)).embeds[0]!.title).toBe('No such feed');
    expect((await h.bot.services.feeds.list(g.id)).map((f) => f.id)).toEqual([other!.id]);
    await admin(`/feed remove feed:${other!.id}`, g);
    expect(await h.bot.services.feeds.list(g.id)).toEqual([]);
    expect(await h.bot.services.feeds.tick()).toMatchObject({ feeds: 0, messages: 0 });
  });

  it('keeps a limit per server', async () => {
    const g = await newGuild('Recruiters', ['a', 'b', 'c', 'd']);
    for (const c of ['a', 'b', 'c']) h.fake.answer(await admin(`/feed create channel:${h.fake.channel(g, c).id} club:${club}`, g));
    const full = h.fake.answer(await admin(`/feed create channel:${h.fake.channel(g, 'd').id} club:${club}`, g));
    expect(full.embeds[0]!.title).toBe('No room for another feed');
    expect(full.embeds[0]!.description).toContain('3 club feeds');
    expect(h.fake.answer(await admin('/feed list', g)).embeds[0]!.footer!.text).toBe('3 of 3 feeds (more with an API key)');
    for (const f of await h.bot.services.feeds.list(g.id)) await h.bot.services.feeds.remove(g.id, f.id);
  });
});

/**
 * A bot process of its own on a core of this installation: no gateway, channel posts over REST
 * with the bot token, delivering the feeds of the servers `owns` accepts.
 */
async function deliveringBot(core: Core, o: { owns?: (guildId: string) => boolean; wrap?: (p: ChannelPoster) => ChannelPoster } = {}): Promise<Bot> {
  const config = { ...core.config, DISCORD_TOKEN: h.fake.token, DISCORD_API_URL: h.fake.apiUrl } as Config;
  const bot = await createBot({ ...core, config }, { now: w.now, gateway: false, deliver: false, commands: h.bot.services.commands });
  const rest = new RestChannels(discordRest(h.fake.apiUrl, h.fake.token), h.fake.appId, o.owns ? { owns: o.owns } : {});
  bot.services.feeds.setPoster(o.wrap ? o.wrap(rest) : rest);
  return bot;
}

describe('delivery', () => {
  it('survives a lost answer and a restart: the retry carries the same nonce and Discord returns the first message', async () => {
    const g = await newGuild('Restarts', ['feed']);
    const ch = h.fake.channel(g, 'feed');
    const created = Math.floor(w.now() / 1000);
    h.fake.answer(await admin(`/feed create channel:${ch.id} club:${club}`, g));
    // The harness's bot delivers nothing here: this server's feed is delivered by the processes below.
    const feedId = (await h.bot.services.feeds.list(g.id))[0]!.id;

    // Discord creates the message, then the process dies before it hears back (or saves its cursor).
    let lost = 0;
    const dying = await deliveringBot(w.core, {
      wrap: (p) => ({
        botPermissions: (gid, cid) => p.botPermissions(gid, cid),
        edit: (c, m, msg) => p.edit(c, m, msg),
        delete: (c, m) => p.delete(c, m),
        owns: (gid) => gid === g.id,
        async post(c, msg, o) {
          await p.post(c, msg, o);
          lost++;
          throw new Error('socket hang up');
        },
      }),
    });
    await pollUntil(w.now() + 4 * DAY);
    expect((await dying.services.feeds.tick()).failed).toBe(1);
    expect(lost).toBe(1);
    const posted = h.fake.channelMessages(ch);
    expect(posted).toHaveLength(1);
    await dying.close();

    // The process starts again over the same durable store (nothing of the dead one's memory); the
    // feed is due again after its backoff.
    const restarted = await w.another();
    const again = await deliveringBot(restarted.core, { owns: (gid) => gid === g.id });
    w.clock.advance(2 * 60_000);
    const hitsBefore = h.fake.nonceHits;
    const r = await again.services.feeds.tick();
    expect(r.failed).toBe(0);
    expect(h.fake.nonceHits).toBe(hitsBefore + 1);
    const recorded = await recordedSince(club, created);
    expectEachOnce(embedsIn(h.fake.channelMessages(ch)), recorded);
    expect(h.fake.channelMessages(ch)[0]!.id).toBe(posted[0]!.id);
    expect((await again.services.feeds.list(g.id)).find((f) => f.id === feedId)!.problem).toBeUndefined();
    for (const f of await again.services.feeds.list(g.id)) await again.services.feeds.remove(g.id, f.id);
    await again.close();
    await restarted.close();
  });

  it('marks a deleted channel, and a channel it may no longer post in until it may again, without losing a change', async () => {
    const g = await newGuild('Fragile', ['gone', 'feed']);
    const bot = await deliveringBot(w.core, { owns: (id) => id === g.id });
    try {
      const gone = h.fake.channel(g, 'gone');
      const ch = h.fake.channel(g, 'feed');
      const created = Math.floor(w.now() / 1000);
      h.fake.answer(await admin(`/feed create channel:${gone.id} club:${club}`, g));
      h.fake.answer(await admin(`/feed create channel:${ch.id} club:${club}`, g));
      h.fake.deleteChannel(g, gone);
      h.fake.setBotDeny(g, ch, PermissionFlagsBits.SendMessages);

      await pollUntil(w.now() + 4 * DAY);
      const r = await bot.services.feeds.tick();
      expect(r.failed).toBe(2);
      const list = h.fake.answer(await admin('/feed list', g)).embeds[0]!.description!;
      // What is wrong, what the admin can do about it, and when it is tried again.
      const retryAt = `<t:${Math.floor((w.now() + 60_000) / 1000)}:R>`;
      expect(list).toContain(`⚠️ The channel was deleted. Remove it with \`/feed remove\` and create it again in another channel. Next try ${retryAt}.`);
      expect(list).toContain(`⚠️ The bot is missing Send Messages in <#${ch.id}>. Once the bot may post there again, it posts what it missed. Next check ${retryAt}.`);

      // Not tried again before its backoff; then again (the channel checked first: no post is
      // attempted while it is still broken), and again later after each failure.
      expect((await bot.services.feeds.tick()).feeds).toBe(0);
      w.clock.advance(61_000);
      const posts = () => h.fake.requests.filter((q) => q.method === 'POST' && (q.route === `/channels/${ch.id}/messages` || q.route === `/channels/${gone.id}/messages`)).length;
      const postsBefore = posts();
      expect((await bot.services.feeds.tick()).failed).toBe(2);
      expect(posts()).toBe(postsBefore);
      w.clock.advance(61_000);
      expect((await bot.services.feeds.tick()).feeds).toBe(0);

      // An admin gives the permission back: what was missed is posted, once.
      h.fake.setBotDeny(g, ch, 0n);
      w.clock.advance(2 * 60_000);
      const back = await bot.services.feeds.tick();
      expect(back.messages).toBeGreaterThan(0);
      expectEachOnce(embedsIn(h.fake.channelMessages(ch)), await recordedSince(club, created));
      const after = h.fake.answer(await admin('/feed list', g)).embeds[0]!.description!;
      expect(after).toContain('✅ last post');
      expect(after).toContain('⚠️ The channel was deleted.');
      for (const f of await bot.services.feeds.list(g.id)) await bot.services.feeds.remove(g.id, f.id);
    } finally {
      await bot.close();
    }
  });
});

// Two processes need shared leases: a Redis. CI sets REDIS_URL (and DATABASE_URL for the durable store).
describe.runIf(RUN_REDIS)('two delivering processes on one durable store and Redis', () => {
  it('post each change once', async () => {
    const cw = await startWorld({
      startMs: START,
      redis: true,
      postgres: Boolean(process.env.DATABASE_URL),
      env: { RANKING_COUNTRIES: '', POLL_CLUB_MINUTES: String(POLL / 60_000), REDIS_URL: process.env.REDIS_URL! },
    });
    const second = await cw.another();
    const cp = new Poller({ stats: cw.stats, history: cw.history, config: cw.config, clock: { now: cw.now, sleep: async () => {} }, pinTopPlayers: 0 });
    const make = async (core: Core) => {
      const config = { ...core.config, DISCORD_TOKEN: h.fake.token, DISCORD_API_URL: h.fake.apiUrl } as Config;
      const bot = await createBot({ ...core, config }, { now: cw.now, gateway: false, deliver: false, commands: h.bot.services.commands });
      bot.services.feeds.setPoster(new RestChannels(discordRest(h.fake.apiUrl, h.fake.token), h.fake.appId));
      return bot;
    };
    const a = await make(cw.core);
    const b = await make(second.core);
    try {
      expect(cw.core.coordination.kind).toBe('redis');
      const g = await newGuild('Cluster', ['feed']);
      const ch = h.fake.channel(g, 'feed');
      await cw.stats.club(club);
      await a.services.feeds.create(g.id, { channelId: ch.id, club: { tag: club, name: 'Cluster club' }, events: ['join', 'leave', 'role', 'settings'], createdBy: '1', locale: 'en-US' }, { keyed: false, premium: false });
      const created = Math.floor(cw.now() / 1000);
      const hits = h.fake.nonceHits;
      for (let at = START + POLL; at <= START + SPAN; at += POLL) {
        cw.clock.set(at);
        await cp.runOnce();
        await cw.history.flush();
        const [ra, rb] = await Promise.all([a.services.feeds.tick(), b.services.feeds.tick()]);
        expect(ra.failed + rb.failed).toBe(0);
      }
      const recorded = (await cw.history.clubLog(club, 10_000)).data.items.filter((e) => e.timestamp > created).reverse();
      expect(recorded.length).toBeGreaterThan(5);
      expectEachOnce(embedsIn(h.fake.channelMessages(ch)), recorded);
      // The lease kept the processes from posting the same change: Discord never had to drop one.
      expect(h.fake.nonceHits).toBe(hits);
    } finally {
      await a.close();
      await b.close();
      await cp.stop();
      await second.close();
      await cw.close();
    }
  });
});

describe('feedNonce', () => {
  it('fits Discord’s 25 characters and differs per feed and per first change', () => {
    const c = { t: 1_780_000_000, kind: 'join' as const, subject: '#2PP' };
    const n = feedNonce('a1b2c3d4', c);
    expect(n.length).toBeLessThanOrEqual(25);
    expect(feedNonce('a1b2c3d4', c)).toBe(n);
    expect(feedNonce('a1b2c3d5', c)).not.toBe(n);
    expect(feedNonce('a1b2c3d4', { ...c, subject: '#2PQ' })).not.toBe(n);
  });
});

describe('feedMessages', () => {
  const club = { name: 'Feed Club', tag: '#8QJR2YUC' };
  const fmt = format('en-US');
  const join = (t: number, i: number): ClubChange => ({ t, kind: 'join', subject: `#P${i}`, name: `Player ${i}`, old: null, new: `Player ${i}` });

  it('cuts one poll into messages of at most 10 embeds, and never mixes polls', () => {
    const changes = [...Array.from({ length: 23 }, (_, i) => join(1000, i)), join(2000, 99)];
    const msgs = feedMessages(changes, club, fmt);
    expect(msgs.map((m) => m.embeds.length)).toEqual([10, 10, 3, 1]);
    expect(msgs.flatMap((m) => m.changes)).toEqual(changes);
    for (const m of msgs) expect(new Set(m.changes.map((c) => c.t)).size).toBe(1);
  });

  it('keeps each message under 6,000 characters when the changes are long', () => {
    const long = (i: number): ClubChange => ({ t: 1000, kind: 'settings', subject: `field${i}`, name: '', old: 'x'.repeat(700), new: 'y'.repeat(700) });
    const msgs = feedMessages(Array.from({ length: 10 }, (_, i) => long(i)), club, fmt);
    expect(msgs.length).toBeGreaterThan(2);
    for (const m of msgs) expect(checkMessage({ embeds: m.embeds })).toEqual([]);
    expect(msgs.reduce((n, m) => n + m.changes.length, 0)).toBe(10);
  });
});
