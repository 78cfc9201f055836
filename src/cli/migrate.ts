import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from '../cli.ts';
import { cacheUrl, type Config } from '../config.ts';
import { loadCliConfig, parseArgs, readArgs, UsageError, EXIT_CONFIG } from './args.ts';

export const summary = 'Copy everything durable under DATA_DIR (history, API keys, server settings, links) into PostgreSQL, before switching DATABASE_URL to it';
export const usage =
  'starr migrate --to postgres://user:password@host:port/database [--schema NAME] [--quiet]\n\n' +
  '  --to      the PostgreSQL database to copy into (created tables, pg_trgm installed when missing)\n' +
  '            copies history.sqlite and settings.sqlite from DATA_DIR, and the API keys, settings and links an\n' +
  '            earlier version kept in Redis when CACHE_URL points there\n' +
  '  --schema  schema to copy into (default DATABASE_SCHEMA, else the server\'s default)\n' +
  '  --quiet   no progress bar, only the counts\n\n' +
  'Stop the service first, so nothing is recorded during the copy. Idempotent and resumable: rows already\n' +
  'copied are kept, an interrupted run continues where it stopped. Every table is counted on both sides at\n' +
  'the end; the exit code is 1 when a count differs.';

/** Exit code when the copy finished but the counts do not match. */
const EXIT_MISMATCH = 1;

export async function run(args: string[], io: CliIo): Promise<number> {
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;
  const opts = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['to', 'schema'], flags: ['quiet'] });
    if (p.positional.length > 0) throw new UsageError(`unexpected argument ${p.positional[0]}`);
    const to = p.flags.to;
    if (typeof to !== 'string') throw new UsageError('--to is required');
    if (!/^postgres(ql)?:\/\/./i.test(to)) throw new UsageError('--to must be a postgres:// URL');
    const schema = typeof p.flags.schema === 'string' ? p.flags.schema : cfg.DATABASE_SCHEMA;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new UsageError('--schema must be a lower-case SQL identifier');
    return { to, schema, quiet: p.flags.quiet === true };
  });
  if (typeof opts === 'number') return opts;

  const { HistoryStore, HISTORY_FILE } = await import('../store/history-store.ts');
  const { migrateHistory } = await import('../store/history-migrate.ts');
  const source = join(cfg.DATA_DIR, HISTORY_FILE);
  if (!existsSync(source)) {
    io.err(`No history to copy: ${source} does not exist. Set DATA_DIR to the folder the service used.`);
    return EXIT_CONFIG;
  }
  const from = await HistoryStore.open({ path: source });
  let to: InstanceType<typeof HistoryStore>;
  try {
    to = await HistoryStore.open({ url: opts.to, ...(opts.schema ? { schema: opts.schema } : {}) });
  } catch (e) {
    await from.close();
    io.err(`Cannot open the PostgreSQL store: ${(e as Error).message}`);
    return EXIT_CONFIG;
  }
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let bar: import('cli-progress').SingleBar | null = null;
  try {
    io.out(`Copying ${from.location} into ${to.location}`);
    if (!opts.quiet) {
      const { SingleBar, Presets } = await import('cli-progress');
      bar = new SingleBar({ format: 'migrate [{bar}] {percentage}% | {value}/{total} rows | {table}', stream: process.stderr, hideCursor: true }, Presets.shades_classic);
    }
    let started = false;
    const { counts, copied } = await migrateHistory({
      from,
      to,
      signal: abort.signal,
      onProgress: (p) => {
        if (!bar) return;
        if (!started) {
          bar.start(p.total, 0, { table: p.table });
          started = true;
        }
        bar.update(p.done, { table: p.table });
      },
    });
    bar?.stop();
    const width = Math.max(...counts.map((c) => c.table.length));
    io.out(`${'table'.padEnd(width)}  ${'SQLite'.padStart(10)}  ${'PostgreSQL'.padStart(10)}`);
    for (const c of counts) {
      io.out(`${c.table.padEnd(width)}  ${String(c.source).padStart(10)}  ${String(c.target).padStart(10)}${c.source === c.target ? '' : '  differs'}`);
    }
    const bad = counts.filter((c) => c.source !== c.target);
    io.out(`${copied} rows copied in this run.`);
    if (bad.length > 0) {
      io.err(
        `Counts differ for ${bad.map((c) => c.table).join(', ')}: the PostgreSQL store already held other rows (a service ` +
          'wrote to it?). Copy into an empty schema (--schema) to get an exact copy.',
      );
      return EXIT_MISMATCH;
    }
    io.out('Every history table matches.');
    const durableOk = await copySettings(cfg, opts, io);
    if (!durableOk) return EXIT_MISMATCH;
    io.out('Everything matches. Set DATABASE_URL (and DATABASE_SCHEMA) to this database and start the service.');
    return 0;
  } catch (e) {
    bar?.stop();
    io.err(`Migration stopped: ${(e as Error).message}`);
    return EXIT_MISMATCH;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await from.close();
    await to.close();
  }
}

