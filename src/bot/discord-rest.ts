/**
 * Channel messages with the bot token (leaderboards) over @discordjs/rest, for both transports.
 * The bot's permissions in a channel come from the gateway cache when there is one, and are
 * otherwise computed from REST reads the way Discord computes them (permissions.ts).
 */
import { REST, type RESTOptions, type RawFile } from 'discord.js';
import type { APIChannel, APIGuild, APIGuildMember } from 'discord-api-types/v10';
import { Routes } from 'discord-api-types/v10';
import type { ChannelPoster } from './leaderboards.ts';
import { channelPermissions } from './permissions.ts';
import type { RenderedMessage } from './render.ts';

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

  async post(channelId: string, msg: RenderedMessage): Promise<string> {
    const res = (await this.rest.post(Routes.channelMessages(channelId), { body: channelBody(msg), files: rawFiles(msg) })) as { id: string };
    return res.id;
  }

  async edit(channelId: string, messageId: string, msg: RenderedMessage): Promise<void> {
    await this.rest.patch(Routes.channelMessage(channelId, messageId), { body: channelBody(msg), files: rawFiles(msg) });
  }

  async delete(channelId: string, messageId: string): Promise<void> {
    await this.rest.delete(Routes.channelMessage(channelId, messageId));
  }
}
