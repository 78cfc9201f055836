/**
 * The HTTP interactions endpoint on the service's own HTTP server: requests signed by the fake
 * Discord with its Ed25519 key, inline answers checked like callbacks, and follow-ups (multipart
 * PATCH of @original) through the fake's REST API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { startWorld, type TestWorld } from './support/world.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import type { StoredMessage } from './support/fake-discord.ts';

const START = Date.UTC(2026, 5, 1, 12);
let w: TestWorld;
let h: BotHarness;

beforeAll(async () => {
  w = await startWorld({ startMs: START, env: { RATE_LIMIT_FREE: '3' } });
  // The fake signs with real timestamps; the endpoint compares them with real time.
  h = await startBotHarness(w.core, { transport: 'http', config: { STARR_SECRET: 'http-test-secret-value' } });
});

afterAll(async () => {
  await h?.close();
  await w?.close();
});

const post = (body: string, o: Parameters<BotHarness['fake']['post']>[2] = {}) => h.fake.post(h.endpoint!, body, o);

describe('POST /interactions: verification', () => {
  it('answers PING with PONG', async () => {
    const res = await post(JSON.stringify({ id: '1', type: 1, application_id: h.fake.appId, token: 'x', version: 1 }));
    expect(res).toEqual({ status: 200, json: { type: 1 } });
  });

  it('refuses a forged, missing or malformed signature with 401', async () => {
    const ping = JSON.stringify({ type: 1 });
    expect((await post(ping, { signature: 'forged' })).status).toBe(401);
    expect((await post(ping, { signature: 'none' })).status).toBe(401);
    const res = await fetch(h.endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature-ed25519': 'abcd', 'x-signature-timestamp': String(Math.floor(Date.now() / 1000)) },
      body: ping,
    });
    expect(res.status).toBe(401);
  });

  it('refuses a stale timestamp even when signed', async () => {
    const old = String(Math.floor(Date.now() / 1000) - 600);
    const res = await post(JSON.stringify({ type: 1 }), { timestamp: old });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'stale request timestamp' });
  });

  it('answers 400 to a signed body that is not an interaction', async () => {
    expect((await post('{"type": 1')).status).toBe(400);
    expect((await post('[1,2,3]')).status).toBe(400);
    expect((await post(JSON.stringify({ type: 2, data: {} }))).status).toBe(400);
  });

  it('is not rate limited like the API (Discord sends everything from few addresses)', async () => {
    for (let i = 0; i < 6; i++) expect((await post(JSON.stringify({ type: 1 }))).status).toBe(200);
    expect((await fetch(h.endpoint!.replace('/interactions', '/brawlers'))).status).toBe(200);
  });
});

describe('POST /interactions: every command', () => {
  const player = () => w.sim.world.playerTag(8);
  const club = () => w.sim.world.clubTag(2);
  const cases = (): [string, { ephemeral?: boolean; file?: string; admin?: boolean }][] => [
    [`/player tag:${player()}`, { file: 'player.png' }],
    [`/player tag:${player()} view:brawlers`, {}],
    [`/player tag:${player()} view:battlelog`, {}],
    [`/player tag:${player()} view:ranks`, { file: 'ranks.png' }],
    [`/player tag:${player()} view:season`, { file: 'season.png' }],
    [`/player tag:${player()} view:charts`, { file: 'chart-1.png' }],
    [`/player tag:${player()} view:push`, { ephemeral: true }],
    [`/club show tag:${club()}`, { file: 'club.png' }],
    [`/club show tag:${club()} view:members`, {}],
    [`/club show tag:${club()} view:membership`, { file: 'chart.png' }],
    [`/club show tag:${club()} view:log`, { ephemeral: true }],
    ['/ranking type:clubs country:fr', {}],
    ['/ranking type:brawler brawler:16000001', {}],
    ['/brawler name:colt', {}],
    ['/events', {}],
    // A map of the battle log fetched above: history recorded its battles.
    [`/map name:${((w.sim.world.battlelog(player(), w.now()) as { items: { event: { id: number } }[] }).items[0]!.event.id)}`, {}],
    ['/map name:Nowhere', { ephemeral: true }],
    [`/link tag:${player()}`, { ephemeral: true }],
    ['/unlink', { ephemeral: true }],
    ['/leaderboard list', { ephemeral: true, admin: true }],
    ['/settings apikey status', { ephemeral: true, admin: true }],
    ['/settings defaults country:global', { ephemeral: true, admin: true }],
    ['/help', { ephemeral: true }],
    ['/about', { ephemeral: true }],
  ];

  it('answers each one once, within the rules', async () => {
    for (const [text, expect_] of cases()) {
      const rec = h.fake.commandInteraction(text, {
        guild: h.guild,
        ...(expect_.admin ? { permissions: PermissionFlagsBits.ManageGuild } : {}),
      });
      await h.send(rec);
      expect(rec.httpStatus, text).toBe(200);
      expect(rec.callbacks, text).toHaveLength(1);
      expect(rec.calls.filter((c) => c.status >= 400), text).toEqual([]);
      const m = h.fake.answer(rec);
      expect(m.ephemeral, text).toBe(expect_.ephemeral ?? false);
      if (expect_.file) {
        // Uploads: "thinking…" inline, then a multipart PATCH of @original.
        expect(rec.callbacks, text).toEqual([5]);
        expect(m.attachments.map((a) => a.filename), text).toEqual([expect_.file]);
      }
      expect(m.embeds.length + m.content.length, text).toBeGreaterThan(0);
    }
    expect(h.fake.rejections).toEqual([]);
  });

  it('answers an interaction delivered twice once: the second POST gets 409 and changes nothing', async () => {
    const rec = h.fake.commandInteraction('/help', { guild: h.guild });
    const [first, second] = await Promise.all([h.fake.post(h.endpoint!, rec), h.fake.post(h.endpoint!, rec)]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    await h.fake.settled(rec);
    expect(rec.callbacks).toEqual([4]);
    expect(rec.calls.filter((c) => c.status >= 400)).toEqual([]);
    // and again later: still refused
    expect((await h.fake.post(h.endpoint!, rec)).status).toBe(409);
    expect(rec.callbacks).toEqual([4]);
  });

  it('updates messages from buttons inline, and with files through a deferred update', async () => {
    const rec = h.fake.commandInteraction(`/player tag:${w.sim.world.playerTag(9)} view:brawlers`, { guild: h.guild });
    await h.send(rec);
    const m: StoredMessage = h.fake.answer(rec);
    type C = { custom_id?: string; label?: string; type: number; options?: { label: string; value: string }[] };
    const ids = () => m.components.flatMap((r) => ('components' in r ? (r.components as C[]) : []));
    const next = ids().find((c) => c.label === 'Next')!;
    const click = h.fake.componentInteraction(m, next.custom_id!);
    await h.send(click);
    expect(click.callbacks).toEqual([7]);
    expect(m.embeds[0]!.description!.split('\n')[0]).toMatch(/^`11`/);

    const menu = ids().find((c) => c.options?.some((o) => o.label === 'Brawler ranks'))!;
    const pick = h.fake.componentInteraction(m, menu.custom_id!, { values: [menu.options!.find((o) => o.label === 'Brawler ranks')!.value] });
    await h.send(pick);
    expect(pick.callbacks).toEqual([6]);
    expect(pick.calls.map((c) => c.method)).toEqual(['POST', 'PATCH']);
    expect(m.attachments.map((a) => a.filename)).toEqual(['brawlers-4.png']);
  });

  it('answers autocomplete inline', async () => {
    const rec = h.fake.commandInteraction('/brawler name:colt', { guild: h.guild }, 'name');
    await h.send(rec);
    expect(rec.callbacks).toEqual([8]);
    expect(rec.choices![0]).toEqual({ name: 'Colt', value: '16000001' });
  });
});
