/**
 * Per-server settings in keyv namespace 'guilds': the default ranking country, the server's API
 * key (sealed by the vault, never shown again), its channel leaderboards, and the members who
 * linked an account there (a server's "linked members" without the privileged members intent).
 *
 * Settings are read on every interaction, so loaded records stay in memory; writes go through
 * one queue per server so two admins saving at once cannot lose each other's change.
 */
import type Keyv from 'keyv';
import { z } from 'zod';
import type { ApiKeyInfo } from '../store/apikeys.ts';
import type { KeyVault } from './secrets.ts';
import { KeyedQueue } from './serial.ts';
import { LANGUAGES } from '../i18n/index.ts';

const StoredKey = z.object({
  sealed: z.string(),
  keyId: z.string(),
  plan: z.string(),
  setBy: z.string(),
  setAt: z.number(),
});
export type StoredKey = z.infer<typeof StoredKey>;

const BoardSource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('club'), tag: z.string() }),
  z.object({ kind: z.literal('members') }),
]);
export type BoardSource = z.infer<typeof BoardSource>;

/**
 * What a board ranks: trophies now; trophies gained this ISO week (UTC) or this season (calendar
 * month, UTC, as the season picture defines it); battles this week; win rate this week (members
 * with at least WIN_RATE_MIN_BATTLES battles).
 */
export const BOARD_METRICS = ['trophies', 'weekGain', 'seasonGain', 'weekBattles', 'weekWinRate'] as const;
export type BoardMetric = (typeof BOARD_METRICS)[number];
/** Metrics counted over the ISO week: their boards post the week's results when it closes. */
export const WEEKLY_METRICS: readonly BoardMetric[] = ['weekGain', 'weekBattles', 'weekWinRate'];

const Board = z.object({
  id: z.string(),
  channelId: z.string(),
  messageId: z.string().optional(),
  source: BoardSource,
  intervalMinutes: z.number().int().min(1),
  createdBy: z.string(),
  createdAt: z.number(),
  /** the server's language when the board was made; the server's /settings language overrides it */
  locale: z.string().default('en-US'),
  /** last attempt and last success, epoch ms */
  lastRunAt: z.number().optional(),
  lastOkAt: z.number().optional(),
  /** consecutive failures; the board waits longer after each */
  failures: z.number().int().default(0),
  /** what went wrong last, in words for the admin */
  problem: z.string().optional(),
  /** values of the problem's message, when `problem` is a catalogue key */
  problemValues: z.record(z.string(), z.string()).optional(),
  /** what the board ranks (boards made before metrics rank trophies) */
  metric: z.enum(BOARD_METRICS).default('trophies'),
});
export type Board = z.infer<typeof Board>;

/** Club roles as the game's API names them, lowest first. */
export const CLUB_ROLES = ['member', 'senior', 'vicePresident', 'president'] as const;
export type ClubRole = (typeof CLUB_ROLES)[number];

/**
 * One automatic role: the Discord role a linked member gets while one of their accounts is in
 * `club` (with `clubRole` when set, any role otherwise), or has trophies in [minTrophies,
 * maxTrophies).
 */
const RoleRule = z.object({
  id: z.string(),
  roleId: z.string(),
  club: z.string().optional(),
  clubRole: z.enum(CLUB_ROLES).optional(),
  minTrophies: z.number().int().min(0).optional(),
  maxTrophies: z.number().int().min(1).optional(),
  createdBy: z.string(),
  createdAt: z.number(),
});
export type RoleRule = z.infer<typeof RoleRule>;

/** How the last scheduled role sync of a server went, for /roles list. */
const RoleSyncState = z.object({
  lastRunAt: z.number().optional(),
  lastOkAt: z.number().optional(),
  problem: z.string().optional(),
  problemValues: z.record(z.string(), z.string()).optional(),
});

/**
 * What automatic roles last gave each member of a server: the managed roles they should have had
 * (sorted ids, comma-joined) when the sync last compared them with Discord, under the rules of
 * `rules` (a fingerprint: a change of rules or verification mode makes every member compared
 * again). A record of its own beside the settings, read only when a member changed.
 */
