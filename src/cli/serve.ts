import type { CliIo } from '../cli.ts';
import { ROLES, roleProblem, type Role } from '../config.ts';
import { EXIT_CONFIG, loadCliConfig, parseArgs, readArgs, untilSignal, UsageError } from './args.ts';

export const summary =
  'Start the service: HTTP API, poller, and the Discord bot when DISCORD_TOKEN is set (npm start); --role runs one part of a cluster';
export const usage = `starr serve [--role ${ROLES.join('|')}]`;

const WHAT: Record<Role, string> = {
  all: 'HTTP API, poller and Discord bot in one process',
  api: 'HTTP API and Discord interactions endpoint',
  worker: 'polling and recording jobs',
  bot: 'Discord gateway shards, leaderboard and feed delivery',
};

export async function run(args: string[], io: CliIo): Promise<number> {
  const parsed = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['role'] });
    if (p.positional.length > 0) {
      throw new UsageError(`starr serve takes no arguments besides --role (settings are environment variables; see .env.example). Got: ${p.positional.join(' ')}`);
    }
    const role = p.flags.role;
    if (role !== undefined && (role === true || !(ROLES as readonly string[]).includes(role))) {
      throw new UsageError(`--role expects one of ${ROLES.join(', ')}`);
    }
    return { role: role as Role | undefined };
  });
  if (typeof parsed === 'number') return parsed;
  const loaded = loadCliConfig(parsed.role ? { ...io, env: { ...io.env, ROLE: parsed.role } } : io);
  if (typeof loaded === 'number') return loaded;
  const cfg = loaded;
  const problem = roleProblem(cfg);
  if (problem) {
    io.err(problem);
    return EXIT_CONFIG;
  }
  const { partsOf, startApp } = await import('../app.ts');
  const app = await startApp(cfg, { listen: true });
  // the start-up notices (no token: the simulated world) are in the log's buffer: out before this line
  await new Promise<void>((resolve) => app.logger.flush(() => resolve()));
  const what = cfg.ROLE === 'all' ? 'Starr Stats' : `Starr Stats (ROLE=${cfg.ROLE}: ${WHAT[cfg.ROLE]})`;
  io.out(`${what} is listening on ${app.url} (${partsOf(cfg.ROLE).api ? `API docs: ${app.url}/docs` : `health: ${app.url}/healthz, /readyz, /metrics`})`);
  const signal = await untilSignal();
  app.logger.info({ signal }, 'shutting down');
  await app.close();
  return 0;
}
