/**
 * /link [tag] [default] [member] [verify]: links a game account to a Discord member, so commands
 * work without a tag. A member may link several accounts and pick the default; linking an account
 * for someone else needs Manage Server.
 *
 * `/link verify:True [tag]` proves the account is the member's: the bot asks for one of the base
 * profile icons every account has (not the one in use), the member sets it in the game within
 * ten minutes and presses "I've changed it" (or runs the command again); the bot reads the profile
 * fresh from the game's API, not from the cache, and records them as the account's verified owner.
 * A verified account cannot be linked by anyone else until its owner unlinks it or an admin
 * releases it (`/unlink tag release:True`).
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { BASE_PROFILE_ICONS, profileIconUrl } from '../src/upstream/icons.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { described } from '../src/bot/localize.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import { CHALLENGE_MS, MAX_LINKS, OwnedByOtherError, TooManyLinksError, linkPin } from '../src/bot/links.ts';
import { linkTarget } from '../src/bot/lookup.ts';
import { track } from '../src/bot/history-views.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({
  tag: z.string().optional(),
  default: z.boolean().optional(),
  member: z.string().optional(),
  verify: z.boolean().optional(),
});
type Args = z.infer<typeof Args>;

/** The words for the errors of linking, for the member or for an admin acting for someone. */
function linkError(e: unknown, userId: string, forOther: boolean): never {
  if (e instanceof TooManyLinksError) {
    throw new UserError(forOther ? 'error.tooManyLinksOther' : 'error.tooManyLinks', { member: `<@${userId}>`, max: MAX_LINKS });
  }
  if (e instanceof OwnedByOtherError) throw new UserError('error.linkOwned', { tag: e.tag });
  throw e;
}

async function rememberMember(ctx: CommandContext, userId: string, tag: string): Promise<void> {
  if (ctx.guildId) {
    await ctx.bot.settings.update(ctx.guildId, (s) => {
      if (!s.members.includes(userId)) s.members.push(userId);
    });
  }
  await track(ctx.core, true, 'player', tag, linkPin(userId));
  // Automatic roles of this server follow at once (others at their next reconciliation).
  await ctx.bot.roles.memberChanged(ctx.guildId, userId);
}

/** The icon to ask for: a base icon every account has, other than the one shown now. */
export function challengeIcon(current: number | undefined): number {
  return BASE_PROFILE_ICONS.find((id) => id !== current) ?? BASE_PROFILE_ICONS[0]!;
}

async function verify(a: Args, ctx: CommandContext): Promise<ReplyView> {
  if (a.member !== undefined && a.member !== ctx.user.id) throw new UserError('error.verifyForOther');
  const { fmt } = ctx;
  const { links } = ctx.bot;
  const userId = ctx.user.id;
  const tag = a.tag ? parseTag(a.tag) : await links.defaultTag(userId);
  if (!tag) throw new UserError('error.verifyNoTag');
  const owner = await links.owner(tag);
  if (owner?.userId === userId) {
    return notice(fmt.t('verify.already.title'), fmt.t('verify.already.body', { tag, when: fmt.relative(owner.at) }), Colour.ok);
  }
  if (owner) throw new UserError('error.linkOwned', { tag });
  // What the game says now, not a cached copy: the icon may have changed a minute ago.
  const player = (await orNotFound('player', tag, () => ctx.core.stats.player(tag, { fresh: true }))).data;
  const now = ctx.bot.now();
  const pending = await links.challenge(userId, player.tag);
  const current = player.icon?.id;
  const values = { name: gameName(player.name), tag: player.tag };
  if (pending && pending.expiresAt > now) {
    if (current === pending.icon) {
      try {
        await links.verify(userId, player.tag, now);
      } catch (e) {
        linkError(e, userId, false);
      }
      await rememberMember(ctx, userId, player.tag);
      return notice(fmt.t('verify.done.title'), fmt.t('verify.done.body', values), Colour.ok);
    }
    const lead = fmt.t('verify.notYet', { ...values, icon: current ?? 0, wanted: pending.icon });
    return challengeView(ctx, values, pending.icon, pending.expiresAt, lead);
  }
  const icon = challengeIcon(current);
  const expiresAt = now + CHALLENGE_MS;
  await links.setChallenge(userId, player.tag, { icon, issuedAt: now, expiresAt });
  const lead = pending ? fmt.t('verify.expired', { when: fmt.relative(pending.expiresAt) }) : undefined;
  return challengeView(ctx, values, icon, expiresAt, lead);
}

function challengeView(ctx: CommandContext, values: { name: string; tag: string }, icon: number, expiresAt: number, lead?: string): ReplyView {
  const { fmt } = ctx;
  const ask = fmt.t('verify.ask', { ...values, icon, minutes: CHALLENGE_MS / 60_000, until: fmt.relative(expiresAt) });
  return {
    embeds: [
      {
        title: fmt.t('verify.title'),
        description: lead ? `${lead}\n\n${ask}` : ask,
        color: Colour.info,
        thumbnail: { url: profileIconUrl(icon) },
      },
    ],
    rows: [[{ type: 'button', label: fmt.t('verify.button'), emoji: '✅', style: 'success', action: { command: 'link', args: { verify: true, tag: values.tag } } }]],
    ephemeral: true,
  };
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  if (a.verify) return verify(a, ctx);
  if (!a.tag) throw new UserError('error.linkNoTag');
  const { userId, forOther } = linkTarget(ctx, a.member, 'link');
  const { fmt } = ctx;
  const tag = parseTag(a.tag);
  const player = (await orNotFound('player', tag, () => ctx.core.stats.player(tag))).data;
  const linked = await ctx.bot.links.link(userId, player.tag, a.default === true).catch((e: unknown) => linkError(e, userId, forOther));
  await rememberMember(ctx, userId, player.tag);
  const isDefault = linked.default === player.tag;
  const values = { name: gameName(player.name), tag: player.tag, member: `<@${userId}>`, default: linked.default ?? '', n: linked.tags.length, tags: linked.tags.join(', ') };
  const verified = (await ctx.bot.links.owner(player.tag))?.userId === userId;
  return notice(
    fmt.t('link.done.title'),
    [
      fmt.t(forOther ? 'link.done.other' : 'link.done.you', values),
      fmt.t(isDefault ? 'link.done.isDefault' : 'link.done.keptDefault', values),
      fmt.t(forOther ? 'link.done.countOther' : 'link.done.countYou', values),
      ...(verified || forOther ? [] : [fmt.t('link.done.verifyHint', values)]),
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
      { type: ApplicationCommandOptionType.String, name: 'tag', ...described('command.link.tag'), max_length: 20 },
      { type: ApplicationCommandOptionType.Boolean, name: 'default', ...described('command.link.default') },
      { type: ApplicationCommandOptionType.User, name: 'member', ...described('command.link.member') },
      { type: ApplicationCommandOptionType.Boolean, name: 'verify', ...described('command.link.verify') },
    ],
  },
  args: Args,
  ephemeral: true,
  cooldownSeconds: 5,
  run,
});
