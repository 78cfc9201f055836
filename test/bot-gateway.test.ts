/**
 * End to end over the gateway: the real discord.js Client logs in to the fake Discord (REST +
 * WebSocket on 127.0.0.1), commands are deployed through the fake's REST API, and interactions
 * arrive as INTERACTION_CREATE. The game data is the simulated world behind the real StatsService.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type TestWorld } from './support/world.ts';
import { startBotHarness, whenClient, type BotHarness } from './support/fake-discord-bot.ts';
import type { InteractionRecord, StoredMessage } from './support/fake-discord.ts';
import { deployCommands } from '../src/bot/deploy.ts';
import { discordRest } from '../src/bot/discord-rest.ts';
import { titleCase } from '../src/bot/embeds/names.ts';
import { parseApiTime } from '../src/upstream/schemas.ts';
import { createBot } from '../src/bot/index.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { IDENTIFY_TURN_MS } from '../src/bot/identify.ts';

const START = Date.UTC(2026, 5, 1, 12);
let w: TestWorld;
let h: BotHarness;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

beforeAll(async () => {
  w = await startWorld({ startMs: START });
  h = await startBotHarness(w.core, { now: w.now });
});

afterAll(async () => {
  await h?.close();
  await w?.close();
});

const slash = (text: string, o: Parameters<BotHarness['fake']['commandInteraction']>[1] = {}) =>
  h.send(h.fake.commandInteraction(text, { guild: h.guild, ...o }));

function components(m: StoredMessage): { custom_id?: string; label?: string; type: number; options?: { label: string; value: string }[] }[] {
  return m.components.flatMap((r) => ('components' in r ? (r.components as never[]) : []));
}

function button(m: StoredMessage, label: string): string {
  const c = components(m).find((x) => x.type === 2 && x.label === label);
  if (!c?.custom_id) throw new Error(`no button ${label}: ${JSON.stringify(components(m).map((x) => x.label))}`);
  return c.custom_id;
}

function select(m: StoredMessage, label: string): { id: string; value: string } {
  for (const c of components(m)) {
    const o = c.options?.find((x) => x.label === label);
    if (o && c.custom_id) return { id: c.custom_id, value: o.value };
  }
  throw new Error(`no menu option ${label}`);
}

/** Sends a command whose work outlasts the router's deferral deadline: the test fires it as soon as it is set. */
async function slashLate(text: string): Promise<InteractionRecord> {
  const answered = slash(text);
  await h.deadlines.next();
  expect(h.deadlines.pending).toEqual([1000]);
  h.deadlines.fire();
  return answered;
}

/** The interaction was answered once, and nothing the bot sent was refused. */
function cleanly(rec: InteractionRecord): void {
  expect(rec.callbacks).toHaveLength(1);
  expect(rec.calls.filter((c) => c.status >= 400)).toEqual([]);
}

describe('gateway', () => {
  it('connects with the Guilds intent only and sees the server', async () => {
    expect(h.bot.gateway!.client.guilds.cache.has(h.guild.id)).toBe(true);
    expect(h.bot.gateway!.client.options.intents.bitfield).toBe(1);
    expect(h.fake.shards.get(0)?.shard).toEqual([0, 1]);
  });
});

