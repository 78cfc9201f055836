/**
 * The gateway transport: a discord.js Client with the Guilds intent only (no privileged
 * intents), its REST base from DISCORD_API_URL. Interactions arrive as INTERACTION_CREATE and are
 * answered through discord.js's own methods (reply, deferReply, editReply, update, respond), so
 * its payload serialisation, multipart uploads and error mapping are the real ones.
 */
import {
  Client,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Status,
  type BaseInteraction,
  type CommandInteractionOption,
  type InteractionEditReplyOptions,
  type InteractionReplyOptions,
} from 'discord.js';
import type { APIApplicationCommandInteractionDataOption } from 'discord-api-types/v10';
import type { WebSocketManager } from '@discordjs/ws';
import type { Coordination } from '../core/coordination.ts';
import type { Schedule } from '../lib/schedule.ts';
import type { Logger } from '../log.ts';
import { appIdFromToken } from './deploy.ts';
import { RestChannels, RestRoles, restOptions } from './discord-rest.ts';
import { sharedIdentifyThrottler } from './identify.ts';
import { LIMITS } from './limits.ts';
import type { RenderedMessage } from './render.ts';
import type { Incoming, Responder, Router } from './router.ts';
import type { BotServices } from './services.ts';

export interface GatewayOptions {
  token: string;
  /** REST base (DISCORD_API_URL); discord.js appends /v10 */
  apiUrl?: string;
  /**
   * Shard ids this process runs and the total (SHARD_IDS / SHARD_COUNT). A count alone runs every
   * shard of it; neither = Discord's recommendation from GET /gateway/bot, all in this process.
   */
  shards?: number[];
  shardCount?: number;
  /** whose turn it is to IDENTIFY, shared by every process of the bot (identify.ts) */
  coordination: Coordination;
  /** the identify throttler's waits (default the wall clock) */
  identifySchedule?: Schedule;
}

/** discord.js's `shards` / `shardCount` for the options. */
export function shardingOf(o: Pick<GatewayOptions, 'shards' | 'shardCount'>): { shards: number[] | 'auto'; shardCount?: number } {
  if (o.shards) return { shards: o.shards, shardCount: o.shardCount ?? o.shards.length };
  if (o.shardCount) return { shards: Array.from({ length: o.shardCount }, (_, i) => i), shardCount: o.shardCount };
  return { shards: 'auto' };
}

function options(o: readonly CommandInteractionOption[]): APIApplicationCommandInteractionDataOption[] {
  return o.map(
    (x) =>
      ({
        name: x.name,
        type: x.type,
        ...(x.value !== undefined ? { value: x.value } : {}),
        ...(x.focused ? { focused: true } : {}),
        ...(x.options ? { options: options(x.options) } : {}),
      }) as APIApplicationCommandInteractionDataOption,
  );
}

function resolvedOf(o: readonly CommandInteractionOption[], out: Incoming['resolved']): Incoming['resolved'] {
  for (const x of o) {
    if (x.user) out.users[x.user.id] = x.user.globalName ?? x.user.username;
    if (x.channel && 'name' in x.channel && x.channel.name) out.channels[x.channel.id] = { name: x.channel.name, type: x.channel.type };
    if (x.options) resolvedOf(x.options, out);
  }
  return out;
}

/** discord.js interaction → the router's transport-free description. */
export function incomingFromDiscordJs(i: BaseInteraction): Incoming | null {
  const base = {
    id: i.id,
    user: { id: i.user.id, name: i.user.globalName ?? i.user.username },
    guildId: i.guildId,
    channelId: i.channelId,
    locale: i.locale,
    guildLocale: i.guildLocale ?? null,
    memberPermissions: i.memberPermissions?.bitfield ?? null,
    attachmentSizeLimit: i.attachmentSizeLimit ?? LIMITS.defaultAttachmentSize,
    transport: 'gateway' as const,
  };
  if (i.isChatInputCommand() || i.isAutocomplete()) {
    const data = i.options.data;
    return {
      ...base,
      kind: i.isAutocomplete() ? 'autocomplete' : 'command',
      commandName: i.commandName,
      options: options(data),
      resolved: resolvedOf(data, { users: {}, channels: {} }),
    };
  }
  if (i.isButton() || i.isStringSelectMenu()) {
    return {
      ...base,
      kind: 'component',
      customId: i.customId,
      values: i.isStringSelectMenu() ? i.values : undefined,
      resolved: { users: {}, channels: {} },
    };
  }
  return null;
}

function payload(msg: RenderedMessage) {
  return {
    content: msg.body.content,
    embeds: msg.body.embeds,
    components: msg.body.components,
    files: msg.files.map((f) => ({ attachment: f.data, name: f.name, description: f.description })),
    // A fresh array each call: discord.js appends the uploads to it. Empty = drop old attachments.
    attachments: [],
  };
}

/** Answers through discord.js, one method per Discord call. */
export class GatewayResponder implements Responder {
  constructor(private readonly i: BaseInteraction) {}

