/**
 * The fake Discord must enforce the rules it claims to, or the end-to-end tests prove nothing.
 * These call it through @discordjs/rest (discord.js's own REST client) and check Discord's
 * status codes, JSON error codes and error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAPIError, REST } from 'discord.js';
import { PermissionFlagsBits, Routes } from 'discord-api-types/v10';
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
