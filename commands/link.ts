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
  const { userId, forOther, who } = linkTarget(ctx, a.member, 'link');
  const tag = parseTag(a.tag);
  const player = (await orNotFound('player', tag, () => ctx.core.stats.player(tag))).data;
  let linked;
  try {
    linked = await ctx.bot.links.link(userId, player.tag, a.default === true);
  } catch (e) {
    if (e instanceof TooManyLinksError) {
      throw new UserError('Too many accounts', `${forOther ? `<@${userId}> has` : 'You have'} ${MAX_LINKS} linked accounts, the most there can be. Remove one with \`/unlink\` first.`);
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
  return notice(
    'Account linked',
    `**${gameName(player.name)}** ${player.tag} is linked to ${who}.` +
      (isDefault ? ` It is the default: \`/player\` and \`/club\` use it when no tag is given.` : ` The default stays ${linked.default}.`) +
      `\n${forOther ? 'They have' : 'You have'} ${ctx.fmt.count(linked.tags.length, 'linked account')}: ${linked.tags.join(', ')}.`,
    Colour.ok,
  );
}

export default defineCommand({
  definition: {
    name: 'link',
    description: 'Link your game account so commands work without a tag',
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'tag', description: 'Your player tag, like #2PP0GQ9LU', required: true, max_length: 20 },
      { type: ApplicationCommandOptionType.Boolean, name: 'default', description: 'Make it your default account (the first one always is)' },
      { type: ApplicationCommandOptionType.User, name: 'member', description: 'Link it for another member (needs Manage Server)' },
    ],
  },
  args: Args,
  ephemeral: true,
  cooldownSeconds: 5,
  run,
});
