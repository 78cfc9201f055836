/**
 * Automatic roles end to end over the gateway, in virtual time: the simulated world moves a player
 * into a club, promotes them and takes them out again, and the linked member's Discord roles follow
 * through the real discord.js client and the fake Discord's role endpoints. A dry run lists without
 * changing; a missing Manage Roles and a role above the bot's are reported exactly; roles no rule
 * names are never touched; each period's sync runs once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermissionFlagsBits, type APIRole, type APIUser } from 'discord-api-types/v10';
import { startWorld, worldBackends, type TestWorld, type WorldBackend } from './support/world.ts';
import { startBotHarness, type BotHarness } from './support/fake-discord-bot.ts';
import { MEMBER_PERMISSIONS } from './support/fake-discord.ts';
import { createBotServices } from '../src/bot/services.ts';
import { RestRoles, discordRest } from '../src/bot/discord-rest.ts';
import { desiredRoles, roleBlock, botAccess, reconcileSlot, rulesFingerprint, ROLE_RECONCILE_MS, ROLE_SYNC_MS, type AccountFacts } from '../src/bot/roles.ts';
import type { RoleRule } from '../src/bot/settings.ts';
import { Poller } from '../src/poller/index.ts';

const START = Date.UTC(2026, 5, 1, 12);
const DAY = 86_400_000;
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
const RANK: Record<string, number> = { member: 0, senior: 1, vicePresident: 2, president: 3 };
let w: TestWorld;
let h: BotHarness;
let poller: Poller;


const slash = (text: string, user?: APIUser, permissions: bigint = ADMIN) =>
  h.send(h.fake.commandInteraction(text, { guild: h.guild, permissions, bypassCommandPermissions: true, ...(user ? { user } : {}) }));
const embed = async (text: string, user?: APIUser, permissions?: bigint) => h.fake.answer(await slash(text, user, permissions)).embeds[0]!;

/** Where a player is at a time, from the world model (what the game's API says then). */
function place(i: number, t: number): { club: string | null; role: string | null } {
  const c = w.sim.world.playerClub(i, t);
  if (c < 0) return { club: null, role: null };
  const tag = w.sim.world.clubTag(c);
  const members = w.sim.world.clubMembers(tag, t) as { tag: string; role: string }[];
  return { club: tag, role: members.find((m) => m.tag === w.sim.world.playerTag(i))?.role ?? null };
}

/** A player who is in no club, joins one as a member, is promoted there, then leaves it: the days of each. */
function careerInWorld(): { i: number; club: string; promotedTo: string; days: [number, number, number, number] } {
  for (let i = 0; i < w.sim.world.playerCount; i++) {
    let phase = 0;
    let club: string | null = null;
    let promotedTo = '';
    const days: number[] = [];
    for (let d = 0; d <= 200 && phase < 4; d++) {
      const s = place(i, START + d * DAY);
      if (phase === 0 && s.club === null) (phase = 1), days.push(d);
      else if (phase === 1 && s.club !== null && s.role === 'member') (club = s.club), (phase = 2), days.push(d);
      else if (phase === 1 && s.club !== null) (phase = 0), (days.length = 0);
      else if (phase === 2 && s.club === club && RANK[s.role!]! > 0) (promotedTo = s.role!), (phase = 3), days.push(d);
      else if (phase === 2 && s.club !== club) (phase = 0), (days.length = 0);
      else if (phase === 3 && s.club !== club) (phase = 4), days.push(d);
      else if (phase === 3 && s.role !== promotedTo) (phase = 0), (days.length = 0);
    }
    if (phase === 4) return { i, club: club!, promotedTo, days: days as [number, number, number, number] };
  }
  throw new Error('no such career in this world');
}

/** Moves the world to day `d` and lets the poller record what changed (as it does every few minutes in production). */
async function toDay(d: number): Promise<void> {
  w.clock.advance(START + d * DAY - w.now());
  await poll();
}

async function poll(): Promise<void> {
  await poller.runOnce();
  await w.history.flush();
}

