/**
 * /roles add|remove|list|sync: automatic roles. Admins map a club's membership (optionally one
 * club role: member, senior, vice president, president) or a trophy bracket to a Discord role;
 * the bot gives and removes those roles for the server's linked members (only verified accounts
 * when `/settings verification` requires it) on a schedule as the poller sees changes, and on
 * demand with `/roles sync` (`dry-run:True` lists what would change and changes nothing).
 * Manage Server only; the bot says exactly what it is missing (Manage Roles, or which role sits
 * above its own).
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseTag } from '../src/upstream/tags.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, orNotFound } from '../src/bot/errors.ts';
import { gameName } from '../src/bot/embeds/common.ts';
import type { Format } from '../src/bot/format.ts';
import { choice, described } from '../src/bot/localize.ts';
import { blockProblem, LISTED_CHANGES, type SyncReport } from '../src/bot/roles.ts';
import { CLUB_ROLES, type RoleRule } from '../src/bot/settings.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

/** Changes listed one per line in a sync report; the rest are counted. */

const Args = z.object({
  sub: z.enum(['add', 'remove', 'list', 'sync']),
  role: z.string().optional(),
  club: z.string().optional(),
  'club-role': z.enum(['any', ...CLUB_ROLES]).optional(),
  'min-trophies': z.number().int().min(0).max(1_000_000).optional(),
  'max-trophies': z.number().int().min(1).max(1_000_000).optional(),
  'dry-run': z.boolean().optional(),
});
type Args = z.infer<typeof Args>;

/** A rule in words: "members of #TAG (senior)" or "1,000–2,000 trophies". */
export function ruleText(r: RoleRule, fmt: Format): string {
  if (r.club !== undefined) return fmt.t('roles.rule.club', { tag: r.club, clubRole: r.clubRole ?? 'any' });
  return r.maxTrophies === undefined
    ? fmt.t('roles.rule.trophiesFrom', { min: fmt.int(r.minTrophies ?? 0) })
    : fmt.t('roles.rule.trophies', { min: fmt.int(r.minTrophies ?? 0), max: fmt.int(r.maxTrophies) });
}

async function add(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const { fmt } = ctx;
  if (!a.role) throw new UserError('error.rolesWhichRole');
  const byClub = a.club !== undefined;
  const byTrophies = a['min-trophies'] !== undefined || a['max-trophies'] !== undefined;
  if (byClub === byTrophies) throw new UserError('error.rolesOneKind');
  if (!byClub && a['club-role'] !== undefined) throw new UserError('error.rolesOneKind');
  let rule: Omit<RoleRule, 'id' | 'createdAt'>;
  let what: string;
  if (byClub) {
    const tag = parseTag(a.club!);
    const club = (await orNotFound('club', tag, () => ctx.core.stats.club(tag))).data;
    const clubRole = a['club-role'] === undefined || a['club-role'] === 'any' ? undefined : a['club-role'];
    rule = { roleId: a.role, club: club.tag, ...(clubRole ? { clubRole } : {}), createdBy: ctx.user.id };
    what = fmt.t('roles.rule.clubNamed', { club: gameName(club.name), tag: club.tag, clubRole: clubRole ?? 'any' });
  } else {
    const min = a['min-trophies'] ?? 0;
    const max = a['max-trophies'];
    if (max !== undefined && max <= min) throw new UserError('error.rolesBadBracket', { min, max });
    rule = { roleId: a.role, minTrophies: min, ...(max !== undefined ? { maxTrophies: max } : {}), createdBy: ctx.user.id };
    what = ruleText({ ...rule, id: '', createdAt: 0 }, fmt);
  }
  await ctx.bot.roles.add(ctx.guildId!, rule);
  const verified = ctx.guild?.verification === 'required';
  return notice(fmt.t('roles.added.title'), fmt.t('roles.added.body', { role: `<@&${a.role}>`, what, verified: verified ? 'yes' : 'no' }), Colour.ok);
}

async function list(ctx: CommandContext): Promise<ReplyView> {
  const { fmt } = ctx;
  const s = (await ctx.bot.settings.get(ctx.guildId!));
  if (s.roleRules.length === 0) return notice(fmt.t('roles.list.title'), fmt.t('roles.list.none'), Colour.info);
  const byRole = new Map<string, RoleRule[]>();
  for (const r of s.roleRules) byRole.set(r.roleId, [...(byRole.get(r.roleId) ?? []), r]);
  const lines = [...byRole].map(([roleId, rules]) => `<@&${roleId}> ← ${rules.map((r) => ruleText(r, fmt)).join(' · ')}`);
  const problems = await ctx.bot.roles.problems(ctx.guildId!);
  const warnings: string[] = [];
  if (problems && !problems.manageRoles) warnings.push(`⚠️ ${fmt.t('roles.problem.noManageRoles')}`);
  for (const b of problems?.blocked ?? []) {
    const p = blockProblem(b.roleId, b.block);
    warnings.push(`⚠️ ${fmt.t(p.key, p.values)}`);
  }
  const sync = s.roleSync;
  const state = sync.problem
    ? `⚠️ ${fmt.t(sync.problem, sync.problemValues)}`
    : sync.lastOkAt
      ? `✅ ${fmt.t('roles.list.synced', { when: fmt.relative(sync.lastOkAt) })}`
      : `⏳ ${fmt.t('roles.list.notYet')}`;
  return {
    embeds: [
      {
        title: fmt.t('roles.list.title'),
        description: [...lines, '', ...warnings, ...(warnings.length ? [''] : []), state, fmt.t('roles.list.who', { mode: s.verification })].join('\n'),
        color: warnings.length ? Colour.warn : Colour.info,
      },
    ],
    ephemeral: true,
  };
}

