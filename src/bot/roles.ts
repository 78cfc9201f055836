/**
 * Automatic roles: Discord roles that follow linked members' club membership, club role and
 * trophies, as the poller sees them change.
 *
 * - The rules live in the guild settings (durable); which role each member should have is a pure
 *   function of the rules and what the core knows of the member's accounts (`desiredRoles`).
 * - The bot touches only the roles named by a rule: it adds the ones a member should have and
 *   removes, among those, the ones they should not; every other role is left alone.
 * - Discord's rules are checked before anything is asked of it: the bot needs Manage Roles and can
 *   only manage roles below its own highest role (not managed ones, not @everyone). What is missing
 *   is said exactly (which permission, which role is above which), in /roles add, /roles list and
 *   /roles sync.
 * - Calls are paced: one at a time per server, a few servers at a time, and discord.js's REST queue
 *   keeps each route within Discord's rate-limit headers.
 * - The scheduled sync runs once per period across processes (core.coordination claims); between
 *   periods it asks Discord about a member only when what they should have changed since the last
 *   run (the first run asks about everyone), so a quiet server costs no Discord calls.
 */
import { randomBytes } from 'node:crypto';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Core } from '../core/index.ts';
import { NotFoundError } from '../upstream/errors.ts';
import { UserError } from './errors.ts';
import type { LinkStore } from './links.ts';
import type { ClubRole, GuildSettingsStore, RoleRule } from './settings.ts';
import { Colour } from './view.ts';
import { Ticker } from './ticker.ts';

/** The most automatic roles one server may have. */
export const MAX_ROLE_RULES = 25;
/** How often the scheduled sync looks at each server (default five minutes: the poller's pace). */
export const ROLE_SYNC_MS = 5 * 60_000;
/** Servers synced at once by the schedule; within a server, one call at a time. */
const GUILDS_AT_ONCE = 4;
/** A server's last good sync is written down at most this often when nothing else changes. */
const RECORD_OK_EVERY_MS = 3600_000;
/** Members whose accounts are read at once while working out what they should have. */
const MEMBERS_AT_ONCE = 8;

/** A role as Discord describes it (GET /guilds/{id}). */
export interface GuildRole {
  id: string;
  name: string;
  position: number;
  permissions: string;
  managed: boolean;
}

export interface GuildRoles {
  guildId: string;
  roles: GuildRole[];
  /** the roles of the bot's own member */
  botRoles: string[];
}

/** The Discord side of automatic roles (REST with the bot token). */
export interface RoleApi {
  /** the server's roles and the bot's; null when the bot is not in it */
  guild(guildId: string): Promise<GuildRoles | null>;
  /** a member's role ids; null when they are not in the server */
  memberRoles(guildId: string, userId: string): Promise<string[] | null>;
  addRole(guildId: string, userId: string, roleId: string): Promise<void>;
  removeRole(guildId: string, userId: string, roleId: string): Promise<void>;
  /** REST calls made so far (for the benchmark) */
  readonly calls: number;
  /** whether this process syncs that server (a shard holds it); default all */
  owns?(guildId: string): boolean;
}

/** What the core knows of one counted account of a member. */
export interface AccountFacts {
  tag: string;
  trophies?: number;
  /** club tag → the member's role there, for the clubs the rules name */
  clubs: Map<string, ClubRole>;
}

/** Whether one rule gives its role to a member with these accounts. */
export function ruleMatches(rule: RoleRule, accounts: readonly AccountFacts[]): boolean {
  return accounts.some((a) => {
    if (rule.club !== undefined) {
      const role = a.clubs.get(rule.club);
      return role !== undefined && (rule.clubRole === undefined || rule.clubRole === role);
    }
    if (rule.minTrophies !== undefined) {
      return a.trophies !== undefined && a.trophies >= rule.minTrophies && (rule.maxTrophies === undefined || a.trophies < rule.maxTrophies);
    }
    return false;
  });
}

/** The managed roles a member should have: those of every rule one of their accounts meets. */
export function desiredRoles(rules: readonly RoleRule[], accounts: readonly AccountFacts[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) if (ruleMatches(r, accounts)) out.add(r.roleId);
  return out;
}

