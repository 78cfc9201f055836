/**
 * Deploying slash commands: every definition is checked against Discord's rules (limits.ts,
 * including what the builders miss), then the whole set is bulk-overwritten in one PUT — for one
 * guild (instant, for development) or globally. Never on start-up: new commands count toward
 * Discord's 200 creates per day.
 */
import type { REST } from 'discord.js';
import type { RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { Routes } from 'discord-api-types/v10';
import { checkCommandSet, describeProblems } from './limits.ts';

export class DeployError extends Error {
  override name = 'DeployError';
}

/** The application id a bot token belongs to: its first part is the id in base64. */
export function appIdFromToken(token: string): string | undefined {
  const first = token.split('.')[0] ?? '';
  try {
    const id = Buffer.from(first, 'base64').toString('utf8');
    return /^\d{15,21}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Throws DeployError listing every broken rule, one per line. */
export function validateDefinitions(defs: RESTPostAPIChatInputApplicationCommandsJSONBody[]): void {
  const problems = checkCommandSet(defs);
  if (problems.length === 0) return;
  const named = problems.map((p) => {
    const i = typeof p.path[0] === 'number' ? p.path[0] : undefined;
    const name = i !== undefined ? `/${defs[i]?.name ?? i}` : 'commands';
    return { ...p, path: [name, ...p.path.slice(i !== undefined ? 1 : 0)] };
  });
  throw new DeployError(`The command definitions break Discord's rules:\n${describeProblems(named)}`);
}

export interface DeployResult {
  /** 'global' or the guild id */
  scope: string;
  names: string[];
}

export async function deployCommands(opts: {
  rest: REST;
  appId: string;
  guildId?: string;
  definitions: RESTPostAPIChatInputApplicationCommandsJSONBody[];
}): Promise<DeployResult> {
  validateDefinitions(opts.definitions);
  const route = opts.guildId ? Routes.applicationGuildCommands(opts.appId, opts.guildId) : Routes.applicationCommands(opts.appId);
  // Contexts (server, DMs) apply to global commands only; a server's commands live in that server.
  const body = opts.guildId ? opts.definitions.map(({ contexts: _contexts, ...d }) => d) : opts.definitions;
  const saved = (await opts.rest.put(route, { body })) as { name: string }[];
  return { scope: opts.guildId ?? 'global', names: saved.map((c) => c.name) };
}
