import { join } from 'node:path';
import type { CliIo } from '../cli.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';

/** Small, strict parser for `--name value` / `--flag` options shared by every subcommand. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ParsedArgs {
  flags: Record<string, string | true>;
  positional: string[];
}

export function parseArgs(args: string[], known: { values?: string[]; flags?: string[] }): ParsedArgs {
  const values = new Set(known.values ?? []);
  const flags = new Set(known.flags ?? []);
  const out: ParsedArgs = { flags: {}, positional: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      out.positional.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (flags.has(name)) {
      out.flags[name] = true;
    } else if (values.has(name)) {
      const v = inline ?? args[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
      out.flags[name] = v;
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return out;
}

export function intOption(p: ParsedArgs, name: string, def: number, min: number, max: number): number {
  const v = p.flags[name];
  if (v === undefined) return def;
  if (v === true || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`--${name} expects a whole number from ${min} to ${max}`);
  }
  return Number(v);
}

/** Exit code of a command called with wrong arguments. */
export const EXIT_USAGE = 2;

/**
 * Reads a subcommand's arguments with `parse`. A UsageError it throws is printed with the usage
 * text and becomes the exit code instead (check with `typeof result === 'number'`).
 */
export function readArgs<T extends object>(io: CliIo, usage: string, parse: () => T): T | number {
  try {
    return parse();
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message}\nUsage: ${usage}`);
      return EXIT_USAGE;
    }
    throw e;
  }
}

/** sysexits.h EX_CONFIG: the configuration is wrong, retrying will not help. */
export const EXIT_CONFIG = 78;

/**
 * The settings for a subcommand: the environment plus `.env` in the working directory. On a bad
 * value, prints the one-line explanation and returns the exit code instead.
 */
export function loadCliConfig(io: CliIo): Config | number {
  try {
    return loadConfig(io.env, { envFile: join(io.cwd, '.env') });
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(e.message);
      return EXIT_CONFIG;
    }
    throw e;
  }
}

/** Resolves with the signal once SIGINT or SIGTERM arrives (long-running subcommands). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