/** Why the bot cannot manage a role, or null when it can. */
export type RoleBlock = { kind: 'unknown' } | { kind: 'everyone' } | { kind: 'managed' } | { kind: 'above'; botTop: string | null };

export interface BotAccess {
  manageRoles: boolean;
  /** the bot's highest role (null: only @everyone) and its position */
  top: GuildRole | null;
}

export function botAccess(g: GuildRoles): BotAccess {
  const byId = new Map(g.roles.map((r) => [r.id, r]));
  let perms = BigInt(byId.get(g.guildId)?.permissions ?? '0');
  let top: GuildRole | null = null;
  for (const id of g.botRoles) {
    const r = byId.get(id);
    if (!r) continue;
    perms |= BigInt(r.permissions);
    if (!top || r.position > top.position || (r.position === top.position && BigInt(r.id) < BigInt(top.id))) top = r;
  }
  const manageRoles = (perms & (PermissionFlagsBits.ManageRoles | PermissionFlagsBits.Administrator)) !== 0n;
  return { manageRoles, top };
}

/** Discord's hierarchy: a role the bot may give is below its highest role, not managed, not @everyone. */
export function roleBlock(g: GuildRoles, access: BotAccess, roleId: string): RoleBlock | null {
  if (roleId === g.guildId) return { kind: 'everyone' };
  const role = g.roles.find((r) => r.id === roleId);
  if (!role) return { kind: 'unknown' };
  if (role.managed) return { kind: 'managed' };
  const top = access.top;
  // Equal positions are ordered by id (the older role is higher), as Discord sorts them.
  const below = top !== null && (role.position < top.position || (role.position === top.position && BigInt(role.id) > BigInt(top.id)));
  return below ? null : { kind: 'above', botTop: top?.id ?? null };
}

/** The admin's words for a blocked role: a catalogue key and its values. */
export function blockProblem(roleId: string, b: RoleBlock): { key: string; values: Record<string, string> } {
  switch (b.kind) {
    case 'unknown':
      return { key: 'roles.problem.unknown', values: { role: roleId } };
    case 'everyone':
      return { key: 'roles.problem.everyone', values: {} };
    case 'managed':
      return { key: 'roles.problem.managed', values: { role: `<@&${roleId}>` } };
    case 'above':
      return { key: 'roles.problem.above', values: { role: `<@&${roleId}>`, bot: b.botTop ? `<@&${b.botTop}>` : '@everyone' } };
  }
}

const BLOCK_ERRORS: Record<RoleBlock['kind'], string> = {
  unknown: 'error.roleUnknown',
  everyone: 'error.roleEveryone',
  managed: 'error.roleManaged',
  above: 'error.roleAbove',
};

export interface MemberChange {
  userId: string;
  add: string[];
  remove: string[];
}

export interface SyncReport {
  /** false: the bot lacks Manage Roles, nothing was (or would be) changed */
  manageRoles: boolean;
  /** managed roles the bot cannot give or take, with why */
  blocked: { roleId: string; block: RoleBlock }[];
  changes: MemberChange[];
  /** members looked at, members not in the server, members whose accounts could not be read */
  members: number;
  notInServer: number;
  unreadable: number;
  /** clubs of the rules the game no longer knows */
  clubsGone: string[];
  /** changes Discord refused while applying */
  failed: number;
  applied: boolean;
  /** the schedule found nobody whose roles should change since the last run: Discord was not asked */
  quiet?: boolean;
}

export interface RoleSyncDeps {
  settings: GuildSettingsStore;
  links: LinkStore;
  now: () => number;
}

export class RoleSync {
  private api: RoleApi | null = null;
  private ticker: Ticker | undefined;
  /** what each member should have had at the last scheduled run: `guild:user` → sorted role ids */
  private readonly lastDesired = new Map<string, string>();

  constructor(
    private readonly core: Core,
    private readonly deps: RoleSyncDeps,
  ) {}

  /** Set by the transport that holds the bot token; null = cannot manage roles. */
  setApi(api: RoleApi | null): void {
    this.api = api;
  }