describe('/player', () => {
  const tag = () => w.sim.world.playerTag(11);

  it('shows the profile with the player card attached', async () => {
    const rec = await slash(`/player tag:${tag()}`);
    const m = h.fake.answer(rec);
    const p = w.sim.world.player(tag(), w.now())!;
    expect(m.embeds[0]!.title).toContain(String(p.tag));
    expect(m.embeds[0]!.image?.url).toBe('attachment://player.png');
    expect(m.attachments.map((a) => a.filename)).toEqual(['player.png']);
    expect(m.attachments[0]!.data.subarray(0, 4)).toEqual(PNG);
    expect(m.ephemeral).toBe(false);
    expect(rec.calls.filter((c) => c.status >= 400)).toEqual([]);
  });

  it('pages brawlers with buttons, and switches views with the menu', async () => {
    const rec = await slash(`/player tag:${tag()} view:brawlers`);
    cleanly(rec);
    const m = h.fake.answer(rec);
    const first = m.embeds[0]!.description!.split('\n')[0]!;
    expect(first).toMatch(/^` 1` \*\*/);

    const next = await h.send(h.fake.componentInteraction(m, button(m, 'Next')));
    expect(next.callbacks).toEqual([7]);
    expect(m.embeds[0]!.description!.split('\n')[0]).toMatch(/^`11` \*\*/);
    expect(components(m).find((c) => c.label === '2 / ' + Math.ceil((w.sim.world.player(tag(), w.now())!.brawlers as unknown[]).length / 10))).toBeTruthy();

    const log = select(m, 'Battle log');
    await h.send(h.fake.componentInteraction(m, log.id, { values: [log.value] }));
    expect(m.embeds[0]!.title).toContain('· Battle log');
    expect(m.edits).toBe(2);
  });

  it('attaches brawler images and charts picked from menus', async () => {
    const rec = await slash(`/player tag:${tag()} view:brawlers`);
    const m = h.fake.answer(rec);
    const trophyImage = select(m, 'Brawler trophies');
    const click = await h.send(h.fake.componentInteraction(m, trophyImage.id, { values: [trophyImage.value] }));
    expect(click.calls.filter((c) => c.status >= 400)).toEqual([]);
    expect(m.attachments.map((a) => a.filename)).toEqual(['brawlers-8.png']);

    const charts = await slash(`/player tag:${tag()} view:charts`);
    const cm = h.fake.answer(charts);
    expect(cm.attachments.map((a) => a.filename)).toEqual(['chart-1.png']);
    const activity = select(cm, 'Activity');
    await h.send(h.fake.componentInteraction(cm, activity.id, { values: [activity.value] }));
    expect(cm.attachments.map((a) => a.filename)).toEqual(['chart-2.png']);
  });

  it('shows the battle log, ranks and season views', async () => {
    const log = h.fake.answer(await slash(`/player tag:${tag()} view:battlelog`));
    expect(log.embeds[0]!.fields!.map((f) => f.name)).toEqual(['Battles', 'Win rate', 'Trophies']);
    const ranks = h.fake.answer(await slash(`/player tag:${tag()} view:ranks`));
    expect(ranks.attachments.map((a) => a.filename)).toEqual(['ranks.png']);
    const season = h.fake.answer(await slash(`/player tag:${tag()} view:season`));
    expect(season.attachments.map((a) => a.filename)).toEqual(['season.png']);
  });

  it('explains the tag alphabet for an invalid tag, privately', async () => {
    const rec = await slash('/player tag:#HELLO');
    cleanly(rec);
    const m = h.fake.answer(rec);
    expect(m.ephemeral).toBe(true);
    expect(m.embeds[0]!.title).toBe('That is not a tag');
    expect(m.embeds[0]!.description).toContain('0 2 8 9 P Y L Q G R J C U V');
  });

  it('says which tag is unknown', async () => {
    const m = h.fake.answer(await slash('/player tag:#2PP2PP2PP'));
    expect(m.ephemeral).toBe(true);
    expect(m.embeds[0]!.title).toBe('No player #2PP2PP2PP');
  });

  it('without a tag, uses the linked account or says how to link one', async () => {
    const user = h.fake.addUser('linker');
    const none = h.fake.answer(await slash('/player', { user }));
    expect(none.embeds[0]!.description).toContain('/link tag:#YOURTAG');
    const linked = h.fake.answer(await slash(`/link tag:${tag()}`, { user }));
    expect(linked.ephemeral).toBe(true);
    expect(linked.embeds[0]!.title).toBe('Account linked');
    w.clock.advance(10_000);
    const mine = h.fake.answer(await slash('/player view:brawlers', { user }));
    expect(mine.embeds[0]!.title).toContain(tag());
    const other = h.fake.answer(await slash(`/player view:brawlers member:<@${user.id}>`));
    expect(other.embeds[0]!.title).toContain(tag());
  });

  it('holds a per-member cooldown', async () => {
    const user = h.fake.addUser('eager');
    await slash(`/player tag:${tag()} view:battlelog`, { user });
    const again = h.fake.answer(await slash(`/player tag:${tag()} view:battlelog`, { user }));
    expect(again.ephemeral).toBe(true);
    expect(again.embeds[0]!.title).toBe('Slow down');
  });

  it("answers in the member's language, numbers included", async () => {
    const p = w.sim.world.player(tag(), w.now())!;
    const m = h.fake.answer(await slash(`/player tag:${tag()}`, { locale: 'de' }));
    const trophies = m.embeds[0]!.fields!.find((f) => f.name.includes('Trophäen'))!.value;
    expect(components(m).flatMap((c) => c.options?.map((o) => o.label) ?? [])).toContain('Kampfprotokoll');
    expect(trophies).toContain(new Intl.NumberFormat('de').format(Number(p.trophies)));
  });
});

