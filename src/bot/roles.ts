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
 * - The scheduled sync runs once per period across processes (core.coordination claims) and
 *   follows what the poller recorded since the previous pass: linked accounts whose state changed
 *   (found through their `link:<member>` pins) and joins, leaves and club role changes of the rule
 *   clubs. Only those members are worked out, and Discord is asked about one only when what they
 *   should have differs from what the last sync gave them (RoleState, durable, per server), so a
 *   quiet server costs no Discord call, before or after a restart.
 * - Each server is also reconciled (every member compared with Discord, a managed role removed by
 *   hand put back) once per ROLE_RECONCILE_MS in its own slot; rule changes make the next pass a
 *   reconciliation. A sync works a page of members at a time.
 */
import { randomBytes } from 'node:crypto';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Core } from '../core/index.ts';
import { NotFoundError } from '../upstream/errors.ts';
import { UserError } from './errors.ts';
import type { LinkStore } from './links.ts';
import { LINK_PIN } from './links.ts';
import type { ClubRole, GuildSettings, GuildSettingsStore, RoleRule } from './settings.ts';
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
/** Members a sync works on at a time (what it holds in memory, whatever the size of the server). */
const PAGE = 100;
/**
 * How often every member of a server is compared with Discord (a managed role removed by hand
 * comes back). Each scheduled pass reconciles the servers of its slot: 1/72 of them at the default
 * five-minute period.
 */
export const ROLE_RECONCILE_MS = 6 * 3600_000;
/** Changes a /roles sync reply lists; the schedule keeps no more than these. */
export const LISTED_CHANGES = 30;

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
  /** the members whose roles need (or needed) a change; the first LISTED ones when `list` is off */
  changes: MemberChange[];
  /** how many members need (or needed) a change */
  changed: number;
  /** members looked at, members not in the server, members whose accounts could not be read */
  members: number;
  /** members Discord was asked about */
  asked: number;
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

/** What one scheduled pass did. */
export interface RoleTickReport {
  /** servers whose period this process claimed and synced */
  synced: number;
  /** of those, compared with Discord member by member (reconciliation, or rules changed) */
  reconciled: number;
  /** members whose roles changed, members Discord was asked about */
  changed: number;
  asked: number;
  failed: number;
}

/** The rules, the server's verification mode and the rule clubs' member lists, read once per sync. */
interface RuleContext {
  settings: GuildSettings;
  rules: RoleRule[];
  required: boolean;
  fingerprint: string;
  clubs: Map<string, Map<string, ClubRole>>;
  /** trophies of the rule clubs' members, from the member lists: no profile read for them */
  trophiesOf: Map<string, number>;
  clubsGone: string[];
  needTrophies: boolean;
}

/** What the roles a member should have depend on besides their accounts: the rules and the verification mode. */
export function rulesFingerprint(s: Pick<GuildSettings, 'roleRules' | 'verification'>): string {
  const rules = [...s.roleRules]
    .map((r) => [r.roleId, r.club ?? '', r.clubRole ?? '', r.minTrophies ?? '', r.maxTrophies ?? ''].join('/'))
    .sort();
  return `${s.verification}|${rules.join(';')}`;
}

/** The reconciliation slot of a server: which period of the cycle compares all its members. */
export function reconcileSlot(guildId: string, slots: number): number {
  let h = 2166136261;
  for (let i = 0; i < guildId.length; i++) h = Math.imul(h ^ guildId.charCodeAt(i), 16777619) >>> 0;
  return h % slots;
}

const wantKey = (want: Set<string>): string => [...want].sort().join(',');

export class RoleSync {
  private api: RoleApi | null = null;
  private ticker: Ticker | undefined;
  /** start of this process's previous scheduled pass: the next one reads what changed since */
  private lastTickAt: number | undefined;
  /** the rules fingerprint each server's role state was last found to match (one string per server) */
  private readonly knownRules = new Map<string, string>();

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
    // The rules' fingerprint changed: the next scheduled run compares every member.
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
    return removed;
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

  /**
   * A member's links changed (linked, unlinked, verified) in a server: their roles there are synced
   * now. Other servers they are in follow at their next reconciliation. Never throws.
   */
  async memberChanged(guildId: string | null | undefined, userId: string): Promise<void> {
    const api = this.api;
    if (!guildId || !api || (api.owns && !api.owns(guildId))) return;
    try {
      if ((await this.deps.settings.get(guildId)).roleRules.length === 0) return;
      await this.sync(guildId, { dryRun: false, members: [userId] });
    } catch (e) {
      this.core.logger.warn({ err: e, guild: guildId, member: userId }, 'role sync of a member failed');
    }
  }

  // ------------------------------------------------------------------ sync