describe.each(worldBackends())('automatic roles on $name', (backend: WorldBackend) => {
  beforeAll(async () => {
    w = await startWorld({ startMs: START, ...backend.options });
    h = await startBotHarness(w.core, { now: w.now });
    poller = new Poller({ stats: w.stats, history: w.history, config: w.config, clock: { now: w.now, sleep: async () => {} }, pinTopPlayers: 0 });
  });

  afterAll(async () => {
    await poller?.stop();
    await h?.close();
    await w?.close();
  });

  describe('/roles', () => {
    let member: APIUser;
    let other: APIUser;
    let roleMember: APIRole;
    let rolePromoted: APIRole;
    let roleAbove: APIRole;
    let unmanaged: APIRole;
    let career: ReturnType<typeof careerInWorld>;

    beforeAll(() => {
      career = careerInWorld();
      roleMember = h.fake.addRole(h.guild, 'Club member');
      rolePromoted = h.fake.addRole(h.guild, 'Club staff');
      unmanaged = h.fake.addRole(h.guild, 'Artists');
      roleAbove = h.fake.addRole(h.guild, 'Moderators', { aboveBot: true });
      member = h.fake.addUser('climber');
      h.fake.addMember(h.guild, member, [unmanaged.id]);
    });

    it('says exactly what is missing: Manage Roles, then a role above the bot’s', async () => {
      const noPerm = await embed(`/roles add role:${roleMember.id} club:${career.club}`);
      expect(noPerm.title).toBe('Manage Roles needed');
      expect(noPerm.description).toContain('**Manage Roles**');
      h.fake.setBotPermissions(h.guild, MEMBER_PERMISSIONS | PermissionFlagsBits.ManageRoles);
      const above = await embed(`/roles add role:${roleAbove.id} club:${career.club}`);
      expect(above.title).toBe('Role above mine');
      expect(above.description).toContain(`<@&${roleAbove.id}> is at or above my highest role <@&${h.guild.botRoleId}>`);
      const both = await embed(`/roles add role:${roleMember.id} club:${career.club} min-trophies:100`);
      expect(both.title).toBe('Club or trophies');
      const empty = await embed(`/roles add role:${roleMember.id} min-trophies:500 max-trophies:400`);
      expect(empty.title).toBe('Empty bracket');
      const notAdmin = await embed(`/roles list`, member, MEMBER_PERMISSIONS);
      expect(notAdmin.title).toBe('Manage Server needed');
      expect((await h.bot.services.settings.get(h.guild.id)).roleRules).toEqual([]);
    });

    it('follows a member who joins a club, is promoted and leaves; a dry run changes nothing; other roles stay', async () => {
      await toDay(career.days[0]);
      expect(h.fake.answer(await slash(`/link tag:${w.sim.world.playerTag(career.i)}`, member, MEMBER_PERMISSIONS)).embeds[0]!.title).toBe('Account linked');
      const added = await embed(`/roles add role:${roleMember.id} club:${career.club}`);
      expect(added.title).toBe('Automatic role added');
      expect(added.description).toContain(`<@&${roleMember.id}>`);
      await slash(`/roles add role:${rolePromoted.id} club:${career.club} club-role:${career.promotedTo}`);
      const list = await embed('/roles list');
      expect(list.description).toContain(`<@&${roleMember.id}> ← members of`);
      expect(list.description).toContain('Not synced yet');

      // Out of the club: nothing to do.
      expect((await embed('/roles sync dry-run:True')).description).toMatch(/^Nothing would change \(1 linked member looked at\)/);

      // Joined as a member: the preview lists it and changes nothing; the schedule then gives it.
      await toDay(career.days[1]);
      const preview = await embed('/roles sync dry-run:True');
      expect(preview.title).toBe('Roles sync preview');
      expect(preview.description).toContain(`<@${member.id}> +<@&${roleMember.id}>`);
      expect(preview.description).toContain('Nothing has been changed.');
      expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      expect(await h.bot.services.roles.tick()).toMatchObject({ synced: 1, changed: 1 });
      expect(h.fake.memberRoles(h.guild, member.id).sort()).toEqual([unmanaged.id, roleMember.id].sort());
      // The same period again, here or in a second bot process sharing the coordination: claimed
      // already, nothing is done twice.
      expect(await h.bot.services.roles.tick()).toMatchObject({ synced: 0 });
      const second = await createBotServices(h.core, { now: w.now });
      second.roles.setApi(new RestRoles(discordRest(h.fake.apiUrl, h.fake.token)));
      expect(await second.roles.tick()).toMatchObject({ synced: 0 });

      // Promoted: the staff role too.
      await toDay(career.days[2]);
      await h.bot.services.roles.tick();
      expect(h.fake.memberRoles(h.guild, member.id).sort()).toEqual([unmanaged.id, roleMember.id, rolePromoted.id].sort());

      // Left: both managed roles go, the unmanaged one stays.
      await toDay(career.days[3]);
      await h.bot.services.roles.tick();
      expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      expect((await embed('/roles list')).description).toMatch(/Last synced/);
      expect(h.fake.rejections).toEqual([]);
    });

    it('counts only verified accounts when the server requires it, and says when Manage Roles is gone', async () => {
      // Another member, in the club now.
      const now = w.now();
      const inClub = (w.sim.world.clubMembers(career.club, now) as { tag: string; role: string }[])[1]!;
      other = h.fake.addUser('regular');
      h.fake.addMember(h.guild, other, []);
      await slash(`/link tag:${inClub.tag}`, other, MEMBER_PERMISSIONS);
      // Linking syncs the member's roles in this server at once: /roles sync then has nothing to do.
      expect(h.fake.memberRoles(h.guild, other.id)).toContain(roleMember.id);
      const open = await embed('/roles sync');
      expect(open.title, open.description).toBe('Roles synced');
      expect(open.description).toMatch(/^Everyone already has the right roles \(2 linked members looked at\)/);

      await slash('/settings verification mode:required');
      const strict = await embed('/roles sync dry-run:True');
      expect(strict.description).toContain(`<@${other.id}> −<@&${roleMember.id}>`);
      await slash('/settings verification mode:optional');

      h.fake.setBotPermissions(h.guild, MEMBER_PERMISSIONS);
      const list = await embed('/roles list');
      expect(list.description).toContain('I need the **Manage Roles** permission');
      await slash('/settings verification mode:required');
      const blocked = await embed('/roles sync');
      expect(blocked.description).toMatch(/^Nothing was changed: 1 member needs a change/);
      expect(h.fake.memberRoles(h.guild, other.id)).toContain(roleMember.id);
      // The schedule meets the same wall and records it for /roles list.
      w.clock.advance(5 * 60_000);
      await h.bot.services.roles.tick();
      expect((await h.bot.services.settings.get(h.guild.id)).roleSync.problem).toBe('roles.problem.noManageRoles');
      expect(h.fake.memberRoles(h.guild, other.id)).toContain(roleMember.id);
      await slash('/settings verification mode:optional');

      const removed = await embed(`/roles remove role:${roleMember.id}`);
      expect(removed.title).toBe('Automatic role removed');
      // No longer managed: left where it is.
      expect(h.fake.memberRoles(h.guild, other.id)).toContain(roleMember.id);
      expect((await embed(`/roles remove role:${roleMember.id}`)).title).toBe('Not an automatic role');
    });

    it('follows only what the poller records, asks Discord about nobody when nothing changed, and restores a role removed by hand at the reconciliation', async () => {
      const i = career.i;
      const trophies = (t: number) => w.sim.world.trophies(i, t);
      const slots = ROLE_RECONCILE_MS / ROLE_SYNC_MS;
      const slot = reconcileSlot(h.guild.id, slots);
      let t0 = Math.floor(w.now() / ROLE_SYNC_MS) * ROLE_SYNC_MS + ROLE_SYNC_MS;
      // the quiet period after t0 must not be the server's reconciliation slot (its id is new each run)
      if (Math.floor(t0 / ROLE_SYNC_MS + 1) % slots === slot) t0 += ROLE_SYNC_MS;
      const range = (from: number, ms: number) => Array.from({ length: ms / ROLE_SYNC_MS + 1 }, (_, k) => trophies(from + k * ROLE_SYNC_MS));
      // A day on which the climber stands, for the next seven hours, above where they stand now:
      // a bracket starting there is theirs from that day on, and not before.
      const before = Math.max(...range(t0, 2 * ROLE_SYNC_MS));
      let t1 = 0;
      let bracket = 0;
      for (let d = 1; d <= 120 && !t1; d++) {
        const at = t0 + d * DAY;
        const low = Math.min(...range(at, ROLE_RECONCILE_MS + ROLE_SYNC_MS));
        if (low > before) (t1 = at), (bracket = low);
      }
      expect(t1, 'a climb in this world').toBeGreaterThan(0);
      const roleHigh = h.fake.addRole(h.guild, 'Climbers');
      h.fake.setBotPermissions(h.guild, MEMBER_PERMISSIONS | PermissionFlagsBits.ManageRoles);
      w.clock.set(t0);
      await poll();
      expect((await embed(`/roles add role:${roleHigh.id} min-trophies:${bracket}`)).title).toBe('Automatic role added');

      // New rules: this period's pass compares every member with Discord.
      const first = await h.bot.services.roles.tick();
      expect(first).toMatchObject({ synced: 1, reconciled: 1 });
      expect(first.asked).toBe(2);
      expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      const state = await h.bot.services.settings.roleState(h.guild.id);
      expect(state?.rules).toBe(rulesFingerprint(await h.bot.services.settings.get(h.guild.id)));
      expect(Object.keys(state!.members).sort()).toEqual([member.id, other.id].sort());

      // The next period, nothing recorded since: not one call to Discord.
      w.clock.set(t0 + ROLE_SYNC_MS);
      await poll();
      const calls = h.fake.requests.length;
      expect(await h.bot.services.roles.tick()).toMatchObject({ synced: 1, reconciled: 0, asked: 0, changed: 0 });
      expect(h.fake.requests.length).toBe(calls);

      // The climb, as the poller records it: the bracket's role, asking Discord about the climber
      // (and whoever else moved), not about everyone.
      w.clock.set(t1);
      await poll();
      if (Math.floor(t1 / ROLE_SYNC_MS) % slots === slot) w.clock.advance(ROLE_SYNC_MS);
      const climb = await h.bot.services.roles.tick();
      expect(climb).toMatchObject({ synced: 1, reconciled: 0 });
      expect(climb.changed).toBeGreaterThanOrEqual(1);
      expect(h.fake.memberRoles(h.guild, member.id).sort()).toEqual([unmanaged.id, roleHigh.id].sort());

      // An admin takes the role away by hand. The passes that follow the poller leave it (nothing
      // changed in the game); the server's reconciliation, in its slot of the six-hour cycle, gives it back.
      h.fake.setMemberRoles(h.guild, member.id, [unmanaged.id]);
      let reconciled = false;
      for (let k = 0; k < slots && !reconciled; k++) {
        w.clock.advance(ROLE_SYNC_MS);
        const r = await h.bot.services.roles.tick();
        reconciled = r.reconciled === 1;
        if (!reconciled) expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      }
      expect(reconciled).toBe(true);
      expect(Math.floor(w.now() / ROLE_SYNC_MS) % slots).toBe(slot);
      expect(h.fake.memberRoles(h.guild, member.id).sort()).toEqual([unmanaged.id, roleHigh.id].sort());

      // Unlinking takes the managed roles away at once; the others stay.
      expect((await embed('/unlink', member, MEMBER_PERMISSIONS)).title).toBe('Unlinked');
      expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      expect(h.fake.rejections.filter((r) => r.route.includes('/roles/'))).toEqual([]);
    });
  });
});

