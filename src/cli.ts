/**
 * The `starr` command line. Each subcommand lives in src/cli/<name>.ts and exports
 * `run(args, io): Promise<number>` (the exit code) plus a one-line `summary`.
 */
export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface CliCommand {
  summary: string;
  usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}

const commands: Record<string, () => Promise<CliCommand>> = {
  sim: () => import('./cli/sim.ts'),
  'deploy-commands': () => import('./cli/deploy-commands.ts'),
  try: () => import('./cli/try.ts'),
  serve: () => import('./cli/serve.ts'),
  backfill: () => import('./cli/backfill.ts'),
  migrate: () => import('./cli/migrate.ts'),
  'discord-proxy': () => import('./cli/discord-proxy.ts'),
};

export const defaultIo = (): CliIo => ({
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
  env: process.env,
  cwd: process.cwd(),
});

async function help(io: CliIo): Promise<number> {
  io.out('Starr Stats: Brawl Stars statistics service, Discord bot and command line.\n');
  io.out('Usage: starr <command> [options]\n');
  for (const [name, load] of Object.entries(commands)) {
    const c = await load();
    io.out(`  ${name.padEnd(16)} ${c.summary}`);
  }
  io.out('\nRun `starr <command> --help` for the options of one command.');
  return 0;
}

export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') return help(io);
  const load = commands[name];
  if (!load) {
    io.err(`Unknown command "${name}". Run \`starr --help\` for the list.`);
    return 2;
  }
  const cmd = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`Usage: ${cmd.usage}\n\n${cmd.summary}`);
    return 0;
  }
  return cmd.run(rest, io);
}
