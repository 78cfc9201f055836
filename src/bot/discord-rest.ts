/**
 * Channel messages with the bot token (leaderboards) and role assignment (automatic roles) over
 * @discordjs/rest, for both transports.
 * The bot's permissions in a channel come from the gateway cache when there is one, and are
 * otherwise computed from REST reads the way Discord computes them (permissions.ts).
 */
import { REST, type RESTOptions, type RawFile } from 'discord.js';
import type { APIChannel, APIGuild, APIGuildMember } from 'discord-api-types/v10';
import { RESTJSONErrorCodes, Routes } from 'discord-api-types/v10';
import type { ChannelPoster } from './leaderboards.ts';
import { channelPermissions } from './permissions.ts';
import type { RenderedMessage } from './render.ts';
import type { GuildRoles, RoleApi } from './roles.ts';

/**
 * Options for every Discord REST client of the bot (the gateway Client's, the HTTP transport's,
 * deploy-commands'). Requests go through Node's global fetch: @discordjs/rest's default undici 6
 * request would otherwise be dispatched by whichever undici loaded first, and when that is the
 * core's undici 7, multipart uploads (images) fail with "action is not a function".
 */
export function restOptions(apiUrl: string | undefined): Partial<RESTOptions> {
  return {
    ...(apiUrl ? { api: apiUrl } : {}),
    makeRequest: (url, init) => fetch(url, init as RequestInit) as ReturnType<RESTOptions['makeRequest']>,
  };
}

/** A REST client for the bot: DISCORD_API_URL as base, the token when there is one. */
export function discordRest(apiUrl: string | undefined, token?: string): REST {
  const rest = new REST(restOptions(apiUrl));
  if (token) rest.setToken(token);
  return rest;
}

export function rawFiles(msg: RenderedMessage): RawFile[] {
  return msg.files.map((f) => ({ name: f.name, data: f.data, contentType: f.contentType }));
}

/** A message body for a channel: interaction-only flags removed. */
function channelBody(msg: RenderedMessage): Record<string, unknown> {
  const { flags: _flags, ...body } = msg.body;
  return body;
}

export interface RestChannelsOptions {
  /** the gateway cache's answer; undefined = ask REST */
  permissionsFromCache?(guildId: string, channelId: string): bigint | null | undefined;
  owns?(guildId: string): boolean;
}

export class RestChannels implements ChannelPoster {
  readonly owns?: (guildId: string) => boolean;

  constructor(
    private readonly rest: REST,
    private readonly botUserId: string,
    private readonly opts: RestChannelsOptions = {},
  ) {
    if (opts.owns) this.owns = opts.owns;
  }

  async botPermissions(guildId: string, channelId: string): Promise<bigint | null> {
    const cached = this.opts.permissionsFromCache?.(guildId, channelId);
    if (cached !== undefined) return cached;
    let channel: APIChannel;
    try {
      channel = (await this.rest.get(Routes.channel(channelId))) as APIChannel;
    } catch {
      // Unknown channel, or one the bot cannot see (50001): either way it cannot post there.
      return null;
    }
    if (!('guild_id' in channel) || channel.guild_id !== guildId) return null;
    const [guild, member] = (await Promise.all([
      this.rest.get(Routes.guild(guildId)),
      this.rest.get(Routes.guildMember(guildId, this.botUserId)),
    ])) as [APIGuild, APIGuildMember];
    const overwrites = 'permission_overwrites' in channel ? (channel.permission_overwrites ?? []) : [];
    return channelPermissions({
      guildId,
      ownerId: guild.owner_id,
      roles: guild.roles.map((r) => ({ id: r.id, permissions: r.permissions })),
      member: { userId: this.botUserId, roles: member.roles },
      overwrites: overwrites.map((o) => ({ id: o.id, type: o.type, allow: o.allow, deny: o.deny })),
    });
  }

  async post(channelId: string, msg: RenderedMessage, opts: { nonce?: string } = {}): Promise<string> {
    const body = opts.nonce ? { ...channelBody(msg), nonce: opts.nonce, enforce_nonce: true } : channelBody(msg);
    const res = (await this.rest.post(Routes.channelMessages(channelId), { body, files: rawFiles(msg) })) as { id: string };
    return res.id;
  }

  async edit(channelId: string, messageId: string, msg: RenderedMessage): Promise<void> {
    await this.rest.patch(Routes.channelMessage(channelId, messageId), { body: channelBody(msg), files: rawFiles(msg) });
  }

  async delete(channelId: string, messageId: string): Promise<void> {
    await this.rest.delete(Routes.channelMessage(channelId, messageId));
  }
}

/**
 * Automatic roles over REST: the server's roles and the bot's own (GET /guilds/{id} and the bot's
 * member), members one by one (GET /guilds/{id}/members/{user}: no privileged members intent
 * needed), and the role assignment routes. @discordjs/rest queues each route's calls within
 * Discord's rate-limit headers; `calls` counts what was sent.
 */
export class RestRoles implements RoleApi {
  readonly owns?: (guildId: string) => boolean;
  private botId: Promise<string> | undefined;
  calls = 0;

  constructor(
    private readonly rest: REST,
    opts: { owns?(guildId: string): boolean; botUserId?: string } = {},
  ) {
    if (opts.owns) this.owns = opts.owns;
    if (opts.botUserId) this.botId = Promise.resolve(opts.botUserId);
  }

  private get<T>(route: `/${string}`): Promise<T> {
    this.calls++;
    return this.rest.get(route) as Promise<T>;
  }

  private me(): Promise<string> {
    this.botId ??= this.get<{ id: string }>(Routes.user('@me')).then((u) => u.id);
    return this.botId;
  }

  async guild(guildId: string): Promise<GuildRoles | null> {
    let guild: APIGuild;
    try {
      guild = await this.get<APIGuild>(Routes.guild(guildId));
    } catch {
      return null;
    }
    const member = await this.get<APIGuildMember>(Routes.guildMember(guildId, await this.me()));
    return {
      guildId,
      roles: guild.roles.map((r) => ({ id: r.id, name: r.name, position: r.position, permissions: r.permissions, managed: r.managed })),
      botRoles: member.roles,
    };
  }

  async memberRoles(guildId: string, userId: string): Promise<string[] | null> {
    try {
      return (await this.get<APIGuildMember>(Routes.guildMember(guildId, userId))).roles;
    } catch (e) {
      if ((e as { code?: unknown }).code === RESTJSONErrorCodes.UnknownMember) return null;
      throw e;
    }
  }

  async addRole(guildId: string, userId: string, roleId: string): Promise<void> {
    this.calls++;
    await this.rest.put(Routes.guildMemberRole(guildId, userId, roleId), { reason: 'Starr Stats automatic roles' });
  }

  async removeRole(guildId: string, userId: string, roleId: string): Promise<void> {
    this.calls++;
    await this.rest.delete(Routes.guildMemberRole(guildId, userId, roleId), { reason: 'Starr Stats automatic roles' });
  }
}