describe('/club, /ranking, /brawler, /events, /map, /help, /about', () => {
  it('shows a club, its members and its charts', async () => {
    const tag = w.sim.world.clubTag(3);
    const m = h.fake.answer(await slash(`/club show tag:${tag}`));
    expect(m.embeds[0]!.title).toContain(tag);
    expect(m.attachments.map((a) => a.filename)).toEqual(['club.png']);
    await h.send(h.fake.componentInteraction(m, button(m, 'Portrait card')));
    expect(m.attachments.map((a) => a.filename)).toEqual(['club.png']);
    expect(components(m).some((c) => c.label === 'Landscape card')).toBe(true);
    const members = h.fake.answer(await slash(`/club show tag:${tag} view:members`));
    expect(members.embeds[0]!.title).toContain('· Members');
    const chart = h.fake.answer(await slash(`/club show tag:${tag} view:trophies`));
    expect(chart.attachments.map((a) => a.filename)).toEqual(['chart.png']);
  });

  it('pages rankings, with country and brawler resolved', async () => {
    const m = h.fake.answer(await slash('/ranking type:players'));
    expect(m.embeds[0]!.title).toBe('Top players · Global');
    await h.send(h.fake.componentInteraction(m, button(m, 'Next')));
    expect(m.embeds[0]!.description!.split('\n')[0]).toContain('21.');
    const clubs = h.fake.answer(await slash('/ranking type:clubs country:de'));
    expect(clubs.embeds[0]!.title).toBe('Top clubs · Germany (DE)');
    const shelly = h.fake.answer(await slash('/ranking type:brawler brawler:shelly'));
    expect(shelly.embeds[0]!.title).toBe('Top Shelly players · Global');
    const bad = h.fake.answer(await slash('/ranking type:players country:Narnia'));
    expect(bad.embeds[0]!.title).toBe('Unknown country');
  });

  it('shows a brawler and gates its best build behind a key', async () => {
    const m = h.fake.answer(await slash('/brawler name:16000000'));
    expect(m.embeds[0]!.title).toBe('Shelly');
    expect(m.embeds[0]!.fields!.map((f) => f.name)).toContain('🏆 Top players (global)');
    const build = await h.send(h.fake.componentInteraction(m, button(m, 'Best build (premium)')));
    const answer = h.fake.answer(build);
    expect(answer.ephemeral).toBe(true);
    expect(answer.embeds[0]!.title).toBe('Premium view');
    expect(answer.embeds[0]!.description).toContain('/settings apikey create');
    expect(m.embeds[0]!.title).toBe('Shelly');
  });

  it('lists the events with time left, and the predicted next ones', async () => {
    // A few days of recorded rotations to predict from.
    for (let day = 0; day < 4; day++) {
      w.clock.advance(24 * 3600_000);
      await w.stats.eventRotation();
    }
    await w.history.flush();
    const m = h.fake.answer(await slash('/events'));
    const rotation = w.sim.world.eventRotation(w.now());
    expect(m.embeds[0]!.description!.split('\n')).toHaveLength(rotation.length);
    expect(m.embeds[0]!.description).toMatch(/ends <t:\d+:R>/);
    const upcoming = (await w.history.events()).data.upcoming;
    const future = upcoming.filter((u) => parseApiTime(u.startTime) > w.now());
    expect(future.length).toBeGreaterThan(0);
    expect(m.embeds[1]!.title).toBe('🔮 Predicted next');
    expect(m.embeds[1]!.description!.split('\n')).toHaveLength(Math.min(15, future.length));
    expect(m.embeds[1]!.description).toMatch(/starts <t:\d+:R>/);
  });

  it("shows a map's best brawlers from recorded battles, by win or use rate", async () => {
    for (let i = 70; i < 80; i++) await slash(`/player tag:${w.sim.world.playerTag(i)} view:battlelog`);
    await w.history.flush();
    const rec = h.fake.commandInteraction('/map name:', { guild: h.guild }, 'name');
    await h.send(rec);
    const pick = rec.choices![0]!;
    const detail = (await w.history.map(Number(pick.value))).data;
    const m = h.fake.answer(await slash(`/map name:${pick.value}`));
    expect(m.embeds[0]!.title).toBe(`${detail.name} · ${pick.name.replace(/^.* \((.*)\)$/, '$1')}`);
    expect(m.embeds[0]!.description).toContain(`from ${detail.battles} recorded battle`);
    const best = [...detail.stats].filter((s) => s.picks > 0).sort((a, b) => (b.adjustedWinRate ?? -1) - (a.adjustedWinRate ?? -1))[0]!;
    expect(m.embeds[0]!.description).toContain(`\` 1.\` **${titleCase(best.brawler.name)}**`);
    await h.send(h.fake.componentInteraction(m, button(m, 'By use rate')));
    expect(m.embeds[0]!.description).toContain('Best brawlers by use rate');
    const unknown = h.fake.answer(await slash('/map name:Somewhere'));
    expect(unknown.ephemeral).toBe(true);
    expect(unknown.embeds[0]!.title).toBe('Unknown map');
  });

  it('answers /help and /about', async () => {
    const help = h.fake.answer(await slash('/help'));
    for (const name of h.bot.services.commands.definitions().map((d) => d.name)) expect(help.embeds[0]!.description).toContain(`/${name}`);
    const one = h.fake.answer(await slash('/help command:settings'));
    expect(one.embeds[0]!.description).toContain('/settings apikey set key:');
    const about = h.fake.answer(await slash('/about'));
    expect(about.embeds[0]!.fields!.map((f) => f.name)).toEqual(['📡 Data', '⏱️ Freshness', '🙏 Credits', '⚖️ Notice']);
    expect(about.embeds[0]!.fields![3]!.value).toContain('not affiliated with');
  });
});

