import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * One structured logger for the process; children carry a `component` field.
 *
 * Lines go to stdout through an asynchronous sonic-boom: under load, lines written while one
 * write is in flight leave in the next write together instead of one write(2) per line and
 * request. Nothing waits: a line is handed to the kernel as soon as the previous write returns,
 * and pino flushes what is left when the process exits.
 */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({ level: cfg.LOG_LEVEL, base: undefined }, pino.destination({ dest: 1, sync: false }));
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
