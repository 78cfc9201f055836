/**
 * /leaderboard create|remove|list: boards of a club's members or of the server's linked members,
 * ranking trophies now or a metric over this week or season (`metric`), posted in a channel and
 * edited in place on a schedule, with a refresh button (its action runs the hidden `refresh`
 * subcommand); a weekly board also posts the week's results when it closes. Creating and removing
 * need Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import { DEFAULT_INTERVAL_MINUTES, problemText } from '../src/bot/leaderboards.ts';
import type { Format } from '../src/bot/format.ts';
import { choice, described } from '../src/bot/localize.ts';
import { SOURCE, localizations, translate } from '../src/i18n/index.ts';
import { matchChoices } from '../src/bot/lookup.ts';
import { BOARD_METRICS, type Board } from '../src/bot/settings.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const INTERVALS = [10, 15, 30, 60, 180, 360, 720, 1440];

const Args = z.object({
  sub: z.enum(['create', 'remove', 'list', 'refresh']),
  channel: z.string().optional(),
  club: z.string().optional(),
  interval: z.number().int().optional(),
  metric: z.enum(BOARD_METRICS).optional(),
  board: z.string().optional(),
});
type Args = z.infer<typeof Args>;

function sourceName(b: Board, fmt: Format): string {
  const source = b.source.kind === 'club' ? fmt.t('board.source.club', { tag: b.source.tag }) : fmt.t('board.source.members');
  return b.metric === 'trophies' ? source : `${source} · ${fmt.t(`board.metric.${b.metric}`)}`;
}

function boardLine(b: Board, ctx: CommandContext): string {
  const { fmt } = ctx;
  const problem = problemText(b, fmt);
  const state = problem ? `⚠️ ${problem}` : b.lastOkAt ? `✅ ${fmt.t('board.updated', { when: fmt.relative(b.lastOkAt) })}` : `⏳ ${fmt.t('board.notPosted')}`;
  return `\`${b.id}\` · <#${b.channelId}> · ${sourceName(b, fmt)} · ${fmt.t('board.every', { every: fmt.duration(b.intervalMinutes * 60) })}\n${state}`;
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const boards = ctx.bot.boards;
  const { fmt } = ctx;
  switch (a.sub) {
    case 'create': {
      if (!a.channel) throw new UserError('error.whichChannel');
      const interval = a.interval ?? DEFAULT_INTERVAL_MINUTES;
      let source: Board['source'] = { kind: 'members' };
      let what = fmt.t('board.what.members');
      if (a.club) {
        const tag = parseTag(a.club);
        const club = (await orNotFound('club', tag, () => ctx.core.stats.club(tag))).data;
        source = { kind: 'club', tag: club.tag };
        what = fmt.t('board.what.club', { club: gameName(club.name), tag: club.tag });
      }
      // A board is a public post: it speaks the server's language, not the admin's.
      const locale = ctx.guild?.language ?? ctx.guildLocale ?? fmt.locale;
      const board = await boards.create(
        guildId,
        { channelId: a.channel, source, metric: a.metric ?? 'trophies', intervalMinutes: interval, createdBy: ctx.user.id, locale },
        ctx.premium,
      );
      const link = `https://discord.com/channels/${guildId}/${board.channelId}/${board.messageId}`;
      const empty = source.kind === 'members' && (ctx.guild?.members.length ?? 0) === 0;
      const body = fmt.t('board.created.body', { what, channel: `<#${board.channelId}>`, link, every: fmt.duration(interval * 60), id: board.id });
      return notice(fmt.t('board.created.title'), empty ? `${body}\n${fmt.t('board.created.empty')}` : body, Colour.ok);
    }
    case 'remove': {
      if (!a.board) throw new UserError('error.whichBoard');
      const removed = await boards.remove(guildId, a.board);
      if (!removed) throw new UserError('error.noSuchBoard', { id: a.board.slice(0, 20) });
      return notice(fmt.t('board.removed.title'), fmt.t('board.removed.body', { source: sourceName(removed, fmt), channel: `<#${removed.channelId}>` }), Colour.ok);
    }
    case 'list': {
      const list = await boards.list(guildId);
      const limits = boards.limits(ctx.premium);
      return {
        embeds: [
          {
            title: fmt.t('board.list.title'),
            color: Colour.info,
            description: list.length ? list.map((b) => boardLine(b, ctx)).join('\n\n') : `_${fmt.t('board.list.none')}_`,
            footer: {
              text: fmt.t(ctx.premium.keyed ? 'board.list.footerKeyed' : 'board.list.footer', { n: list.length, max: limits.boards, minutes: limits.minInterval }),
            },
          },
        ],
        ephemeral: true,
      };
    }
    case 'refresh':
      return boards.refreshByButton(guildId, a.board ?? '');
  }
}

export default defineCommand({
  definition: {
    name: 'leaderboard',
    ...described('command.leaderboard'),
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'create',
        ...described('command.leaderboard.create'),
        options: [
          {
            type: ApplicationCommandOptionType.Channel,
            name: 'channel',
            ...described('command.leaderboard.create.channel'),
            required: true,
            channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
          },
          { type: ApplicationCommandOptionType.String, name: 'club', ...described('command.leaderboard.create.club'), max_length: 20 },
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'interval',
            description: translate(SOURCE, 'command.leaderboard.create.interval', { n: DEFAULT_INTERVAL_MINUTES }),
            description_localizations: localizations('command.leaderboard.create.interval', { n: DEFAULT_INTERVAL_MINUTES }),
            choices: INTERVALS.map((m) => (m < 60 ? choice('interval.minutes', m, { n: m }) : choice('interval.hours', m, { n: m / 60 }))),
          },
          {
            type: ApplicationCommandOptionType.String,
            name: 'metric',
            ...described('command.leaderboard.create.metric'),
            choices: BOARD_METRICS.map((m) => choice(`board.metric.${m}`, m)),
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'remove',
        ...described('command.leaderboard.remove'),
        options: [{ type: ApplicationCommandOptionType.String, name: 'board', ...described('command.leaderboard.remove.board'), required: true, autocomplete: true }],
      },
      { type: ApplicationCommandOptionType.Subcommand, name: 'list', ...described('command.leaderboard.list') },
    ],
  },
  args: Args,
  guildOnly: true,
  needsManageGuild: (a) => a.sub === 'create' || a.sub === 'remove',
  cooldownSeconds: 5,
  run,
  autocomplete: async (focused, ctx) => {
    if (focused.name !== 'board' || !ctx.guildId) return [];
    const list = await ctx.bot.boards.list(ctx.guildId);
    return matchChoices(
      list.map((b) => ({ name: `${b.id} · ${sourceName(b, ctx.fmt)}`, value: b.id })),
      focused.value,
    );
  },
});
