// Counts the reads of a KV bucket's documents while some work runs, as NATS sees them: every get is
// a JetStream API request on a subject naming the bucket's stream, which any connection can hear.
import type { NatsConnection } from '@nats-io/transport-node';

/** The reads of bucket `name` (by any connection to this NATS) while `work` runs. */
export async function kvReads(nc: NatsConnection, name: string, work: () => Promise<unknown>): Promise<number> {
  let reads = 0;
  const subscriptions = [`$JS.API.STREAM.MSG.GET.KV_${name}`, `$JS.API.DIRECT.GET.KV_${name}.>`].map((subject) =>
    nc.subscribe(subject, { callback: () => void reads++ }),
  );
  await nc.flush();
  try {
    await work();
    await nc.flush();
    return reads;
  } finally {
    for (const subscription of subscriptions) subscription.unsubscribe();
  }
}
