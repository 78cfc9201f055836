import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * One structured logger for the process; children carry a `component` field.
 *
 * Lines go to stdout through an asynchronous sonic-boom that gathers them into writes of at least
 * 4 KB (about 20 request lines), or whatever is there every 200 ms: handing each line to the
 * kernel on its own cost a thread-pool round trip per request (the largest single cost of a cached
 * answer after the socket write). Nothing waits for a write; pino flushes what is left when the
 * process exits. A process killed outright (SIGKILL) loses at most the last 200 ms of lines.
 */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({ level: cfg.LOG_LEVEL, base: undefined }, pino.destination({ dest: 1, sync: false, minLength: LOG_WRITE_BYTES, periodicFlush: LOG_FLUSH_MS }));
}

/** Log lines are written once this many bytes wait... */
export const LOG_WRITE_BYTES = 4096;
/** ...or every this many milliseconds, whichever comes first. */
export const LOG_FLUSH_MS = 200;

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
