// The 3-node cluster helper, and what JetStream on this nats-server (Debian v2.9.10) does when a
// node is lost or when replicas are raised in place; the service relies on both.
//
// Found on v2.9.10 (the tests below show each but the last point):
// - jsm.streams.update(name, { num_replicas: 3 }) raises an existing R1 stream to R3 in place,
//   messages kept; the same on a KV bucket's stream (KV_<bucket>) raises the bucket.
// - A durable consumer created without num_replicas (0: "inherit") follows its stream to R3.
// - A durable consumer created with an explicit num_replicas: 1 stays R1 when its stream goes to
//   R3 (it may even be moved to another node meanwhile, its state kept); it needs its own
//   jsm.consumers.update(stream, name, { ...config, num_replicas: 3 }), which works on this
//   version and keeps its ack floor. The service sets num_replicas on its consumers, so it must
//   raise them itself.
// - SIGKILL of a stream's leader: a survivor is leader again after 4–9 s (Raft election
//   timeouts); publishing and reading work again after that, and a restarted node's copy of the
//   stream and of the KV bucket catches up within ~3 s.
// - But a restarted node's replica of a durable consumer can stay behind for good: in 6 of ~60
//   runs (most under CPU load) the consumer's peer on the restarted node kept "current: false,
//   lag 44" and its /healthz answered 503 "JetStream consumer '$G > ORDERS > audit' is not
//   current" for 30 s and more, even after new messages were delivered and acked through that
//   consumer (the lag grew to 47). So a test must not wait for /healthz of a restarted 2.9.10 node whose consumers were
//   busy while it was down; the stream-level checks below are what shows it rejoined.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { nodeNames, startNatsCluster, type NatsCluster, type NodeName } from './cluster.ts';

interface Context {
  cluster: NatsCluster;
  nc: NatsConnection;
  jsm: JetStreamManager;
  js: JetStreamClient;
  kvm: Kvm;
}

