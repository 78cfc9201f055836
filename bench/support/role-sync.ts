/**
 * bench:bot's automatic roles part: role sync for many servers of linked members, through the
 * real RoleSync and its REST client against the fake Discord, over the simulated world.
 *
 * Each server links `members` members: the members of one club plus others, with three rules (the
 * club, one club role of it, a trophy bracket). The game data is read once before measuring, as
 * the poller keeps it in the cache in production. Then, per poll cycle (one scheduled pass over
 * every server): time, Discord REST calls (reads and role changes), members changed, memory.
 * - cycle 1: the first run after start, which asks Discord about every linked member;
 * - cycle 2: a day later in the world (joins, leaves, promotions, trophy moves): only members
 *   whose roles should change are asked about;
 * - cycle 3: nothing moved: no Discord calls.
 * - then every five minutes, as the schedule runs in production: each pass syncs the members the
 *   poller saw change and reconciles the servers of its slot (1/72 of them) member by member.
 * Before each cycle the game data is read again (the poller's work, timed apart; it records what
 * changed in the history store, where the sync finds it), so each cycle measures the sync alone.
 */
import { REST } from 'discord.js';
import { RestRoles, restOptions } from '../../src/bot/discord-rest.ts';
import { linkPin } from '../../src/bot/links.ts';
import { createBotServices } from '../../src/bot/services.ts';
import { FakeDiscord } from '../../test/support/fake-discord.ts';
import { startWorld } from '../../test/support/world.ts';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { MEMBER_PERMISSIONS } from '../../test/support/fake-discord.ts';

export interface RoleCycle {
  label: string;
  ms: number;
  calls: number;
  changed: number;
  /** members Discord was asked about, servers compared member by member */
  asked: number;
  reconciled: number;
  rssMb: number;
  heapMb: number;
}

export async function roleSyncBench(servers: number, members: number, quietCycles = 2): Promise<{ cycles: RoleCycle[]; refused: number; warmMs: number }> {
  const DAY = 86_400_000;
  const world = await startWorld({ startMs: Date.UTC(2026, 5, 1, 12), players: 5000, clubs: 500, renderWorkers: 1, env: { RATE_LIMIT_FREE: '1000000' } });
  const fake = await FakeDiscord.start();
  const services = await createBotServices(world.core, { now: world.now });
  // Discord allows a bot 50 requests per second in all (discord.js waits for that by default): the
  // first run's time would be calls / 50 whatever the bot does. Lifted here to measure the bot's own
  // cost; the report prints the floor Discord's limit sets beside it.
  const rest = new REST({ ...restOptions(fake.apiUrl), globalRequestsPerSecond: 1_000_000 }).setToken(fake.token);
  const api = new RestRoles(rest, { botUserId: fake.bot.id });
  services.roles.setApi(api);
  const tags = new Set<string>();
  const clubTags = new Set<string>();
  for (let s = 0; s < servers; s++) {
    const g = fake.addGuild({ name: `bench ${s}`, botPermissions: MEMBER_PERMISSIONS | PermissionFlagsBits.ManageRoles });
    const roleClub = fake.addRole(g, 'Club');
    const roleSenior = fake.addRole(g, 'Senior');
    const roleHigh = fake.addRole(g, '20k+');
    const club = world.sim.world.clubTag(s % 500);
    clubTags.add(club);
    const inClub = (world.sim.world.clubMembers(club, world.now()) as { tag: string }[]).map((m) => m.tag);
    const ids: string[] = [];
    for (let m = 0; m < members; m++) {
      const tag = m < inClub.length ? inClub[m]! : world.sim.world.playerTag((s * members + m) % 5000);
      tags.add(tag);
      const user = fake.addUser(`m${s}-${m}`);
      fake.addMember(g, user, []);
      await services.links.link(user.id, tag, false);
      // As /link does: the account is pinned for the member, so the poller records it.
      await world.core.history.pin('player', tag, linkPin(user.id));
      ids.push(user.id);
    }
    await services.settings.update(g.id, (st) => {
      st.members = ids;
      st.roleRules = [
        { id: 'a', roleId: roleClub.id, club, createdBy: '1', createdAt: 0 },
        { id: 'b', roleId: roleSenior.id, club, clubRole: 'senior', createdBy: '1', createdAt: 0 },
        { id: 'c', roleId: roleHigh.id, minTrophies: 20_000, createdBy: '1', createdAt: 0 },
      ];
    });
  }
  // What the poller does in production: the game data is in the cache before the sync reads it.
  const read = { priority: 'poll', viewed: false } as const;
  const warm = async () => {
    const t0 = performance.now();
    const all = [...tags];
    for (let i = 0; i < all.length; i += 16) await Promise.all(all.slice(i, i + 16).map((t) => world.core.stats.player(t, read).catch(() => undefined)));
    for (const c of clubTags) await world.core.stats.club(c, read).catch(() => undefined);
    await world.history.flush();
    return performance.now() - t0;
  };
  const warmMs = await warm();
  const cycles: RoleCycle[] = [];
  const cycle = async (label: string) => {
    globalThis.gc?.();
    const calls0 = api.calls;
    const t0 = performance.now();
    const r = await services.roles.tick(5 * 60_000);
    const ms = performance.now() - t0;
    globalThis.gc?.();
    const mem = process.memoryUsage();
    cycles.push({ label, ms, calls: api.calls - calls0, changed: r.changed, asked: r.asked, reconciled: r.reconciled, rssMb: mem.rss / 1048576, heapMb: mem.heapUsed / 1048576 });
    world.clock.advance(5 * 60_000);
  };
  await cycle('first run (asks about every member)');
  world.clock.advance(DAY);
  await warm();
  await cycle('a day later in the world');
  await warm();
  await cycle('nothing moved');
  for (let i = 0; i < quietCycles; i++) await cycle(`next pass, nothing polled (${i + 1})`);
  const refused = fake.rejections.length;
  await fake.close();
  await world.close();
  return { cycles, refused, warmMs };
}
