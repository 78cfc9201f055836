/**
 * /feed create|remove|list: a club's changes (joins, leaves, promotions and demotions, settings)
 * posted in a channel as the poller records them (src/bot/feeds.ts). All three need Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import type { FeedEvent } from '../src/bot/embeds/feed.ts';
import type { Feed } from '../src/bot/feeds.ts';
import type { Format } from '../src/bot/format.ts';
import { problemText } from '../src/bot/leaderboards.ts';
import { choice, described } from '../src/bot/localize.ts';
import { matchChoices } from '../src/bot/lookup.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

/** What the `events` option offers: every change, or one kind of them (big pushes come with `push`). */
const EVENT_CHOICES: Record<string, FeedEvent[]> = {
  all: ['join', 'leave', 'role', 'settings'],
  members: ['join', 'leave'],
  roles: ['role'],
  settings: ['settings'],
};

/** Big pushes: a day's gain worth a post, in trophies. */
const PUSH_MIN = 100;
const PUSH_MAX = 5000;

const Args = z.object({
  sub: z.enum(['create', 'remove', 'list']),
  channel: z.string().optional(),
  club: z.string().optional(),
  events: z.enum(['all', 'members', 'roles', 'settings']).optional(),
  feed: z.string().optional(),
  push: z.number().int().min(PUSH_MIN).max(PUSH_MAX).optional(),
});
type Args = z.infer<typeof Args>;

function eventsName(f: Pick<Feed, 'events' | 'pushTrophies'>, fmt: Format): string {
  const kinds: string[] = f.events.filter((e) => e !== 'push');
  const name = Object.entries(EVENT_CHOICES).find(([, list]) => list.length === kinds.length && list.every((e) => kinds.includes(e)))?.[0];
  const base = name ? fmt.t(`feed.events.${name}`) : kinds.join(', ');
  return f.events.includes('push') && f.pushTrophies ? `${base} + ${fmt.t('feed.pushOver', { n: f.pushTrophies })}` : base;
}

/** What the admin can do about a feed's problem, and when it is tried again. */
function fixText(f: Feed, dueAt: number, fmt: Format): string {
  const when = fmt.relative(dueAt);
  switch (f.problem) {
    case 'board.problem.channelDeleted':
      return `${fmt.t('feed.fix.deleted')} ${fmt.t('feed.retry', { when })}`;
    case 'board.problem.channelHidden':
    case 'board.problem.permissions':
    case 'board.problem.missing':
      return fmt.t('feed.fix.channel', { when });
    default:
      return fmt.t('feed.retry', { when });
  }
}

function feedLine(f: Feed, dueAt: number, fmt: Format): string {
  const problem = problemText(f, fmt);
  const state = problem
    ? `⚠️ ${problem} ${fixText(f, dueAt, fmt)}`
    : f.lastPostAt
      ? `✅ ${fmt.t('feed.lastPost', { when: fmt.relative(f.lastPostAt) })}`
      : `⏳ ${fmt.t('feed.nothingYet')}`;
  return `\`${f.id}\` · <#${f.channelId}> · **${gameName(f.clubName)}** ${f.club} · ${eventsName(f, fmt)}\n${state}`;
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const feeds = ctx.bot.feeds;
  const { fmt } = ctx;
  switch (a.sub) {
    case 'create': {
      if (!a.channel) throw new UserError('error.whichChannel');
      if (!a.club) throw new UserError('error.whichClub');
      const tag = parseTag(a.club);
      const club = (await orNotFound('club', tag, () => ctx.core.stats.club(tag))).data;
      // A feed is a public post: it speaks the server's language, not the admin's.
      const locale = ctx.guild?.language ?? ctx.guildLocale ?? fmt.locale;
      const events = EVENT_CHOICES[a.events ?? 'all']!;
      const feed = await feeds.create(
        guildId,
        { channelId: a.channel, club: { tag: club.tag, name: club.name }, events, ...(a.push ? { pushTrophies: a.push } : {}), createdBy: ctx.user.id, locale },
        ctx.premium,
      );
      return notice(
        fmt.t('feed.created.title'),
        fmt.t('feed.created.body', { club: gameName(club.name), tag: club.tag, channel: `<#${feed.channelId}>`, events: eventsName(feed, fmt), id: feed.id }),
        Colour.ok,
      );
    }
    case 'remove': {
      if (!a.feed) throw new UserError('error.whichFeed');
      const removed = await feeds.remove(guildId, a.feed);
      if (!removed) throw new UserError('error.noSuchFeed', { id: a.feed.slice(0, 20) });
      return notice(fmt.t('feed.removed.title'), fmt.t('feed.removed.body', { club: gameName(removed.clubName), tag: removed.club, channel: `<#${removed.channelId}>` }), Colour.ok);
    }
    case 'list': {
      const list = await feeds.list(guildId);
      const max = feeds.limit(ctx.premium);
      return {
        embeds: [
          {
            title: fmt.t('feed.list.title'),
            color: Colour.info,
            description: list.length ? list.map((f) => feedLine(f, feeds.dueAt(f), fmt)).join('\n\n') : `_${fmt.t('feed.list.none')}_`,
            footer: { text: fmt.t(ctx.premium.keyed ? 'feed.list.footerKeyed' : 'feed.list.footer', { n: list.length, max }) },
          },
        ],
        ephemeral: true,
      };
    }
  }
}

export default defineCommand({
  definition: {
    name: 'feed',
    ...described('command.feed'),
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'create',
        ...described('command.feed.create'),
        options: [
          {
            type: ApplicationCommandOptionType.Channel,
            name: 'channel',
            ...described('command.feed.create.channel'),
            required: true,
            channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
          },
          { type: ApplicationCommandOptionType.String, name: 'club', ...described('command.feed.create.club'), required: true, max_length: 20 },
          {
            type: ApplicationCommandOptionType.String,
            name: 'events',
            ...described('command.feed.create.events'),
            choices: Object.keys(EVENT_CHOICES).map((k) => choice(`feed.events.${k}`, k)),
          },
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'push',
            ...described('command.feed.create.push'),
            min_value: PUSH_MIN,
            max_value: PUSH_MAX,
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'remove',
        ...described('command.feed.remove'),
        options: [{ type: ApplicationCommandOptionType.String, name: 'feed', ...described('command.feed.remove.feed'), required: true, autocomplete: true }],
      },
      { type: ApplicationCommandOptionType.Subcommand, name: 'list', ...described('command.feed.list') },
    ],
  },
  args: Args,
  guildOnly: true,
  needsManageGuild: () => true,
  cooldownSeconds: 5,
  run,
  autocomplete: async (focused, ctx) => {
    if (focused.name !== 'feed' || !ctx.guildId) return [];
    const list = await ctx.bot.feeds.list(ctx.guildId);
    return matchChoices(
      list.map((f) => ({ name: `${f.id} · ${f.clubName} ${f.club}`.slice(0, 100), value: f.id })),
      focused.value,
    );
  },
});