describe('rules', () => {
  const rule = (r: Partial<RoleRule>): RoleRule => ({ id: 'x', roleId: 'r', createdBy: 'u', createdAt: 0, ...r });
  const account = (trophies: number, clubs: [string, 'member' | 'senior' | 'vicePresident' | 'president'][] = []): AccountFacts => ({
    tag: '#A',
    trophies,
    clubs: new Map(clubs),
  });

  it('matches club membership, one club role, and trophy brackets [min, max)', () => {
    const rules = [
      rule({ roleId: 'any', club: '#C' }),
      rule({ roleId: 'senior', club: '#C', clubRole: 'senior' }),
      rule({ roleId: 'low', minTrophies: 0, maxTrophies: 1000 }),
      rule({ roleId: 'high', minTrophies: 1000 }),
    ];
    expect([...desiredRoles(rules, [account(999, [['#C', 'member']])])].sort()).toEqual(['any', 'low']);
    expect([...desiredRoles(rules, [account(1000, [['#C', 'senior']])])].sort()).toEqual(['any', 'high', 'senior']);
    expect([...desiredRoles(rules, [account(5, [['#D', 'senior']])])]).toEqual(['low']);
    // Several accounts: any of them may meet a rule.
    expect([...desiredRoles(rules, [account(5), account(2000, [['#C', 'member']])])].sort()).toEqual(['any', 'high', 'low']);
    expect([...desiredRoles(rules, [])]).toEqual([]);
  });

  it('applies Discord’s hierarchy: below the bot’s highest role only, never managed roles or @everyone', () => {
    const g = {
      guildId: 'g',
      roles: [
        { id: 'g', name: '@everyone', position: 0, permissions: '0', managed: false },
        { id: '10', name: 'low', position: 1, permissions: '0', managed: false },
        { id: '20', name: 'bot', position: 2, permissions: String(PermissionFlagsBits.ManageRoles), managed: true },
        { id: '30', name: 'high', position: 3, permissions: '0', managed: false },
        { id: '40', name: 'same', position: 2, permissions: '0', managed: false },
      ],
      botRoles: ['20'],
    };
    const access = botAccess(g);
    expect(access.manageRoles).toBe(true);
    expect(roleBlock(g, access, '10')).toBeNull();
    expect(roleBlock(g, access, '30')).toEqual({ kind: 'above', botTop: '20' });
    // Same position: the older role (smaller id) is the higher one.
    expect(roleBlock(g, access, '40')).toBeNull();
    expect(roleBlock(g, access, '20')).toEqual({ kind: 'managed' });
    expect(roleBlock(g, access, 'g')).toEqual({ kind: 'everyone' });
    expect(roleBlock(g, access, '99')).toEqual({ kind: 'unknown' });
    expect(botAccess({ ...g, botRoles: [] }).manageRoles).toBe(false);
  });
});
