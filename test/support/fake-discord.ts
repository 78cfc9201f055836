/**
 * A fake Discord on 127.0.0.1 for end-to-end tests with the real, unmodified discord.js Client
 * (reference/discord-rules.md §3, approach A): the REST API under `/api/v10` and the gateway
 * WebSocket on the same port, typed with discord-api-types/v10.
 *
 * It plays by Discord's documented rules and answers with Discord-shaped errors:
 * - every body checked by the same validator the bot uses (src/bot/limits.ts) → 400 / 50035;
 * - the first response within 3 s of the interaction → otherwise 404 / 10062;
 * - one acknowledgement per interaction → otherwise 400 / 40060;
 * - interaction tokens live 15 minutes → otherwise 401 / 50027;
 * - channel permissions of the bot → 403 / 50001 (cannot see) or 50013 (cannot send);
 * - the interaction's attachment_size_limit per file → 413 / 40005;
 * - role assignment (PUT/DELETE /guilds/{g}/members/{u}/roles/{r}) → 403 / 50013 without Manage
 *   Roles or for a role at or above the bot's highest role (or a managed one), 404 / 10007 and
 *   10011 for unknown members and roles;
 * - command definitions in bulk overwrites → 400 / 50035, and `default_member_permissions`
 *   when a member invokes a command;
 * - gateway sharding: IDENTIFY carries [shard_id, shard_count] (an id out of range closes with
 *   4010); each rate-limit bucket (shard_id % max_concurrency) takes one IDENTIFY per 5 s of
 *   Discord's clock, an earlier one is refused by closing the connection with 4008 (listed in
 *   `identifyRejections`); events of a guild, interactions included, go to the shard that holds it,
 *   (guild_id >> 22) % shard_count.
 * Every request is recorded; `rejections` lists those that broke a rule, so a test can assert
 * the bot was never rejected. Time is real time plus an offset the test can advance; the
 * interaction deadlines count only that offset unless started with `realTimeDeadlines` (see `age`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type {
  APIApplicationCommand,
  APIApplicationCommandInteractionDataOption,
  APIInteraction,
  APIRole,
  APIUser,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { PermissionFlagsBits, RESTJSONErrorCodes } from 'discord-api-types/v10';
import {
  LIMITS,
  checkCommandSet,
  checkInteractionResponse,
  checkMessage,
  errorsObject,
  oversizeFiles,
  type Problem,
} from '../../src/bot/limits.ts';
import { parseInvocation } from '../../src/bot/invocation.ts';
import { channelPermissions } from '../../src/bot/permissions.ts';
import {
  MEMBER_PERMISSIONS,
  StoredMessage,
  channelJson,
  guildJson,
  memberJson,
  roleJson,
  snowflake,
  userJson,
  type FakeChannel,
  type FakeGuild,
  type StoredAttachment,
} from './fake-discord-model.ts';

export { MEMBER_PERMISSIONS, StoredMessage, snowflake };
export type { FakeGuild, FakeChannel };

export interface RecordedRequest {
  method: string;
  /** path below /api/v10, decoded (`@original`, not `%40original`) */
  route: string;
  status: number;
  body?: unknown;
  files: { name: string; size: number }[];
  error?: { code: number; message: string; errors?: unknown };
  at: number;
  /** the client's User-Agent (shows whether a request came through a REST proxy) */
  userAgent?: string;
}

interface ParsedBody {
  json: unknown;
  files: StoredAttachment[];
}

type Answer = { status: number; body?: unknown };

export interface InteractionRecord {
  id: string;
  token: string;
  /** 2 command, 3 component, 4 autocomplete */
  type: number;
  payload: APIInteraction;
  createdAt: number;
  guildId: string | undefined;
  channelId: string;
  attachmentSizeLimit: number;
  /** callback types received, in order (normally exactly one) */
  callbacks: number[];
  /** the response message (for components: the message the component is on) */
  original: StoredMessage | null;
  followups: StoredMessage[];
  choices?: { name: string; value: string | number }[];
  /** every REST call made with this interaction's token, in order */
  calls: RecordedRequest[];
  /** transport: the HTTP status the bot's endpoint answered with (HTTP interactions only) */
  httpStatus?: number;
  /** an HTTP delivery whose inline answer Discord has not processed yet */
  inflight?: Promise<void>;
  events: EventEmitter;
}

export interface SlashOptions {
  guild?: FakeGuild;
  channel?: FakeChannel;
  user?: APIUser;
  /** the invoking member's permissions in the channel (default: a plain member) */
  permissions?: bigint;
  locale?: string;
  /** the server's Discord language (guild_locale) */
  guildLocale?: string;
  attachmentSizeLimit?: number;
  /** simulates an admin overriding the command's default_member_permissions in the server settings */
  bypassCommandPermissions?: boolean;
}

interface GatewayConn {
  ws: WebSocket;
  shard: [number, number];
  seq: number;
}

export interface FakeDiscordOptions {
  realTimeDeadlines?: boolean;
  /** GET /gateway/bot's recommended shard count (default 1) */
  recommendedShards?: number;
  /** session_start_limit.max_concurrency: IDENTIFY buckets per 5 s (default 16, a large bot's) */
  maxConcurrency?: number;
}

/** Discord's window per identify bucket. */
export const IDENTIFY_WINDOW_MS = 5_000;

const JSON_TYPE = { 'content-type': 'application/json' };
/** Discord's nonce: a string of at most 25 characters, or an integer. */
const NONCE_MAX = 25;
/** How long Discord remembers an enforced nonce ("the past few minutes"; the fake takes five). */
const NONCE_WINDOW_MS = 5 * 60_000;

/**
 * `settled` gives up with the whole exchange after this: a hang guard that speaks before vitest's
 * 120 s test timeout, not a speed check (a /player reply took 9 s under `npm run test:stress`).
 */
const DIAGNOSE_AFTER_MS = 100_000;

/** A guild id created near `atMs` whose shard, (id >> 22) % count, is `shard`: the timestamp bits decide it. */
function guildIdOnShard(atMs: number, [shard, count]: [number, number]): string {
  const t = BigInt(Math.floor(atMs)) - 1420070400000n;
  const off = (((BigInt(shard) - t) % BigInt(count)) + BigInt(count)) % BigInt(count);
  return snowflake(atMs + Number(off));
}

