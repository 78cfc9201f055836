import type { CliIo } from '../cli.ts';
import { intOption, loadCliConfig, parseArgs, readArgs, untilSignal, UsageError } from './args.ts';

export const summary = 'Run the simulated game world on its own: the official API paths over HTTP, for demos and tests';
export const usage =
  'starr sim [--port P] [--host H] [--seed S] [--players N] [--clubs N] [--at ISO-TIME] [--latency MS]\n\n' +
  '  --port     port to listen on (default 0: any free port)\n' +
  '  --host     address to listen on (default 127.0.0.1)\n' +
  '  --seed     world seed (default SIM_SEED)\n' +
  '  --players  number of players (default SIM_PLAYERS)\n' +
  '  --clubs    number of clubs (default SIM_CLUBS)\n' +
  '  --at       start the virtual clock at this time and keep it running from there (default: now)\n' +
  '  --latency  every answer waits this many milliseconds, as a distant API does (default 0)';

export async function run(args: string[], io: CliIo): Promise<number> {
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;
  const opts = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['port', 'host', 'seed', 'players', 'clubs', 'at', 'latency'] });
    if (p.positional.length > 0) throw new UsageError(`unexpected argument ${p.positional[0]}`);
    const at = p.flags.at;
    let atMs: number | undefined;
    if (at !== undefined) {
      atMs = typeof at === 'string' ? Date.parse(at) : Number.NaN;
      if (!Number.isFinite(atMs)) throw new UsageError('--at expects a date and time such as 2026-11-01T12:00:00Z');
    }
    const seed = p.flags.seed;
    if (seed === true) throw new UsageError('--seed needs a value');
    const host = p.flags.host;
    if (host === true) throw new UsageError('--host needs a value');
    return {
      port: intOption(p, 'port', 0, 0, 65535),
      host: host ?? '127.0.0.1',
      seed: seed ?? cfg.SIM_SEED,
      players: intOption(p, 'players', cfg.SIM_PLAYERS, 10, 10_000_000),
      clubs: intOption(p, 'clubs', cfg.SIM_CLUBS, 1, 1_000_000),
      latencyMs: intOption(p, 'latency', 0, 0, 60_000),
      atMs,
    };
  });
  if (typeof opts === 'number') return opts;

  const { startSim, SimClock } = await import('../sim/index.ts');
  const clock = new SimClock();
  if (opts.atMs !== undefined) clock.advance(opts.atMs - clock.now());
  let sim;
  try {
    const latency = { minMs: opts.latencyMs, maxMs: opts.latencyMs, spikeRate: 0, spikeMs: 0 };
    sim = await startSim({ seed: opts.seed, players: opts.players, clubs: opts.clubs, host: opts.host, port: opts.port, clock, faults: { latency } });
  } catch (e) {
    io.err(`Could not start the simulated world on ${opts.host}:${opts.port}: ${(e as Error).message}`);
    return 1;
  }
  const example = sim.world.playerTag(0);
  io.out(`Simulated Brawl Stars API (seed "${opts.seed}", ${opts.players} players, ${opts.clubs} clubs) at ${sim.url}`);
  io.out(`Token: ${sim.token}`);
  io.out(`Try:   curl -H "Authorization: Bearer ${sim.token}" ${sim.url}/players/${encodeURIComponent(example)}`);
  const root = sim.url.replace(/\/v1$/, '');
  io.out(`Faults: POST ${root}/_sim/faults with the same token, e.g. {"maintenance": true}. Requests received: GET ${root}/_sim/log. Ctrl+C stops.`);

  await untilSignal();
  await sim.close();
  io.out('Simulated world stopped.');
  return 0;
}
