/**
 * What several commands need to find before they can answer: whose tag to show, which brawler
 * a name means, whether the server's key unlocks a premium view.
 */
import { COUNTRIES, countryName } from '../http/countries.ts';
import { parseTag } from '../upstream/tags.ts';
import { playerClub, type Brawler } from '../upstream/schemas.ts';
import type { CommandContext, Choice } from './command.ts';
import { UserError, orNotFound } from './errors.ts';
import { titleCase } from './embeds/names.ts';
import { Colour } from './view.ts';

/**
 * The player tag a command is about: the `tag` option, else the `member` option's linked account,
 * else the caller's own. Throws InvalidTagError for a bad tag and a UserError with a hint when
 * nobody linked anything.
 */
export async function playerTagFor(ctx: CommandContext, tag: string | undefined, member: string | undefined): Promise<string> {
  if (tag) return parseTag(tag);
  const userId = member ?? ctx.user.id;
  const linked = await ctx.bot.links.defaultTag(userId);
  if (linked) return linked;
  if (member && member !== ctx.user.id) {
    throw new UserError('No linked account', `<@${member}> has not linked a game account. Give a tag instead, like \`tag:#2PP0GQ9LU\`.`, Colour.info);
  }
  throw new UserError(
    'Which player?',
    'Give a tag (`tag:#2PP0GQ9LU`), or link your account once with `/link tag:#YOURTAG` and leave the tag out from then on. Your tag is on your profile screen, under your name.',
    Colour.info,
  );
}

/** The club tag a command is about: the option, else the club of the caller's (or member's) linked player. */
export async function clubTagFor(ctx: CommandContext, tag: string | undefined, member: string | undefined): Promise<string> {
  if (tag) return parseTag(tag);
  const player = await playerTagFor(ctx, undefined, member).catch((e: unknown) => {
    if (e instanceof UserError) {
      throw new UserError('Which club?', 'Give a club tag (`tag:#8QJR2YUC`), or link your game account with `/link` and your club becomes the default.', Colour.info);
    }
    throw e;
  });
  const p = await orNotFound('player', player, () => ctx.core.stats.player(player));
  const club = playerClub(p.data);
  if (!club) throw new UserError('Not in a club', `The linked player ${p.data.tag} is not in a club. Give a club tag instead.`, Colour.info);
  return club.tag;
}

/**
 * Whose account a linking command changes: the `member` option or the caller. Changing someone
 * else's needs Manage Server.
 */
export function linkTarget(ctx: CommandContext, member: string | undefined, verb: 'link' | 'unlink'): { userId: string; forOther: boolean; who: string } {
  const userId = member ?? ctx.user.id;
  const forOther = userId !== ctx.user.id;
  if (forOther && !ctx.canManageGuild) {
    throw new UserError('Manage Server needed', `Only members with the **Manage Server** permission can ${verb} an account for someone else.`);
  }
  return { userId, forOther, who: forOther ? `<@${userId}>` : 'you' };
}

/** What a key gives, in the words of the explanation members see. */
export const PREMIUM_EXPLAINER =
  'A server admin can unlock premium views (player and club logs, trophy pushes, best builds) for everyone here with `/settings apikey create`, ' +
  'which also brings shorter cooldowns and more leaderboards.';

/** Throws the ephemeral explanation when the server's key does not unlock premium views. */
export function requirePremium(ctx: CommandContext, what: string): void {
  const p = ctx.premium;
  if (p.premium) return;
  const why =
    p.reason === 'outside_server'
      ? `${what} works in servers that registered an API key.`
      : p.reason === 'basic_plan'
        ? `This server's API key is on the **${p.plan}** plan, which does not include premium views.`
        : p.reason === 'revoked'
          ? "This server's API key is no longer valid (it was revoked)."
          : p.reason === 'unreadable'
            ? "This server's API key cannot be read any more (the bot's secret changed)."
            : `${what} is a premium view, and this server has no API key registered.`;
  throw new UserError('Premium view', `${why}\n\n${PREMIUM_EXPLAINER}`, Colour.premium);
}

/** Finds a brawler by id or by name (any case, spaces and dashes optional). */
export function findBrawler(list: Brawler[], query: string): Brawler | undefined {
  const q = query.trim();
  if (/^\d+$/.test(q)) return list.find((b) => b.id === Number(q));
  const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
  const n = norm(q);
  return list.find((b) => norm(b.name) === n) ?? list.find((b) => norm(b.name).startsWith(n));
}

/** Up to 25 autocomplete choices: prefix matches first, then substring matches. */
export function matchChoices(items: { name: string; value: string | number }[], typed: string): Choice[] {
  const q = typed.trim().toLowerCase();
  if (!q) return items.slice(0, 25);
  const starts = items.filter((i) => i.name.toLowerCase().startsWith(q));
  const contains = items.filter((i) => !i.name.toLowerCase().startsWith(q) && i.name.toLowerCase().includes(q));
  return [...starts, ...contains].slice(0, 25);
}

/** Brawler choices from the catalogue (value: the id as text). */
export async function brawlerChoices(ctx: CommandContext, typed: string): Promise<Choice[]> {
  const list = (await ctx.core.stats.brawlers()).data.items;
  return matchChoices(
    list.map((b) => ({ name: titleCase(b.name), value: String(b.id) })).sort((a, b) => a.name.localeCompare(b.name)),
    typed,
  );
}

/** The member's linked tags, default first. */
export async function linkedTagChoices(ctx: CommandContext, typed: string): Promise<Choice[]> {
  const l = await ctx.bot.links.get(ctx.user.id);
  const tags = [...l.tags].sort((a, b) => (a === l.default ? -1 : b === l.default ? 1 : 0));
  return matchChoices(tags.map((t) => ({ name: t === l.default ? `${t} (default)` : t, value: t })), typed.replace(/^#/, ''));
}

/** 'Global' or "Germany (DE)". */
export function regionLabel(region: string): string {
  return region === 'global' ? 'Global' : `${countryName(region) ?? region} (${region})`;
}

/** 'Global' and every country, matched on name or code (an exact code first). */
export function countryChoices(typed: string): Choice[] {
  const all: Choice[] = [{ name: 'Global', value: 'global' }, ...COUNTRIES.map((c) => ({ name: `${c.name} (${c.code})`, value: c.code }))];
  const exact = all.filter((c) => String(c.value).toLowerCase() === typed.trim().toLowerCase());
  return [...exact, ...matchChoices(all, typed).filter((c) => !exact.includes(c))].slice(0, 25);
}
