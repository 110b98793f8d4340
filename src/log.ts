// Logging for every role; Fastify shares the same logger. JSON lines, except in a terminal.
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * The process's logger: one JSON object per line on stdout. When stdout is a terminal (`make run`
 * by hand), the same lines are printed readably by pino-pretty in a worker thread; a container or a
 * pipe never loads it.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, pretty: boolean = process.stdout.isTTY === true): Logger {
  const options = { level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (!pretty) return pino(options);
  const transport = pino.transport({
    target: 'pino-pretty',
    options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true },
  });
  return pino(options, transport);
}
