/**
 * Verified accounts end to end over the gateway, in virtual time: a member asks to verify, the
 * bot names a base profile icon other than the one in use, the member changes it in the game (the
 * simulator's control API) and presses the button; the bot reads the profile fresh, not from the
 * cache it filled a moment before, and records the owner durably. Another member cannot link the
 * account; an admin of a server the owner linked in can release it; an expired request says so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { APIUser } from 'discord-api-types/v10';
import { startWorld, worldBackends, type TestWorld, type WorldBackend } from './support/world.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import type { StoredMessage } from './support/fake-discord.ts';
import { BASE_PROFILE_ICONS } from '../src/upstream/icons.ts';
import { discordRest } from '../src/bot/discord-rest.ts';
import { deployCommands } from '../src/bot/deploy.ts';

const START = Date.UTC(2026, 5, 1, 12);
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
let w: TestWorld;
let h: BotHarness;


const slash = (text: string, user: APIUser, permissions?: bigint) =>
  h.send(h.fake.commandInteraction(text, { guild: h.guild, user, ...(permissions ? { permissions } : {}) }));

function buttonOf(m: StoredMessage, label: string): string {
  const all = m.components.flatMap((r) => ('components' in r ? (r.components as { label?: string; custom_id?: string }[]) : []));
  const b = all.find((c) => c.label === label);
  if (!b?.custom_id) throw new Error(`no button ${label}: ${JSON.stringify(all.map((c) => c.label))}`);
  return b.custom_id;
}

/** What the player does in the game: the simulator's control API, as a standalone sim offers it. */
async function setIcon(tag: string, id: number): Promise<void> {
  const base = w.sim.url.replace(/\/v1$/, '');
  const res = await fetch(`${base}/_sim/players/${encodeURIComponent(tag)}/icon`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.sim.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id }),
  });
  expect(res.status).toBe(200);
}

const iconOf = (tag: string) => (w.sim.world.player(tag, w.now()) as { icon: { id: number } }).icon.id;
/** past the per-member cooldown of /link between two runs */
const later = () => w.clock.advance(6_000);

