// The consume loop against a real JetStream: bounded concurrency, and no message left waiting unclaimed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startConsumeLoop } from '../../src/jetstream/consume.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';

const loop = suite('consume loop');
let nats: NatsServer;
let nc: NatsConnection;

loop.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
});
loop.after(async () => {
  await nc?.close();
  await nats?.stop();
});

loop('handlers longer than the ack wait: each message runs once, two at a time', async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'SLOW', subjects: ['slow.>'] });
  // A one-second ack wait: a message fetched but left waiting for a slot would be redelivered.
  await jsm.consumers.add('SLOW', { durable_name: 'slow-workers', ack_policy: AckPolicy.Explicit, ack_wait: 1_000_000_000, max_deliver: 5 });
  const js = jetstream(nc);
  for (let i = 0; i < 6; i++) await js.publish('slow.job', String(i));

  const handled: { data: string; deliveryCount: number }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const consumeLoop = await startConsumeLoop({
    consumer: await js.consumers.get('SLOW', 'slow-workers'),
    concurrency: 2,
    ackWaitSeconds: 1,
    maxDeliver: 5,
    handle: async (delivery) => {
      mostAtOnce = Math.max(mostAtOnce, ++running);
      handled.push({ data: new TextDecoder().decode(delivery.data), deliveryCount: delivery.deliveryCount });
      await new Promise((resolve) => setTimeout(resolve, 2000));
      running--;
      return { kind: 'ack' };
    },
    onError: (err) => assert.unreachable(String(err)),
  });
  while (handled.length < 6) await new Promise((resolve) => setTimeout(resolve, 100));
  // Long enough for any message redelivered behind the loop's back to show up.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  await consumeLoop.stop();

  handled.sort((a, b) => a.data.localeCompare(b.data));
  assert.equal(handled, [0, 1, 2, 3, 4, 5].map((i) => ({ data: String(i), deliveryCount: 1 })));
  assert.is(mostAtOnce, 2);
});

loop.run();
