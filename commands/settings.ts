/**
 * /settings apikey create|set|remove|status, /settings defaults, /settings language,
 * /settings verification and /settings activity: the server's API key of this service (issued here
 * to the admin, or an existing one checked against the key store; kept encrypted, never shown
 * again), its default ranking country, the language of its public posts, whether automatic roles
 * and the members' leaderboard count only verified accounts, and the thresholds /club activity
 * flags members below. Manage Server only — Discord hides the command from others, and the bot checks again
 * in case an admin opened it up in the server's integration settings.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseRegion } from '../src/http/countries.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError } from '../src/bot/errors.ts';
import { LANGUAGES, LANGUAGE_NAMES } from '../src/i18n/index.ts';
import { format } from '../src/bot/format.ts';
import { choice, described } from '../src/bot/localize.ts';
import { countryChoices, regionLabel } from '../src/bot/lookup.ts';
import { VaultUnavailableError } from '../src/bot/secrets.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';
import type { Format } from '../src/bot/format.ts';
import type { GuildSettings } from '../src/bot/settings.ts';
import { ACTIVITY_DAYS } from '../src/core/club-activity.ts';

/** Highest "fewer than N trophies" threshold (a season's push of a top player is well under it). */
const MAX_MIN_GAIN = 100_000;

const Args = z.object({
  sub: z.enum(['apikey create', 'apikey set', 'apikey remove', 'apikey status', 'defaults', 'language', 'verification', 'activity']),
  key: z.string().optional(),
  replace: z.boolean().optional(),
  country: z.string().optional(),
  language: z.string().optional(),
  mode: z.enum(['optional', 'required']).optional(),
  min_gain: z.number().int().min(0).max(MAX_MIN_GAIN).optional(),
  idle_days: z.number().int().min(0).max(ACTIVITY_DAYS.max).optional(),
});
type Args = z.infer<typeof Args>;

/** The server's activity thresholds in words. */
function activityRules(s: GuildSettings, fmt: Format): string {
  const rules: string[] = [];
  if (s.activity?.minGain !== undefined) rules.push(fmt.t('activity.rule.gain', { min: fmt.int(s.activity.minGain), n: ACTIVITY_DAYS.default }));
  if (s.activity?.maxIdleDays !== undefined) rules.push(fmt.t('activity.rule.idle', { n: s.activity.maxIdleDays }));
  return rules.length ? fmt.list(rules) : fmt.t('settings.activity.none');
}

async function status(ctx: CommandContext): Promise<ReplyView> {
  const s = ctx.guild!;
  const p = ctx.premium;
  const limits = ctx.bot.boards.limits(p);
  const { fmt } = ctx;
  const keyLine = s.key
    ? `${fmt.t('settings.key.registered', { member: `<@${s.key.setBy}>`, when: fmt.relative(s.key.setAt), keyId: s.key.keyId })} ` +
      fmt.t('settings.key.state', { state: p.premium ? 'premium' : (p.reason ?? 'no_key'), plan: p.plan ?? '' })
    : `${fmt.t('settings.key.none')} ${fmt.t('premium.explainer')}`;
  const lang = s.language ? LANGUAGE_NAMES[s.language] : fmt.t('settings.language.auto');
  return {
    embeds: [
      {
        title: fmt.t('settings.title'),
        color: Colour.info,
        fields: [
          { name: `🔑 ${fmt.t('settings.field.key')}`, value: keyLine },
          { name: `🌍 ${fmt.t('settings.field.country')}`, value: regionLabel(s.country ?? 'global', fmt), inline: true },
          { name: `🗣️ ${fmt.t('settings.field.language')}`, value: lang, inline: true },
          { name: `🏆 ${fmt.t('settings.field.boards')}`, value: fmt.t('settings.boards', { n: s.boards.length, max: limits.boards }), inline: true },
          { name: `🔗 ${fmt.t('settings.field.members')}`, value: fmt.int(s.members.length), inline: true },
          { name: `✅ ${fmt.t('settings.field.verification')}`, value: fmt.t('settings.verification.state', { mode: s.verification }), inline: true },
          { name: `⚠️ ${fmt.t('settings.field.activity')}`, value: activityRules(s, fmt) },
        ],
      },
    ],
    ephemeral: true,
  };
}