const cluster = suite<Context>('cluster');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tries `attempt` until it resolves (the client may be reconnecting, a leader being elected). */
async function retry<T>(what: string, attempt: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`);
      await sleep(200);
    }
  }
}

/** Polls `check` until it returns true. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await retry(
    what,
    async () => {
      if (!(await check())) throw new Error('not yet');
    },
    timeoutMs,
  );
}

async function monitor(context: Context, name: NodeName, path: string): Promise<any> {
  const response = await fetch(`${context.cluster.monitorOf(name)}${path}`, { signal: AbortSignal.timeout(2000) });
  assert.ok(response.ok, `${name} ${path} answered ${response.status}`);
  return response.json();
}

/** The state of one node's own copy of a stream (its /jsz), whoever leads. */
async function localState(
  context: Context,
  name: NodeName,
  stream: string,
): Promise<{ messages: number; last_seq: number } | undefined> {
  const jsz = await monitor(context, name, '/jsz?accounts=true&streams=true');
  for (const account of jsz.account_details ?? []) {
    for (const detail of account.stream_detail ?? []) {
      if (detail.name === stream) return detail.state;
    }
  }
  return undefined;
}

/**
 * Reads a durable consumer until it has `count` distinct stream sequences, acking each; returns
 * their payloads in stream order. An ack lost to a leader change is redelivered after ack_wait and
 * counted once.
 */
async function readAll(js: JetStreamClient, stream: string, durable: string, count: number): Promise<string[]> {
  const bySeq = new Map<number, string>();
  await retry(`read ${count} from ${stream}/${durable}`, async () => {
    const consumer = await js.consumers.get(stream, durable);
    const batch = await consumer.fetch({ max_messages: count, expires: 1000 });
    for await (const message of batch) {
      bySeq.set(message.seq, message.string());
      await message.ackAck().catch(() => {});
    }
    if (bySeq.size < count) throw new Error(`read ${bySeq.size} of ${count}`);
  });
  return [...bySeq.entries()].sort(([a], [b]) => a - b).map(([, data]) => data);
}

cluster.before(async (context) => {
  context.cluster = await startNatsCluster();
  context.nc = await connect({
    servers: context.cluster.urls,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2000,
  });
  context.jsm = await jetstreamManager(context.nc, { timeout: 2000 });
  context.js = jetstream(context.nc, { timeout: 2000 });
  context.kvm = new Kvm(context.nc);
});

cluster.after(async (context) => {
  await context.nc?.close();
  await context.cluster?.stop();
});

cluster('three routed nodes n1, n2, n3, each healthy with JetStream', async (context) => {
  const { urls, url } = context.cluster;
  assert.is(urls.length, 3);
  assert.is(new Set(urls).size, 3);
  assert.is(url, urls.join(','));
  for (const [i, name] of nodeNames.entries()) {
    assert.is(context.cluster.urlOf(name), urls[i]);
    const varz = await monitor(context, name, '/varz');
    assert.is(varz.server_name, name);
    assert.is(varz.cluster.name, 'shutterbus-test');
    const routez = await monitor(context, name, '/routez');
    assert.is(routez.num_routes, 2, `${name} is routed to the two others`);
    await context.cluster.waitHealthy(name);
  }
  const account = await context.jsm.getAccountInfo();
  assert.is(account.streams, 0);
});

cluster('an R3 stream and an R3 KV bucket outlive SIGKILL of the stream leader; the node rejoins', async (context) => {
  const { jsm, js, kvm } = context;
  await jsm.streams.add({ name: 'ORDERS', subjects: ['orders.>'], num_replicas: 3 });
  await jsm.consumers.add('ORDERS', { durable_name: 'audit', ack_policy: AckPolicy.Explicit, ack_wait: nanos(2000) });
  // allow_direct off, as the service has it: a read is answered by the leader, never a lagging follower.
  const kv = await kvm.create('settings', { replicas: 3, allow_direct: false });
  const info = await jsm.streams.info('ORDERS');
  assert.is(info.config.num_replicas, 3);
  assert.is(info.cluster?.replicas?.length, 2);
  assert.is((await jsm.streams.info('KV_settings')).cluster?.replicas?.length, 2);
  assert.is((await jsm.consumers.info('ORDERS', 'audit')).cluster?.replicas?.length, 2, 'the consumer is R3 too');

  // msgID: a publish retried after a lost ack is stored once (the stream's duplicate window).
  const publish = (i: number) =>
    retry(`publish ${i}`, () => js.publish('orders.new', `order ${i}`, { msgID: `order-${i}` }));
  for (let i = 0; i < 20; i++) await publish(i);
  await kv.put('colour', 'blue');

  const leader = await context.cluster.leaderOf('ORDERS');
  assert.ok(nodeNames.includes(leader));
  const killedAt = Date.now();
  await context.cluster.kill(leader);
  assert.not.ok(context.cluster.isRunning(leader));
  const next = await context.cluster.waitForLeader('ORDERS', leader);
  const electedMs = Date.now() - killedAt;
  assert.is.not(next, leader);
  assert.ok(context.cluster.isRunning(next), 'the new leader is a survivor');
  const kvLeader = await context.cluster.waitForLeader('KV_settings', leader);
  assert.is.not(kvLeader, leader);

  for (let i = 20; i < 40; i++) await publish(i);
  const after = await retry('stream info', () => jsm.streams.info('ORDERS'));
  assert.is(after.state.messages, 40, 'nothing lost, nothing stored twice');
  assert.ok(
    after.cluster?.replicas?.some((peer) => peer.name === leader),
    'the killed node stays a member of the group',
  );
  for (const seq of [1, 20, 40]) {
    const stored = await retry(`get ${seq}`, () => jsm.streams.getMessage('ORDERS', { seq }));
    assert.is(stored?.string(), `order ${seq - 1}`);
  }
  // The durable consumer reads everything in order through its own (possibly new) leader.
  assert.equal(
    await readAll(js, 'ORDERS', 'audit', 40),
    Array.from({ length: 40 }, (_, i) => `order ${i}`),
  );
  assert.is((await retry('kv get', () => kv.get('colour')))?.string(), 'blue');
  await retry('kv put', () => kv.put('colour', 'green'));
  assert.is((await retry('kv get', () => kv.get('colour')))?.string(), 'green');

  const restartedAt = Date.now();
  await context.cluster.restart(leader);
  // Not waitHealthy(leader) here: see the consumer note at the top of this file.
  await eventually(`${leader} current again in ORDERS`, async () => {
    const peer = (await jsm.streams.info('ORDERS')).cluster?.replicas?.find((p) => p.name === leader);
    return peer?.current === true && !peer.offline;
  });
  await eventually(
    `${leader}'s own copy has the 40 messages`,
    async () => (await localState(context, leader, 'ORDERS'))?.messages === 40,
  );
  // Two puts of one key (history 1): one message, last sequence 2.
  await eventually(
    `${leader}'s copy of the bucket caught up`,
    async () => (await localState(context, leader, 'KV_settings'))?.last_seq === 2,
  );
  const rejoinedMs = Date.now() - restartedAt;
  // With all three back, the stream still takes writes and the consumer reads them.
  await publish(40);
  assert.equal(await readAll(js, 'ORDERS', 'audit', 1), ['order 40']);
  console.log(
    `  (leader ${leader} killed: ${next} elected after ${electedMs} ms; ${leader} current again after ${rejoinedMs} ms)`,
  );
});

