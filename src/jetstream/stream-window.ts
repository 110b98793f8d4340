// Reads a stretch of a limits-retention stream (for replay): from a time or a sequence up to its end at the start of the read.
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';

/** Where a replay starts: at a moment or at a stream sequence. */
export type WindowStart = { since: Date } | { fromSeq: number };

/** One stored message of the window. */
export interface WindowMessage {
  seq: number;
  subject: string;
  time: Date;
  data: Uint8Array;
}

/** How long to wait for more when the window might hold nothing further. */
const FETCH_EXPIRES_MS = 1000;

/**
 * The messages of `stream` matching `filter` from `start` up to the stream's last sequence when
 * called, so what a replay publishes back into the same stream is never read again.
 */
export async function readStreamWindow(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  filter: string,
  start: WindowStart,
): Promise<WindowMessage[]> {
  const { state } = await jsm.streams.info(stream);
  const lastSeq = state.last_seq;
  if (state.messages === 0 || ('fromSeq' in start && start.fromSeq > lastSeq)) return [];
  const consumer = await js.consumers.get(stream, {
    // One subject as a string: servers before 2.10 know only filter_subject.
    filter_subjects: filter,
    ...('since' in start
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: start.since.toISOString() }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, start.fromSeq) }),
  });
  const found: WindowMessage[] = [];
  for (;;) {
    const batch = await consumer.fetch({ max_messages: 256, expires: FETCH_EXPIRES_MS });
    let received = 0;
    let done = false;
    for await (const msg of batch) {
      received++;
      if (msg.seq > lastSeq) {
        done = true;
        break;
      }
      found.push({ seq: msg.seq, subject: msg.subject, time: msg.time, data: msg.data });
      if (msg.seq === lastSeq || msg.info.pending === 0) done = true;
    }
    if (done || received === 0) break;
  }
  await consumer.delete().catch(() => undefined);
  return found;
}