function requireVault(ctx: CommandContext): void {
  if (!ctx.bot.vault.available) throw new UserError('error.noVault', {}, Colour.error);
}

/**
 * Issues a key to the admin who ran the command (a Discord account in the key store, the same
 * store POST /generate-api-keys uses), registers it for the server and shows it this once.
 */
async function create(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const { fmt } = ctx;
  requireVault(ctx);
  const current = ctx.guild!.key;
  // A working key is not replaced by accident; a revoked or unreadable one is no loss.
  if (current && ctx.premium.keyed && a.replace !== true) {
    throw new UserError('error.hasKey', { keyId: current.keyId, member: `<@${current.setBy}>`, when: fmt.relative(current.setAt) }, Colour.info);
  }
  const issued = await ctx.core.keys.issueForDiscordUser({ userId: ctx.user.id, guildId });
  try {
    await ctx.bot.settings.setKey(guildId, issued.key, issued, ctx.user.id, ctx.bot.now());
  } catch (e) {
    // Nobody has seen the key: take it back rather than leave a key no one can use.
    await ctx.core.keys.revoke(issued.key).catch(() => undefined);
    if (e instanceof VaultUnavailableError) throw new UserError('error.noVault', {}, Colour.error);
    throw e;
  }
  return notice(
    fmt.t('settings.keyCreated.title'),
    fmt.t('settings.keyCreated.body', { keyId: issued.keyId, plan: issued.plan.name, premium: issued.plan.premium ? 'yes' : 'no', key: issued.key }),
    Colour.ok,
  );
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const { settings } = ctx.bot;
  const { fmt } = ctx;
  switch (a.sub) {
    case 'apikey create':
      return create(a, ctx);
    case 'apikey set': {
      requireVault(ctx);
      const key = (a.key ?? '').trim();
      const info = key ? await ctx.core.keys.verify(key) : null;
      if (!info) {
        throw new UserError('error.badKey');
      }
      try {
        await settings.setKey(guildId, key, info, ctx.user.id, ctx.bot.now());
      } catch (e) {
        if (e instanceof VaultUnavailableError) throw new UserError('error.noVault', {}, Colour.error);
        throw e;
      }
      return notice(
        fmt.t('settings.keySet.title'),
        fmt.t('settings.keySet.body', { keyId: info.keyId, plan: info.plan.name, premium: info.plan.premium ? 'yes' : 'no' }),
        Colour.ok,
      );
    }
    case 'apikey remove': {
      const had = await settings.removeKey(guildId);
      return had
        ? notice(fmt.t('settings.keyRemoved.title'), fmt.t('settings.keyRemoved.body'), Colour.ok)
        : notice(fmt.t('settings.noKey.title'), fmt.t('settings.noKey.body'), Colour.info);
    }
    case 'apikey status':
      return status(ctx);
    case 'defaults': {
      if (a.country === undefined) return status(ctx);
      const region = parseRegion(a.country.trim());
      if (!region) throw new UserError('error.unknownCountry', { input: a.country.slice(0, 40) });
      await settings.update(guildId, (s) => {
        if (region === 'global') delete s.country;
        else s.country = region;
      });
      return notice(fmt.t('settings.defaults.title'), fmt.t('settings.defaults.body', { region: regionLabel(region, fmt) }), Colour.ok);
    }
    case 'verification': {
      if (a.mode === undefined) return status(ctx);
      const mode = a.mode;
      await settings.update(guildId, (s) => {
        s.verification = mode;
      });
      return notice(fmt.t('settings.verification.title'), fmt.t('settings.verification.body', { mode }), Colour.ok);
    }
    case 'activity': {
      if (a.min_gain === undefined && a.idle_days === undefined) return status(ctx);
      const next = await settings.update(guildId, (s) => {
        const t = { ...s.activity };
        // 0 turns a threshold off.
        if (a.min_gain !== undefined) t.minGain = a.min_gain || undefined;
        if (a.idle_days !== undefined) t.maxIdleDays = a.idle_days || undefined;
        if (t.minGain === undefined) delete t.minGain;
        if (t.maxIdleDays === undefined) delete t.maxIdleDays;
        if (Object.keys(t).length) s.activity = t;
        else delete s.activity;
      });
      return notice(fmt.t('settings.activity.title'), fmt.t('settings.activity.body', { rules: activityRules(next, fmt) }), Colour.ok);
    }
    case 'language': {
      if (a.language === undefined) return status(ctx);
      const chosen = a.language === 'auto' ? undefined : LANGUAGES.find((l) => l === a.language);
      if (a.language !== 'auto' && !chosen) throw new UserError('error.unknownLanguage', { input: a.language.slice(0, 20) });
      await settings.update(guildId, (s) => {
        if (chosen) s.language = chosen;
        else delete s.language;
      });
      // The confirmation is in the language public posts use from now on, so the admin sees it.
      const shown = format(chosen ?? ctx.guildLocale ?? fmt.locale);
      return notice(
        shown.t('settings.language.title'),
        shown.t(chosen ? 'settings.language.body' : 'settings.language.bodyAuto', { language: LANGUAGE_NAMES[shown.lang] }),
        Colour.ok,
      );
    }
  }
}

