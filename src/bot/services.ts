/**
 * What the bot is made of, built once from the service core: the command set, stores (guild
 * settings, links, component state), the key vault, cooldowns, the leaderboard and club feed services and automatic roles.
 * The transports (gateway, HTTP endpoint, `starr try`) share one of these.
 */
import type { Core } from '../core/index.ts';
import { loadCommands, type CommandSet } from './command.ts';
import { ComponentStore } from './components.ts';
import { Feeds, FeedStore } from './feeds.ts';
import { Leaderboards } from './leaderboards.ts';
import { LinkStore } from './links.ts';
import { RoleSync } from './roles.ts';
import { Cooldowns } from './router.ts';
import { KeyVault } from './secrets.ts';
import { GuildSettingsStore } from './settings.ts';

export interface BotServices {
  commands: CommandSet;
  settings: GuildSettingsStore;
  links: LinkStore;
  components: ComponentStore;
  vault: KeyVault;
  cooldowns: Cooldowns;
  boards: Leaderboards;
  feeds: Feeds;
  roles: RoleSync;
  now(): number;
}

export interface BotServicesOptions {
  commands?: CommandSet;
  now?: () => number;
}

export async function createBotServices(core: Core, opts: BotServicesOptions = {}): Promise<BotServices> {
  const now = opts.now ?? Date.now;
  const vault = new KeyVault(core.config.STARR_SECRET);
  const settings = new GuildSettingsStore(core.stores.namespace('guilds'), vault, core.keys);
  const components = new ComponentStore(core.stores.namespace('components'), now);
  const links = new LinkStore(core.stores.namespace('links'));
  const services: BotServices = {
    commands: opts.commands ?? (await loadCommands()),
    settings,
    links,
    components,
    vault,
    cooldowns: new Cooldowns(core.coordination),
    boards: new Leaderboards(core, { settings, links, components, now }),
    feeds: new Feeds(core, { store: new FeedStore(core.stores.namespace('feeds')), settings, components, now }),
    roles: new RoleSync(core, { settings, links, now }),
    now,
  };
  return services;
}