export function syncView(r: SyncReport, dryRun: boolean, fmt: Format): ReplyView {
  const lines = r.changes.slice(0, LISTED_CHANGES).map((c) => {
    const parts = [...c.add.map((id) => `+<@&${id}>`), ...c.remove.map((id) => `−<@&${id}>`)];
    return `<@${c.userId}> ${parts.join(' ')}`;
  });
  if (r.changed > lines.length) lines.push(fmt.t('roles.sync.more', { n: r.changed - lines.length }));
  const notes: string[] = [];
  if (!r.manageRoles) notes.push(`⚠️ ${fmt.t('roles.problem.noManageRoles')}`);
  for (const b of r.blocked) {
    const p = blockProblem(b.roleId, b.block);
    notes.push(`⚠️ ${fmt.t(p.key, p.values)}`);
  }
  for (const tag of r.clubsGone) notes.push(`⚠️ ${fmt.t('roles.problem.clubGone', { tag })}`);
  if (r.notInServer) notes.push(fmt.t('roles.sync.notInServer', { n: r.notInServer }));
  if (r.unreadable) notes.push(fmt.t('roles.sync.unreadable', { n: r.unreadable }));
  if (r.failed) notes.push(`⚠️ ${fmt.t('roles.sync.failed', { n: r.failed })}`);
  const summary = dryRun
    ? fmt.t('roles.sync.preview', { n: r.changed, members: r.members })
    : r.applied
      ? fmt.t('roles.sync.applied', { n: r.changed, members: r.members })
      : fmt.t('roles.sync.notApplied', { n: r.changed });
  return {
    embeds: [
      {
        title: fmt.t(dryRun ? 'roles.sync.dryTitle' : 'roles.sync.title'),
        description: [summary, ...(lines.length ? ['', ...lines] : []), ...(notes.length ? ['', ...notes] : [])].join('\n'),
        color: notes.some((n) => n.startsWith('⚠️')) ? Colour.warn : Colour.ok,
      },
    ],
    ephemeral: true,
  };
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const { fmt } = ctx;
  switch (a.sub) {
    case 'add':
      return add(a, ctx);
    case 'remove': {
      if (!a.role) throw new UserError('error.rolesWhichRole');
      const removed = await ctx.bot.roles.remove(guildId, a.role);
      return removed.length
        ? notice(fmt.t('roles.removed.title'), fmt.t('roles.removed.body', { role: `<@&${a.role}>`, n: removed.length }), Colour.ok)
        : notice(fmt.t('roles.notManaged.title'), fmt.t('roles.notManaged.body', { role: `<@&${a.role}>` }), Colour.info);
    }
    case 'list':
      return list(ctx);
    case 'sync': {
      if ((await ctx.bot.settings.get(guildId)).roleRules.length === 0) return notice(fmt.t('roles.list.title'), fmt.t('roles.list.none'), Colour.info);
      const dryRun = a['dry-run'] === true;
      return syncView(await ctx.bot.roles.sync(guildId, { dryRun }), dryRun, fmt);
    }
  }
}

export default defineCommand({
  definition: {
    name: 'roles',
    ...described('command.roles'),
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'add',
        ...described('command.roles.add'),
        options: [
          { type: ApplicationCommandOptionType.Role, name: 'role', ...described('command.roles.add.role'), required: true },
          { type: ApplicationCommandOptionType.String, name: 'club', ...described('command.roles.add.club'), max_length: 20 },
          {
            type: ApplicationCommandOptionType.String,
            name: 'club-role',
            ...described('command.roles.add.clubRole'),
            choices: ['any', ...CLUB_ROLES].map((r) => choice(`roles.clubRole.${r}`, r)),
          },
          { type: ApplicationCommandOptionType.Integer, name: 'min-trophies', ...described('command.roles.add.minTrophies'), min_value: 0, max_value: 1_000_000 },
          { type: ApplicationCommandOptionType.Integer, name: 'max-trophies', ...described('command.roles.add.maxTrophies'), min_value: 1, max_value: 1_000_000 },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'remove',
        ...described('command.roles.remove'),
        options: [{ type: ApplicationCommandOptionType.Role, name: 'role', ...described('command.roles.remove.role'), required: true }],
      },
      { type: ApplicationCommandOptionType.Subcommand, name: 'list', ...described('command.roles.list') },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'sync',
        ...described('command.roles.sync'),
        options: [{ type: ApplicationCommandOptionType.Boolean, name: 'dry-run', ...described('command.roles.sync.dryRun') }],
      },
    ],
  },
  args: Args,
  ephemeral: true,
  guildOnly: true,
  needsManageGuild: () => true,
  run,
});
