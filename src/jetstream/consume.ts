// The consume loop: the one place that turns a handler's verdict into ack, nak-with-delay or term.
import type { Consumer, JsMsg } from '@nats-io/jetstream';

/** What a handler decided about one message. */
export type Disposition =
  | { kind: 'ack' }
  /** Try again later, on this or another worker. */
  | { kind: 'retry'; delayMs: number }
  /** Never deliver again. */
  | { kind: 'term'; reason: string };

/** One delivery of a message, as the handler sees it. */
export interface Delivery {
  data: Uint8Array;
  streamSequence: number;
  deliveryCount: number;
  /** True on the consumer's last allowed delivery: a retry now would never come. */
  isLastDelivery: boolean;
  /** Aborted when the loop stops. */
  signal: AbortSignal;
  /** A header of the message, if it has it. */
  header(name: string): string | undefined;
}

/** Settings of one consume loop. */
export interface ConsumeLoopOptions {
  consumer: Consumer;
  /** Messages handled at once. */
  concurrency: number;
  /** The consumer's ack wait; in-progress heartbeats are sent at a third of it. */
  ackWaitSeconds: number;
  maxDeliver: number;
  handle: (delivery: Delivery) => Promise<Disposition>;
  onError: (err: unknown, msg: JsMsg) => void;
}

/** A running loop; `stop` lets in-flight handlers finish (or aborts them after `graceMs`). */
export interface ConsumeLoop {
  stop(graceMs?: number): Promise<void>;
  inFlight(): number;
}

/** Pulls messages with explicit ack and bounded concurrency and settles each by its handler's verdict. */
export async function startConsumeLoop(options: ConsumeLoopOptions): Promise<ConsumeLoop> {
  const { consumer, concurrency } = options;
  const abort = new AbortController();
  const running = new Set<Promise<void>>();
  let freeSlot: (() => void) | null = null;
  const messages = await consumer.consume({ max_messages: concurrency });

  const settle = async (msg: JsMsg, heartbeat: NodeJS.Timeout) => {
    try {
      const disposition = await options.handle({
        data: msg.data,
        streamSequence: msg.seq,
        deliveryCount: msg.info.deliveryCount,
        isLastDelivery: msg.info.deliveryCount >= options.maxDeliver,
        signal: abort.signal,
        header: (name) => msg.headers?.get(name) || undefined,
      });
      if (disposition.kind === 'ack') await msg.ackAck().catch(() => msg.ack());
      else if (disposition.kind === 'retry') msg.nak(disposition.delayMs);
      else msg.term(disposition.reason);
    } catch (err) {
      options.onError(err, msg);
      msg.nak(1000);
    } finally {
      clearInterval(heartbeat);
    }
  };

  const loop = (async () => {
    for await (const msg of messages) {
      // From receipt on, in-progress acks keep the claim: while waiting for a slot and during long renders.
      const heartbeat = setInterval(() => msg.working(), (options.ackWaitSeconds * 1000) / 3);
      while (running.size >= concurrency) {
        await new Promise<void>((resolve) => (freeSlot = resolve));
      }
      const task = settle(msg, heartbeat).finally(() => {
        running.delete(task);
        freeSlot?.();
        freeSlot = null;
      });
      running.add(task);
    }
  })();

  return {
    inFlight: () => running.size,
    async stop(graceMs = 10_000) {
      await messages.close().catch(() => undefined);
      const grace = setTimeout(() => abort.abort(), graceMs);
      await Promise.allSettled([...running]);
      clearTimeout(grace);
      await loop.catch(() => undefined);
    },
  };
}
