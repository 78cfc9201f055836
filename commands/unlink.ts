/**
 * /unlink [tag] [member] [release]: removes one linked account, or all of them without a tag.
 * Unlinking someone else's account needs Manage Server. `release:True` (Manage Server) frees a
 * verified account from whoever verified it, so another member can link and verify it.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError } from '../src/bot/errors.ts';
import { described } from '../src/bot/localize.ts';
import { linkTarget, linkedTagChoices } from '../src/bot/lookup.ts';
import { track } from '../src/bot/history-views.ts';
import { linkPin } from '../src/bot/links.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({ tag: z.string().optional(), member: z.string().optional(), release: z.boolean().optional() });
type Args = z.infer<typeof Args>;

async function release(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const { fmt } = ctx;
  if (!a.tag) throw new UserError('error.releaseNoTag');
  const tag = parseTag(a.tag);
  // Links follow a member to every server: only the admins of a server where the owner linked
  // accounts may free theirs, not any server's admin.
  const current = await ctx.bot.links.owner(tag);
  if (current && !ctx.guild?.members.includes(current.userId)) throw new UserError('error.releaseNotHere', { tag });
  const owner = current ? await ctx.bot.links.release(tag) : undefined;
  if (!owner) return notice(fmt.t('unlink.release.none.title'), fmt.t('unlink.release.none.body', { tag }), Colour.info);
  await track(ctx.core, false, 'player', tag, linkPin(owner.userId));
  const left = await ctx.bot.links.get(owner.userId);
  if (left.tags.length === 0 && ctx.guildId) {
    await ctx.bot.settings.update(ctx.guildId, (s) => {
      s.members = s.members.filter((m) => m !== owner.userId);
    });
  }
  await ctx.bot.roles.memberChanged(ctx.guildId, owner.userId);
  return notice(fmt.t('unlink.release.done.title'), fmt.t('unlink.release.done.body', { tag, member: `<@${owner.userId}>`, when: fmt.relative(owner.at) }), Colour.ok);
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  if (a.release) return release(a, ctx);
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
  for (const t of removed) await track(ctx.core, false, 'player', t, linkPin(userId));
  // Automatic roles of this server follow at once: the managed roles the account gave go.
  await ctx.bot.roles.memberChanged(ctx.guildId, userId);
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
      { type: ApplicationCommandOptionType.Boolean, name: 'release', ...described('command.unlink.release') },
    ],
  },
  args: Args,
  ephemeral: true,
  needsManageGuild: (a) => a.release === true,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'tag' ? linkedTagChoices(ctx, focused.value) : []),
});
