/**
 * /link tag [default] [member]: links a game account to a Discord member, so commands work
 * without a tag. A member may link several accounts and pick the default; linking an account for
 * someone else needs Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { described } from '../src/bot/localize.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import { MAX_LINKS, TooManyLinksError } from '../src/bot/links.ts';
import { linkTarget } from '../src/bot/lookup.ts';
import { track } from '../src/bot/history-views.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({
  tag: z.string(),
  default: z.boolean().optional(),
  member: z.string().optional(),
});
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const { userId, forOther } = linkTarget(ctx, a.member, 'link');
  const { fmt } = ctx;
  const tag = parseTag(a.tag);
  const player = (await orNotFound('player', tag, () => ctx.core.stats.player(tag))).data;
  let linked;
  try {
    linked = await ctx.bot.links.link(userId, player.tag, a.default === true);
  } catch (e) {
    if (e instanceof TooManyLinksError) {
      throw new UserError(forOther ? 'error.tooManyLinksOther' : 'error.tooManyLinks', { member: `<@${userId}>`, max: MAX_LINKS });
    }
    throw e;
  }
  if (ctx.guildId) {
    await ctx.bot.settings.update(ctx.guildId, (s) => {
      if (!s.members.includes(userId)) s.members.push(userId);
    });
  }
  await track(ctx.core, true, 'player', player.tag, `link:${userId}`);
  const isDefault = linked.default === player.tag;
  const values = { name: gameName(player.name), tag: player.tag, member: `<@${userId}>`, default: linked.default ?? '', n: linked.tags.length, tags: linked.tags.join(', ') };
  return notice(
    fmt.t('link.done.title'),
    [
      fmt.t(forOther ? 'link.done.other' : 'link.done.you', values),
      fmt.t(isDefault ? 'link.done.isDefault' : 'link.done.keptDefault', values),
      fmt.t(forOther ? 'link.done.countOther' : 'link.done.countYou', values),
    ].join(' '),
    Colour.ok,
  );
}

export default defineCommand({
  definition: {
    name: 'link',
    ...described('command.link'),
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'tag', ...described('command.link.tag'), required: true, max_length: 20 },
      { type: ApplicationCommandOptionType.Boolean, name: 'default', ...described('command.link.default') },
      { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.link.member') },
    ],
  },
  args: Args,
  ephemeral: true,
  cooldownSeconds: 5,
  run,
});