  private async context(guildId: string): Promise<RuleContext> {
    const settings = await this.deps.settings.get(guildId);
    const rules = settings.roleRules;
    const read = { priority: 'poll', viewed: false } as const;
    const clubs = new Map<string, Map<string, ClubRole>>();
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
    return {
      settings,
      rules,
      required: settings.verification === 'required',
      fingerprint: rulesFingerprint(settings),
      clubs,
      trophiesOf,
      clubsGone,
      needTrophies: rules.some((r) => r.minTrophies !== undefined),
    };
  }

  /** The managed roles one member should have, from the core's copies of their accounts; null when one cannot be read. */
  private async wanted(ctx: RuleContext, userId: string): Promise<Set<string> | null> {
    const read = { priority: 'poll', viewed: false } as const;
    const linked = await this.deps.links.get(userId);
    const accounts: AccountFacts[] = [];
    for (const tag of linked.tags) {
      if (!(await this.deps.links.counts(userId, tag, ctx.required))) continue;
      const account: AccountFacts = { tag, clubs: new Map() };
      for (const [club, members] of ctx.clubs) {
        const role = members.get(tag);
        if (role) account.clubs.set(club, role);
      }
      const listed = ctx.trophiesOf.get(tag);
      if (listed !== undefined) account.trophies = listed;
      else if (ctx.needTrophies) {
        try {
          account.trophies = (await this.core.stats.player(tag, read)).data.trophies;
        } catch {
          // Unknown to the game now, or the game's API is down: leave this member as they are.
          return null;
        }
      }
      accounts.push(account);
    }
    return desiredRoles(ctx.rules, accounts);
  }

  /**
   * Compares what members should have with what they have and, unless `dryRun`, changes it.
   *
   * - `members`: only these (a member whose links changed, the members the poller saw change);
   *   default every linked member of the server.
   * - `onlyChanged` (the schedule): Discord is asked only about members whose roles should differ
   *   from what the last sync gave them (the server's RoleState); without it every member looked
   *   at is compared with Discord, which restores a managed role removed by hand.
   * - Members are worked on a page at a time (PAGE), so a sync holds one page in memory whatever
   *   the size of the server; `list: false` keeps only the first LISTED_CHANGES changes.
   */
  async sync(guildId: string, opts: { dryRun: boolean; members?: readonly string[]; onlyChanged?: boolean; list?: boolean }): Promise<SyncReport> {
    const api = this.requireApi();
    const ctx = await this.context(guildId);
    const all = opts.members ?? ctx.settings.members;
    const state = opts.dryRun ? undefined : await this.deps.settings.roleState(guildId);
    // Under other rules, what was given before says nothing about what should be given now.
    const before = state && state.rules === ctx.fingerprint ? state.members : {};
    const after: Record<string, string> = {};
    const unrecorded = new Set<string>();
    const report: SyncReport = {
      manageRoles: true,
      blocked: [],
      changes: [],
      changed: 0,
      members: all.length,
      asked: 0,
      notInServer: 0,
      unreadable: 0,
      clubsGone: ctx.clubsGone,
      failed: 0,
      applied: false,
    };
    // Discord's side, read when the first member has to be compared.
    let usable: Set<string> | null = null;
    const discord = async (): Promise<Set<string>> => {
      if (usable) return usable;
      const g = await api.guild(guildId);
      if (!g) throw new UserError('error.rolesNoGuild', {}, Colour.error);
      const access = botAccess(g);
      const managed = [...new Set(ctx.rules.map((r) => r.roleId))];
      report.manageRoles = access.manageRoles;
      report.blocked = managed
        .map((roleId) => ({ roleId, block: roleBlock(g, access, roleId) }))
        .filter((x): x is { roleId: string; block: RoleBlock } => x.block !== null);
      usable = new Set(managed.filter((id) => !report.blocked.some((b) => b.roleId === id)));
      return usable;
    };
    const apply = !opts.dryRun;
    for (let i = 0; i < all.length; i += PAGE) {
      const page = all.slice(i, i + PAGE);
      // A few members at a time: their reads (links, owners, cached profiles) wait on the stores, not the CPU.
      const wants: (Set<string> | null)[] = [];
      for (let j = 0; j < page.length; j += MEMBERS_AT_ONCE) {
        wants.push(...(await Promise.all(page.slice(j, j + MEMBERS_AT_ONCE).map((userId) => this.wanted(ctx, userId)))));
      }
      for (let j = 0; j < page.length; j++) {
        const userId = page[j]!;
        const want = wants[j]!;
        if (want === null) {
          report.unreadable++;
          continue;
        }
        const key = wantKey(want);
        if (opts.onlyChanged && before[userId] === key) continue;
        const roles = await discord();
        // The schedule stops here when nothing can be given; a command still lists what should change.
        if (apply && !report.manageRoles && opts.list === false) break;
        report.asked++;
        const has = await api.memberRoles(guildId, userId);
        if (has === null) {
          // Not in the server (now): asked again at the next reconciliation.
          report.notInServer++;
          after[userId] = key;
          continue;
        }
        const add = [...want].filter((r) => roles.has(r) && !has.includes(r));
        const remove = has.filter((r) => roles.has(r) && !want.has(r));
        if (add.length === 0 && remove.length === 0) {
          after[userId] = key;
          continue;
        }
        report.changed++;
        if (opts.list !== false || report.changes.length < LISTED_CHANGES) report.changes.push({ userId, add, remove });
        if (!apply || !report.manageRoles) continue;
        let refused = false;
        for (const [roleId, op] of [...add.map((r) => [r, 'add'] as const), ...remove.map((r) => [r, 'remove'] as const)]) {
          try {
            if (op === 'add') await api.addRole(guildId, userId, roleId);
            else await api.removeRole(guildId, userId, roleId);
          } catch (e) {
            refused = true;
            report.failed++;
            this.core.logger.warn({ err: e, guild: guildId, member: userId, role: roleId, op }, 'role change refused');
          }
        }
        // Recorded only once applied: a refused change is tried again next time.
        if (refused) unrecorded.add(userId);
        else after[userId] = key;
      }
      if (apply && !report.manageRoles && opts.list === false) break;
    }
    if (!apply) return report;
    if (!report.manageRoles) {
      // Nothing can be given: the next run after Manage Roles comes back compares every member.
      await this.deps.settings.saveRoleState(guildId, { rules: ctx.fingerprint, blocked: '*', members: {} }, true);
      this.knownRules.delete(guildId);
      return report;
    }
    report.applied = true;
    const blocked = report.blocked.map((b) => b.roleId).sort().join(',');
    if (opts.members) {
      if (Object.keys(after).length) await this.deps.settings.saveRoleState(guildId, { rules: ctx.fingerprint, blocked, members: after }, false);
    } else {
      // Every member was looked at: the record is written anew (members gone from the server's list drop out).
      // Unreadable members keep what they had; refused ones are compared again next time.
      for (const userId of all) if (!(userId in after) && !unrecorded.has(userId) && before[userId] !== undefined) after[userId] = before[userId]!;
      await this.deps.settings.saveRoleState(guildId, { rules: ctx.fingerprint, blocked: usable === null ? (state?.blocked ?? '') : blocked, members: after }, true);
      this.knownRules.set(guildId, ctx.fingerprint);
    }
    return report;
  }

