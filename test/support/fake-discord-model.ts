/**
 * The data model of the fake Discord: snowflakes, users, guilds, channels and messages, and their
 * API JSON (discord-api-types/v10 shapes, complete enough for discord.js to build its structures).
 */
import type { APIChannel, APIGuildMember, APIMessage, APIRole, APIUser } from 'discord-api-types/v10';
import { PermissionFlagsBits } from 'discord-api-types/v10';

const DISCORD_EPOCH = 1420070400000n;
let counter = 0n;

/** A realistic 18–19 digit snowflake (the REST bucket regexes of discord.js expect them). */
export function snowflake(atMs: number = Date.now()): string {
  counter = (counter + 1n) & 0xfffn;
  return String(((BigInt(Math.floor(atMs)) - DISCORD_EPOCH) << 22n) | (1n << 17n) | counter);
}

export function userJson(id: string, username: string, bot = false): APIUser {
  return {
    id,
    username,
    global_name: bot ? null : username,
    discriminator: '0',
    avatar: null,
    bot,
    public_flags: 0,
  } as unknown as APIUser;
}

/** What members get in a plain guild: enough to read and write, nothing administrative. */
export const MEMBER_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.UseApplicationCommands;

export interface FakeChannel {
  id: string;
  name: string;
  type: 0 | 5;
  /** overwrites as Discord stores them (ids of roles or members) */
  overwrites: { id: string; type: 0 | 1; allow: string; deny: string }[];
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  /** the bot's own managed role */
  botRoleId: string;
  roles: APIRole[];
  channels: FakeChannel[];
  joinedAt: string;
  /** members other than the bot, with the ids of their roles (@everyone implied, as Discord lists them) */
  members: Map<string, string[]>;
  shardOf(count: number): number;
}

export function roleJson(id: string, name: string, permissions: bigint, position: number, managed = false): APIRole {
  return {
    id,
    name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position,
    permissions: String(permissions),
    managed,
    mentionable: false,
    flags: 0,
  } as unknown as APIRole;
}

export function channelJson(g: FakeGuild, c: FakeChannel): APIChannel {
  return {
    id: c.id,
    type: c.type,
    guild_id: g.id,
    name: c.name,
    position: g.channels.indexOf(c),
    permission_overwrites: c.overwrites,
    nsfw: false,
    parent_id: null,
    topic: null,
    last_message_id: null,
    rate_limit_per_user: 0,
    flags: 0,
  } as unknown as APIChannel;
}

export function memberJson(user: APIUser, roles: string[], joinedAt: string, permissions?: bigint): APIGuildMember & { permissions?: string } {
  return {
    user,
    nick: null,
    avatar: null,
    roles,
    joined_at: joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
    ...(permissions === undefined ? {} : { permissions: String(permissions) }),
  } as unknown as APIGuildMember & { permissions?: string };
}

export function guildJson(g: FakeGuild, bot: APIUser) {
  return {
    id: g.id,
    name: g.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: g.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: g.roles,
    emojis: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: 'en-US',
    public_updates_channel_id: null,
    nsfw_level: 0,
    stickers: [],
    premium_progress_bar_enabled: false,
    safety_alerts_channel_id: null,
    max_video_channel_users: 25,
    approximate_member_count: 3,
    // GUILD_CREATE only:
    joined_at: g.joinedAt,
    large: false,
    unavailable: false,
    member_count: 3,
    voice_states: [],
    members: [memberJson(bot, [g.botRoleId], g.joinedAt)],
    channels: g.channels.map((c) => channelJson(g, c)),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

export interface StoredAttachment {
  id: string;
  filename: string;
  size: number;
  contentType: string;
  data: Buffer;
  description?: string;
}

/** A message as the fake keeps it; `json()` gives its API form. */
export class StoredMessage {
  content = '';
  embeds: NonNullable<APIMessage['embeds']> = [];
  components: NonNullable<APIMessage['components']> = [];
  attachments: StoredAttachment[] = [];
  flags = 0;
  deleted = false;
  editedAt: string | null = null;
  edits = 0;

  constructor(
    readonly id: string,
    readonly channelId: string,
    readonly guildId: string | undefined,
    readonly author: APIUser,
    readonly createdAt: string,
    readonly appId: string,
    /** set for interaction responses */
    readonly interactionId?: string,
  ) {}

  get ephemeral(): boolean {
    return (this.flags & 64) !== 0;
  }

  json(): APIMessage {
    return {
      id: this.id,
      channel_id: this.channelId,
      ...(this.guildId ? { guild_id: this.guildId } : {}),
      author: this.author,
      content: this.content,
      timestamp: this.createdAt,
      edited_timestamp: this.editedAt,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: this.attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        size: a.size,
        content_type: a.contentType,
        url: `https://cdn.discordapp.com/attachments/${this.channelId}/${a.id}/${a.filename}`,
        proxy_url: `https://media.discordapp.net/attachments/${this.channelId}/${a.id}/${a.filename}`,
        ...(a.description ? { description: a.description } : {}),
      })),
      embeds: this.embeds,
      components: this.components,
      pinned: false,
      type: this.interactionId ? 20 : 0,
      flags: this.flags,
      application_id: this.appId,
      ...(this.interactionId ? { webhook_id: this.appId } : {}),
    } as APIMessage;
  }
}