export default defineCommand({
  definition: {
    name: 'settings',
    ...described('command.settings'),
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.SubcommandGroup,
        name: 'apikey',
        ...described('command.settings.apikey'),
        options: [
          {
            type: ApplicationCommandOptionType.Subcommand,
            name: 'create',
            ...described('command.settings.apikey.create'),
            options: [{ type: ApplicationCommandOptionType.Boolean, name: 'replace', ...described('command.settings.apikey.create.replace') }],
          },
          {
            type: ApplicationCommandOptionType.Subcommand,
            name: 'set',
            ...described('command.settings.apikey.set'),
            options: [{ type: ApplicationCommandOptionType.String, name: 'key', ...described('command.settings.apikey.set.key'), required: true, max_length: 200 }],
          },
          { type: ApplicationCommandOptionType.Subcommand, name: 'remove', ...described('command.settings.apikey.remove') },
          { type: ApplicationCommandOptionType.Subcommand, name: 'status', ...described('command.settings.apikey.status') },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'defaults',
        ...described('command.settings.defaults'),
        options: [{ type: ApplicationCommandOptionType.String, name: 'country', ...described('command.settings.defaults.country'), autocomplete: true, max_length: 60 }],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'activity',
        ...described('command.settings.activity'),
        options: [
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'min_gain',
            ...described('command.settings.activity.min_gain'),
            min_value: 0,
            max_value: MAX_MIN_GAIN,
          },
          {
            type: ApplicationCommandOptionType.Integer,
            name: 'idle_days',
            ...described('command.settings.activity.idle_days'),
            min_value: 0,
            max_value: ACTIVITY_DAYS.max,
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'language',
        ...described('command.settings.language'),
        options: [
          {
            type: ApplicationCommandOptionType.String,
            name: 'language',
            ...described('command.settings.language.language'),
            choices: [choice('settings.language.auto', 'auto'), ...LANGUAGES.map((l) => ({ name: LANGUAGE_NAMES[l], value: l }))],
          },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'verification',
        ...described('command.settings.verification'),
        options: [
          {
            type: ApplicationCommandOptionType.String,
            name: 'mode',
            ...described('command.settings.verification.mode'),
            choices: [choice('settings.verification.optional', 'optional'), choice('settings.verification.required', 'required')],
          },
        ],
      },
    ],
  },
  args: Args,
  ephemeral: true,
  guildOnly: true,
  needsManageGuild: () => true,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'country' ? countryChoices(focused.value, ctx.fmt) : []),
});
