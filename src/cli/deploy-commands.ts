/**
 * `starr deploy-commands [--guild ID] [--dry-run]`: validates every slash command against
 * Discord's rules and bulk-overwrites them, for one guild or globally.
 */
import type { CliIo } from '../cli.ts';
import { EXIT_CONFIG, loadCliConfig, parseArgs, readArgs, UsageError } from './args.ts';

export const summary = 'Check the slash commands against Discord\'s rules and register them (one guild or global)';
export const usage = 'starr deploy-commands [--guild ID] [--dry-run]';

export async function run(args: string[], io: CliIo): Promise<number> {
  const parsed = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['guild'], flags: ['dry-run'] });
    if (p.positional.length) throw new UsageError(`unexpected argument ${p.positional[0]}`);
    const guild = p.flags.guild;
    if (guild === true) throw new UsageError('--guild needs a server id');
    if (guild !== undefined && !/^\d{15,21}$/.test(guild)) throw new UsageError('--guild expects a server id (15 to 21 digits)');
    return { guild, dryRun: p.flags['dry-run'] === true };
  });
  if (typeof parsed === 'number') return parsed;
  const { guild, dryRun } = parsed;
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;

  // discord.js and the bot's commands are loaded only to deploy (`starr --help` loads this module
  // for its summary).
  const [{ DiscordAPIError }, { discordRest }, { loadCommands }, { DeployError, appIdFromToken, deployCommands, validateDefinitions }] = await Promise.all([
    import('discord.js'),
    import('../bot/discord-rest.ts'),
    import('../bot/command.ts'),
    import('../bot/deploy.ts'),
  ]);
  const commands = await loadCommands();
  const definitions = commands.definitions();
  try {
    validateDefinitions(definitions);
  } catch (e) {
    if (e instanceof DeployError) {
      io.err(e.message);
      return 1;
    }
    throw e;
  }
  const names = definitions.map((d) => `/${d.name}`).join(' ');
  if (dryRun) {
    io.out(`${definitions.length} commands follow Discord's rules: ${names}`);
    io.out(JSON.stringify(definitions, null, 2));
    return 0;
  }
  if (!cfg.DISCORD_TOKEN) {
    io.err('DISCORD_TOKEN is not set: deploying needs the bot token (see the README, "Creating the Discord application").');
    return EXIT_CONFIG;
  }
  const appId = cfg.DISCORD_APP_ID ?? appIdFromToken(cfg.DISCORD_TOKEN);
  if (!appId) {
    io.err('Cannot read the application id from DISCORD_TOKEN; set DISCORD_APP_ID.');
    return EXIT_CONFIG;
  }
  const rest = discordRest(cfg.DISCORD_API_URL, cfg.DISCORD_TOKEN);
  try {
    const res = await deployCommands({ rest, appId, ...(guild ? { guildId: guild } : {}), definitions });
    io.out(
      `Registered ${res.names.length} commands ${res.scope === 'global' ? 'globally (Discord clients pick them up within minutes)' : `in server ${res.scope}`}: ${res.names.map((n) => `/${n}`).join(' ')}`,
    );
    return 0;
  } catch (e) {
    if (e instanceof DiscordAPIError) {
      io.err(`Discord refused the commands (${e.status}, code ${e.code}): ${e.message}`);
      return 1;
    }
    throw e;
  }
}