  get discord(): RoleApi | null {
    return this.api;
  }

  private requireApi(): RoleApi {
    if (!this.api) throw new UserError('error.rolesNoToken', {}, Colour.error);
    return this.api;
  }

  // ------------------------------------------------------------------ admin actions

  /** Checks that the bot may give `roleId`; throws the exact problem otherwise. */
  async check(guildId: string, roleId: string): Promise<void> {
    const api = this.requireApi();
    const g = await api.guild(guildId);
    if (!g) throw new UserError('error.rolesNoGuild', {}, Colour.error);
    const access = botAccess(g);
    if (!access.manageRoles) throw new UserError('error.rolesNoManageRoles', {}, Colour.warn);
    const b = roleBlock(g, access, roleId);
    if (b) throw new UserError(BLOCK_ERRORS[b.kind], blockProblem(roleId, b).values, Colour.warn);
  }

  async add(guildId: string, rule: Omit<RoleRule, 'id' | 'createdAt'>): Promise<RoleRule> {
    await this.check(guildId, rule.roleId);
    const full: RoleRule = { ...rule, id: randomBytes(3).toString('hex'), createdAt: this.deps.now() };
    await this.deps.settings.update(guildId, (s) => {
      if (s.roleRules.length >= MAX_ROLE_RULES) throw new UserError('error.rolesFull', { n: MAX_ROLE_RULES });
      s.roleRules.push(full);
    });
    if (full.club) await this.core.history.pin('club', full.club, `roles:${guildId}`).catch(() => undefined);
    this.forget(guildId);
    return full;
  }

  /** Removes every rule of a role; the role stays on whoever has it (it is no longer managed). */
  async remove(guildId: string, roleId: string): Promise<RoleRule[]> {
    let removed: RoleRule[] = [];
    await this.deps.settings.update(guildId, (s) => {
      removed = s.roleRules.filter((r) => r.roleId === roleId);
      s.roleRules = s.roleRules.filter((r) => r.roleId !== roleId);
    });
    const left = (await this.deps.settings.get(guildId)).roleRules;
    for (const club of new Set(removed.map((r) => r.club).filter((c): c is string => c !== undefined))) {
      if (!left.some((r) => r.club === club)) await this.core.history.unpin('club', club, `roles:${guildId}`).catch(() => undefined);
    }
    this.forget(guildId);
    return removed;
  }

  private forget(guildId: string): void {
    for (const k of this.lastDesired.keys()) if (k.startsWith(`${guildId}:`)) this.lastDesired.delete(k);
  }

  /** The problems of the server's rules right now (for /roles list). */
  async problems(guildId: string): Promise<{ manageRoles: boolean; blocked: { roleId: string; block: RoleBlock }[] } | null> {
    const api = this.requireApi();
    const g = await api.guild(guildId);
    if (!g) return null;
    const access = botAccess(g);
    const rules = (await this.deps.settings.get(guildId)).roleRules;
    const blocked = [...new Set(rules.map((r) => r.roleId))]
      .map((roleId) => ({ roleId, block: roleBlock(g, access, roleId) }))
      .filter((x): x is { roleId: string; block: RoleBlock } => x.block !== null);
    return { manageRoles: access.manageRoles, blocked };
  }

  // ------------------------------------------------------------------ sync

