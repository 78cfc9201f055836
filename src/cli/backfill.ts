import type { CliIo } from '../cli.ts';
import { usesSimulator } from '../config.ts';
import { intOption, loadCliConfig, parseArgs, readArgs, UsageError, EXIT_CONFIG } from './args.ts';

export const summary = 'Fill recorded history by replaying the simulated world over the last N days (demo mode only)';
export const usage =
  'starr backfill --days N [--players N | --all] [--every MINUTES] [--no-track] [--quiet]\n\n' +
  '  --days      days to replay, ending now (1 to HISTORY_DAYS)\n' +
  '  --players   the world\'s strongest N players, plus every tracked one, and their clubs (default 100)\n' +
  '  --all       every player and club of the world (SIM_PLAYERS, SIM_CLUBS)\n' +
  '  --every     minutes between replayed player polls (default POLL_PLAYER_MINUTES)\n' +
  '  --no-track  do not keep the backfilled players and clubs tracked afterwards\n' +
  '  --quiet     no progress bar, only the summary\n\n' +
  'Idempotent and resumable: what is already recorded is kept, an interrupted run continues where it stopped.';

export async function run(args: string[], io: CliIo): Promise<number> {
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;
  if (!usesSimulator(cfg)) {
    io.err(
      'starr backfill replays the simulated world, and BRAWLSTARS_API_TOKEN is set: history of the official API can only ' +
        'come from polling it. Unset BRAWLSTARS_API_TOKEN (or use another DATA_DIR) to backfill demo data.',
    );
    return EXIT_CONFIG;
  }
  const opts = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['days', 'players', 'every'], flags: ['all', 'no-track', 'quiet'] });
    if (p.positional.length > 0) throw new UsageError(`unexpected argument ${p.positional[0]}`);
    if (p.flags.days === undefined) throw new UsageError('--days is required');
    if (p.flags.all && p.flags.players !== undefined) throw new UsageError('--all and --players exclude each other');
    return {
      days: intOption(p, 'days', 7, 1, cfg.HISTORY_DAYS),
      players: intOption(p, 'players', 100, 0, cfg.SIM_PLAYERS),
      all: p.flags.all === true,
      everyMin: intOption(p, 'every', cfg.POLL_PLAYER_MINUTES, 1, 1440),
      track: p.flags['no-track'] !== true,
      quiet: p.flags.quiet === true,
    };
  });
  if (typeof opts === 'number') return opts;

  const { World } = await import('../sim/world.ts');
  const { HistoryStore } = await import('../store/history-store.ts');
  const { backfill, clubsOf, samplePlayers } = await import('../poller/backfill.ts');
  const world = new World({ seed: cfg.SIM_SEED, players: cfg.SIM_PLAYERS, clubs: cfg.SIM_CLUBS });
  const store = await HistoryStore.openFor(cfg);
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let bar: import('cli-progress').SingleBar | null = null;
  try {
    const now = Date.now();
    const tracked = await store.trackedTags(now);
    const players = opts.all
      ? Array.from({ length: world.playerCount }, (_, i) => world.playerTag(i))
      : samplePlayers(world, opts.players, tracked.player);
    const clubs = opts.all
      ? Array.from({ length: world.clubCount }, (_, c) => world.clubTag(c))
      : [...new Set([...clubsOf(world, players, now), ...tracked.club])];
    if (!opts.quiet && process.stderr.isTTY) {
      const { SingleBar, Presets } = await import('cli-progress');
      bar = new SingleBar({ format: 'backfill [{bar}] {percentage}% | {value}/{total} | {what}', stream: process.stderr, hideCursor: true }, Presets.shades_classic);
      bar.start(players.length + clubs.length + 1, 0, { what: 'rotation' });
    }
    const report = await backfill({
      world,
      store,
      days: opts.days,
      nowMs: now,
      playerTags: players,
      clubTags: clubs,
      playerEveryMs: opts.everyMin * 60_000,
      clubEveryMs: cfg.POLL_CLUB_MINUTES * 60_000,
      signal: abort.signal,
      onProgress: (done, _total, what) => bar?.update(done, { what }),
    });
    bar?.stop();
    if (opts.track) {
      const until = now + cfg.TRACK_DAYS * 86_400_000;
      for (const tag of players) await store.track('player', tag, until, now);
      for (const tag of clubs) await store.track('club', tag, until, now);
    }
    const kb = (report.snapshotBytes / 1024).toFixed(0);
    io.out(
      `Backfilled ${report.players} players and ${report.clubs} clubs over ${opts.days} days ` +
        `(${report.polls} polls, ${kb} KB of snapshot changes) in ${(report.ms / 1000).toFixed(1)} s; ` +
        `${report.skipped} already had that history.`,
    );
    if (abort.signal.aborted) {
      io.err('Interrupted: what was done is kept; run the same command again to finish.');
      return 130;
    }
    return 0;
  } finally {
    bar?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await store.close();
  }
}
