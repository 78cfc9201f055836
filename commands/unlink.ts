/**
 * /unlink [tag] [member]: removes one linked account, or all of them without a tag. Unlinking
 * someone else's account needs Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { described } from '../src/bot/localize.ts';
import { linkTarget, linkedTagChoices } from '../src/bot/lookup.ts';
import { track } from '../src/bot/history-views.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({ tag: z.string().optional(), member: z.string().optional() });
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const { userId, forOther } = linkTarget(ctx, a.member, 'unlink');
  const { fmt } = ctx;
  const member = `<@${userId}>`;
  const tag = a.tag ? parseTag(a.tag) : undefined;
  const removed = await ctx.bot.links.unlink(userId, tag);
  if (removed.length === 0) {
    return notice(
      fmt.t('unlink.nothing.title'),
      fmt.t(tag ? 'unlink.nothing.tag' : 'unlink.nothing.any', { tag: tag ?? '', member, other: forOther ? 'yes' : 'no' }),
      Colour.info,
    );
  }
  const left = await ctx.bot.links.get(userId);
  if (left.tags.length === 0 && ctx.guildId) {
    await ctx.bot.settings.update(ctx.guildId, (s) => {
      s.members = s.members.filter((m) => m !== userId);
    });
  }
  for (const t of removed) await track(ctx.core, false, 'player', t, `link:${userId}`);
  const values = { removed: removed.join(', '), member, other: forOther ? 'yes' : 'no', left: left.tags.join(', '), default: left.default ?? '' };
  return notice(
    fmt.t('unlink.done.title'),
    `${fmt.t('unlink.done.removed', values)} ${fmt.t(left.tags.length ? 'unlink.done.left' : 'unlink.done.none', values)}`,
    Colour.ok,
  );
}

export default defineCommand({
  definition: {
    name: 'unlink',
    ...described('command.unlink'),
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'tag', ...described('command.unlink.tag'), autocomplete: true, max_length: 20 },
      { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.unlink.member') },
    ],
  },
  args: Args,
  ephemeral: true,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'tag' ? linkedTagChoices(ctx, focused.value) : []),
});