  /** What each linked member of the server should have, from the core's copies of their accounts. */
  private async desired(guildId: string): Promise<{ byMember: Map<string, Set<string>>; unreadable: Set<string>; clubsGone: string[] }> {
    const settings = await this.deps.settings.get(guildId);
    const rules = settings.roleRules;
    const required = settings.verification === 'required';
    const read = { priority: 'poll', viewed: false } as const;
    const clubs = new Map<string, Map<string, ClubRole>>();
    // Trophies of the rule clubs' members come with the member lists: no profile read for them.
    const trophiesOf = new Map<string, number>();
    const clubsGone: string[] = [];
    for (const tag of new Set(rules.map((r) => r.club).filter((c): c is string => c !== undefined))) {
      try {
        const club = await this.core.stats.club(tag, read);
        clubs.set(tag, new Map(club.data.members.map((m) => [m.tag, m.role as ClubRole])));
        for (const m of club.data.members) trophiesOf.set(m.tag, m.trophies);
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        clubsGone.push(tag);
        clubs.set(tag, new Map());
      }
    }
    const needTrophies = rules.some((r) => r.minTrophies !== undefined);
    const byMember = new Map<string, Set<string>>();
    const unreadable = new Set<string>();
    const facts = async (userId: string): Promise<void> => {
      const linked = await this.deps.links.get(userId);
      const accounts: AccountFacts[] = [];
      for (const tag of linked.tags) {
        if (!(await this.deps.links.counts(userId, tag, required))) continue;
        const account: AccountFacts = { tag, clubs: new Map() };
        for (const [club, members] of clubs) {
          const role = members.get(tag);
          if (role) account.clubs.set(club, role);
        }
        const listed = trophiesOf.get(tag);
        if (listed !== undefined) account.trophies = listed;
        else if (needTrophies) {
          try {
            account.trophies = (await this.core.stats.player(tag, read)).data.trophies;
          } catch {
            // Unknown to the game now, or the game's API is down: leave this member as they are.
            unreadable.add(userId);
          }
        }
        accounts.push(account);
      }
      if (!unreadable.has(userId)) byMember.set(userId, desiredRoles(rules, accounts));
    };
    // A few members at a time: their reads (links, owners, cached profiles) wait on the stores, not the CPU.
    for (let i = 0; i < settings.members.length; i += MEMBERS_AT_ONCE) {
      await Promise.all(settings.members.slice(i, i + MEMBERS_AT_ONCE).map(facts));
    }
    return { byMember, unreadable, clubsGone };
  }

  /**
   * Compares what members should have with what they have and, unless `dryRun`, changes it.
   * `onlyChanged` (the schedule) asks Discord only about members whose roles should differ from
   * the last run.
   */
  async sync(guildId: string, opts: { dryRun: boolean; onlyChanged?: boolean }): Promise<SyncReport> {
    const api = this.requireApi();
    const { byMember, unreadable, clubsGone } = await this.desired(guildId);
    const wanted = (userId: string, want: Set<string>) => [`${guildId}:${userId}`, [...want].sort().join(',')] as const;
    const asked = [...byMember].filter(([userId, want]) => {
      const [key, wantKey] = wanted(userId, want);
      return !opts.onlyChanged || this.lastDesired.get(key) !== wantKey;
    });
    const settings = await this.deps.settings.get(guildId);
    if (asked.length === 0 && opts.onlyChanged) {
      // Nobody's roles should differ from the last run: no call to Discord at all.
      return { manageRoles: true, blocked: [], changes: [], members: byMember.size + unreadable.size, notInServer: 0, unreadable: unreadable.size, clubsGone, failed: 0, applied: true, quiet: true };
    }
    const g = await api.guild(guildId);
    if (!g) throw new UserError('error.rolesNoGuild', {}, Colour.error);
    const access = botAccess(g);
    const managed = [...new Set(settings.roleRules.map((r) => r.roleId))];
    const blocked = managed
      .map((roleId) => ({ roleId, block: roleBlock(g, access, roleId) }))
      .filter((x): x is { roleId: string; block: RoleBlock } => x.block !== null);
    const usable = new Set(managed.filter((id) => !blocked.some((b) => b.roleId === id)));
    const report: SyncReport = {
      manageRoles: access.manageRoles,
      blocked,
      changes: [],
      members: byMember.size + unreadable.size,
      notInServer: 0,
      unreadable: unreadable.size,
      clubsGone,
      failed: 0,
      applied: false,
    };
    const seen: [string, string][] = [];
    for (const [userId, want] of asked) {
      const [key, wantKey] = wanted(userId, want);
      const has = await api.memberRoles(guildId, userId);
      if (has === null) {
        report.notInServer++;
        continue;
      }
      const add = [...want].filter((r) => usable.has(r) && !has.includes(r));
      const remove = has.filter((r) => usable.has(r) && !want.has(r));
      if (add.length || remove.length) report.changes.push({ userId, add, remove });
      seen.push([key, wantKey]);
    }
    if (opts.dryRun || !access.manageRoles) {
      return report;
    }
    for (const c of report.changes) {
      for (const [roleId, op] of [...c.add.map((r) => [r, 'add'] as const), ...c.remove.map((r) => [r, 'remove'] as const)]) {
        try {
          if (op === 'add') await api.addRole(guildId, c.userId, roleId);
          else await api.removeRole(guildId, c.userId, roleId);
        } catch (e) {
          report.failed++;
          this.core.logger.warn({ err: e, guild: guildId, member: c.userId, role: roleId, op }, 'role change refused');
        }
      }
    }
    report.applied = true;
    // Remembered only once applied: a refused change is tried again next time.
    if (report.failed === 0) for (const [k, v] of seen) this.lastDesired.set(k, v);
    return report;
  }