function discordError(status: number, code: number, message: string, problems?: Problem[]): Answer {
  const body: Record<string, unknown> = { message, code };
  if (problems?.length) body.errors = errorsObject(problems);
  return { status, body };
}

const INVALID_FORM = (problems: Problem[]) => discordError(400, RESTJSONErrorCodes.InvalidFormBodyOrContentType, 'Invalid Form Body', problems);

export class FakeDiscord {
  readonly appId = snowflake();
  readonly bot: APIUser = userJson(this.appId, 'Starr Stats', true);
  readonly token = `${Buffer.from(this.appId).toString('base64url')}.fake.${'x'.repeat(27)}`;
  readonly publicKeyHex: string;
  private readonly privateKey: KeyObject;

  readonly guilds = new Map<string, FakeGuild>();
  readonly users = new Map<string, APIUser>();
  readonly messages = new Map<string, StoredMessage>();
  readonly interactions = new Map<string, InteractionRecord>();
  readonly requests: RecordedRequest[] = [];
  /** nonces of enforce_nonce posts: the message each created and when */
  private readonly nonces = new Map<string, { messageId: string; at: number }>();
  /** posts answered with an earlier message because of their nonce */
  nonceHits = 0;
  readonly globalCommands: APIApplicationCommand[] = [];
  readonly guildCommands = new Map<string, APIApplicationCommand[]>();
  readonly commandPuts: { guildId?: string; body: unknown }[] = [];
  /** gateway connections that identified, by shard id */
  readonly shards = new Map<number, GatewayConn>();
  /**
   * 'identify' {shard, intents} once a shard is accepted (READY sent); 'disconnect' {shard} when an
   * identified connection closes; 'rejected' {shard, code, reason} when an IDENTIFY is refused.
   */
  readonly gatewayEvents = new EventEmitter();
  /** 'post' and 'edit' (the StoredMessage) for each channel message the bot creates or edits with its token */
  readonly channelEvents = new EventEmitter();
  /** every accepted IDENTIFY, in order, on Discord's clock */
  readonly identifies: { shard: [number, number]; at: number }[] = [];
  /** IDENTIFYs refused (too early in their bucket, shard out of range) */
  readonly identifyRejections: { shard: [number, number]; code: number; reason: string; at: number }[] = [];
  readonly recommendedShards: number;
  readonly maxConcurrency: number;
  /** when each identify bucket last took an IDENTIFY (Discord's clock) */
  private readonly bucketUsedAt = new Map<number, number>();

  private offsetMs = 0;
  /** `offsetMs` when each interaction was created: its age for Discord's deadlines */
  private readonly offsetAtCreation = new WeakMap<InteractionRecord, number>();
  private server!: Server;
  private wss!: WebSocketServer;
  port = 0;

  private constructor(opts: FakeDiscordOptions) {
    this.realTimeDeadlines = opts.realTimeDeadlines ?? false;
    this.recommendedShards = opts.recommendedShards ?? 1;
    this.maxConcurrency = opts.maxConcurrency ?? 16;
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    // The portal shows the raw 32-byte key: the tail of the SPKI DER encoding.
    this.publicKeyHex = publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
  }

  private readonly realTimeDeadlines: boolean;

  static async start(opts: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(opts);
    await fake.listen();
    return fake;
  }

  /** `rest.api` for discord.js / @discordjs/rest (it appends /v10). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves Discord's clock forward: deadlines and token lifetimes expire without waiting. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /**
   * How old an interaction is for Discord's deadlines (3 s to the first response, 15 min for the
   * token). By default only the time a test moves with `advance` counts: the real seconds a reply
   * takes on a busy machine measure the machine, not the bot, and the bot's own deferral deadline
   * is fired by the test (test/support/manual-schedule.ts). With `realTimeDeadlines` real time
   * counts too, as on Discord: for bench/bot.ts, which measures what a member would see.
   */
  private age(rec: InteractionRecord): number {
    return this.realTimeDeadlines ? this.now() - rec.createdAt : this.offsetMs - (this.offsetAtCreation.get(rec) ?? 0);
  }

  /** Requests answered with a 4xx: the bot broke a rule (or a test provoked it). */
  get rejections(): RecordedRequest[] {
    return this.requests.filter((r) => r.status >= 400);
  }

  // ------------------------------------------------------------------ world

  addUser(username: string): APIUser {
    const u = userJson(snowflake(), username);
    this.users.set(u.id, u);
    return u;
  }

  /**
   * Adds a guild with the bot in it. `botPermissions` is the bot role's guild-wide grant;
   * channels may deny bits to the bot role; `onShard: [id, count]` picks an id that shard holds. Announced over the gateway when a shard is connected.
   */
  addGuild(opts: { name?: string; botPermissions?: bigint; channels?: { name: string; denyBot?: bigint }[]; onShard?: [number, number] } = {}): FakeGuild {
    const id = opts.onShard ? guildIdOnShard(this.now(), opts.onShard) : snowflake();
    const owner = this.addUser(`owner-of-${opts.name ?? id}`);
    const botRoleId = snowflake();
    const g: FakeGuild = {
      id,
      name: opts.name ?? `Guild ${this.guilds.size + 1}`,
      ownerId: owner.id,
      botRoleId,
      roles: [
        roleJson(id, '@everyone', MEMBER_PERMISSIONS, 0),
        roleJson(botRoleId, 'Starr Stats', opts.botPermissions ?? MEMBER_PERMISSIONS, 1, true),
      ],
      channels: [],
      joinedAt: new Date(this.now()).toISOString(),
      members: new Map(),
      shardOf: (count) => Number((BigInt(id) >> 22n) % BigInt(count)),
    };
    for (const c of opts.channels ?? [{ name: 'general' }]) {
      g.channels.push({
        id: snowflake(),
        name: c.name,
        type: 0,
        overwrites: c.denyBot ? [{ id: botRoleId, type: 0, allow: '0', deny: String(c.denyBot) }] : [],
      });
    }
    this.guilds.set(id, g);
    this.dispatchToGuild(g, 'GUILD_CREATE', guildJson(g, this.bot));
    return g;
  }

