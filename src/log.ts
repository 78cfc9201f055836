import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/** One structured logger for the process; children carry a `component` field. */
export function createLogger(cfg: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({ level: cfg.LOG_LEVEL, base: undefined });
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