  /** One scheduled pass: every server with rules whose period this process claims. */
  async tick(periodMs = ROLE_SYNC_MS): Promise<{ synced: number; changed: number; failed: number }> {
    const api = this.api;
    if (!api) return { synced: 0, changed: 0, failed: 0 };
    const now = this.deps.now();
    const period = Math.floor(now / periodMs) * periodMs;
    const due: string[] = [];
    for (const guildId of await this.deps.settings.guildsWithRoles()) {
      if (api.owns && !api.owns(guildId)) continue;
      // Once per period across every process of the installation.
      if (await this.core.coordination.claim(`roles:${guildId}:${period}`, periodMs)) due.push(guildId);
    }
    let synced = 0;
    let changed = 0;
    let failed = 0;
    for (let i = 0; i < due.length; i += GUILDS_AT_ONCE) {
      const results = await Promise.all(due.slice(i, i + GUILDS_AT_ONCE).map((guildId) => this.scheduled(guildId)));
      for (const r of results) {
        if (!r) {
          failed++;
          continue;
        }
        synced++;
        changed += r.changes.length;
      }
    }
    return { synced, changed, failed };
  }

  /** One server's scheduled sync; its outcome is recorded for /roles list. Never throws. */
  private async scheduled(guildId: string): Promise<SyncReport | null> {
    const now = this.deps.now();
    let report: SyncReport | null = null;
    let problem: { key: string; values?: Record<string, string> } | undefined;
    const before = (await this.deps.settings.get(guildId)).roleSync;
    try {
      report = await this.sync(guildId, { dryRun: false, onlyChanged: true });
      // Nobody to look at: the last outcome still stands, problem or not.
      if (report.quiet && before.problem) return report;
      if (!report.manageRoles) problem = { key: 'roles.problem.noManageRoles' };
      else if (report.blocked.length) problem = blockProblem(report.blocked[0]!.roleId, report.blocked[0]!.block);
    } catch (e) {
      this.core.logger.warn({ err: e, guild: guildId }, 'role sync failed');
      problem = { key: 'roles.problem.failed' };
    }
    const changed = before.problem !== problem?.key || JSON.stringify(before.problemValues ?? {}) !== JSON.stringify(problem?.values ?? {});
    // Written when the outcome changes, and a success at most hourly: quiet servers cost no writes.
    const stale = before.lastOkAt === undefined || now - before.lastOkAt >= RECORD_OK_EVERY_MS;
    if (changed || (!problem && stale)) {
      await this.deps.settings.update(guildId, (s) => {
        s.roleSync = problem
          ? { ...s.roleSync, lastRunAt: now, problem: problem.key, problemValues: problem.values ?? {} }
          : { lastRunAt: now, lastOkAt: now };
      });
    }
    return report;
  }


  /** Runs `tick` every `everyMs` (default ROLE_SYNC_MS) until `stop`. */
  start(everyMs = ROLE_SYNC_MS): void {
    this.ticker ??= new Ticker('role sync tick', this.core.logger);
    this.ticker.start(everyMs, () => this.tick(everyMs));
  }

  async stop(): Promise<void> {
    await this.ticker?.stop();
  }
}
