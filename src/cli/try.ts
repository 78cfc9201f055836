/**
 * `starr try "/player tag:#U882V92Q90 view:brawlers"`: runs a slash command locally against the
 * core, exactly as the bot would answer it in Discord, and prints the reply as text (embeds,
 * fields, components); attachments are written to ./out (or --out). `--json` prints the raw
 * payload instead, `--press LABEL` clicks a button or menu option of the reply, `--complete NAME`
 * shows the autocomplete choices of an option.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { CliIo } from '../cli.ts';
import { loadCliConfig, parseArgs, readArgs, UsageError } from './args.ts';
import { usesSimulator } from '../config.ts';
import type { LocalResponder, LocalUser } from '../bot/local.ts';
import type { RenderedMessage } from '../bot/render.ts';

export const summary = 'Run a slash command locally and print the reply (attachments go to ./out)';
export const usage =
  'starr try "/player tag:#TAG view:brawlers" [--out DIR] [--json] [--locale de] [--press LABEL] [--complete OPTION] [--member]';

async function writeFiles(msg: RenderedMessage, dir: string, cwd: string): Promise<Map<string, string>> {
  const written = new Map<string, string>();
  if (msg.files.length === 0) return written;
  await mkdir(dir, { recursive: true });
  for (const f of msg.files) {
    const path = join(dir, f.name);
    await writeFile(path, f.data);
    written.set(f.name, relative(cwd, path) || path);
  }
  return written;
}

export async function run(args: string[], io: CliIo): Promise<number> {
  const parsed = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['out', 'locale', 'press', 'complete'], flags: ['json', 'member'] });
    if (p.positional.length !== 1) throw new UsageError('give the command as one quoted argument, like "/events"');
    return { text: p.positional[0]!, flags: p.flags };
  });
  if (typeof parsed === 'number') return parsed;
  const { text, flags } = parsed;
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;

  // The core and the bot are loaded once the arguments are known to be good (as `starr --help`
  // loads every command's module for its summary, and a usage error needs none of them).
  const [{ createLogger }, { openCore }, { createBot }, { InvocationError }, { NoSuchComponentError, pressLocal, runLocal }, { messageText }] = await Promise.all([
    import('../log.ts'),
    import('../core/open.ts'),
    import('../bot/index.ts'),
    import('../bot/invocation.ts'),
    import('../bot/local.ts'),
    import('../bot/text.ts'),
  ]);
  // The terminal is for the reply: only problems are logged.
  const logger = createLogger({ LOG_LEVEL: cfg.LOG_LEVEL === 'info' ? 'warn' : cfg.LOG_LEVEL });
  if (usesSimulator(cfg)) io.err('(simulated game world: no BRAWLSTARS_API_TOKEN is set)');
  // Local: no Discord connection, whatever the environment says; one render worker is plenty.
  const { core, close } = await openCore({ ...cfg, DISCORD_TOKEN: undefined, DISCORD_PUBLIC_KEY: undefined }, { logger, renderWorkers: 1 });
  const locale = typeof flags.locale === 'string' ? flags.locale : 'en-US';
  const user: LocalUser = { userId: 'local-user', guildId: 'local-server', locale, manager: flags.member !== true };
  try {
    const bot = await createBot(core);
    let r: LocalResponder;
    try {
      r = await runLocal(bot.router, bot.services, text, user, typeof flags.complete === 'string' ? { complete: flags.complete } : {});
      if (typeof flags.press === 'string' && r.last) r = await pressLocal(bot.router, r.last, flags.press, user);
    } catch (e) {
      if (e instanceof InvocationError || e instanceof NoSuchComponentError) {
        io.err(e.message);
        return 2;
      }
      throw e;
    }
    if (r.choices) {
      io.out(flags.json ? JSON.stringify(r.choices, null, 2) : r.choices.map((c) => `${c.name}  →  ${c.value}`).join('\n') || '(no choices)');
      return 0;
    }
    const msg = r.last;
    if (!msg) {
      io.err('The command sent no reply.');
      return 1;
    }
    const files = await writeFiles(msg, resolve(io.cwd, typeof flags.out === 'string' ? flags.out : 'out'), io.cwd);
    if (flags.json) {
      io.out(JSON.stringify({ ...msg.body, files: [...files.values()] }, null, 2));
    } else {
      io.out(messageText(msg, { locale, nowMs: Date.now(), files }));
    }
    // The reply is printed either way; the exit code says whether it was an answer or an error.
    return r.outcome === 'ok' ? 0 : 1;
  } finally {
    await close();
  }
}