const RoleState = z.object({
  rules: z.string(),
  /** roles Discord would not let the bot manage then ('*': no Manage Roles), sorted, comma-joined */
  blocked: z.string().default(''),
  members: z.record(z.string(), z.string()),
});
export type RoleState = z.infer<typeof RoleState>;

const GuildSettingsSchema = z.object({
  id: z.string(),
  country: z.string().optional(),
  /** the language of public posts (boards) chosen with /settings language; unset: the server's Discord locale */
  language: z.enum(LANGUAGES).optional(),
  key: StoredKey.optional(),
  boards: z.array(Board).default([]),
  members: z.array(z.string()).default([]),
  /** required: only verified accounts count for automatic roles and the members' leaderboard */
  verification: z.enum(['optional', 'required']).default('optional'),
  /** /club activity flags members below these (/settings activity); unset: no flags */
  activity: z.object({ minGain: z.number().int().optional(), maxIdleDays: z.number().int().optional() }).optional(),
  roleRules: z.array(RoleRule).default([]),
  roleSync: RoleSyncState.default({}),
});
export type GuildSettings = z.infer<typeof GuildSettingsSchema>;

/** What the server's key gives it right now. */
export interface Premium {
  /** a valid key is registered: the keyed plan's limits apply */
  keyed: boolean;
  /** the key's plan includes premium views */
  premium: boolean;
  plan?: string;
  /** why not, when not: no key, the key was revoked, the plan has no premium, or it cannot be read */
  reason?: 'no_key' | 'revoked' | 'basic_plan' | 'unreadable' | 'outside_server';
}

export const NO_PREMIUM: Premium = { keyed: false, premium: false, reason: 'outside_server' };

const BOARD_INDEX = 'index:boards';
const ROLE_INDEX = 'index:roles';