  /**
   * Adds a role: directly below the bot's highest role (one the bot may assign), or at the top
   * (`aboveBot`, one it may not). Positions are renumbered as Discord does when a role is moved.
   */
  addRole(g: FakeGuild, name: string, opts: { aboveBot?: boolean; permissions?: bigint } = {}): APIRole {
    const botTop = this.botTopPosition(g);
    let position: number;
    if (opts.aboveBot) position = Math.max(...g.roles.map((r) => r.position)) + 1;
    else {
      position = botTop;
      for (const r of g.roles) if (r.id !== g.id && r.position >= position) (r as { position: number }).position += 1;
    }
    const role = roleJson(snowflake(), name, opts.permissions ?? 0n, position);
    g.roles.push(role);
    return role;
  }

  /** What the bot's role may do server-wide (an admin editing it). */
  setBotPermissions(g: FakeGuild, permissions: bigint): void {
    const r = g.roles.find((x) => x.id === g.botRoleId)!;
    (r as { permissions: string }).permissions = String(permissions);
  }

  /** A member of the server (the fake knows members only when a test adds them). */
  addMember(g: FakeGuild, user: APIUser, roles: string[] = []): void {
    this.users.set(user.id, user);
    g.members.set(user.id, [...roles]);
  }

  /** A member's roles as an admin sets them by hand in Discord. */
  setMemberRoles(g: FakeGuild, userId: string, roles: string[]): void {
    g.members.set(userId, [...roles]);
  }

  memberRoles(g: FakeGuild, userId: string): string[] {
    return g.members.get(userId) ?? [];
  }

  private botTopPosition(g: FakeGuild): number {
    return g.roles.find((r) => r.id === g.botRoleId)!.position;
  }

  /** PUT/DELETE of a member's role, with Discord's permission and hierarchy rules. */
  private memberRole(method: string, g: FakeGuild, userId: string, roleId: string): Answer {
    const roles = g.members.get(userId);
    if (!roles) return discordError(404, RESTJSONErrorCodes.UnknownMember, 'Unknown Member');
    const role = g.roles.find((r) => r.id === roleId);
    if (!role) return discordError(404, RESTJSONErrorCodes.UnknownRole, 'Unknown Role');
    const everyone = BigInt(g.roles.find((r) => r.id === g.id)?.permissions ?? '0');
    const mine = everyone | BigInt(g.roles.find((r) => r.id === g.botRoleId)!.permissions);
    const may = (mine & (PermissionFlagsBits.ManageRoles | PermissionFlagsBits.Administrator)) !== 0n;
    if (!may || role.managed || role.id === g.id || role.position >= this.botTopPosition(g)) {
      return discordError(403, RESTJSONErrorCodes.MissingPermissions, 'Missing Permissions');
    }
    if (method === 'PUT' && !roles.includes(roleId)) roles.push(roleId);
    if (method === 'DELETE') g.members.set(userId, roles.filter((r) => r !== roleId));
    return { status: 204 };
  }

  channel(g: FakeGuild, name: string): FakeChannel {
    const c = g.channels.find((x) => x.name === name);
    if (!c) throw new Error(`no channel #${name} in ${g.name}`);
    return c;
  }

  /** Changes what the bot role may do in a channel (as an admin editing overwrites would). */
  setBotDeny(g: FakeGuild, c: FakeChannel, deny: bigint): void {
    c.overwrites = c.overwrites.filter((o) => o.id !== g.botRoleId);
    if (deny !== 0n) c.overwrites.push({ id: g.botRoleId, type: 0, allow: '0', deny: String(deny) });
    this.dispatchToGuild(g, 'CHANNEL_UPDATE', channelJson(g, c));
  }

  deleteChannel(g: FakeGuild, c: FakeChannel): void {
    g.channels = g.channels.filter((x) => x !== c);
    this.dispatchToGuild(g, 'CHANNEL_DELETE', channelJson(g, c));
  }

  botPermissionsIn(g: FakeGuild, c: FakeChannel): bigint {
    return channelPermissions({
      guildId: g.id,
      ownerId: g.ownerId,
      roles: g.roles.map((r) => ({ id: r.id, permissions: r.permissions })),
      member: { userId: this.bot.id, roles: [g.botRoleId] },
      overwrites: c.overwrites,
    });
  }

