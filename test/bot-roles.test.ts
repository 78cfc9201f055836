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
import { desiredRoles, roleBlock, botAccess, type AccountFacts } from '../src/bot/roles.ts';
import type { RoleRule } from '../src/bot/settings.ts';

const START = Date.UTC(2026, 5, 1, 12);
const DAY = 86_400_000;
const ADMIN = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
const RANK: Record<string, number> = { member: 0, senior: 1, vicePresident: 2, president: 3 };
let w: TestWorld;
let h: BotHarness;


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

const toDay = (d: number) => w.clock.advance(START + d * DAY - w.now());

describe.each(worldBackends())('automatic roles on $name', (backend: WorldBackend) => {
  beforeAll(async () => {
    w = await startWorld({ startMs: START, ...backend.options });
    h = await startBotHarness(w.core, { now: w.now });
  });

  afterAll(async () => {
    await h?.close();
    await w?.close();
  });

  describe('/roles', () => {
    let member: APIUser;
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
      toDay(career.days[0]);
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
      toDay(career.days[1]);
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
      toDay(career.days[2]);
      await h.bot.services.roles.tick();
      expect(h.fake.memberRoles(h.guild, member.id).sort()).toEqual([unmanaged.id, roleMember.id, rolePromoted.id].sort());

      // Left: both managed roles go, the unmanaged one stays.
      toDay(career.days[3]);
      await h.bot.services.roles.tick();
      expect(h.fake.memberRoles(h.guild, member.id)).toEqual([unmanaged.id]);
      expect((await embed('/roles list')).description).toMatch(/Last synced/);
      expect(h.fake.rejections).toEqual([]);
    });

    it('counts only verified accounts when the server requires it, and says when Manage Roles is gone', async () => {
      // Another member, in the club now.
      const now = w.now();
      const inClub = (w.sim.world.clubMembers(career.club, now) as { tag: string; role: string }[])[1]!;
      const other = h.fake.addUser('regular');
      h.fake.addMember(h.guild, other, []);
      await slash(`/link tag:${inClub.tag}`, other, MEMBER_PERMISSIONS);
      const open = await embed('/roles sync');
      expect(open.title, open.description).toBe('Roles synced');
      expect(open.description).toContain(`<@${other.id}> +<@&${roleMember.id}>`);
      expect(h.fake.memberRoles(h.guild, other.id)).toContain(roleMember.id);

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
