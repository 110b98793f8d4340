// The consume loop against a real JetStream: bounded concurrency, no message left waiting unclaimed,
// and a message that cannot be read terminated rather than delivered forever.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jsonMessage, MessageNotValid, startConsumeLoop } from '../../src/jetstream/consume.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { pause, waitFor } from '../helpers/wait.ts';

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

const text = (data: Uint8Array) => new TextDecoder().decode(data);

loop('handlers longer than the ack wait: each message runs once, two at a time', async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'SLOW', subjects: ['slow.>'] });
  // A one-second ack wait: a message fetched but left waiting for a slot would be redelivered.
  await jsm.consumers.add('SLOW', {
    durable_name: 'slow-workers',
    ack_policy: AckPolicy.Explicit,
    ack_wait: 1_000_000_000,
    max_deliver: 5,
  });
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
    decode: text,
    handle: async (delivery) => {
      mostAtOnce = Math.max(mostAtOnce, ++running);
      handled.push({ data: delivery.message, deliveryCount: delivery.deliveryCount });
      await pause(2000);
      running--;
      return { kind: 'ack' };
    },
    onError: (err) => assert.unreachable(String(err)),
  });
  try {
    await waitFor(() => handled.length === 6, 'six messages handled');
    // The claim: nothing is redelivered behind the loop's back, for longer than an ack wait.
    await pause(2500);
  } finally {
    await consumeLoop.stop();
  }

  handled.sort((a, b) => a.data.localeCompare(b.data));
  assert.equal(
    handled,
    [0, 1, 2, 3, 4, 5].map((i) => ({ data: String(i), deliveryCount: 1 })),
  );
  assert.is(mostAtOnce, 2);
});

loop(
  'a message that is not JSON, or lacks a field, is terminated and reported once; the rest are handled',
  async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'JOBS', subjects: ['jobs.>'] });
    // Unlimited deliveries, as the delivery consumer has: a nak'd bad message would come back forever.
    await jsm.consumers.add('JOBS', {
      durable_name: 'job-workers',
      ack_policy: AckPolicy.Explicit,
      ack_wait: 2_000_000_000,
      max_deliver: -1,
    });
    // Stream sequences of the messages the server saw terminated.
    const terminated: number[] = [];
    const advisories = nc.subscribe('$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.JOBS.job-workers', {
      callback: (_err, msg) => void terminated.push((msg.json() as { stream_seq: number }).stream_seq),
    });
    const js = jetstream(nc);
    await js.publish('jobs.a', '{"id": "ok-1", "round": 0}');
    await js.publish('jobs.a', 'not json {');
    await js.publish('jobs.a', '{"round": 0}');
    await js.publish('jobs.a', '{"id": "refused-by-handler", "round": 0}');
    await js.publish('jobs.a', '{"id": "ok-2", "round": 0}');

    const handled: string[] = [];
    const reported: MessageNotValid[] = [];
    const consumeLoop = await startConsumeLoop({
      consumer: await js.consumers.get('JOBS', 'job-workers'),
      concurrency: 2,
      ackWaitSeconds: 2,
      maxDeliver: Number.POSITIVE_INFINITY,
      decode: jsonMessage<{ id: string; round: number }>({ id: 'string', round: 'number' }),
      handle: async ({ message }) => {
        handled.push(message.id);
        // A handler that finds a message it can never act on throws MessageNotValid: terminated too.
        if (message.id === 'refused-by-handler') throw new MessageNotValid('refused by the handler');
        return { kind: 'ack' };
      },
      onError: (err) => reported.push(err as MessageNotValid),
    });
    try {
      await waitFor(() => terminated.length === 3, 'three termination advisories');
      await waitFor(
        async () => (await jsm.consumers.info('JOBS', 'job-workers')).num_ack_pending === 0,
        'every message settled',
      );
      // The claim: no terminated message comes back, for longer than the ack wait.
      await pause(2500);
    } finally {
      await consumeLoop.stop();
      advisories.unsubscribe();
    }

    assert.equal(handled.sort(), ['ok-1', 'ok-2', 'refused-by-handler']);
    assert.equal(terminated.sort(), [2, 3, 4]);
    assert.ok(
      reported.every((err) => err instanceof MessageNotValid),
      'reported as not valid',
    );
    assert.equal(
      reported.map((err) => err.message).sort(),
      ['id is missing or not a string', 'refused by the handler', 'the message is not JSON'],
      'each reported once, with its reason',
    );
    const info = await jsm.consumers.info('JOBS', 'job-workers');
    assert.is(info.num_redelivered, 0, 'nothing was delivered twice');
    assert.is(info.num_pending, 0);
  },
);

loop.run();