describe('autocomplete', () => {
  const choices = async (text: string, focus: string, o = {}) => {
    const rec = h.fake.commandInteraction(text, { guild: h.guild, ...o }, focus);
    await h.send(rec);
    expect(rec.callbacks).toEqual([8]);
    return rec.choices!;
  };

  it('completes brawlers, countries, linked tags and help topics', async () => {
    expect((await choices('/brawler name:shel', 'name'))[0]).toEqual({ name: 'Shelly', value: '16000000' });
    expect((await choices('/ranking type:players country:germ', 'country'))[0]).toEqual({ name: 'Germany (DE)', value: 'DE' });
    expect((await choices('/ranking type:players country:', 'country')).length).toBe(25);
    const user = h.fake.addUser('completer');
    await slash(`/link tag:${w.sim.world.playerTag(12)}`, { user });
    expect(await choices('/player tag:', 'tag', { user })).toEqual([{ name: `${w.sim.world.playerTag(12)} (default)`, value: w.sim.world.playerTag(12) }]);
    expect((await choices('/help command:lead', 'command')).map((c) => c.value)).toEqual(['leaderboard']);
  });
});

describe('timing and failures', () => {
  it('defers when the game is slow, then edits the answer in', async () => {
    w.sim.faults.set({ latency: { minMs: 1200, maxMs: 1200, spikeRate: 0, spikeMs: 0 } });
    try {
      const rec = await slashLate(`/player tag:${w.sim.world.playerTag(40)} view:battlelog`);
      expect(rec.callbacks).toEqual([5]);
      expect(rec.calls.map((c) => [c.method, c.status])).toEqual([
        ['POST', 204],
        ['PATCH', 200],
      ]);
      expect(h.fake.answer(rec).embeds[0]!.title).toContain('· Battle log');
    } finally {
      w.sim.faults.reset();
    }
  });

  it('turns a public deferral into a private answer for a failure', async () => {
    w.sim.faults.set({ latency: { minMs: 1200, maxMs: 1200, spikeRate: 0, spikeMs: 0 } });
    try {
      const rec = await slashLate('/player tag:#9999999');
      expect(rec.callbacks).toEqual([5]);
      expect(rec.original!.deleted).toBe(true);
      expect(rec.followups).toHaveLength(1);
      expect(rec.followups[0]!.ephemeral).toBe(true);
      expect(rec.followups[0]!.embeds[0]!.title).toBe('No player #9999999');
    } finally {
      w.sim.faults.reset();
    }
  });

  it('drops an interaction Discord already expired, without retrying', async () => {
    const rec = h.fake.commandInteraction('/help', { guild: h.guild });
    h.fake.advance(3500);
    h.fake.dispatchInteraction(rec);
    await new Promise<void>((resolve) => rec.events.once('change', () => resolve()));
    expect(rec.callbacks).toEqual([]);
    expect(rec.calls.map((c) => [c.status, c.error?.code])).toEqual([[404, 10062]]);
    // The router gives up on 10062: a later interaction is served normally.
    cleanly(await slash('/help'));
    expect(rec.calls).toHaveLength(1);
  });

  it('serves the saved copy with its age during maintenance, and says maintenance when there is none', async () => {
    const tag = w.sim.world.playerTag(60);
    await slash(`/player tag:${tag} view:battlelog`);
    w.clock.advance(5 * 60_000);
    w.sim.faults.set({ maintenance: true });
    try {
      const stale = h.fake.answer(await slash(`/player tag:${tag} view:brawlers`));
      expect(stale.content).toMatch(/Saved copy from <t:\d+:R>: the game's API is in maintenance/);
      expect(stale.embeds[0]!.title).toContain(tag);
      const none = h.fake.answer(await slash(`/player tag:${w.sim.world.playerTag(61)} view:brawlers`));
      expect(none.ephemeral).toBe(true);
      expect(none.embeds[0]!.title).toBe('The game is in maintenance');
    } finally {
      w.sim.faults.reset();
    }
  });

  it('never had a message refused by Discord', () => {
    const refused = h.fake.rejections.filter((r) => r.error?.code !== 10062);
    expect(refused).toEqual([]);
  });
});

describe('sharding', () => {
  it('runs two shards, each answering for the servers it holds', async () => {
    const two = await startBotHarness(w.core, { now: w.now, shardCount: 2 });
    try {
      expect([...two.fake.shards.keys()].sort()).toEqual([0, 1]);
      let other = two.fake.addGuild({ name: 'second' });
      while (other.shardOf(2) === two.guild.shardOf(2)) other = two.fake.addGuild({ name: 'another' });
      await deployCommands({ rest: discordRest(two.fake.apiUrl, two.fake.token), appId: two.fake.appId, guildId: other.id, definitions: two.bot.services.commands.definitions() });
      await whenClient(two.bot.gateway!.client, 'guildCreate', () => two.bot.gateway!.client.guilds.cache.has(other.id));
      for (const guild of [two.guild, other]) {
        const rec = await two.send(two.fake.commandInteraction('/help', { guild }));
        expect(rec.callbacks).toEqual([4]);
      }
      expect(two.bot.gateway!.client.guilds.cache.size).toBe(two.fake.guilds.size);
    } finally {
      await two.close();
    }
  });

  it('answers an INTERACTION_CREATE delivered twice once (as when two processes run the same shard)', async () => {
    const rec = h.fake.commandInteraction('/help', { guild: h.guild });
    const twice = new Promise<void>((resolve) => {
      let n = 0;
      const seen = (i: { id: string }) => {
        if (i.id !== rec.id || ++n < 2) return;
        h.bot.gateway!.client.off('interactionCreate', seen);
        resolve();
      };
      h.bot.gateway!.client.on('interactionCreate', seen);
    });
    h.fake.dispatchInteraction(rec);
    h.fake.dispatchInteraction(rec);
    await twice;
    await h.fake.settled(rec);
    await h.bot.gateway!.idle();
    expect(rec.callbacks).toEqual([4]);
    expect(rec.calls.filter((c) => c.status >= 400)).toEqual([]);
  });

  it('says which shard is not connected (for /readyz) once Discord closes it for good', async () => {
    const one = await startBotHarness(w.core, { now: w.now });
    try {
      const gw = one.bot.gateway!;
      expect(gw.problem()).toBeNull();
      const gone = new Promise((resolve) => gw.client.once('shardDisconnect', (_e, id) => resolve(id)));
      one.fake.dropShard(0, 4004, 'Authentication failed.');
      expect(await gone).toBe(0);
      expect(gw.problem()).toBe('gateway shard 0 of 1 not connected');
    } finally {
      await one.close();
    }
  });

  it("runs Discord's recommended shard count when SHARD_COUNT is unset", async () => {
    const rec = await startBotHarness(w.core, { now: w.now, shardCount: 'config', fake: { recommendedShards: 3 } });
    try {
      const client = rec.bot.gateway!.client;
      expect(client.options.shardCount).toBe(3);
      expect([...client.ws.shards.keys()].sort()).toEqual([0, 1, 2]);
      expect(rec.fake.identifies.map((i) => i.shard).sort()).toEqual([[0, 3], [1, 3], [2, 3]]);
    } finally {
      await rec.close();
    }
  });

  it('splits the shards over two bots by SHARD_IDS; the second waits its identify turn; each answers its own servers; one stopping leaves the other connected', async () => {
    // max_concurrency 1: one IDENTIFY per 5 s for the whole bot. The two bots share the core's
    // coordination, as two processes share Redis; the wait is fired by the test once Discord's
    // clock and the core's have moved 5 s.
    const turns = new ManualSchedule();
    const a = await startBotHarness(w.core, {
      now: w.now,
      shardCount: 'config',
      config: { SHARD_COUNT: 2, SHARD_IDS: [0] },
      fake: { maxConcurrency: 1 },
      identifySchedule: turns.schedule,
    });
    const onZero = a.guild.shardOf(2) === 0 ? a.guild : a.fake.addGuild({ name: 'zero', onShard: [0, 2] });
    const onOne = a.fake.addGuild({ name: 'one', onShard: [1, 2] });
    await deployCommands({ rest: discordRest(a.fake.apiUrl, a.fake.token), appId: a.fake.appId, definitions: a.bot.services.commands.definitions() });
    const b = await createBot({ ...a.core, config: { ...a.core.config, SHARD_IDS: [1] } }, {
      now: w.now,
      boardCheckMs: 3_600_000,
      deferAfterMs: 1000,
      schedule: a.deadlines.schedule,
      identifySchedule: turns.schedule,
    });
    try {
      expect([...a.fake.shards.keys()]).toEqual([0]);
      const started = b.start();
      await turns.next();
      expect(a.fake.shards.has(1)).toBe(false);
      w.clock.advance(IDENTIFY_TURN_MS);
      a.fake.advance(IDENTIFY_TURN_MS);
      turns.fire();
      await started;
      expect([...a.fake.shards.keys()].sort()).toEqual([0, 1]);
      expect(a.fake.identifyRejections).toEqual([]);
      const [first, second] = a.fake.identifies;
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(5_000);

      const handled = { a: [] as string[], b: [] as string[] };
      a.bot.gateway!.client.on('interactionCreate', (i) => handled.a.push(i.guildId!));
      b.gateway!.client.on('interactionCreate', (i) => handled.b.push(i.guildId!));
      for (const guild of [onZero, onOne]) {
        const rec = await a.send(a.fake.commandInteraction('/help', { guild }));
        expect(rec.callbacks).toEqual([4]);
      }
      expect(handled).toEqual({ a: [onZero.id], b: [onOne.id] });

      const gone = new Promise((resolve) => a.fake.gatewayEvents.once('disconnect', resolve));
      await a.bot.close();
      expect(await gone).toEqual({ shard: [0, 2] });
      expect([...a.fake.shards.keys()]).toEqual([1]);
      const rec = await a.send(a.fake.commandInteraction('/help', { guild: onOne }));
      expect(rec.callbacks).toEqual([4]);
      expect(handled.b).toEqual([onOne.id, onOne.id]);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
