// A consumer's leadership handed over after its replicas were raised in place: the work-around
// for followers nats-server 2.9.10 leaves "catching up" for good (see handOverLeadership).
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { retryWhile } from '../retry.ts';

/** The description a consumer carries from its raise until its leadership was handed over. */
export const HAND_OVER_PENDING = 'shutterbus: replicas raised, leadership hand-over pending';

/** How long each wait of a leadership hand-over may take before the start is made again. */
const HAND_OVER_MS = 20_000;

/**
 * Moves a consumer's leadership to one of the followers a raise gave it. On nats-server 2.9.10 a
 * consumer raised in place can keep followers that stay "catching up" for good while reporting
 * current, and such a follower never stands for election: when the leader's node died the consumer
 * had no leader again (a start, or any render, waited forever). A follower that takes over is past
 * that, and the old leader stands as before, so the consumer then survives the loss of any one node.
 */
export async function handOverLeadership(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  consumer: string,
): Promise<void> {
  const info = () => jsm.consumers.info(stream, consumer);
  const leader = await until(`${consumer}'s new followers are current`, async () => {
    const { cluster } = await info();
    return cluster?.leader && cluster.replicas?.length && cluster.replicas.every((peer) => peer.current)
      ? cluster.leader
      : undefined;
  });
  const answer = JSON.parse(
    new TextDecoder().decode(
      (await nc.request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${consumer}`, undefined, { timeout: 5000 })).data,
    ),
  );
  if (answer.error)
    throw Object.assign(new Error(`${consumer}: step-down refused: ${answer.error.description}`), {
      name: 'JetStreamApiError',
      code: answer.error.err_code,
      status: answer.error.code,
    });
  await until(`${consumer} has a new leader`, async () => {
    const { cluster } = await info();
    return cluster?.leader && cluster.leader !== leader ? true : undefined;
  });
}

/** Asks `check` (with backoff, past its failures too) until it has an answer; past HAND_OVER_MS a timeout, which a start retries. */
function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  return retryWhile(
    async () => {
      const value = await check();
      if (value === undefined)
        throw Object.assign(new Error(`not within ${HAND_OVER_MS} ms: ${what}`), { name: 'TimeoutError' });
      return value;
    },
    () => true,
    Date.now() + HAND_OVER_MS,
  );
}