/**
 * The durable keyv namespaces (API keys, server settings, links): from DATA_DIR/settings.sqlite,
 * and from the Redis of CACHE_URL where an earlier version kept them, into the PostgreSQL keyv
 * table. Entries the target already has are kept. Checked afterwards: every source key is there.
 */
async function copySettings(cfg: Config, opts: { to: string; schema: string | undefined }, io: CliIo): Promise<boolean> {
  const { copyDurable, importLegacyDurable, openKeyvStores, DURABLE_NAMESPACES } = await import('../store/keyv.ts');
  const target = await openKeyvStores({ cache: cacheUrl(cfg), durable: opts.to, ...(opts.schema ? { durableSchema: opts.schema } : {}) });
  let ok = true;
  try {
    const file = join(cfg.DATA_DIR, 'settings.sqlite');
    const sources: { label: string; url: string }[] = [];
    if (existsSync(file)) sources.push({ label: 'settings.sqlite', url: `sqlite://${file}` });
    if (cfg.CACHE_URL && /^rediss?:/.test(cfg.CACHE_URL)) sources.push({ label: 'Redis (CACHE_URL)', url: cfg.CACHE_URL });
    if (sources.length === 0) io.out('No settings.sqlite under DATA_DIR: no API keys, settings or links to copy.');
    // Keys in Redis sit under REDIS_PREFIX, as the service reads them when it imports them itself.
    const prefix = cfg.REDIS_PREFIX || undefined;
    for (const src of sources) {
      const fromFile = src.label === 'settings.sqlite';
      const from = fromFile ? await openKeyvStores(src.url) : await openKeyvStores({ cache: src.url, durable: src.url, earlier: true, ...(prefix ? { cachePrefix: prefix } : {}) });
      try {
        const report = fromFile ? await copyDurable(from, target) : await importLegacyDurable(target, src.url, prefix);
        if (!report) {
          io.out(`${src.label}: already imported by an earlier run or start.`);
          continue;
        }
        io.out(`${src.label}:`);
        for (const name of DURABLE_NAMESPACES) {
          // every key of the source must now be in the target
          const kv = from.namespace(name);
          let total = 0;
          let present = 0;
          for await (const [key] of kv.iterator!(kv.namespace)) {
            total++;
            if (await target.namespace(name).has(key)) present++;
          }
          const r = report[name];
          io.out(`  ${name.padEnd(8)} ${String(total).padStart(8)} entries, ${r.copied} copied, ${r.kept} already there${present === total ? '' : `, ${total - present} MISSING`}`);
          if (present !== total) ok = false;
        }
      } finally {
        await from.close();
      }
    }
  } finally {
    await target.close();
  }
  if (!ok) io.err('Some API keys, settings or links are missing in PostgreSQL; run the migration again.');
  return ok;
}
