// The consume loop: the one place that turns a handler's verdict into ack, nak-with-delay or term.
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../log.ts';
import { isNatsUnavailable } from './errors.ts';

/** A message no delivery can ever handle (not JSON, a field missing): terminated and logged, never retried. */
export class MessageNotValid extends Error {
  override name = 'MessageNotValid';
}

/** What a required field of a JSON message must be. */
type FieldKind = 'string' | 'number' | 'object';

const textDecoder = new TextDecoder();

/**
 * A decoder of JSON messages that must carry `fields` (a dotted path reaches into an object):
 * throws MessageNotValid, naming what is wrong, for anything else.
 */
export function jsonMessage<T>(fields: Record<string, FieldKind>): (data: Uint8Array) => T {
  return (data) => {
    let value: unknown;
    try {
      value = JSON.parse(textDecoder.decode(data));
    } catch (err) {
      throw new MessageNotValid('the message is not JSON', { cause: err });
    }
    for (const [path, kind] of Object.entries(fields)) {
      const found = path
        .split('.')
        .reduce<unknown>(
          (at, key) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined),
          value,
        );
      if (found === null || typeof found !== kind) throw new MessageNotValid(`${path} is missing or not a ${kind}`);
    }
    return value as T;
  };
}

/** What a handler decided about one message. */
export type Disposition =
  | { kind: 'ack' }
  /** Try again later, on this or another worker. */
  | { kind: 'retry'; delayMs: number }
  /** Never deliver again; the handler logs `reason`. */
  | { kind: 'term'; reason: string };

/** One delivery of a message, as the handler sees it. */
export interface Delivery<T> {
  /** The message, decoded. */
  message: T;
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
export interface ConsumeLoopOptions<T> {
  consumer: Consumer;
  /** Messages handled at once. */
  concurrency: number;
  /** The consumer's ack wait; in-progress heartbeats are sent at a third of it. */
  ackWaitSeconds: number;
  maxDeliver: number;
  /** Reads a message; one it cannot read (it throws) is terminated, as no later delivery could read it either. */
  decode: (data: Uint8Array) => T;
  /** Decides about one delivery; a MessageNotValid it throws terminates the message too. */
  handle: (delivery: Delivery<T>) => Promise<Disposition>;
  /**
   * A message terminated as not valid (`err` a MessageNotValid), a handler that threw (its message
   * is retried), or a pull that failed (`msg` absent).
   */
  onError: (err: unknown, msg?: JsMsg) => void;
}

/**
 * The usual `onError`: an outage of NATS (a node lost, a leader being elected) is a warning, as the
 * message is retried; a message that is not valid, or anything else, is a bug and logged as an error.
 */
export function logConsumeError(log: Logger, what: string) {
  return (err: unknown, msg?: JsMsg) => {
    if (err instanceof MessageNotValid) {
      // The body is not logged: it may carry a webhook's payload or a target's credentials.
      return void log.error(
        { reason: err.message, subject: msg?.subject, stream_seq: msg?.seq, deliveries: msg?.info.deliveryCount },
        `${what} message not valid; terminated`,
      );
    }
    const level = isNatsUnavailable(err) ? 'warn' : 'error';
    log[level]({ err, stream_seq: msg?.seq }, msg ? `${what} handler failed` : `${what} pull failed`);
  };
}

// How long one pull waits for messages before the loop asks again.
const PULL_EXPIRES_MS = 5000;

/** A running loop; `stop` lets in-flight handlers finish (or aborts them after `graceMs`). */
export interface ConsumeLoop {
  stop(graceMs?: number): Promise<void>;
}

/**
 * Pulls messages with explicit ack and bounded concurrency and settles each by its handler's
 * verdict. A pull asks for no more messages than there are free slots, so every message it gets
 * starts at once: none waits in a client-side buffer while its ack wait runs out.
 */
export async function startConsumeLoop<T>(options: ConsumeLoopOptions<T>): Promise<ConsumeLoop> {
  const { consumer, concurrency } = options;
  const abort = new AbortController();
  const running = new Set<Promise<void>>();
  let freeSlot: (() => void) | null = null;
  let pull: ConsumerMessages | null = null;
  let stopping = false;

  const terminate = (err: MessageNotValid, msg: JsMsg) => {
    options.onError(err, msg);
    msg.term();
  };

  const settle = async (msg: JsMsg) => {
    let message: T;
    try {
      message = options.decode(msg.data);
    } catch (err) {
      return terminate(
        err instanceof MessageNotValid ? err : new MessageNotValid('the message cannot be decoded', { cause: err }),
        msg,
      );
    }
    // In-progress acks keep the claim through long renders.
    const heartbeat = setInterval(() => msg.working(), (options.ackWaitSeconds * 1000) / 3);
    try {
      const disposition = await options.handle({
        message,
        streamSequence: msg.seq,
        deliveryCount: msg.info.deliveryCount,
        isLastDelivery: msg.info.deliveryCount >= options.maxDeliver,
        signal: abort.signal,
        header: (name) => msg.headers?.get(name) || undefined,
      });
      if (disposition.kind === 'ack') await msg.ackAck().catch(() => msg.ack());
      else if (disposition.kind === 'retry') msg.nak(disposition.delayMs);
      // The reason stays in our logs: nats-server 2.9 ignores a `+TERM` that carries one, and redelivers.
      else msg.term();
    } catch (err) {
      if (err instanceof MessageNotValid) return terminate(err, msg);
      options.onError(err, msg);
      msg.nak(1000);
    } finally {
      clearInterval(heartbeat);
    }
  };

  const start = (msg: JsMsg) => {
    const task = settle(msg).finally(() => {
      running.delete(task);
      freeSlot?.();
      freeSlot = null;
    });
    running.add(task);
  };

  const loop = (async () => {
    while (!stopping) {
      if (running.size >= concurrency) {
        await new Promise<void>((resolve) => (freeSlot = resolve));
        continue;
      }
      try {
        pull = await consumer.fetch({ max_messages: concurrency - running.size, expires: PULL_EXPIRES_MS });
        for await (const msg of pull) start(msg);
      } catch (err) {
        if (stopping) break;
        options.onError(err);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      } finally {
        pull = null;
      }
    }
  })();

  return {
    async stop(graceMs = 10_000) {
      stopping = true;
      await pull?.close().catch(() => undefined);
      freeSlot?.();
      const grace = setTimeout(() => abort.abort(), graceMs);
      await Promise.allSettled([...running]);
      clearTimeout(grace);
      await loop.catch(() => undefined);
    },
  };
}
