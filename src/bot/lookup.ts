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
import type { Format } from './format.ts';
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
    throw new UserError('error.memberNotLinked', { member: `<@${member}>` }, Colour.info);
  }
  throw new UserError('error.whichPlayer', {}, Colour.info);
}

/** The club tag a command is about: the option, else the club of the caller's (or member's) linked player. */
export async function clubTagFor(ctx: CommandContext, tag: string | undefined, member: string | undefined): Promise<string> {
  if (tag) return parseTag(tag);
  const player = await playerTagFor(ctx, undefined, member).catch((e: unknown) => {
    if (e instanceof UserError) {
      throw new UserError('error.whichClub', {}, Colour.info);
    }
    throw e;
  });
  const p = await orNotFound('player', player, () => ctx.core.stats.player(player));
  const club = playerClub(p.data);
  if (!club) throw new UserError('error.linkedNotInClub', { tag: p.data.tag }, Colour.info);
  return club.tag;
}

/**
 * Whose account a linking command changes: the `member` option or the caller. Changing someone
 * else's needs Manage Server.
 */
export function linkTarget(ctx: CommandContext, member: string | undefined, verb: 'link' | 'unlink'): { userId: string; forOther: boolean } {
  const userId = member ?? ctx.user.id;
  const forOther = userId !== ctx.user.id;
  if (forOther && !ctx.canManageGuild) throw new UserError(`error.${verb}ForOther`);
  return { userId, forOther };
}

/**
 * Throws the ephemeral explanation when the server's key does not unlock premium views; `view`
 * is the catalogue key of the view's name.
 */
export function requirePremium(ctx: CommandContext, view: string): void {
  const p = ctx.premium;
  if (p.premium) return;
  throw new UserError(
    'error.premium',
    { reason: p.reason ?? 'no_key', view: ctx.fmt.t(view), plan: p.plan ?? '', explainer: ctx.fmt.t('premium.explainer') },
    Colour.premium,
  );
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
  return matchChoices(tags.map((t) => ({ name: t === l.default ? ctx.fmt.t('link.defaultChoice', { tag: t }) : t, value: t })), typed.replace(/^#/, ''));
}

const regionNames = new Map<string, Intl.DisplayNames>();

/** A country's name in the reader's language (Intl's CLDR names), else its English name. */
function countryIn(code: string, fmt: Format): string {
  let names = regionNames.get(fmt.locale);
  if (!names) {
    names = new Intl.DisplayNames([fmt.locale], { type: 'region', fallback: 'none' });
    regionNames.set(fmt.locale, names);
  }
  return names.of(code) ?? countryName(code) ?? code;
}

/** "Global" or "Germany (DE)" / "Alemania (DE)". */
export function regionLabel(region: string, fmt: Format): string {
  return region === 'global' ? fmt.t('region.global') : `${countryIn(region, fmt)} (${region})`;
}

/** Global and every country, matched on the name in the reader's language, the English name or the code (an exact code first). */
export function countryChoices(typed: string, fmt: Format): Choice[] {
  const all = [
    { name: fmt.t('region.global'), value: 'global', english: 'Global' },
    ...COUNTRIES.map((c) => ({ name: `${countryIn(c.code, fmt)} (${c.code})`, value: c.code, english: c.name })),
  ];
  const q = typed.trim().toLowerCase();
  const exact = all.filter((c) => c.value.toLowerCase() === q);
  const byName = matchChoices(all, typed);
  const byEnglish = q ? all.filter((c) => c.english.toLowerCase().startsWith(q)) : [];
  const seen = new Set<string | number>();
  return [...exact, ...byName, ...byEnglish]
    .filter((c) => !seen.has(c.value) && seen.add(c.value))
    .slice(0, 25)
    .map((c) => ({ name: c.name, value: c.value }));
}
