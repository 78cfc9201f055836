/**
 * The command module contract and its loader.
 *
 * Each file in commands/ default-exports one module: the slash command's definition (raw API
 * JSON, checked against Discord's rules, including those the builders miss) and a handler that
 * takes parsed arguments plus a context and returns a reply view. Handlers never touch a
 * transport. The loader checks every module's shape with zod at start-up, as the official
 * TypeScript template does.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type {
  APIApplicationCommandInteractionDataOption,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { z } from 'zod';
import type { Core } from '../core/index.ts';
import type { BotServices } from './services.ts';
import type { Format } from './format.ts';
import { BUNDLE_URL } from '../lib/bundle.ts';
import { checkCommand, describeProblems } from './limits.ts';
import type { GuildSettings, Premium } from './settings.ts';
import type { ReplyView, Scalar } from './view.ts';

export interface CommandContext {
  core: Core;
  bot: BotServices;
  fmt: Format;
  user: { id: string; name: string };
  guildId: string | null;
  channelId: string | null;
  /** the member has Manage Server (or Administrator) */
  canManageGuild: boolean;
  /** the server's Discord locale (its public posts' language unless /settings language chose one) */
  guildLocale: string | null;
  /** the server's settings; null outside a server */
  guild: GuildSettings | null;
  premium: Premium;
  /** names of users and channels given as options */
  resolved: { users: Record<string, string>; channels: Record<string, { name: string; type: number }> };
  /** interaction id, used as a reference in logs and error replies */
  ref: string;
  transport: 'gateway' | 'http' | 'cli';
}

export interface Choice {
  name: string;
  value: string | number;
}

export interface CommandModule<A = Record<string, Scalar | undefined>> {
  definition: RESTPostAPIChatInputApplicationCommandsJSONBody;
  /**
   * Parses the flattened options (`sub` holds `group sub` for subcommands) and the arguments of
   * component actions. Hidden arguments (a page number) exist only here, not in the definition.
   */
  args: z.ZodType<A>;
  run(args: A, ctx: CommandContext): Promise<ReplyView>;
  /** choices for the focused option while the member types */
  autocomplete?(focused: { name: string; value: string }, ctx: CommandContext): Promise<Choice[]>;
  /** answers only the member who ran it (settings, linking) */
  ephemeral?: boolean;
  /** answered only inside a server */
  guildOnly?: boolean;
  /** whether these arguments need Manage Server; checked by the bot even when Discord did */
  needsManageGuild?(args: A): boolean;
  /** seconds between two runs by one member (halved for servers with a key) */
  cooldownSeconds?: number;
}

/** Keeps the argument type of `run` tied to the schema. */
export function defineCommand<A>(m: CommandModule<A>): CommandModule<A> {
  return m;
}

const isFn = (v: unknown) => typeof v === 'function';

const ModuleShape = z.object({
  definition: z.looseObject({ name: z.string(), description: z.string(), options: z.array(z.unknown()).optional() }),
  args: z.custom<z.ZodType>((v) => v instanceof z.ZodType, 'a zod schema'),
  run: z.custom<CommandModule['run']>(isFn, 'a function'),
  autocomplete: z.custom<NonNullable<CommandModule['autocomplete']>>(isFn, 'a function').optional(),
  ephemeral: z.boolean().optional(),
  guildOnly: z.boolean().optional(),
  needsManageGuild: z.custom<NonNullable<CommandModule['needsManageGuild']>>(isFn, 'a function').optional(),
  cooldownSeconds: z.number().int().min(0).max(3600).optional(),
});

export class CommandLoadError extends Error {
  override name = 'CommandLoadError';
}

/** Checks one loaded module: its shape, its name, and its definition against Discord's rules. */
export function checkModule(file: string, mod: unknown): CommandModule<unknown> {
  const exported = (mod as { default?: unknown })?.default;
  const parsed = ModuleShape.safeParse(exported);
  if (!parsed.success) {
    throw new CommandLoadError(`${file}: not a command module: ${z.prettifyError(parsed.error)}`);
  }
  const m = exported as CommandModule<unknown>;
  const expected = basename(file).replace(/\.[jt]s$/, '');
  if (m.definition.name !== expected) {
    throw new CommandLoadError(`${file}: defines /${m.definition.name}; the file must be named after its command`);
  }
  const problems = checkCommand(m.definition);
  if (problems.length) throw new CommandLoadError(`${file}: /${m.definition.name} breaks Discord's rules:\n${describeProblems(problems)}`);
  return m;
}

/** The project's commands/ folder, or its build (.js files) when running from the bundle (bin/build.js). */
export const COMMANDS_DIR = BUNDLE_URL
  ? fileURLToPath(new URL('commands/', BUNDLE_URL))
  : join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'commands');

export class CommandSet {
  private readonly byName: Map<string, CommandModule<unknown>>;

  constructor(modules: CommandModule<unknown>[]) {
    this.byName = new Map(modules.map((m) => [m.definition.name, m]));
  }

  get(name: string): CommandModule<unknown> | undefined {
    return this.byName.get(name);
  }

  get all(): CommandModule<unknown>[] {
    return [...this.byName.values()];
  }

  definitions(): RESTPostAPIChatInputApplicationCommandsJSONBody[] {
    return this.all.map((m) => m.definition);
  }
}

/** Loads and checks every command module of a folder (default: the project's commands/). */
export async function loadCommands(dir: string = COMMANDS_DIR): Promise<CommandSet> {
  const files = (await readdir(dir)).filter((f) => /\.[jt]s$/.test(f) && !f.endsWith('.d.ts')).sort();
  const modules: CommandModule<unknown>[] = [];
  for (const f of files) {
    const path = join(dir, f);
    modules.push(checkModule(path, await import(pathToFileURL(path).href)));
  }
  return new CommandSet(modules);
}

/**
 * Flattens interaction options into one record: `sub` is the subcommand path ("apikey set"),
 * the other keys are option values. The focused option (autocomplete) is reported separately.
 */
export function flattenOptions(options: readonly APIApplicationCommandInteractionDataOption[] | undefined): {
  values: Record<string, Scalar>;
  focused?: { name: string; value: string };
} {
  const values: Record<string, Scalar> = {};
  let focused: { name: string; value: string } | undefined;
  const path: string[] = [];
  const walk = (opts: readonly APIApplicationCommandInteractionDataOption[]) => {
    for (const o of opts) {
      if (o.type === ApplicationCommandOptionType.Subcommand || o.type === ApplicationCommandOptionType.SubcommandGroup) {
        path.push(o.name);
        walk(o.options ?? []);
      } else if ('value' in o && o.value !== undefined) {
        if ('focused' in o && o.focused) focused = { name: o.name, value: String(o.value) };
        else values[o.name] = o.value as Scalar;
      }
    }
  };
  walk(options ?? []);
  if (path.length) values.sub = path.join(' ');
  return focused ? { values, focused } : { values };
}