export class GuildSettingsStore {
  private readonly cache = new Map<string, GuildSettings>();
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly kv: Keyv,
    private readonly vault: KeyVault,
    private readonly keys: { verify(key: string): Promise<ApiKeyInfo | null> },
    private readonly maxCached = 100_000,
  ) {}

  /**
   * The server's settings. `fresh` reads the durable store past this process's cache: in a cluster
   * another process may have changed them (the board schedule, a write that must not undo theirs).
   */
  async get(guildId: string, opts: { fresh?: boolean } = {}): Promise<GuildSettings> {
    const hit = opts.fresh ? undefined : this.cache.get(guildId);
    if (hit) return hit;
    const raw = await this.kv.get(`guild:${guildId}`);
    const parsed = GuildSettingsSchema.safeParse(raw ?? { id: guildId });
    const settings = parsed.success ? parsed.data : GuildSettingsSchema.parse({ id: guildId });
    this.remember(settings);
    return settings;
  }

  /**
   * The last closed ISO week (like 2026-W23) whose results a weekly board posted. A key of its own,
   * read from the store every time: another process's save of the server's settings from its
   * cached copy cannot take it back, so a week is posted once, also across restarts.
   */
  async lastWeekPosted(guildId: string, boardId: string): Promise<string | undefined> {
    return ((await this.kv.get<string>(`week:${guildId}:${boardId}`)) ?? undefined) || undefined;
  }

  markWeekPosted(guildId: string, boardId: string, week: string): Promise<unknown> {
    return this.kv.set(`week:${guildId}:${boardId}`, week);
  }

  /** What automatic roles last gave each member of the server (see RoleState); read from the store every time. */
  async roleState(guildId: string): Promise<RoleState | undefined> {
    const parsed = RoleState.safeParse(await this.kv.get(`rolestate:${guildId}`));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * Saves what a sync compared: `replace` (a run over every member) writes the record anew; a run
   * over some members merges theirs into the stored one (another run may have saved others since),
   * and only under the same rules: until a run over every member records new rules, there is
   * nothing to merge into.
   */
  saveRoleState(guildId: string, state: RoleState, replace: boolean): Promise<unknown> {
    return this.queue.run(`rolestate:${guildId}`, async () => {
      let next = state;
      if (!replace) {
        const stored = await this.roleState(guildId);
        if (!stored || stored.rules !== state.rules) return;
        next = { ...stored, members: { ...stored.members, ...state.members } };
      }
      await this.kv.set(`rolestate:${guildId}`, RoleState.parse(next));
    });
  }

  /** A removed board's records of its own. */
  forgetBoard(guildId: string, boardId: string): Promise<unknown> {
    return this.kv.delete(`week:${guildId}:${boardId}`);
  }

  private remember(s: GuildSettings): void {
    this.cache.delete(s.id);
    this.cache.set(s.id, s);
    if (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value!);
  }

  /** Applies `change` to the server's settings and saves them, one change at a time per server. */
  update(guildId: string, change: (s: GuildSettings) => GuildSettings | void): Promise<GuildSettings> {
    return this.queue.run(guildId, async () => {
      const previous = await this.get(guildId, { fresh: true });
      const draft = structuredClone(previous);
      const next = GuildSettingsSchema.parse(change(draft) ?? draft);
      await this.kv.set(`guild:${guildId}`, next);
      this.remember(next);
      const hasBoards = next.boards.length > 0;
      if (hasBoards !== previous.boards.length > 0) await this.setIndexed(BOARD_INDEX, guildId, hasBoards);
      const hasRoles = next.roleRules.length > 0;
      if (hasRoles !== previous.roleRules.length > 0) await this.setIndexed(ROLE_INDEX, guildId, hasRoles);
      return next;
    });
  }

  private setIndexed(index: string, guildId: string, on: boolean): Promise<void> {
    return this.queue.run(index, async () => {
      const ids = new Set((await this.kv.get<string[]>(index)) ?? []);
      if (on) ids.add(guildId);
      else ids.delete(guildId);
      await this.kv.set(index, [...ids]);
    });
  }

  /** Ids of the servers that have at least one leaderboard. */
  async guildsWithBoards(): Promise<string[]> {
    return (await this.kv.get<string[]>(BOARD_INDEX)) ?? [];
  }

  /** Ids of the servers that have at least one automatic role. */
  async guildsWithRoles(): Promise<string[]> {
    return (await this.kv.get<string[]>(ROLE_INDEX)) ?? [];
  }

  /** Seals and stores a key that `verify` accepted. Throws VaultUnavailableError without a secret. */
  async setKey(guildId: string, key: string, info: ApiKeyInfo, setBy: string, now: number): Promise<GuildSettings> {
    const sealed = this.vault.seal(key, guildId);
    return this.update(guildId, (s) => {
      s.key = { sealed, keyId: info.keyId, plan: info.plan.name, setBy, setAt: now };
    });
  }

  async removeKey(guildId: string): Promise<boolean> {
    let had = false;
    await this.update(guildId, (s) => {
      had = s.key !== undefined;
      delete s.key;
    });
    return had;
  }

  /** What the server's registered key gives it, checked against the key store (which caches). */
  async premium(settings: GuildSettings): Promise<Premium> {
    if (!settings.key) return { keyed: false, premium: false, reason: 'no_key' };
    let key: string;
    try {
      key = this.vault.open(settings.key.sealed, settings.id);
    } catch {
      // The secret changed or is gone: the key cannot be used until an admin registers it again.
      return { keyed: false, premium: false, reason: 'unreadable' };
    }
    const info = await this.keys.verify(key);
    if (!info) return { keyed: false, premium: false, reason: 'revoked' };
    return info.plan.premium
      ? { keyed: true, premium: true, plan: info.plan.name }
      : { keyed: true, premium: false, plan: info.plan.name, reason: 'basic_plan' };
  }

  /** Loaded settings, for the memory figures of the benchmark. */
  get cachedCount(): number {
    return this.cache.size;
  }
}
