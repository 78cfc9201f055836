/**
 * /leaderboard create|remove|list: boards of a club's members or of the server's linked members,
 * posted in a channel and edited in place on a schedule, with a refresh button (its action runs
 * the hidden `refresh` subcommand). Creating and removing need Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import { DEFAULT_INTERVAL_MINUTES } from '../src/bot/leaderboards.ts';
import { matchChoices } from '../src/bot/lookup.ts';
import type { Board } from '../src/bot/settings.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const INTERVALS = [10, 15, 30, 60, 180, 360, 720, 1440];

const Args = z.object({
  sub: z.enum(['create', 'remove', 'list', 'refresh']),
  channel: z.string().optional(),
  club: z.string().optional(),
  interval: z.number().int().optional(),
  board: z.string().optional(),
});
type Args = z.infer<typeof Args>;

function sourceName(b: Board): string {
  return b.source.kind === 'club' ? `club ${b.source.tag}` : 'linked members';
}

function boardLine(b: Board, ctx: CommandContext): string {
  const { fmt } = ctx;
  const state = b.problem
    ? `⚠️ ${b.problem}`
    : b.lastOkAt
      ? `✅ updated ${fmt.relative(b.lastOkAt)}`
      : '⏳ not posted yet';
  return `\`${b.id}\` · <#${b.channelId}> · ${sourceName(b)} · every ${fmt.duration(b.intervalMinutes * 60)}\n${state}`;
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const boards = ctx.bot.boards;
  switch (a.sub) {
    case 'create': {
      if (!a.channel) throw new UserError('Which channel?', 'Pick the channel the board goes in.');
      const interval = a.interval ?? DEFAULT_INTERVAL_MINUTES;
      let source: Board['source'] = { kind: 'members' };
      let what = "this server's linked members";
      if (a.club) {
        const tag = parseTag(a.club);
        const club = (await orNotFound('club', tag, () => ctx.core.stats.club(tag))).data;
        source = { kind: 'club', tag: club.tag };
        what = `the members of **${gameName(club.name)}** ${club.tag}`;
      }
      const board = await boards.create(
        guildId,
        { channelId: a.channel, source, intervalMinutes: interval, createdBy: ctx.user.id, locale: ctx.fmt.locale },
        ctx.premium,
      );
      const link = `https://discord.com/channels/${guildId}/${board.channelId}/${board.messageId}`;
      const empty = source.kind === 'members' && (ctx.guild?.members.length ?? 0) === 0;
      return notice(
        'Leaderboard created',
        `A board of ${what} is in <#${board.channelId}> ([message](${link})) and refreshes every ${ctx.fmt.duration(interval * 60)}. Its id is \`${board.id}\`.` +
          (empty ? '\nNobody in this server has linked an account yet: members appear once they use `/link`.' : ''),
        Colour.ok,
      );
    }
    case 'remove': {
      if (!a.board) throw new UserError('Which board?', 'Pick the board to remove; `/leaderboard list` shows them.');
      const removed = await boards.remove(guildId, a.board);
      if (!removed) throw new UserError('No such board', `This server has no board \`${a.board.slice(0, 20)}\`. \`/leaderboard list\` shows them.`);
      return notice('Leaderboard removed', `The board of ${sourceName(removed)} in <#${removed.channelId}> is gone.`, Colour.ok);
    }
    case 'list': {
      const list = await boards.list(guildId);
      const limits = boards.limits(ctx.premium);
      return {
        embeds: [
          {
            title: 'Leaderboards of this server',
            color: Colour.info,
            description: list.length ? list.map((b) => boardLine(b, ctx)).join('\n\n') : '_None yet. Create one with `/leaderboard create`._',
            footer: {
              text: `${list.length} of ${limits.boards} boards · fastest refresh every ${limits.minInterval} minutes${ctx.premium.keyed ? '' : ' (more with an API key)'}`,
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
    description: 'Auto-refreshing leaderboards in a channel',
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'create',
        description: "Post a board of a club's members, or of this server's linked members",
        options: [
          {
            type: ApplicationCommandOptionType.Channel,
            name: 'channel',
            description: 'Where the board goes',
            required: true,
            channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
          },
          { type: ApplicationCommandOptionType.String, name: 'club', description: 'Club tag (default: the linked members of this server)', max_length: 20 },
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'interval',
            description: `Minutes between updates (default ${DEFAULT_INTERVAL_MINUTES})`,
            choices: INTERVALS.map((m) => ({ name: m < 60 ? `${m} minutes` : `${m / 60} hour${m === 60 ? '' : 's'}`, value: m })),
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'remove',
        description: 'Remove a board',
        options: [{ type: ApplicationCommandOptionType.String, name: 'board', description: 'The board', required: true, autocomplete: true }],
      },
      { type: ApplicationCommandOptionType.Subcommand, name: 'list', description: "This server's boards and their state" },
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
      list.map((b) => ({ name: `${b.id} · ${sourceName(b)}`, value: b.id })),
      focused.value,
    );
  },
});