  /** Messages the bot posted in a channel with its token (not interaction answers), oldest first. */
  channelMessages(c: FakeChannel): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.channelId === c.id && !m.deleted && m.interactionId === undefined);
  }

  // ------------------------------------------------------------------ interactions

  private commandsFor(guildId: string | undefined): APIApplicationCommand[] {
    return [...(guildId ? (this.guildCommands.get(guildId) ?? []) : []), ...this.globalCommands];
  }

  private baseInteraction(type: number, o: SlashOptions, extra: Record<string, unknown>): InteractionRecord {
    const guild = o.guild ?? [...this.guilds.values()][0];
    if (!guild) throw new Error('add a guild first');
    const channel = o.channel ?? guild.channels[0]!;
    const user = o.user ?? this.addUser('member');
    const id = snowflake(this.now());
    const token = `aW50ZXJhY3Rpb246${id}:${'t'.repeat(40)}`;
    const limit = o.attachmentSizeLimit ?? LIMITS.defaultAttachmentSize;
    const payload = {
      id,
      application_id: this.appId,
      type,
      token,
      version: 1,
      guild_id: guild.id,
      guild: { id: guild.id, locale: o.guildLocale ?? 'en-US', features: [] },
      channel_id: channel.id,
      channel: channelJson(guild, channel),
      member: memberJson(user, [], guild.joinedAt, o.permissions ?? MEMBER_PERMISSIONS),
      app_permissions: String(this.botPermissionsIn(guild, channel)),
      locale: o.locale ?? 'en-US',
      guild_locale: o.guildLocale ?? 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': guild.id },
      context: 0,
      attachment_size_limit: limit,
      ...extra,
    } as unknown as APIInteraction;
    const rec: InteractionRecord = {
      id,
      token,
      type,
      payload,
      createdAt: this.now(),
      guildId: guild.id,
      channelId: channel.id,
      attachmentSizeLimit: limit,
      callbacks: [],
      original: null,
      followups: [],
      calls: [],
      events: new EventEmitter(),
    };
    this.interactions.set(token, rec);
    this.offsetAtCreation.set(rec, this.offsetMs);
    return rec;
  }

  private resolvedFor(options: APIApplicationCommandInteractionDataOption[], guild: FakeGuild): Record<string, unknown> | undefined {
    const users: Record<string, APIUser> = {};
    const members: Record<string, unknown> = {};
    const channels: Record<string, unknown> = {};
    const walk = (opts: APIApplicationCommandInteractionDataOption[]) => {
      for (const o of opts) {
        if ('options' in o && o.options) walk(o.options as APIApplicationCommandInteractionDataOption[]);
        if (o.type === 6 && 'value' in o) {
          const u = this.users.get(String(o.value)) ?? userJson(String(o.value), 'unknown');
          users[u.id] = u;
          const { user: _u, ...m } = memberJson(u, [], guild.joinedAt, MEMBER_PERMISSIONS);
          members[u.id] = m;
        }
        if (o.type === 7 && 'value' in o) {
          const c = guild.channels.find((x) => x.id === String(o.value));
          if (c) channels[c.id] = { id: c.id, name: c.name, type: c.type, permissions: String(MEMBER_PERMISSIONS) };
        }
      }
    };
    walk(options);
    if (!Object.keys(users).length && !Object.keys(channels).length) return undefined;
    return { users, members, channels };
  }

  /**
   * Builds the INTERACTION_CREATE of a slash command typed as text, checked against the deployed
   * definitions like Discord's client does. Throws when Discord would not let the member run it.
   */
  commandInteraction(text: string, o: SlashOptions = {}, focus?: string): InteractionRecord {
    const guild = o.guild ?? [...this.guilds.values()][0]!;
    const deployed = this.commandsFor(guild.id);
    const inv = parseInvocation(text, deployed as unknown as RESTPostAPIChatInputApplicationCommandsJSONBody[]);
    const cmd = deployed.find((c) => c.name === inv.command.name)!;
    const need = cmd.default_member_permissions ? BigInt(cmd.default_member_permissions) : 0n;
    const has = o.permissions ?? MEMBER_PERMISSIONS;
    if (!o.bypassCommandPermissions && need !== 0n && (has & need) !== need && (has & PermissionFlagsBits.Administrator) === 0n) {
      throw new Error(`Discord hides /${cmd.name} from members without permissions ${need}`);
    }
    const options = focus ? parseInvocation(text, deployed as never, { focus }).options : inv.options;
    const resolved = this.resolvedFor(options, guild);
    return this.baseInteraction(focus ? 4 : 2, o, {
      data: { id: cmd.id, name: cmd.name, type: 1, guild_id: cmd.guild_id, options, ...(resolved ? { resolved } : {}) },
    });
  }

  /** A member clicks a button or picks select options on a message. */
  componentInteraction(message: StoredMessage, customId: string, o: SlashOptions & { values?: string[] } = {}): InteractionRecord {
    const guild = o.guild ?? (message.guildId ? this.guilds.get(message.guildId) : undefined);
    const channel = guild?.channels.find((c) => c.id === message.channelId);
    const all = message.components.flatMap((r) => ('components' in r ? (r.components as unknown[]) : [])) as {
      type: number;
      custom_id?: string;
      disabled?: boolean;
    }[];
    const component = all.find((c) => c.custom_id === customId);
    if (!component) throw new Error(`no component ${customId} on message ${message.id}`);
    if (component.disabled) throw new Error(`component ${customId} is disabled`);
    const rec = this.baseInteraction(3, { ...o, guild, channel }, {
      data: { custom_id: customId, component_type: component.type, ...(component.type === 3 ? { values: o.values ?? [] } : {}) },
      message: message.json(),
    });
    rec.original = message;
    return rec;
  }

  /** Sends INTERACTION_CREATE over the gateway shard that holds the guild. */
  dispatchInteraction(rec: InteractionRecord): InteractionRecord {
    const g = this.guilds.get(rec.guildId!)!;
    if (!this.dispatchToGuild(g, 'INTERACTION_CREATE', rec.payload)) throw new Error('no gateway shard connected for this guild');
    return rec;
  }

  slash(text: string, o: SlashOptions = {}): InteractionRecord {
    return this.dispatchInteraction(this.commandInteraction(text, o));
  }

  autocomplete(text: string, focus: string, o: SlashOptions = {}): InteractionRecord {
    return this.dispatchInteraction(this.commandInteraction(text, o, focus));
  }

  click(message: StoredMessage, customId: string, o: SlashOptions & { values?: string[] } = {}): InteractionRecord {
    return this.dispatchInteraction(this.componentInteraction(message, customId, o));
  }

  /**
   * Delivers an interaction to an HTTP interactions endpoint, signed like Discord signs it.
   * The inline answer counts as the interaction's callback (checked like one).
   */
  async post(
    endpoint: string,
    body: string | InteractionRecord,
    opts: { signature?: 'valid' | 'forged' | 'none'; timestamp?: string } = {},
  ): Promise<{ status: number; json: unknown }> {
    const raw = typeof body === 'string' ? body : JSON.stringify(body.payload);
    const ts = opts.timestamp ?? String(Math.floor(this.now() / 1000));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const mode = opts.signature ?? 'valid';
    if (mode !== 'none') {
      let sig = sign(null, Buffer.from(ts + raw), this.privateKey);
      if (mode === 'forged') sig = sign(null, Buffer.from(ts + raw + ' '), this.privateKey);
      headers['x-signature-ed25519'] = sig.toString('hex');
      headers['x-signature-timestamp'] = ts;
    }
    let settle = () => {};
    if (typeof body !== 'string') body.inflight = new Promise<void>((r) => (settle = r));
    try {
      return await this.deliver(endpoint, headers, raw, body);
    } finally {
      settle();
    }
  }

  private async deliver(endpoint: string, headers: Record<string, string>, raw: string, body: string | InteractionRecord): Promise<{ status: number; json: unknown }> {
    const res = await fetch(endpoint, { method: 'POST', headers, body: raw });
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    if (typeof body !== 'string') {
      body.httpStatus = res.status;
      if (res.status === 200) {
        const answer = this.acknowledge(body, json, []);
        const rec: RecordedRequest = {
          method: 'POST',
          route: `(http response to interaction ${body.id})`,
          status: answer.status,
          body: json,
          files: [],
          at: this.now(),
          ...(answer.status >= 400 ? { error: answer.body as RecordedRequest['error'] } : {}),
        };
        this.requests.push(rec);
        body.calls.push(rec);
        body.events.emit('change');
      }
    }
    return { status: res.status, json };
  }

  /**
   * Waits until the interaction has its final answer: a message (type 4), an update (7), a
   * deferral followed by an edit or follow-up, or autocomplete choices. Rejects with the whole
   * exchange when nothing comes.
   */
  settled(rec: InteractionRecord, timeoutMs = DIAGNOSE_AFTER_MS): Promise<InteractionRecord> {
    const done = () => {
      const cb = rec.callbacks[0];
      if (cb === undefined) return false;
      if (cb === 4 || cb === 7 || cb === 8 || cb === 1) return true;
      return rec.calls.some((c) => c.status < 300 && (c.method === 'PATCH' || (c.method === 'POST' && c.route.startsWith('/webhooks/'))));
    };
    return new Promise((resolve, reject) => {
      if (done()) return resolve(rec);
      const timer = setTimeout(() => {
        rec.events.off('change', check);
        reject(new Error(`interaction ${rec.id} never settled; calls: ${JSON.stringify(rec.calls.map((c) => [c.method, c.route, c.status, c.error]))}`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        rec.events.off('change', check);
        resolve(rec);
      };
      rec.events.on('change', check);
    });
  }

  /** The message a member sees as the answer: the last follow-up, else the original. */
  answer(rec: InteractionRecord): StoredMessage {
    const m = rec.followups.at(-1) ?? (rec.original && !rec.original.deleted ? rec.original : null);
    if (!m) throw new Error(`interaction ${rec.id} has no visible answer`);
    return m;
  }

  // ------------------------------------------------------------------ HTTP server

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        res.writeHead(500, JSON_TYPE).end(JSON.stringify({ message: String(err), code: 0 }));
      });
    });
    // Idle connections close from the client's side only: see createSimServer in src/sim/server.ts.
    this.server.keepAliveTimeout = 0;
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onGateway(ws));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async readBody(req: IncomingMessage): Promise<ParsedBody> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers['content-type'] ?? '';
    if (raw.length === 0) return { json: undefined, files: [] };
    if (type.startsWith('multipart/form-data')) {
      const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
      const files: StoredAttachment[] = [];
      let json: unknown = {};
      for (const [name, value] of form.entries()) {
        if (name === 'payload_json') json = JSON.parse(String(value));
        else if (typeof value !== 'string') {
          const data = Buffer.from(await value.arrayBuffer());
          const index = /^files\[(\d+)\]$/.exec(name)?.[1];
          files.push({ id: index ?? String(files.length), filename: value.name, size: data.length, contentType: value.type, data });
        }
      }
      return { json, files };
    }
    return { json: JSON.parse(raw.toString('utf8')), files: [] };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${this.port}`);
    const route = decodeURIComponent(url.pathname.replace(/^\/api\/v10/, ''));
    const method = req.method ?? 'GET';
    let parsed: ParsedBody = { json: undefined, files: [] };
    let answer: Answer;
    try {
      parsed = await this.readBody(req);
      // Discord handles an inline answer the moment it arrives: calls made after it see it.
      const pendingToken = /^\/webhooks\/\d+\/([^/]+)/.exec(route)?.[1];
      const pending = pendingToken ? this.interactions.get(pendingToken)?.inflight : undefined;
      if (pending) await pending;
      answer = this.route(method, route, parsed, req.headers.authorization, url);
    } catch (err) {
      answer = discordError(400, RESTJSONErrorCodes.InvalidFormBodyOrContentType, `The request body is not valid: ${(err as Error).message}`);
    }
    const rec: RecordedRequest = {
      method,
      route,
      status: answer.status,
      body: parsed.json,
      files: parsed.files.map((f) => ({ name: f.filename, size: f.size })),
      at: this.now(),
      ...(answer.status >= 400 ? { error: answer.body as RecordedRequest['error'] } : {}),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    };
    this.requests.push(rec);
    const token = /^\/(?:interactions\/\d+|webhooks\/\d+)\/([^/]+)/.exec(route)?.[1];
    const inter = token ? this.interactions.get(token) : undefined;
    if (inter) inter.calls.push(rec);
    const headers = {
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '49',
      'x-ratelimit-reset-after': '1',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1),
      // One bucket per route shape, as Discord's are (discord.js queues requests per bucket).
      'x-ratelimit-bucket': `fake:${method}:${route.replace(/\d{16,20}/g, ':id')}`,
    };
    if (answer.body === undefined) res.writeHead(answer.status, headers).end();
    else res.writeHead(answer.status, { ...headers, ...JSON_TYPE }).end(JSON.stringify(answer.body));
    inter?.events.emit('change');
  }

  private route(method: string, route: string, body: ParsedBody, auth: string | undefined, url: URL): Answer {
    const m = (re: RegExp) => re.exec(route);
    let p: RegExpExecArray | null;

    // Interaction routes carry no Authorization header (the token is in the path).
    if ((p = m(/^\/interactions\/(\d+)\/([^/]+)\/callback$/)) && method === 'POST') {
      return this.callback(p[1]!, p[2]!, body, url.searchParams.get('with_response') === 'true');
    }
    if ((p = m(/^\/webhooks\/(\d+)\/([^/]+)(?:\/messages\/([^/]+))?$/))) {
      return this.webhook(method, p[1]!, p[2]!, p[3], body);
    }

    if (auth !== `Bot ${this.token}`) return discordError(401, 0, '401: Unauthorized');

    if (route === '/gateway/bot' && method === 'GET') {
      return {
        status: 200,
        body: {
          url: this.gatewayUrl,
          shards: this.recommendedShards,
          // Default: a large bot's concurrency, so the shards of most tests identify at once.
          session_start_limit: { total: 1000, remaining: 1000 - this.identifies.length, reset_after: 86_400_000, max_concurrency: this.maxConcurrency },
        },
      };
    }
    if (route === '/users/@me' && method === 'GET') return { status: 200, body: this.bot };
    if ((route === '/applications/@me' || route === '/oauth2/applications/@me') && method === 'GET') {
      return { status: 200, body: { id: this.appId, name: this.bot.username, bot_public: true, flags: 0, bot: this.bot } };
    }
    if ((p = m(/^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/))) {
      if (p[1] !== this.appId) return discordError(403, 50001, 'Missing Access');
      return this.commands(method, p[2], body.json);
    }
    if ((p = m(/^\/channels\/(\d+)(?:\/messages(?:\/(\d+))?)?$/))) {
      return this.channelRoute(method, p[1]!, route.includes('/messages'), p[2], body);
    }
    if ((p = m(/^\/guilds\/(\d+)\/members\/(\d+)\/roles\/(\d+)$/)) && (method === 'PUT' || method === 'DELETE')) {
      const g = this.guilds.get(p[1]!);
      if (!g) return discordError(404, RESTJSONErrorCodes.UnknownGuild, 'Unknown Guild');
      return this.memberRole(method, g, p[2]!, p[3]!);
    }
    if ((p = m(/^\/guilds\/(\d+)(?:\/(roles|members\/(\d+)))?$/)) && method === 'GET') {
      const g = this.guilds.get(p[1]!);
      if (!g) return discordError(404, RESTJSONErrorCodes.UnknownGuild, 'Unknown Guild');
      if (p[2] === 'roles') return { status: 200, body: g.roles };
      if (p[3]) {
        if (p[3] === this.bot.id) return { status: 200, body: memberJson(this.bot, [g.botRoleId], g.joinedAt) };
        const roles = g.members.get(p[3]);
        const user = this.users.get(p[3]);
        if (!roles || !user) return discordError(404, RESTJSONErrorCodes.UnknownMember, 'Unknown Member');
        return { status: 200, body: memberJson(user, roles, g.joinedAt) };
      }
      const { channels: _c, members: _m, ...guild } = guildJson(g, this.bot);
      return { status: 200, body: guild };
    }
    return discordError(404, 0, '404: Not Found');
  }

  // ------------------------------------------------------------------ interaction responses

  /** Applies an initial response (callback endpoint or inline HTTP answer). */
  private acknowledge(rec: InteractionRecord, json: unknown, files: StoredAttachment[]): Answer {
    if (this.age(rec) > LIMITS.initialResponseMs) {
      return discordError(404, RESTJSONErrorCodes.UnknownInteraction, 'Unknown interaction');
    }
    if (rec.callbacks.length > 0) {
      return discordError(400, RESTJSONErrorCodes.InteractionHasAlreadyBeenAcknowledged, 'Interaction has already been acknowledged.');
    }
    const meta = files.map((f) => ({ name: f.filename, size: f.size }));
    const problems = checkInteractionResponse(rec.type, json, meta);
    if (problems.length) return INVALID_FORM(problems);
    if (oversizeFiles(meta, rec.attachmentSizeLimit).length) {
      return discordError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large');
    }
    const { type, data } = json as { type: number; data?: Record<string, unknown> };
    rec.callbacks.push(type);
    if (type === 4 || type === 5) {
      const msg = new StoredMessage(snowflake(this.now()), rec.channelId, rec.guildId, this.bot, new Date(this.now()).toISOString(), this.appId, rec.id);
      if (type === 5) msg.flags = 128 | (Number(data?.flags ?? 0) & 64);
      else this.applyMessage(msg, data ?? {}, files, false);
      this.messages.set(msg.id, msg);
      rec.original = msg;
    } else if (type === 7 && rec.original) {
      this.applyMessage(rec.original, data ?? {}, files, true);
    } else if (type === 8) {
      rec.choices = (data?.choices ?? []) as InteractionRecord['choices'];
    }
    return { status: 204 };
  }

  private callback(id: string, token: string, body: ParsedBody, withResponse: boolean): Answer {
    const rec = this.interactions.get(token);
    if (!rec || rec.id !== id) return discordError(404, RESTJSONErrorCodes.UnknownInteraction, 'Unknown interaction');
    const answer = this.acknowledge(rec, body.json, body.files);
    if (answer.status !== 204 || !withResponse) return answer;
    return {
      status: 200,
      body: {
        interaction: { id: rec.id, type: rec.type, response_message_loading: rec.callbacks[0] === 5, response_message_ephemeral: !!rec.original?.ephemeral },
        resource: { type: rec.callbacks[0], ...(rec.original ? { message: rec.original.json() } : {}) },
      },
    };
  }

  /** Writes a message body into a stored message (create or edit semantics). */
  private applyMessage(msg: StoredMessage, data: Record<string, unknown>, files: StoredAttachment[], edit: boolean): void {
    if (typeof data.content === 'string' || !edit) msg.content = typeof data.content === 'string' ? data.content : '';
    if (Array.isArray(data.embeds) || !edit) msg.embeds = (data.embeds as StoredMessage['embeds']) ?? [];
    if (Array.isArray(data.components) || !edit) msg.components = (data.components as StoredMessage['components']) ?? [];
    if (typeof data.flags === 'number' && !edit) msg.flags = data.flags;
    // Attachments: `attachments` lists what stays (old ids) and describes new uploads (their index).
    const list = Array.isArray(data.attachments) ? (data.attachments as { id: string | number; filename?: string; description?: string }[]) : undefined;
    const uploaded = files.map((f) => {
      const entry = list?.find((a) => String(a.id) === f.id);
      return { ...f, id: snowflake(this.now()), filename: entry?.filename ?? f.filename, description: entry?.description };
    });
    if (list) {
      const keep = msg.attachments.filter((a) => list.some((x) => String(x.id) === a.id));
      msg.attachments = [...keep, ...uploaded];
    } else if (!edit) {
      msg.attachments = uploaded;
    } else {
      msg.attachments = [...msg.attachments, ...uploaded];
    }
    if (edit) {
      msg.flags &= ~128;
      msg.editedAt = new Date(this.now()).toISOString();
      msg.edits++;
    }
  }

  private webhook(method: string, appId: string, token: string, messageId: string | undefined, body: ParsedBody): Answer {
    const rec = this.interactions.get(token);
    if (!rec || appId !== this.appId) return discordError(404, RESTJSONErrorCodes.UnknownWebhook, 'Unknown Webhook');
    if (this.age(rec) > LIMITS.tokenLifetimeMs) {
      return discordError(401, RESTJSONErrorCodes.InvalidWebhookToken, 'Invalid Webhook Token');
    }
    if (rec.callbacks.length === 0) return discordError(404, RESTJSONErrorCodes.UnknownMessage, 'Unknown Message');
    const meta = body.files.map((f) => ({ name: f.filename, size: f.size }));

    if (messageId === undefined) {
      if (method !== 'POST') return discordError(405, 0, '405: Method Not Allowed');
      const problems = checkMessage(body.json, { files: meta });
      if (problems.length) return INVALID_FORM(problems);
      if (oversizeFiles(meta, rec.attachmentSizeLimit).length) return discordError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large');
      const data = body.json as Record<string, unknown>;
      // A follow-up to a still-loading deferral becomes the original response (deprecated, still live).
      const o = rec.original;
      if (o && !o.deleted && (o.flags & 128) !== 0 && rec.callbacks[0] === 5) {
        this.applyMessage(o, data, body.files, true);
        return { status: 200, body: o.json() };
      }
      const msg = new StoredMessage(snowflake(this.now()), rec.channelId, rec.guildId, this.bot, new Date(this.now()).toISOString(), this.appId, rec.id);
      this.applyMessage(msg, data, body.files, false);
      this.messages.set(msg.id, msg);
      rec.followups.push(msg);
      return { status: 200, body: msg.json() };
    }

    const target = messageId === '@original' ? rec.original : rec.followups.find((f) => f.id === messageId);
    if (!target || target.deleted) return discordError(404, RESTJSONErrorCodes.UnknownMessage, 'Unknown Message');
    if (method === 'GET') return { status: 200, body: target.json() };
    if (method === 'DELETE') {
      target.deleted = true;
      return { status: 204 };
    }
    if (method !== 'PATCH') return discordError(405, 0, '405: Method Not Allowed');
    const problems = checkMessage(body.json, { files: meta, edit: true, existingAttachments: target.attachments.map((a) => a.filename) });
    if (problems.length) return INVALID_FORM(problems);
    if (oversizeFiles(meta, rec.attachmentSizeLimit).length) return discordError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large');
    this.applyMessage(target, body.json as Record<string, unknown>, body.files, true);
    return { status: 200, body: target.json() };
  }

  // ------------------------------------------------------------------ channels

  private channelRoute(method: string, channelId: string, messages: boolean, messageId: string | undefined, body: ParsedBody): Answer {
    const g = [...this.guilds.values()].find((x) => x.channels.some((c) => c.id === channelId));
    const c = g?.channels.find((x) => x.id === channelId);
    if (!g || !c) return discordError(404, RESTJSONErrorCodes.UnknownChannel, 'Unknown Channel');
    const perms = this.botPermissionsIn(g, c);
    const has = (bit: bigint) => (perms & bit) !== 0n;
    if (!has(PermissionFlagsBits.ViewChannel)) return discordError(403, RESTJSONErrorCodes.MissingAccess, 'Missing Access');
    if (!messages) {
      if (method === 'GET') return { status: 200, body: channelJson(g, c) };
      return discordError(405, 0, '405: Method Not Allowed');
    }
    const data = (body.json ?? {}) as Record<string, unknown>;
    const meta = body.files.map((f) => ({ name: f.filename, size: f.size }));
    const needs = () => {
      if (Array.isArray(data.embeds) && data.embeds.length && !has(PermissionFlagsBits.EmbedLinks)) return false;
      if (body.files.length && !has(PermissionFlagsBits.AttachFiles)) return false;
      return true;
    };
    if (messageId === undefined) {
      if (method !== 'POST') return discordError(405, 0, '405: Method Not Allowed');
      if (!has(PermissionFlagsBits.SendMessages) || !needs()) return discordError(403, RESTJSONErrorCodes.MissingPermissions, 'Missing Permissions');
      const problems = checkMessage(data, { files: meta });
      const nonce = data.nonce;
      if (nonce !== undefined && !(typeof nonce === 'string' ? nonce.length <= NONCE_MAX : Number.isInteger(nonce))) {
        problems.push({ path: ['nonce'], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${NONCE_MAX} or fewer in length.` });
      }
      if (problems.length) return INVALID_FORM(problems);
      if (oversizeFiles(meta).length) return discordError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large');
      // enforce_nonce: the same nonce from the same author within a few minutes returns the
      // message it created instead of creating another.
      const nonceKey = nonce !== undefined && data.enforce_nonce === true ? `${this.bot.id}:${String(nonce)}` : null;
      if (nonceKey) {
        const seen = this.nonces.get(nonceKey);
        const earlier = seen && this.now() - seen.at < NONCE_WINDOW_MS ? this.messages.get(seen.messageId) : undefined;
        if (earlier) {
          this.nonceHits++;
          return { status: 200, body: earlier.json() };
        }
      }
      const msg = new StoredMessage(snowflake(this.now()), c.id, g.id, this.bot, new Date(this.now()).toISOString(), this.appId);
      this.applyMessage(msg, data, body.files, false);
      this.messages.set(msg.id, msg);
      if (nonceKey) this.nonces.set(nonceKey, { messageId: msg.id, at: this.now() });
      this.channelEvents.emit('post', msg);
      return { status: 200, body: msg.json() };
    }
    const msg = this.messages.get(messageId);
    if (!msg || msg.deleted || msg.channelId !== c.id) return discordError(404, RESTJSONErrorCodes.UnknownMessage, 'Unknown Message');
    if (method === 'GET') {
      if (!has(PermissionFlagsBits.ReadMessageHistory)) return discordError(403, RESTJSONErrorCodes.MissingPermissions, 'Missing Permissions');
      return { status: 200, body: msg.json() };
    }
    if (method === 'DELETE') {
      msg.deleted = true;
      return { status: 204 };
    }
    if (method !== 'PATCH') return discordError(405, 0, '405: Method Not Allowed');
    if (msg.author.id !== this.bot.id) return discordError(403, RESTJSONErrorCodes.CannotEditMessageAuthoredByAnotherUser, 'Cannot edit a message authored by another user');
    if (!needs()) return discordError(403, RESTJSONErrorCodes.MissingPermissions, 'Missing Permissions');
    const problems = checkMessage(data, { files: meta, edit: true, existingAttachments: msg.attachments.map((a) => a.filename) });
    if (problems.length) return INVALID_FORM(problems);
    if (oversizeFiles(meta).length) return discordError(413, RESTJSONErrorCodes.RequestEntityTooLarge, 'Request entity too large');
    this.applyMessage(msg, data, body.files, true);
    this.channelEvents.emit('edit', msg);
    return { status: 200, body: msg.json() };
  }

  // ------------------------------------------------------------------ commands

  private commands(method: string, guildId: string | undefined, json: unknown): Answer {
    if (guildId && !this.guilds.has(guildId)) return discordError(404, RESTJSONErrorCodes.UnknownGuild, 'Unknown Guild');
    const current = guildId ? (this.guildCommands.get(guildId) ?? []) : this.globalCommands;
    if (method === 'GET') return { status: 200, body: current };
    if (method !== 'PUT') return discordError(405, 0, '405: Method Not Allowed');
    const problems = checkCommandSet(json);
    if (problems.length) return INVALID_FORM(problems);
    this.commandPuts.push({ guildId, body: json });
    const next = (json as Record<string, unknown>[]).map((c) => {
      const old = current.find((x) => x.name === c.name && x.type === (c.type ?? 1));
      return {
        default_member_permissions: null,
        contexts: null,
        integration_types: [0],
        nsfw: false,
        ...c,
        type: c.type ?? 1,
        id: old?.id ?? snowflake(this.now()),
        application_id: this.appId,
        version: snowflake(this.now()),
        ...(guildId ? { guild_id: guildId } : {}),
      } as unknown as APIApplicationCommand;
    });
    if (guildId) this.guildCommands.set(guildId, next);
    else this.globalCommands.splice(0, this.globalCommands.length, ...next);
    return { status: 200, body: next };
  }

  // ------------------------------------------------------------------ gateway

  private send(conn: GatewayConn, payload: Record<string, unknown>): void {
    conn.ws.send(JSON.stringify(payload));
  }

  private dispatch(conn: GatewayConn, t: string, d: unknown): void {
    conn.seq++;
    this.send(conn, { op: 0, t, s: conn.seq, d });
  }

  private dispatchToGuild(g: FakeGuild, t: string, d: unknown): boolean {
    for (const conn of this.shards.values()) {
      if (g.shardOf(conn.shard[1]) === conn.shard[0]) {
        this.dispatch(conn, t, d);
        return true;
      }
    }
    return false;
  }

  /** Why Discord would refuse this IDENTIFY, or null. */
  private identifyProblem(shard: [number, number]): { code: number; reason: string } | null {
    const [id, count] = shard;
    if (!Number.isInteger(id) || !Number.isInteger(count) || count < 1 || id < 0 || id >= count) return { code: 4010, reason: 'Invalid shard.' };
    const last = this.bucketUsedAt.get(id % this.maxConcurrency);
    if (last !== undefined && this.now() - last < IDENTIFY_WINDOW_MS) return { code: 4008, reason: 'Rate limited.' };
    return null;
  }

  /** Closes a shard's connection from Discord's side with a close code (4004: the token was revoked). */
  dropShard(id: number, code: number, reason = 'Closed by the test.'): void {
    const conn = this.shards.get(id);
    if (!conn) throw new Error(`shard ${id} is not connected`);
    conn.ws.close(code, reason);
  }

  /** Resolves once every given shard is identified (at once when they are). */
  whenShards(ids: number[]): Promise<void> {
    const done = () => ids.every((id) => this.shards.has(id));
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        this.gatewayEvents.off('identify', check);
        resolve();
      };
      this.gatewayEvents.on('identify', check);
    });
  }

  private onGateway(ws: WebSocket): void {
    this.send({ ws, shard: [0, 1], seq: 0 }, { op: 10, d: { heartbeat_interval: 41_250 } });
    ws.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> };
      if (msg.op === 1) {
        ws.send(JSON.stringify({ op: 11 }));
      } else if (msg.op === 2) {
        if (msg.d.token !== this.token) {
          ws.close(4004, 'Authentication failed.');
          return;
        }
        const shard = (msg.d.shard as [number, number] | undefined) ?? [0, 1];
        const refused = this.identifyProblem(shard);
        if (refused) {
          this.identifyRejections.push({ shard, ...refused, at: this.now() });
          this.gatewayEvents.emit('rejected', { shard, ...refused });
          ws.close(refused.code, refused.reason);
          return;
        }
        this.bucketUsedAt.set(shard[0] % this.maxConcurrency, this.now());
        this.identifies.push({ shard, at: this.now() });
        const conn: GatewayConn = { ws, shard, seq: 0 };
        this.shards.set(shard[0], conn);
        ws.on('close', () => {
          if (this.shards.get(shard[0]) !== conn) return;
          this.shards.delete(shard[0]);
          this.gatewayEvents.emit('disconnect', { shard });
        });
        const mine = [...this.guilds.values()].filter((g) => g.shardOf(shard[1]) === shard[0]);
        this.dispatch(conn, 'READY', {
          v: 10,
          user: this.bot,
          guilds: mine.map((g) => ({ id: g.id, unavailable: true })),
          session_id: `session-${shard[0]}`,
          resume_gateway_url: this.gatewayUrl,
          shard,
          application: { id: this.appId, flags: 0 },
          private_channels: [],
          relationships: [],
          presences: [],
          geo_ordered_rtc_regions: [],
          user_settings: {},
          guild_join_requests: [],
        });
        for (const g of mine) this.dispatch(conn, 'GUILD_CREATE', guildJson(g, this.bot));
        this.gatewayEvents.emit('identify', { shard, intents: msg.d.intents });
      } else if (msg.op === 6) {
        // No session resumption here: tell the client to identify again.
        ws.send(JSON.stringify({ op: 9, d: false }));
      }
    });
  }
}