describe.each(worldBackends())('verified accounts on $name', (backend: WorldBackend) => {
  beforeAll(async () => {
    w = await startWorld({ startMs: START, ...backend.options });
    h = await startBotHarness(w.core, { now: w.now });
  });

  afterAll(async () => {
    await h?.close();
    await w?.close();
  });

  describe('/link verify', () => {
    it('asks for a base icon other than the current one, checks a fresh profile, and records the owner', async () => {
      const owner = h.fake.addUser('owner');
      const tag = w.sim.world.playerTag(31);
      const linked = h.fake.answer(await slash(`/link tag:${tag}`, owner));
      expect(linked.embeds[0]!.title).toBe('Account linked');
      expect(linked.embeds[0]!.description).toContain('/link verify:True');
      later();

      const asked = h.fake.answer(await slash('/link verify:True', owner));
      expect(asked.ephemeral).toBe(true);
      expect(asked.embeds[0]!.title).toBe('Verify your account');
      const wanted = Number(/\(icon (\d+),/.exec(asked.embeds[0]!.description!)![1]);
      expect(BASE_PROFILE_ICONS).toContain(wanted);
      expect(wanted).not.toBe(iconOf(tag));
      expect(asked.embeds[0]!.thumbnail?.url).toContain(`${wanted}.png`);
      expect(asked.embeds[0]!.description).toContain('within 10 minutes');

      // Pressed before changing anything: not yet, same icon asked for.
      const early = h.fake.answer(await h.send(h.fake.componentInteraction(asked, buttonOf(asked, "I've changed it"), { user: owner })));
      expect(early.embeds[0]!.description).toContain(`still shows icon ${iconOf(tag)} on ${tag}, not ${wanted}`);

      // The profile is in the cache with the old icon now; the check must not believe it.
      await setIcon(tag, wanted);
      const done = h.fake.answer(await h.send(h.fake.componentInteraction(asked, buttonOf(asked, "I've changed it"), { user: owner })));
      expect(done.embeds[0]!.title).toBe('Account verified');
      expect(await w.stores.namespace('links').get(`owner:${tag}`)).toMatchObject({ userId: owner.id });
      later();
      expect(h.fake.answer(await slash('/link verify:True', owner)).embeds[0]!.title).toBe('Already verified');

      // Another member cannot take it, not even through an admin's /link for them.
      const thief = h.fake.addUser('thief');
      const refused = h.fake.answer(await slash(`/link tag:${tag}`, thief));
      expect(refused.embeds[0]!.title).toBe('Account already verified');
      expect(refused.embeds[0]!.description).toContain(`/unlink tag:${tag} release:True`);
      expect(await h.bot.services.links.get(thief.id)).toEqual({ tags: [] });
      const admin = h.fake.addUser('admin');
      const forThief = h.fake.answer(await slash(`/link tag:${tag} member:${thief.id}`, admin, ADMIN));
      expect(forThief.embeds[0]!.title).toBe('Account already verified');
      later();
      expect(h.fake.answer(await slash(`/link verify:True tag:${tag}`, thief)).embeds[0]!.title).toBe('Account already verified');

      // Releasing is for admins; then the account is free again.
      const notAdmin = h.fake.answer(await slash(`/unlink tag:${tag} release:True`, thief));
      expect(notAdmin.embeds[0]!.title).toBe('Manage Server needed');
      const released = h.fake.answer(await slash(`/unlink tag:${tag} release:True`, admin, ADMIN));
      expect(released.embeds[0]!.title).toBe('Account released');
      expect(released.embeds[0]!.description).toContain(`<@${owner.id}>`);
      expect(await w.stores.namespace('links').get(`owner:${tag}`)).toBeUndefined();
      expect((await h.bot.services.links.get(owner.id)).tags).toEqual([]);
      later();
      expect(h.fake.answer(await slash(`/link tag:${tag}`, thief)).embeds[0]!.title).toBe('Account linked');
      expect(h.fake.answer(await slash(`/unlink tag:${tag} release:True`, admin, ADMIN)).embeds[0]!.title).toBe('Not verified');
      expect(h.fake.rejections).toEqual([]);
    });

    it('says when the request expired and asks again; an owner who unlinks frees the account', async () => {
      const member = h.fake.addUser('slow');
      const tag = w.sim.world.playerTag(47);
      const first = h.fake.answer(await slash(`/link verify:True tag:${tag}`, member));
      const wanted = Number(/\(icon (\d+),/.exec(first.embeds[0]!.description!)![1]);
      w.clock.advance(11 * 60_000);
      await setIcon(tag, wanted);
      const late = h.fake.answer(await h.send(h.fake.componentInteraction(first, buttonOf(first, "I've changed it"), { user: member })));
      expect(late.embeds[0]!.title).toBe('Verify your account');
      expect(late.embeds[0]!.description).toMatch(/^The previous request expired/);
      // The icon in use now is the one asked for before, so the new request names another.
      const again = Number(/\(icon (\d+),/.exec(late.embeds[0]!.description!)![1]);
      expect(again).not.toBe(wanted);
      await setIcon(tag, again);
      later();
      expect(h.fake.answer(await slash(`/link verify:True tag:${tag}`, member)).embeds[0]!.title).toBe('Account verified');
      expect((await h.bot.services.links.get(member.id)).tags).toEqual([tag]);

      later();
      expect(h.fake.answer(await slash(`/unlink tag:${tag}`, member)).embeds[0]!.title).toBe('Unlinked');
      expect(await w.stores.namespace('links').get(`owner:${tag}`)).toBeUndefined();
    });

    it('refuses a verification for someone else, and one without any account', async () => {
      const member = h.fake.addUser('nobody');
      expect(h.fake.answer(await slash('/link verify:True', member)).embeds[0]!.title).toBe('Which account?');
      later();
      const other = h.fake.addUser('other');
      const forOther = h.fake.answer(await slash(`/link verify:True member:${other.id} tag:${w.sim.world.playerTag(48)}`, member));
      expect(forOther.embeds[0]!.title).toBe('Only for yourself');
      later();
      expect(h.fake.answer(await slash('/link', member)).embeds[0]!.title).toBe('Which account?');
    });
  });

  describe('/settings verification', () => {
    it("keeps unverified accounts off the members' leaderboard when required", async () => {
      const g = h.fake.addGuild({ name: 'Verified only', channels: [{ name: 'general' }] });
      await deployCommands({ rest: discordRest(h.fake.apiUrl, h.fake.token), appId: h.fake.appId, guildId: g.id, definitions: h.bot.services.commands.definitions() });
      const inG = (text: string, user: APIUser, permissions?: bigint) =>
        h.send(h.fake.commandInteraction(text, { guild: g, user, ...(permissions ? { permissions } : {}) }));
      const proven = h.fake.addUser('proven');
      const claimed = h.fake.addUser('claimed');
      const admin = h.fake.addUser('admin3');
      const tag = w.sim.world.playerTag(61);
      const asked = h.fake.answer(await inG(`/link verify:True tag:${tag}`, proven));
      await setIcon(tag, Number(/\(icon (\d+),/.exec(asked.embeds[0]!.description!)![1]));
      expect(h.fake.answer(await h.send(h.fake.componentInteraction(asked, buttonOf(asked, "I've changed it"), { user: proven }))).embeds[0]!.title).toBe('Account verified');
      await inG(`/link tag:${w.sim.world.playerTag(62)}`, claimed);

      const ch = h.fake.channel(g, 'general');
      await inG(`/leaderboard create channel:${ch.id}`, admin, ADMIN);
      const [post] = h.fake.channelMessages(ch);
      expect(post!.embeds[0]!.description).toContain(`<@${proven.id}>`);
      expect(post!.embeds[0]!.description).toContain(`<@${claimed.id}>`);

      await inG('/settings verification mode:required', admin, ADMIN);
      w.clock.advance(61_000);
      const refresh = post!.components.flatMap((r) => ('components' in r ? (r.components as { custom_id?: string }[]) : []))[0]!.custom_id!;
      await h.send(h.fake.componentInteraction(post!, refresh, { user: admin }));
      expect(post!.embeds[0]!.description).toContain(`<@${proven.id}>`);
      expect(post!.embeds[0]!.description).not.toContain(`<@${claimed.id}>`);
    });

    it('is saved durably and shown in the settings', async () => {
      const admin = h.fake.addUser('admin2');
      const set = h.fake.answer(await slash('/settings verification mode:required', admin, ADMIN));
      expect(set.embeds[0]!.title).toBe('Verification saved');
      expect(set.embeds[0]!.description).toContain('only verified accounts');
      expect(await w.stores.namespace('guilds').get(`guild:${h.guild.id}`)).toMatchObject({ verification: 'required' });
      const status = h.fake.answer(await slash('/settings apikey status', admin, ADMIN));
      expect(status.embeds[0]!.fields!.find((f) => f.name.includes('Verified accounts'))!.value).toBe("Required for roles and the members' leaderboard");
      await slash('/settings verification mode:optional', admin, ADMIN);
    });
  });
});