  private get repliable() {
    if (!this.i.isRepliable()) throw new Error('interaction cannot be answered');
    return this.i;
  }

  async reply(msg: RenderedMessage): Promise<void> {
    const o: InteractionReplyOptions = { ...payload(msg), ...(msg.ephemeral ? { flags: MessageFlags.Ephemeral } : {}) };
    await this.repliable.reply(o);
  }

  async update(msg: RenderedMessage): Promise<void> {
    if (!this.i.isMessageComponent()) throw new Error('only components can update their message');
    await this.i.update(payload(msg));
  }

  async defer(ephemeral: boolean): Promise<void> {
    await this.repliable.deferReply(ephemeral ? { flags: MessageFlags.Ephemeral } : {});
  }

  async deferUpdate(): Promise<void> {
    if (!this.i.isMessageComponent()) throw new Error('only components can defer an update');
    await this.i.deferUpdate();
  }

  async editOriginal(msg: RenderedMessage): Promise<void> {
    const o: InteractionEditReplyOptions = payload(msg);
    await this.repliable.editReply(o);
  }

  async deleteOriginal(): Promise<void> {
    await this.repliable.deleteReply();
  }

  async followUp(msg: RenderedMessage): Promise<void> {
    await this.repliable.followUp({ ...payload(msg), ...(msg.ephemeral ? { flags: MessageFlags.Ephemeral } : {}) });
  }

  async autocomplete(choices: { name: string; value: string | number }[]): Promise<void> {
    if (!this.i.isAutocomplete()) throw new Error('not an autocomplete interaction');
    await this.i.respond(choices);
  }
}

export interface GatewayBot {
  client: Client;
  /** resolves once every interaction received so far is handled (answered, or found a duplicate) */
  idle(): Promise<void>;
  /** null when every shard of this process is connected (ready), else which are not (/readyz) */
  problem(): string | null;
  close(): Promise<void>;
}

/** Logs in and routes interactions; resolves once every shard is ready. */
export async function startGateway(router: Router, services: BotServices, logger: Logger, opts: GatewayOptions): Promise<GatewayBot> {
  const log = logger.child({ component: 'gateway' });
  const appId = appIdFromToken(opts.token) ?? 'bot';
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    rest: restOptions(opts.apiUrl),
    ...shardingOf(opts),
    ws: {
      buildIdentifyThrottler: (manager: WebSocketManager) =>
        sharedIdentifyThrottler(manager, opts.coordination, appId, {
          ...(opts.identifySchedule ? { schedule: opts.identifySchedule } : {}),
          onWait: (shard, ms) => log.info({ shard, ms }, 'waiting for the shard bucket\'s identify turn'),
          onUnshared: (shard, err) => log.warn({ shard, err }, 'identify turns cannot be shared (Redis down?): waiting a whole turn before identifying'),
        }),
    },
  });
  const inflight = new Set<Promise<unknown>>();
  client.on(Events.InteractionCreate, (interaction) => {
    const incoming = incomingFromDiscordJs(interaction);
    if (!incoming) return;
    const p = router.deliver(incoming, new GatewayResponder(interaction)).finally(() => inflight.delete(p));
    inflight.add(p);
  });
  client.on(Events.Error, (e) => log.error({ err: e }, 'gateway error'));
  client.on(Events.ShardDisconnect, (_e, shard) => log.warn({ shard }, 'shard disconnected'));
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(opts.token);
  await ready;
  const channels = new RestChannels(client.rest, client.user!.id, {
    permissionsFromCache: (guildId, channelId) => {
      const guild = client.guilds.cache.get(guildId);
      if (!guild) return undefined;
      const channel = guild.channels.cache.get(channelId);
      if (!channel) return null;
      const me = guild.members.me;
      const perms = me ? channel.permissionsFor(me) : null;
      return perms ? perms.bitfield : null;
    },
    owns: (guildId) => client.guilds.cache.has(guildId),
  });
  services.boards.setPoster(channels);
  services.feeds.setPoster(channels);
  const rolesBefore = services.roles.discord;
  services.roles.setApi(new RestRoles(client.rest, { owns: (guildId) => client.guilds.cache.has(guildId), botUserId: client.user!.id }));
  log.info({ guilds: client.guilds.cache.size, shards: [...client.ws.shards.keys()], shardCount: client.options.shardCount }, 'gateway ready');
  return {
    client,
    async idle() {
      await Promise.allSettled([...inflight]);
    },
    problem() {
      const down = [...client.ws.shards.values()].filter((s) => s.status !== Status.Ready).map((s) => s.id);
      return down.length === 0 ? null : `gateway shard${down.length > 1 ? 's' : ''} ${down.join(', ')} of ${client.options.shardCount} not connected`;
    },
    async close() {
      services.boards.setPoster(null);
      services.feeds.setPoster(null);
      services.roles.setApi(rolesBefore);
      await Promise.allSettled([...inflight]);
      await client.destroy();
    },
  };
}
