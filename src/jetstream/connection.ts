// The NATS connection of a process: connecting to a cluster, waiting out JetStream at start, knowing whether the link is up.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { withTimeout } from '../retry.ts';
import { isNatsUnavailable } from './errors.ts';

/** How long one attempt at a start-up step may take before it is made again. */
const START_ATTEMPT_MS = 30_000;

/** Seconds a client is told to wait (Retry-After) while NATS or JetStream is out of reach. */
export const NATS_RETRY_AFTER_SECONDS = 5;

/**
 * Connects to any of the configured servers and stays connected: a lost server is replaced by
 * another of the cluster, and a process started before NATS waits for it instead of exiting.
 */
export function connectNats(config: Pick<Config, 'natsServers' | 'natsAuth'>, name: string): Promise<NatsConnection> {
  return connect({
    servers: [...config.natsServers],
    ...config.natsAuth,
    name,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    reconnectTimeWait: 500,
    // A request's caller stack is captured up front for its error otherwise: once per request,
    // several per render, for stacks only a failure would print.
    noAsyncTraces: true,
  });
}

/**
 * Runs a start-up step that needs JetStream (creating streams and buckets) until it succeeds:
 * with one replica and its node down, or while a cluster elects its leaders, the process waits.
 */
export async function untilJetStreamAnswers<T>(log: Logger, what: string, step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      // An attempt that hangs (seen on nats-server 2.9 with a node down) is given up and made again.
      return await withTimeout(step(), START_ATTEMPT_MS);
    } catch (err) {
      if (!isNatsUnavailable(err)) throw err;
      log.warn(
        { err: { name: (err as Error).name, message: (err as Error).message }, attempt },
        `${what}: JetStream is not available yet, retrying`,
      );
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 500 * attempt)));
    }
  }
}

/** Whether the connection is up right now, so a request can be refused at once instead of after a time-out. */
export class NatsLink {
  private connected = true;

  constructor(nc: NatsConnection, log: Logger) {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') {
          log.warn({ server: status.server }, 'NATS connection lost');
          this.connected = false;
        } else if (status.type === 'close') {
          this.connected = false;
        } else if (status.type === 'reconnect') {
          log.info({ server: status.server }, 'NATS connection back');
          this.connected = true;
        }
      }
    })();
  }

  /** True while the connection to a NATS server is up. */
  get isUp(): boolean {
    return this.connected;
  }
}

/** The answer for a request that needs NATS or JetStream while it is out of reach. */
export function unavailable(cause?: unknown): ServiceError {
  return new ServiceError('temporary_unavailable', {}, { cause, retryAfter: NATS_RETRY_AFTER_SECONDS });
}
