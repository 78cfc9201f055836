/**
 * /settings apikey create|set|remove|status and /settings defaults: the server's API key of this
 * service (issued here to the admin, or an existing one checked against the key store; kept
 * encrypted, never shown again) and its default ranking country. Manage Server only — Discord hides the command from others, and the bot checks again
 * in case an admin opened it up in the server's integration settings.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { parseRegion } from '../src/http/countries.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError } from '../src/bot/errors.ts';
import { countryChoices, PREMIUM_EXPLAINER, regionLabel } from '../src/bot/lookup.ts';
import { VaultUnavailableError } from '../src/bot/secrets.ts';
import { Colour, notice, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({
  sub: z.enum(['apikey create', 'apikey set', 'apikey remove', 'apikey status', 'defaults']),
  key: z.string().optional(),
  replace: z.boolean().optional(),
  country: z.string().optional(),
});
type Args = z.infer<typeof Args>;

async function status(ctx: CommandContext): Promise<ReplyView> {
  const s = ctx.guild!;
  const p = ctx.premium;
  const limits = ctx.bot.boards.limits(p);
  const keyLine = s.key
    ? `Registered by <@${s.key.setBy}> ${ctx.fmt.relative(s.key.setAt)} (key id \`${s.key.keyId}\`). ` +
      (p.premium
        ? `Plan **${p.plan}**: premium views are unlocked.`
        : p.reason === 'basic_plan'
          ? `Plan **${p.plan}**: higher limits, but no premium views.`
          : p.reason === 'revoked'
            ? '⚠️ The key is no longer valid (revoked). Get a new one with `/settings apikey create`.'
            : "⚠️ The key cannot be read (the bot's secret changed). Register it again, or get a new one with `/settings apikey create`.")
    : `No key registered. ${PREMIUM_EXPLAINER}`;
  return {
    embeds: [
      {
        title: 'Server settings',
        color: Colour.info,
        fields: [
          { name: '🔑 API key', value: keyLine },
          { name: '🌍 Default ranking country', value: regionLabel(s.country ?? 'global'), inline: true },
          { name: '🏆 Leaderboards', value: `${s.boards.length} of ${limits.boards}`, inline: true },
          { name: '🔗 Linked members', value: ctx.fmt.int(s.members.length), inline: true },
        ],
      },
    ],
    ephemeral: true,
  };
}

function requireVault(ctx: CommandContext): void {
  if (!ctx.bot.vault.available) {
    throw new UserError(
      'Keys cannot be stored here',
      "This bot has no STARR_SECRET set, so it cannot encrypt API keys, and it does not store them unencrypted. Ask the bot's operator to set STARR_SECRET.",
      Colour.error,
    );
  }
}

/**
 * Issues a key to the admin who ran the command (a Discord account in the key store, the same
 * store POST /generate-api-keys uses), registers it for the server and shows it this once.
 */
