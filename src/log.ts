// JSON-line logging for every role; Fastify shares the same logger.
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/** The process's logger: one JSON object per line on stdout. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
