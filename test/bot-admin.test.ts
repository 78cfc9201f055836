/**
 * Server administration end to end over the gateway: /settings (Manage Server, checked by the
 * bot too; API keys sealed, premium unlocked), /leaderboard (boards posted, edited in place on
 * the schedule, a failing server never stopping the others, the admin told what is missing), and
 * buttons that keep working after the bot restarts. Runs on SQLite, and on PostgreSQL with the
 * cache on Redis when they are configured (always in CI: worldBackends).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { startWorld, worldBackends, type TestWorld, type WorldBackend } from './support/world.ts';
import { startBotHarness, whenClient, type BotHarness } from './support/fake-discord-bot.ts';
import type { FakeGuild, StoredMessage } from './support/fake-discord.ts';
import { createBot } from '../src/bot/index.ts';
import { discordRest } from '../src/bot/discord-rest.ts';
import { deployCommands } from '../src/bot/deploy.ts';
import { createHttpServer } from '../src/http/server.ts';
import { serve } from './support/http.ts';
import { IDENTIFY_TURN_MS } from '../src/bot/identify.ts';

const START = Date.UTC(2026, 5, 1, 12);
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
// The whole suite once per backend (its body is not indented, to keep this wrapper out of every diff).
describe.each(worldBackends())('server administration on $name', (backend: WorldBackend) => {
let w: TestWorld;
let h: BotHarness;

beforeAll(async () => {
  w = await startWorld({ startMs: START, ...backend.options });
  h = await startBotHarness(w.core, { now: w.now, config: { STARR_SECRET: 'test-secret-of-the-bot' } });
});

afterAll(async () => {
  await h?.close();
  await w?.close();
});

const slash = (text: string, o: Parameters<BotHarness['fake']['commandInteraction']>[1] = {}) =>
  h.send(h.fake.commandInteraction(text, { guild: h.guild, ...o }));
const admin = (text: string, guild: FakeGuild = h.guild) => slash(text, { guild, permissions: ADMIN });

function customIds(m: StoredMessage): string[] {
  return m.components.flatMap((r) => ('components' in r ? (r.components as { custom_id?: string }[]) : [])).map((c) => c.custom_id ?? '');
}

async function newKey(email: string): Promise<string> {
  return (await w.keys.issue({ email, password: 'a long password', ip: '127.0.0.1' })).key;
}

describe('/settings', () => {
  it('is refused by the bot to members without Manage Server, even when Discord lets them run it', async () => {
    const m = h.fake.answer(await slash('/settings apikey status', { bypassCommandPermissions: true }));
    expect(m.ephemeral).toBe(true);
    expect(m.embeds[0]!.title).toBe('Manage Server needed');
  });

  it('checks the key, stores it sealed, never shows it, and unlocks premium views', async () => {
    const key = await newKey('owner@example.com');
    const locked = h.fake.answer(await slash(`/player tag:${w.sim.world.playerTag(3)} view:log`));
    expect(locked.embeds[0]!.title).toBe('Premium view');
    expect(locked.embeds[0]!.description).toContain('this server has no API key registered');

    const wrong = h.fake.answer(await admin('/settings apikey set key:starr_notARealKeyAtAllxxxxxxxxxxxxxxxxxxxxxxxxxx'));
    expect(wrong.embeds[0]!.title).toBe('That key is not valid');

    const set = h.fake.answer(await admin(`/settings apikey set key:${key}`));
    expect(set.ephemeral).toBe(true);
    expect(set.embeds[0]!.title).toBe('API key registered');
    expect(JSON.stringify(set.json())).not.toContain(key);
    const stored = JSON.stringify(await w.stores.namespace('guilds').get(`guild:${h.guild.id}`));
    expect(stored).not.toContain(key);

    const status = h.fake.answer(await admin('/settings apikey status'));
    expect(status.embeds[0]!.fields![0]!.value).toContain('Plan **developer**: premium views are unlocked');
    expect(JSON.stringify(status.json())).not.toContain(key);

    const unlocked = h.fake.answer(await slash(`/player tag:${w.sim.world.playerTag(3)} view:log`));
    expect(unlocked.ephemeral).toBe(false);
    expect(unlocked.embeds[0]!.title).toBe(`${w.sim.world.player(w.sim.world.playerTag(3), w.now())!.name} ${w.sim.world.playerTag(3)} · log`.replace(/[[\]*_]/g, (c) => `\\${c}`));
    expect(unlocked.embeds[0]!.description).toMatch(/^Recorded since <t:\d+:D>\./);

    const removed = h.fake.answer(await admin('/settings apikey remove'));
    expect(removed.embeds[0]!.title).toBe('API key removed');
    expect(h.fake.answer(await slash(`/player tag:${w.sim.world.playerTag(3)} view:log`)).embeds[0]!.title).toBe('Premium view');
  });

  it('issues a key in Discord: to the admin who ran it, for the server, shown once, and it works on the HTTP API', async () => {
    const g = h.fake.addGuild({ name: 'Key makers' });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const tag = w.sim.world.playerTag(4);

    const refused = h.fake.answer(await slash(`/player tag:${tag} view:log`, { guild: g }));
    expect(refused.embeds[0]!.title).toBe('Premium view');
    expect(refused.embeds[0]!.description).toContain('`/settings apikey create`');
    expect(refused.embeds[0]!.description).not.toMatch(/generate-api-keys|README/);

    const adminUser = h.fake.addUser('keymaker');
    const created = h.fake.answer(await slash('/settings apikey create', { guild: g, permissions: ADMIN, user: adminUser }));
    expect(created.ephemeral).toBe(true);
    expect(created.embeds[0]!.title).toBe('API key created');
    const key = /```\n(starr_[A-Za-z0-9_-]{43})\n```/.exec(created.embeds[0]!.description ?? '')?.[1];
    expect(key).toBeDefined();
    expect(created.embeds[0]!.description).toContain('only time the key is shown');

    // owned by the admin's Discord account, in the same store as POST /generate-api-keys
    const info = await w.keys.verify(key!);
    expect(info).toMatchObject({ owner: { kind: 'discord', userId: adminUser.id }, plan: { name: 'developer', premium: true } });
    const stored = await w.stores.namespace('guilds').get(`guild:${g.id}`);
    expect(JSON.stringify(stored)).not.toContain(key!);
    expect(stored).toMatchObject({ key: { keyId: info!.keyId, setBy: adminUser.id } });

    const status = h.fake.answer(await slash('/settings apikey status', { guild: g, permissions: ADMIN }));
    expect(status.embeds[0]!.fields![0]!.value).toContain(`Registered by <@${adminUser.id}>`);
    expect(JSON.stringify(status.json())).not.toContain(key!);
    expect(h.fake.answer(await slash(`/player tag:${tag} view:log`, { guild: g })).embeds[0]!.title).not.toBe('Premium view');

    const http = await serve(createHttpServer(w.core, { now: w.now }));
    try {
      expect((await http.get(`/players/${tag.slice(1)}/log`)).status).toBe(422);
      const r = await http.get(`/players/${tag.slice(1)}/log?api_key=${key}`);
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-limit']).toBe(String(w.config.RATE_LIMIT_KEY));
    } finally {
      await http.close();
    }

    // A working key is not replaced by accident; replace:True issues another to the same account.
    const again = h.fake.answer(await slash('/settings apikey create', { guild: g, permissions: ADMIN, user: adminUser }));
    expect(again.embeds[0]!.title).toBe('This server already has a key');
    expect(JSON.stringify(again.json())).not.toMatch(/starr_[A-Za-z0-9_-]{43}/);
    expect((await w.stores.namespace('guilds').get(`guild:${g.id}`)) as unknown).toMatchObject({ key: { keyId: info!.keyId } });

    const replaced = h.fake.answer(await slash('/settings apikey create replace:True', { guild: g, permissions: ADMIN, user: adminUser }));
    expect(replaced.embeds[0]!.title).toBe('API key created');
    const second = /```\n(starr_[A-Za-z0-9_-]{43})\n```/.exec(replaced.embeds[0]!.description ?? '')![1]!;
    expect(second).not.toBe(key);
    expect(await w.keys.verify(second)).toMatchObject({ owner: { kind: 'discord', userId: adminUser.id } });
    expect(await w.keys.verify(key!)).not.toBeNull();
    expect((await w.stores.namespace('guilds').get(`guild:${g.id}`)) as unknown).toMatchObject({ key: { keyId: (await w.keys.verify(second))!.keyId } });
  });

  it('saves the default ranking country', async () => {
    const g = h.fake.addGuild({ name: 'Germany fans' });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const saved = h.fake.answer(await admin('/settings defaults country:de', g));
    expect(saved.embeds[0]!.title).toBe('Defaults saved');
    const ranking = h.fake.answer(await slash('/ranking type:players', { guild: g }));
    expect(ranking.embeds[0]!.title).toBe('Top players · Germany (DE)');
  });
});

describe('languages of public posts', () => {
  it("posts boards in the server's language; each member reads private replies in their own", async () => {
    const g = h.fake.addGuild({ name: 'Brasil', channels: [{ name: 'placar' }] });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const ch = h.fake.channel(g, 'placar');
    const inServer = (text: string, locale: string) => slash(text, { guild: g, permissions: ADMIN, locale, guildLocale: 'pt-BR' });

    // By default a board speaks the server's Discord language, whoever made it.
    const made = h.fake.answer(await inServer(`/leaderboard create channel:${ch.id} club:${w.sim.world.clubTag(6)}`, 'de'));
    expect(made.embeds[0]!.title).toBe('Bestenliste erstellt');
    const [post] = h.fake.channelMessages(ch);
    expect(post!.embeds[0]!.fields!.map((f) => f.name)).toEqual(['Troféus no total', 'Jogadores', 'Próxima atualização']);

    // An admin picks Korean: the next refresh is in Korean, the confirmation too.
    const saved = h.fake.answer(await inServer('/settings language language:ko', 'en-US'));
    expect(saved.embeds[0]!.title).toBe('언어 저장됨');
    w.clock.advance(31 * 60_000);
    await h.bot.services.boards.tick();
    expect(post!.embeds[0]!.fields!.map((f) => f.name)).toEqual(['총 트로피', '플레이어', '다음 갱신']);
    const status = h.fake.answer(await inServer('/settings apikey status', 'fr'));
    expect(status.embeds[0]!.fields!.find((f) => f.name.includes('Langue des publications'))!.value).toBe('한국어');

    // Back to the server's language; a language the bot does not speak changes nothing.
    expect(h.fake.answer(await inServer('/settings language language:auto', 'en-US')).embeds[0]!.description).toContain('Português (Brasil)');
    w.clock.advance(31 * 60_000);
    await h.bot.services.boards.tick();
    expect(post!.embeds[0]!.fields![0]!.name).toBe('Troféus no total');
    // The other tests count board refreshes: this server's board goes.
    for (const b of await h.bot.services.boards.list(g.id)) await h.bot.services.boards.remove(g.id, b.id);
  });
});

describe('/settings without STARR_SECRET', () => {
  it('refuses to store a key and says why', async () => {
    const bare = await startBotHarness(w.core, { now: w.now, config: { STARR_SECRET: undefined } });
    try {
      const key = await newKey('nosecret@example.com');
      const rec = await bare.send(bare.fake.commandInteraction(`/settings apikey set key:${key}`, { guild: bare.guild, permissions: ADMIN }));
      const m = bare.fake.answer(rec);
      expect(m.embeds[0]!.title).toBe('Keys cannot be stored here');
      expect(m.embeds[0]!.description).toContain('STARR_SECRET');
      expect(JSON.stringify((await w.stores.namespace('guilds').get(`guild:${bare.guild.id}`)) ?? {})).not.toContain('sealed');

      // and issues none it could not keep
      const created = bare.fake.answer(await bare.send(bare.fake.commandInteraction('/settings apikey create', { guild: bare.guild, permissions: ADMIN })));
      expect(created.embeds[0]!.title).toBe('Keys cannot be stored here');
      expect(JSON.stringify(created.json())).not.toMatch(/starr_[A-Za-z0-9_-]{43}/);
    } finally {
      await bare.close();
    }
  });
});

describe('/leaderboard', () => {
  it('tells the admin which permissions are missing in the channel', async () => {
    const g = h.fake.addGuild({ name: 'Strict', channels: [{ name: 'locked', denyBot: PermissionFlagsBits.EmbedLinks | PermissionFlagsBits.SendMessages }] });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const locked = h.fake.channel(g, 'locked');
    const m = h.fake.answer(await admin(`/leaderboard create channel:${locked.id} club:${w.sim.world.clubTag(1)}`, g));
    expect(m.embeds[0]!.title).toBe('Missing permissions in that channel');
    expect(m.embeds[0]!.description).toContain('**Send Messages**, **Embed Links**');
    expect(h.fake.channelMessages(locked)).toEqual([]);
  });

  it('posts boards, edits them in place on schedule, and one failing server never stops the others', async () => {
    const clubTag = w.sim.world.clubTag(4);
    const boards = h.fake.channel(h.guild, 'boards');
    const made = h.fake.answer(await admin(`/leaderboard create channel:${boards.id} club:${clubTag} interval:30`));
    expect(made.embeds[0]!.title).toBe('Leaderboard created');
    const [post] = h.fake.channelMessages(boards);
    expect(post!.embeds[0]!.title).toContain('🏆');
    expect(post!.embeds[0]!.description).toContain(`Club ${clubTag}`);
    expect(customIds(post!)).toHaveLength(1);

    // A second server, whose channel will break.
    const g2 = h.fake.addGuild({ name: 'Broken', channels: [{ name: 'board' }] });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g2.id, definitions: h.bot.services.commands.definitions() });
    const ch2 = h.fake.channel(g2, 'board');
    await admin(`/leaderboard create channel:${ch2.id} club:${w.sim.world.clubTag(5)}`, g2);
    expect(h.fake.channelMessages(ch2)).toHaveLength(1);
    h.fake.setBotDeny(g2, ch2, PermissionFlagsBits.SendMessages | PermissionFlagsBits.EmbedLinks);
    // The CHANNEL_UPDATE has to reach discord.js's cache first.
    const cached = () => h.bot.gateway!.client.channels.cache.get(ch2.id) as { permissionOverwrites?: { cache: Map<string, unknown> } } | undefined;
    await whenClient(h.bot.gateway!.client, 'channelUpdate', () => cached()?.permissionOverwrites?.cache.has(g2.botRoleId) === true);

    expect(await h.bot.services.boards.tick()).toEqual({ refreshed: 0, failed: 0 });
    w.clock.advance(31 * 60_000);
    expect(await h.bot.services.boards.tick()).toEqual({ refreshed: 1, failed: 1 });
    expect(post!.edits).toBe(1);
    expect(h.fake.channelMessages(boards)).toHaveLength(1);

    const list2 = h.fake.answer(await admin('/leaderboard list', g2));
    expect(list2.embeds[0]!.description).toContain('⚠️ The bot is missing Send Messages, Embed Links');

    // The broken board waits longer (backoff); the healthy one keeps its pace.
    w.clock.advance(31 * 60_000);
    expect(await h.bot.services.boards.tick()).toEqual({ refreshed: 1, failed: 0 });
    expect(post!.edits).toBe(2);
  });

  it('posts the board again when its message was deleted', async () => {
    const boards = h.fake.channel(h.guild, 'boards');
    const [post] = h.fake.channelMessages(boards);
    post!.deleted = true;
    w.clock.advance(31 * 60_000);
    await h.bot.services.boards.tick();
    const now = h.fake.channelMessages(boards);
    expect(now).toHaveLength(1);
    expect(now[0]!.id).not.toBe(post!.id);
  });

  it('refreshes on the button, at most once a minute', async () => {
    const boards = h.fake.channel(h.guild, 'boards');
    const [post] = h.fake.channelMessages(boards);
    w.clock.advance(2 * 60_000);
    const edits = post!.edits;
    const rec = await h.send(h.fake.componentInteraction(post!, customIds(post!)[0]!));
    expect(rec.callbacks).toEqual([7]);
    expect(post!.edits).toBe(edits + 1);
    const again = await h.send(h.fake.componentInteraction(post!, customIds(post!)[0]!));
    expect(h.fake.answer(again).ephemeral).toBe(true);
    expect(h.fake.answer(again).embeds[0]!.title).toBe('Just refreshed');
  });

  it("ranks the server's linked members and lists and removes boards", async () => {
    const g = h.fake.addGuild({ name: 'Members', channels: [{ name: 'general' }] });
    await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
    const a = h.fake.addUser('alice');
    const b = h.fake.addUser('bob');
    await slash(`/link tag:${w.sim.world.playerTag(21)}`, { guild: g, user: a });
    await slash(`/link tag:${w.sim.world.playerTag(22)}`, { guild: g, user: b });
    const ch = h.fake.channel(g, 'general');
    await admin(`/leaderboard create channel:${ch.id}`, g);
    const [post] = h.fake.channelMessages(ch);
    expect(post!.embeds[0]!.description).toContain(`<@${a.id}>`);
    expect(post!.embeds[0]!.description).toContain(`<@${b.id}>`);

    const id = (await h.bot.services.boards.list(g.id))[0]!.id;
    const rec = h.fake.commandInteraction('/leaderboard remove board:', { guild: g, permissions: ADMIN }, 'board');
    await h.send(rec);
    expect(rec.choices!.map((c) => c.value)).toEqual([id]);
    const notAdmin = h.fake.answer(await slash(`/leaderboard remove board:${id}`, { guild: g, bypassCommandPermissions: true }));
    expect(notAdmin.embeds[0]!.title).toBe('Manage Server needed');
    const removed = h.fake.answer(await admin(`/leaderboard remove board:${id}`, g));
    expect(removed.embeds[0]!.title).toBe('Leaderboard removed');
    expect(h.fake.channelMessages(ch)).toEqual([]);
  });
});

describe('after a restart', () => {
  it('boards and buttons keep working', async () => {
    const tag = w.sim.world.clubTag(6);
    const m = h.fake.answer(await slash(`/club show tag:${tag} view:members`));
    const boardsBefore = (await h.bot.services.settings.guildsWithBoards()).length;
    await h.bot.close();
    // Discord takes one IDENTIFY per shard bucket per 5 s: the restart comes after the turn the last one held.
    w.clock.advance(IDENTIFY_TURN_MS);
    h.fake.advance(IDENTIFY_TURN_MS);

    h.bot = await createBot(h.core, { now: w.now, shards: [0], shardCount: 1, boardCheckMs: 3_600_000, schedule: h.deadlines.schedule });
    await h.bot.start();
    expect((await h.bot.services.settings.guildsWithBoards()).length).toBe(boardsBefore);
    const view = m.components.flatMap((r) => ('components' in r ? (r.components as { custom_id?: string; type: number }[]) : [])).find((c) => c.type === 3)!;
    const rec = await h.send(h.fake.componentInteraction(m, view.custom_id!, { values: ['0'] }));
    // the production default acknowledges first (6, a deferred update), then edits the message
    expect(rec.callbacks).toEqual([6]);
    expect(m.attachments.map((a) => a.filename)).toEqual(['club.png']);
    expect(m.embeds[0]!.title).toContain(tag);
    expect(m.embeds[0]!.title).not.toContain('members');

    w.clock.advance(31 * 60_000);
    const result = await h.bot.services.boards.tick();
    expect(result.refreshed).toBeGreaterThanOrEqual(1);
  });

  it('never had a message refused by Discord', () => {
    expect(h.fake.rejections.filter((r) => ![10062].includes(r.error?.code ?? 0) && !r.route.startsWith('/channels/'))).toEqual([]);
  });
});
});