async function create(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  requireVault(ctx);
  const current = ctx.guild!.key;
  // A working key is not replaced by accident; a revoked or unreadable one is no loss.
  if (current && ctx.premium.keyed && a.replace !== true) {
    throw new UserError(
      'This server already has a key',
      `Its key (id \`${current.keyId}\`) was registered by <@${current.setBy}> ${ctx.fmt.relative(current.setAt)}. ` +
        'To issue a new key in its place, run `/settings apikey create replace:True`; the old key keeps working for whoever holds it.',
      Colour.info,
    );
  }
  const issued = await ctx.core.keys.issueForDiscordUser({ userId: ctx.user.id, guildId });
  try {
    await ctx.bot.settings.setKey(guildId, issued.key, issued, ctx.user.id, ctx.bot.now());
  } catch (e) {
    // Nobody has seen the key: take it back rather than leave a key no one can use.
    await ctx.core.keys.revoke(issued.key).catch(() => undefined);
    if (e instanceof VaultUnavailableError) throw new UserError('Keys cannot be stored here', e.message, Colour.error);
    throw e;
  }
  return notice(
    'API key created',
    `This server now uses a new key (id \`${issued.keyId}\`, plan **${issued.plan.name}**): ` +
      (issued.plan.premium ? 'premium views are unlocked, ' : 'no premium views on this plan, but ') +
      'cooldowns are shorter and more leaderboards are allowed.\n\n' +
      `\`\`\`\n${issued.key}\n\`\`\`\n` +
      'This is the only time the key is shown. It is yours: copy it if you also want to call the HTTP API with it (`api_key=`), and keep it private.',
    Colour.ok,
  );
}

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const guildId = ctx.guildId!;
  const { settings } = ctx.bot;
  switch (a.sub) {
    case 'apikey create':
      return create(a, ctx);
    case 'apikey set': {
      requireVault(ctx);
      const key = (a.key ?? '').trim();
      const info = key ? await ctx.core.keys.verify(key) : null;
      if (!info) {
        throw new UserError('That key is not valid', 'The service does not know this key (or it was revoked). Check that you copied all of it; keys start with `starr_`.');
      }
      try {
        await settings.setKey(guildId, key, info, ctx.user.id, ctx.bot.now());
      } catch (e) {
        if (e instanceof VaultUnavailableError) throw new UserError('Keys cannot be stored here', e.message, Colour.error);
        throw e;
      }
      return notice(
        'API key registered',
        `The key (id \`${info.keyId}\`, plan **${info.plan.name}**) now works for this server: ` +
          (info.plan.premium ? 'premium views are unlocked, and ' : 'no premium views on this plan, but ') +
          'cooldowns are shorter and more leaderboards are allowed. It is stored encrypted and will never be shown again.',
        Colour.ok,
      );
    }
    case 'apikey remove': {
      const had = await settings.removeKey(guildId);
      return had
        ? notice('API key removed', 'The key is deleted from this server. Premium views and higher limits stop now.', Colour.ok)
        : notice('No key', 'This server had no API key registered.', Colour.info);
    }
    case 'apikey status':
      return status(ctx);
    case 'defaults': {
      if (a.country === undefined) return status(ctx);
      const region = parseRegion(a.country.trim());
      if (!region) throw new UserError('Unknown country', `**${a.country.slice(0, 40)}** is not a country code. Use a two-letter code like \`DE\`, or \`global\`.`);
      await settings.update(guildId, (s) => {
        if (region === 'global') delete s.country;
        else s.country = region;
      });
      return notice('Defaults saved', `\`/ranking\` now shows **${regionLabel(region)}** when no country is given.`, Colour.ok);
    }
  }
}

export default defineCommand({
  definition: {
    name: 'settings',
    description: "This server's API key and defaults (Manage Server)",
    contexts: [0],
    default_member_permissions: String(PermissionFlagsBits.ManageGuild),
    options: [
      {
        type: ApplicationCommandOptionType.SubcommandGroup,
        name: 'apikey',
        description: "The server's API key of this service",
        options: [
          {
            type: ApplicationCommandOptionType.Subcommand,
            name: 'create',
            description: 'Get a new key for this server, issued to you and shown once',
            options: [{ type: ApplicationCommandOptionType.Boolean, name: 'replace', description: 'Replace the key this server already has' }],
          },
          {
            type: ApplicationCommandOptionType.Subcommand,
            name: 'set',
            description: 'Register a key: unlocks premium views and higher limits',
            options: [{ type: ApplicationCommandOptionType.String, name: 'key', description: 'The key (starts with starr_)', required: true, max_length: 200 }],
          },
          { type: ApplicationCommandOptionType.Subcommand, name: 'remove', description: 'Delete the registered key' },
          { type: ApplicationCommandOptionType.Subcommand, name: 'status', description: 'Whether a key is registered, and what it gives' },
        ],
      },
      {
        type: ApplicationCommandOptionType.Subcommand,
        name: 'defaults',
        description: 'Default ranking country of this server',
        options: [{ type: ApplicationCommandOptionType.String, name: 'country', description: 'Country code, or global', autocomplete: true, max_length: 60 }],
      },
    ],
  },
  args: Args,
  ephemeral: true,
  guildOnly: true,
  needsManageGuild: () => true,
  run,
  autocomplete: async (focused) => (focused.name === 'country' ? countryChoices(focused.value) : []),
});
