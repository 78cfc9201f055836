/**
 * /unlink [tag] [member]: removes one linked account, or all of them without a tag. Unlinking
 * someone else's account needs Manage Server.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { linkTarget, linkedTagChoices } from '../src/bot/lookup.ts';
import { track } from '../src/bot/history-views.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({ tag: z.string().optional(), member: z.string().optional() });
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const { userId, who } = linkTarget(ctx, a.member, 'unlink');
  const tag = a.tag ? parseTag(a.tag) : undefined;
  const removed = await ctx.bot.links.unlink(userId, tag);
  if (removed.length === 0) {
    return notice('Nothing to unlink', tag ? `${tag} is not linked to ${who}.` : `No account is linked to ${who}.`, Colour.info);
  }
  const left = await ctx.bot.links.get(userId);
  if (left.tags.length === 0 && ctx.guildId) {
    await ctx.bot.settings.update(ctx.guildId, (s) => {
      s.members = s.members.filter((m) => m !== userId);
    });
  }
  for (const t of removed) await track(ctx.core, false, 'player', t, `link:${userId}`);
  return notice(
    'Unlinked',
    `Removed ${removed.join(', ')} from ${who}.` +
      (left.tags.length ? ` Still linked: ${left.tags.join(', ')} (default ${left.default}).` : ' No account is linked any more.'),
    Colour.ok,
  );
}

export default defineCommand({
  definition: {
    name: 'unlink',
    description: 'Remove a linked game account (all of them without a tag)',
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'tag', description: 'The account to remove (default: all)', autocomplete: true, max_length: 20 },
      { type: ApplicationCommandOptionType.User, name: 'member', description: 'Unlink for another member (needs Manage Server)' },
    ],
  },
  args: Args,
  ephemeral: true,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'tag' ? linkedTagChoices(ctx, focused.value) : []),
});