cluster('an R1 stream, its KV bucket and consumers are raised to R3 in place (nats-server 2.9.10)', async (context) => {
  const { jsm, js, kvm } = context;
  await jsm.streams.add({ name: 'LEGACY', subjects: ['legacy.>'], num_replicas: 1 });
  const ack = { ack_policy: AckPolicy.Explicit, ack_wait: nanos(2000) };
  await jsm.consumers.add('LEGACY', { durable_name: 'inherits', ...ack });
  await jsm.consumers.add('LEGACY', { durable_name: 'pinned', ...ack, num_replicas: 1 });
  const oldKv = await kvm.create('legacy', { replicas: 1, allow_direct: false });
  await oldKv.put('k', 'v');
  for (let i = 0; i < 6; i++) await js.publish('legacy.new', `m${i}`);
  for (const name of ['inherits', 'pinned']) assert.equal(await readAll(js, 'LEGACY', name, 3), ['m0', 'm1', 'm2']);
  assert.is((await jsm.streams.info('LEGACY')).cluster?.replicas, undefined, 'R1: no other replicas');

  const updated = await jsm.streams.update('LEGACY', { ...(await jsm.streams.info('LEGACY')).config, num_replicas: 3 });
  assert.is(updated.config.num_replicas, 3);
  await jsm.streams.update('KV_legacy', { ...(await jsm.streams.info('KV_legacy')).config, num_replicas: 3 });
  await eventually('LEGACY has two current followers', async () => {
    const replicas = (await jsm.streams.info('LEGACY')).cluster?.replicas ?? [];
    return replicas.length === 2 && replicas.every((peer) => peer.current);
  });
  await eventually('KV_legacy has two current followers', async () => {
    const replicas = (await jsm.streams.info('KV_legacy')).cluster?.replicas ?? [];
    return replicas.length === 2 && replicas.every((peer) => peer.current);
  });
  assert.is((await jsm.streams.info('LEGACY')).state.messages, 6);
  assert.is((await oldKv.get('k'))?.string(), 'v');

  // Created without num_replicas (0, "inherit"): follows the stream.
  await eventually(
    'the inheriting consumer follows to R3',
    async () => (await jsm.consumers.info('LEGACY', 'inherits')).cluster?.replicas?.length === 2,
  );
  // Created with num_replicas 1: stays R1 (after a transient remap, sometimes onto another node).
  await eventually('the pinned consumer settles as R1', async () => {
    const info = await jsm.consumers.info('LEGACY', 'pinned');
    return info.config.num_replicas === 1 && (info.cluster?.replicas?.length ?? 0) === 0;
  });
  await sleep(1000);
  const pinned = await jsm.consumers.info('LEGACY', 'pinned');
  assert.is(pinned.config.num_replicas, 1);
  assert.is(pinned.cluster?.replicas?.length ?? 0, 0, 'an explicit R1 consumer does not follow its stream');
  assert.is(pinned.ack_floor.stream_seq, 3, 'its state is kept');

  // Its own update raises it, state kept.
  await jsm.consumers.update('LEGACY', 'pinned', { ...pinned.config, num_replicas: 3 });
  await eventually('the pinned consumer is R3 after its own update', async () => {
    const info = await jsm.consumers.info('LEGACY', 'pinned');
    return info.config.num_replicas === 3 && info.cluster?.replicas?.length === 2;
  });
  assert.is((await jsm.consumers.info('LEGACY', 'pinned')).ack_floor.stream_seq, 3);
  assert.equal(await readAll(js, 'LEGACY', 'pinned', 3), ['m3', 'm4', 'm5'], 'it goes on after its ack floor');
});

cluster.run();