  /**
   * One scheduled pass over the servers with rules whose period this process claims:
   * - the members the poller saw change since the previous pass (an account of theirs whose
   *   recorded state changed: trophies, club; a join, leave or club role change in a rule's club)
   *   are worked out and, when their roles should change, compared with Discord and changed;
   * - servers whose rules or verification mode changed, or whose roles Discord would not let the
   *   bot manage last time, are compared member by member;
   * - and each server is reconciled (every member compared with Discord, restoring a managed role
   *   removed by hand) once per ROLE_RECONCILE_MS, in its own slot of the cycle, so each pass
   *   reconciles a page of the servers.
   */
  async tick(periodMs = ROLE_SYNC_MS): Promise<RoleTickReport> {
    const report: RoleTickReport = { synced: 0, reconciled: 0, changed: 0, asked: 0, failed: 0 };
    const api = this.api;
    if (!api) return report;
    const now = this.deps.now();
    const period = Math.floor(now / periodMs);
    // Overlapping the previous pass by one period: another process may have synced a server a
    // little after this one's previous pass began, and what changed then is read again (harmless:
    // a member whose roles already match is not asked about).
    const since = (this.lastTickAt ?? now - periodMs) - periodMs;
    this.lastTickAt = now;
    const due: string[] = [];
    for (const guildId of await this.deps.settings.guildsWithRoles()) {
      if (api.owns && !api.owns(guildId)) continue;
      // Once per period across every process of the installation.
      if (await this.core.coordination.claim(`roles:${guildId}:${period * periodMs}`, periodMs)) due.push(guildId);
    }
    if (due.length === 0) return report;
    const changed = await this.changedMembers(due, since);
    const slots = Math.max(1, Math.round(ROLE_RECONCILE_MS / periodMs));
    for (let i = 0; i < due.length; i += GUILDS_AT_ONCE) {
      const results = await Promise.all(
        due.slice(i, i + GUILDS_AT_ONCE).map((guildId) => this.scheduled(guildId, changed, reconcileSlot(guildId, slots) === period % slots)),
      );
      for (const r of results) {
        if (!r) {
          report.failed++;
          continue;
        }
        report.synced++;
        if (r.full) report.reconciled++;
        report.changed += r.report.changed;
        report.asked += r.report.asked;
      }
    }
    return report;
  }

