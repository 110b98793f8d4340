// The development outbox: mail that would have been sent, kept in the MAIL_OUTBOX stream for people and tests to read.
import type { JetStreamManager } from '@nats-io/jetstream';
import { names } from '../jetstream/topology.ts';
import { Sealer } from '../secrets/sealer.ts';

/** One message as written to the outbox (and as `shutterbus mail outbox` prints it). */
export interface OutboxMessage {
  to: string;
  subject: string;
  text: string;
  created_at: string;
}

const decoder = new TextDecoder();

/**
 * Appends to and lists the outbox stream. A message's text holds a link that signs in, confirms an
 * address or claims an invitation: it is sealed in the stream like every other secret at rest.
 */
export class Outbox {
  constructor(
    private readonly jsm: JetStreamManager,
    private readonly sealer: Sealer,
  ) {}

  /** Stores one message durably (published through JetStream, acknowledged before returning). */
  async append(message: OutboxMessage): Promise<void> {
    const sealed = { ...message, text: this.sealer.seal(message.text) };
    await this.jsm.jetstream().publish(names.mailSubject, JSON.stringify(sealed));
  }

  /** Every message the stream still holds, oldest first. */
  async list(): Promise<OutboxMessage[]> {
    const { state } = await this.jsm.streams.info(names.mailStream);
    const messages: OutboxMessage[] = [];
    if (state.messages === 0) return messages;
    // The stream is capped (see topology), so walking it by sequence stays small.
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const stored = await this.jsm.streams.getMessage(names.mailStream, { seq }).catch(() => null);
      if (!stored) continue;
      const message = JSON.parse(decoder.decode(stored.data)) as OutboxMessage;
      // One written before the outbox was sealed reads as it is.
      messages.push(Sealer.isSealed(message.text) ? { ...message, text: this.sealer.open(message.text) } : message);
    }
    return messages;
  }
}
