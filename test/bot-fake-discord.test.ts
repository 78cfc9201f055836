/**
 * The fake Discord must enforce the rules it claims to, or the end-to-end tests prove nothing.
 * These call it through @discordjs/rest (discord.js's own REST client) and check Discord's
 * status codes, JSON error codes and error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAPIError, REST } from 'discord.js';
import { PermissionFlagsBits, Routes } from 'discord-api-types/v10';
import { WebSocket } from 'ws';
import { FakeDiscord, type FakeGuild } from './support/fake-discord.ts';

let fake: FakeDiscord;
let guild: FakeGuild;

const rest = () => new REST({ api: fake.apiUrl, retries: 0 }).setToken(fake.token);

async function failure(p: Promise<unknown>): Promise<DiscordAPIError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DiscordAPIError) return e;
    throw e;
  }
  throw new Error('expected Discord to refuse');
}

beforeAll(async () => {
  fake = await FakeDiscord.start();
  guild = fake.addGuild({ name: 'Rules', channels: [{ name: 'general' }, { name: 'quiet', denyBot: PermissionFlagsBits.SendMessages }, { name: 'hidden', denyBot: PermissionFlagsBits.ViewChannel }] });
  await rest().put(Routes.applicationGuildCommands(fake.appId, guild.id), {
    body: [{ name: 'player', description: 'p', options: [{ type: 3, name: 'tag', description: 't' }] }],
  });
});

afterAll(async () => {
  await fake.close();
});

describe('fake Discord: interaction responses', () => {
  it('accepts one acknowledgement and refuses a second with 40060', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild });
    await rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 5 }, auth: false });
    const e = await failure(rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 4, data: { content: 'x' } }, auth: false }));
    expect([e.status, e.code]).toEqual([400, 40060]);
  });

  it('refuses a first response after 3 seconds with 10062', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild });
    fake.advance(3001);
    const e = await failure(rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 5 }, auth: false }));
    expect([e.status, e.code]).toEqual([404, 10062]);
  });

  it('expires the token after 15 minutes with 50027', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild });
    await rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 5 }, auth: false });
    await rest().patch(Routes.webhookMessage(fake.appId, rec.token, '@original'), { body: { content: 'in time' }, auth: false });
    fake.advance(15 * 60_000 + 1);
    const e = await failure(rest().patch(Routes.webhookMessage(fake.appId, rec.token, '@original'), { body: { content: 'late' }, auth: false }));
    expect([e.status, e.code]).toEqual([401, 50027]);
    expect(rec.original!.content).toBe('in time');
  });

  it('answers a limit violation with 50035 and the nested errors', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild });
    const body = { type: 4, data: { embeds: [{ description: 'x'.repeat(4096) }, { description: 'y'.repeat(4096) }] } };
    const e = await failure(rest().post(Routes.interactionCallback(rec.id, rec.token), { body, auth: false }));
    expect([e.status, e.code]).toEqual([400, 50035]);
    expect((e.rawError as { errors: unknown }).errors).toEqual({
      data: { embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }] } },
    });
    expect(rec.callbacks).toEqual([]);
  });

  it('refuses a file over the attachment_size_limit with 413 / 40005', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild, attachmentSizeLimit: 1000 });
    await rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 5 }, auth: false });
    const e = await failure(
      rest().patch(Routes.webhookMessage(fake.appId, rec.token, '@original'), {
        body: { content: 'chart', attachments: [{ id: 0, filename: 'chart.png' }] },
        files: [{ name: 'chart.png', data: Buffer.alloc(1001) }],
        auth: false,
      }),
    );
    expect([e.status, e.code]).toEqual([413, 40005]);
  });

  it('stores a multipart edit with its attachment', async () => {
    const rec = fake.commandInteraction('/player tag:#ABC', { guild });
    await rest().post(Routes.interactionCallback(rec.id, rec.token), { body: { type: 5 }, auth: false });
    await rest().patch(Routes.webhookMessage(fake.appId, rec.token, '@original'), {
      body: { embeds: [{ title: 'card', image: { url: 'attachment://card.png' } }], attachments: [{ id: 0, filename: 'card.png' }] },
      files: [{ name: 'card.png', data: Buffer.from('png bytes') }],
      auth: false,
    });
    const m = fake.answer(rec);
    expect(m.embeds[0]!.title).toBe('card');
    expect(m.attachments.map((a) => [a.filename, a.data.toString()])).toEqual([['card.png', 'png bytes']]);
    expect(m.flags & 128).toBe(0);
  });
});

describe('fake Discord: channels and commands', () => {
  it('checks the bot token', async () => {
    const e = await failure(new REST({ api: fake.apiUrl, retries: 0 }).setToken('wrong').get(Routes.channel(guild.channels[0]!.id)));
    expect(e.status).toBe(401);
  });

  it('answers 50013 without Send Messages, 50001 without View Channel, 10003 for a deleted channel', async () => {
    const quiet = fake.channel(guild, 'quiet');
    const hidden = fake.channel(guild, 'hidden');
    const e1 = await failure(rest().post(Routes.channelMessages(quiet.id), { body: { content: 'x' } }));
    expect([e1.status, e1.code]).toEqual([403, 50013]);
    const e2 = await failure(rest().post(Routes.channelMessages(hidden.id), { body: { content: 'x' } }));
    expect([e2.status, e2.code]).toEqual([403, 50001]);
    const e3 = await failure(rest().post(Routes.channelMessages('123456789012345678'), { body: { content: 'x' } }));
    expect([e3.status, e3.code]).toEqual([404, 10003]);
    const ok = (await rest().post(Routes.channelMessages(fake.channel(guild, 'general').id), { body: { content: 'x' } })) as { id: string };
    expect(fake.messages.get(ok.id)!.content).toBe('x');
  });

  it('validates bulk command overwrites with the rules the builders miss', async () => {
    const e = await failure(
      rest().put(Routes.applicationCommands(fake.appId), {
        body: [{ name: 'x', description: 'x', options: [{ type: 3, name: 'a', description: 'a' }, { type: 3, name: 'b', description: 'b', required: true }] }],
      }),
    );
    expect([e.status, e.code]).toEqual([400, 50035]);
    expect(JSON.stringify(e.rawError)).toContain('APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID');
  });

  it('hides commands with default_member_permissions from members who lack them', async () => {
    await rest().put(Routes.applicationGuildCommands(fake.appId, guild.id), {
      body: [{ name: 'admin', description: 'a', default_member_permissions: String(PermissionFlagsBits.ManageGuild) }],
    });
    expect(() => fake.commandInteraction('/admin', { guild })).toThrow(/hides/);
    expect(fake.commandInteraction('/admin', { guild, permissions: PermissionFlagsBits.ManageGuild }).type).toBe(2);
    expect(fake.commandInteraction('/admin', { guild, bypassCommandPermissions: true }).type).toBe(2);
  });
});

describe('fake Discord: gateway sharding', () => {
  /** Opens a gateway connection, sends IDENTIFY for `shard`, resolves with READY or the close. */
  function identify(f: FakeDiscord, shard: [number, number]): Promise<{ ready?: { shard: number[]; guilds: { id: string }[] }; closed?: number; ws: WebSocket }> {
    const ws = new WebSocket(`${f.gatewayUrl}/?v=10&encoding=json`);
    return new Promise((resolve, reject) => {
      ws.on('error', reject);
      ws.on('close', (code) => resolve({ closed: code, ws }));
      ws.on('message', (raw) => {
        const msg = JSON.parse(String(raw)) as { op: number; t?: string; d: Record<string, unknown> };
        if (msg.op === 10) ws.send(JSON.stringify({ op: 2, d: { token: f.token, intents: 1, properties: {}, shard } }));
        if (msg.t === 'READY') resolve({ ready: msg.d as never, ws });
      });
    });
  }

  it('recommends its shard count and max_concurrency in GET /gateway/bot', async () => {
    const f = await FakeDiscord.start({ recommendedShards: 4, maxConcurrency: 2 });
    try {
      const info = (await new REST({ api: f.apiUrl, retries: 0 }).setToken(f.token).get(Routes.gatewayBot())) as {
        shards: number;
        session_start_limit: { max_concurrency: number };
      };
      expect(info.shards).toBe(4);
      expect(info.session_start_limit.max_concurrency).toBe(2);
    } finally {
      await f.close();
    }
  });

  it('takes one IDENTIFY per bucket per 5 s and closes an earlier one with 4008', async () => {
    const f = await FakeDiscord.start({ maxConcurrency: 2 });
    try {
      const a = f.addGuild({ name: 'a', onShard: [2, 4] });
      const zero = await identify(f, [0, 4]);
      expect(zero.ready?.shard).toEqual([0, 4]);
      // shard 1 is in bucket 1: its own turn
      expect((await identify(f, [1, 4])).ready?.shard).toEqual([1, 4]);
      // shard 2 is in bucket 0, less than 5 s after shard 0
      expect((await identify(f, [2, 4])).closed).toBe(4008);
      expect(f.identifyRejections.map((r) => [r.shard, r.code])).toEqual([[[2, 4], 4008]]);
      expect(f.shards.has(2)).toBe(false);
      f.advance(5_000);
      const two = await identify(f, [2, 4]);
      expect(two.ready?.shard).toEqual([2, 4]);
      // guilds are announced to the shard that holds them only
      expect(zero.ready!.guilds.map((g) => g.id)).not.toContain(a.id);
      expect(two.ready!.guilds.map((g) => g.id)).toContain(a.id);
      for (const c of [zero, two]) c.ws.close();
    } finally {
      await f.close();
    }
  });

  it('closes an IDENTIFY for a shard out of range with 4010', async () => {
    const f = await FakeDiscord.start();
    try {
      expect((await identify(f, [2, 2])).closed).toBe(4010);
      expect(f.identifyRejections[0]?.reason).toBe('Invalid shard.');
    } finally {
      await f.close();
    }
  });

  it('routes an interaction to the shard of its guild, (guild_id >> 22) % shard_count', async () => {
    const f = await FakeDiscord.start();
    try {
      const guilds = Array.from({ length: 6 }, (_, i) => f.addGuild({ name: `g${i}`, onShard: [i % 2, 2] }));
      expect(guilds.map((g) => g.shardOf(2))).toEqual([0, 1, 0, 1, 0, 1]);
      await new REST({ api: f.apiUrl, retries: 0 }).setToken(f.token).put(Routes.applicationCommands(f.appId), { body: [{ name: 'help', description: 'h' }] });
      const conns = [await identify(f, [0, 2]), await identify(f, [1, 2])];
      const seen: string[][] = [[], []];
      const all = new Promise<void>((resolve) =>
        conns.forEach((c, i) =>
          c.ws.on('message', (raw) => {
            const msg = JSON.parse(String(raw)) as { t?: string; d: { guild_id?: string } };
            if (msg.t !== 'INTERACTION_CREATE') return;
            seen[i]!.push(msg.d.guild_id!);
            if (seen[0]!.length + seen[1]!.length === guilds.length) resolve();
          }),
        ),
      );
      for (const g of guilds) f.slash('/help', { guild: g });
      await all;
      for (const g of guilds) expect(seen[g.shardOf(2)]).toContain(g.id);
      for (const c of conns) c.ws.close();
    } finally {
      await f.close();
    }
  });
});
