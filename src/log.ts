// Logging for every role; Fastify shares the same logger. JSON lines, except in a terminal.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

// pino's isoTime, formatted once per millisecond however many lines share it.
let formattedAt = 0;
let formatted = '';
const isoTime = () => {
  const now = Date.now();
  if (now !== formattedAt) {
    formattedAt = now;
    formatted = `,"time":"${new Date(now).toISOString()}"`;
  }
  return formatted;
};

/**
 * Standard output, written once per turn of the event loop with every line logged in it: a busy
 * ingress pays one system call for a batch of access lines, not one each. Lines wait at most until
 * the turn ends, and whatever is pending when the process exits is written then.
 */
class BatchedStdout implements DestinationStream {
  // Synchronous, as pino's default: it retries a full pipe and never reorders lines.
  private readonly stdout = pino.destination({ dest: 1, sync: true });
  private pending = '';
  private readonly flush = () => {
    const lines = this.pending;
    this.pending = '';
    if (lines !== '') this.stdout.write(lines);
  };

  constructor() {
    process.once('exit', this.flush);
  }

  write(line: string): void {
    if (this.pending === '') setImmediate(this.flush);
    this.pending += line;
  }
}

// One per process, shared by every logger made here.
let batchedStdout: BatchedStdout | undefined;

/**
 * Fields that hold a customer's secret (docs/storage.md), wherever an object logged carries them:
 * censored, should one ever be logged by mistake. Nothing logs them on purpose.
 */
const secretFields = {
  paths: [
    'storage_secret_access_key',
    'secret_access_key',
    'secretKey',
    'secretAccessKey',
    'pdf_password',
    'pdf_owner_password',
  ].flatMap((name) => [name, `*.${name}`]),
  censor: '[redacted]',
};

/**
 * The process's logger: one JSON object per line on stdout. When stdout is a terminal (`make run`
 * by hand), the same lines are printed readably by pino-pretty in a worker thread; a container or a
 * pipe never loads it. `destination` (tests) takes the lines instead.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  pretty: boolean = process.stdout.isTTY === true,
  destination?: DestinationStream,
): Logger {
  const options = { level: config.logLevel, base: { pid: process.pid }, timestamp: isoTime, redact: secretFields };
  if (destination) return pino(options, destination);
  if (!pretty) return pino(options, (batchedStdout ??= new BatchedStdout()));
  const transport = pino.transport({
    target: 'pino-pretty',
    options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true },
  });
  return pino(options, transport);
}