  /** The linked members (Discord ids) of whom the poller recorded a change since `sinceMs`, for these servers' rules. */
  private async changedMembers(guilds: string[], sinceMs: number): Promise<Set<string>> {
    const users = new Set<string>();
    const clubs = new Set<string>();
    let trophies = false;
    for (const guildId of guilds) {
      for (const r of (await this.deps.settings.get(guildId)).roleRules) {
        if (r.club !== undefined) clubs.add(r.club);
        if (r.minTrophies !== undefined) trophies = true;
      }
    }
    const linker = (reason: string) => users.add(reason.slice(LINK_PIN.length));
    // Linked accounts are pinned `link:<member>` by /link: the pins say whose account changed.
    if (trophies) for (const p of await this.core.history.pinnedChangedSince('player', LINK_PIN, sinceMs)) linker(p.reason);
    const moved = new Set<string>();
    for (const club of clubs) for (const tag of await this.core.history.clubMembersChangedSince(club, sinceMs)) moved.add(tag);
    for (const p of await this.core.history.pinsOf('player', [...moved], LINK_PIN)) linker(p.reason);
    return users;
  }

  /** The managed roles Discord would not let the bot give now, as RoleState.blocked records them. */
  private async blockedNow(guildId: string): Promise<string> {
    const g = await this.requireApi().guild(guildId);
    if (!g) throw new UserError('error.rolesNoGuild', {}, Colour.error);
    const access = botAccess(g);
    if (!access.manageRoles) return '*';
    const rules = (await this.deps.settings.get(guildId)).roleRules;
    return [...new Set(rules.map((r) => r.roleId))].filter((id) => roleBlock(g, access, id) !== null).sort().join(',');
  }

  /** One server's scheduled sync; its outcome is recorded for /roles list. Never throws. */
  private async scheduled(guildId: string, changed: Set<string>, reconcile: boolean): Promise<{ report: SyncReport; full: boolean } | null> {
    const now = this.deps.now();
    let report: SyncReport | null = null;
    let full = reconcile;
    let problem: { key: string; values?: Record<string, string> } | undefined;
    const settings = await this.deps.settings.get(guildId);
    const before = settings.roleSync;
    try {
      const fingerprint = rulesFingerprint(settings);
      if (!full && this.knownRules.get(guildId) !== fingerprint) {
        // First pass of this process over the server, its rules changed, or Discord refused some
        // roles last time: does the record still hold?
        const state = await this.deps.settings.roleState(guildId);
        if (!state || state.rules !== fingerprint) full = true;
        else if (state.blocked === '') this.knownRules.set(guildId, fingerprint);
        // Refused before: one read of the server's roles says whether that changed (a role moved
        // below the bot's, Manage Roles given back); then every member is compared again.
        else if ((await this.blockedNow(guildId)) !== state.blocked) full = true;
      }
      if (full) report = await this.sync(guildId, { dryRun: false, list: false });
      else {
        const members = settings.members.filter((m) => changed.has(m));
        report =
          members.length === 0
            ? { ...EMPTY_REPORT, members: settings.members.length, clubsGone: [], quiet: true }
            : await this.sync(guildId, { dryRun: false, members, onlyChanged: true, list: false });
        if (report.asked === 0) report.quiet = true;
      }
      // Nobody to look at: the last outcome still stands, problem or not.
      if (report.quiet && before.problem) return { report, full };
      if (!report.manageRoles) problem = { key: 'roles.problem.noManageRoles' };
      else if (report.blocked.length) problem = blockProblem(report.blocked[0]!.roleId, report.blocked[0]!.block);
    } catch (e) {
      this.core.logger.warn({ err: e, guild: guildId }, 'role sync failed');
      problem = { key: 'roles.problem.failed' };
    }
    const outcomeChanged = before.problem !== problem?.key || JSON.stringify(before.problemValues ?? {}) !== JSON.stringify(problem?.values ?? {});
    // Written when the outcome changes, and a success at most hourly: quiet servers cost no writes.
    const stale = before.lastOkAt === undefined || now - before.lastOkAt >= RECORD_OK_EVERY_MS;
    if (outcomeChanged || (!problem && stale)) {
      await this.deps.settings.update(guildId, (s) => {
        s.roleSync = problem
          ? { ...s.roleSync, lastRunAt: now, problem: problem.key, problemValues: problem.values ?? {} }
          : { lastRunAt: now, lastOkAt: now };
      });
    }
    return report ? { report, full } : null;
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

const EMPTY_REPORT: SyncReport = {
  manageRoles: true,
  blocked: [],
  changes: [],
  changed: 0,
  members: 0,
  asked: 0,
  notInServer: 0,
  unreadable: 0,
  clubsGone: [],
  failed: 0,
  applied: true,
};
