// Streams, consumers and buckets on a real 3-node cluster: created with one replica, raised to three in
// place by a later start, never lowered by a start without the setting, and opened with a node down.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { untilJetStreamAnswers } from '../../src/jetstream/connection.ts';
import { allStreams, ensureTopology as ensureOnce, names } from '../../src/jetstream/topology.ts';
import { createLogger } from '../../src/log.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/cluster.ts';
import { waitFor } from '../helpers/wait.ts';

const topology = suite('JetStream topology on a cluster');
const log = createLogger({ logLevel: 'silent' });
// As a process starts: while leaders are elected (after a raise, or with a node down) it waits and tries again.
const ensureTopology = (...args: Parameters<typeof ensureOnce>) => untilJetStreamAnswers(log, 'topology', () => ensureOnce(...args));
let cluster: NatsCluster;
let nc: NatsConnection;
const configWith = (replicas?: string) => loadConfig({ NATS_URL: cluster.url, ...(replicas ? { JETSTREAM_REPLICAS: replicas } : {}) });
const consumers = [
  [names.renderStream, names.renderConsumer],
  [names.renderGiveUpStream, names.renderGiveUpConsumer],
  [names.deliveryStream, names.deliveryConsumer],
] as const;

topology.before(async () => {
  cluster = await startNatsCluster();
  nc = await connect({ servers: cluster.urls });
});
topology.after(async () => {
  await nc?.close();
  await cluster?.stop();
});

const replicasOf = async (jsm: Awaited<ReturnType<typeof ensureOnce>>['jsm']) => ({
  streams: await Promise.all(allStreams.map(async (stream) => (await jsm.streams.info(stream)).config.num_replicas)),
  consumers: await Promise.all(consumers.map(async ([stream, consumer]) => (await jsm.consumers.info(stream, consumer)).config.num_replicas)),
});

topology('a first start with one replica, a later one with three raises every stream, bucket and consumer in place', async () => {
  const { jsm } = await ensureTopology(nc, configWith());
  const before = await replicasOf(jsm);
  assert.ok(before.streams.every((n) => n === 1), `streams ${before.streams}`);

  const raised = await ensureTopology(nc, configWith('3'));
  const after = await replicasOf(raised.jsm);
  assert.ok(after.streams.every((n) => n === 3), `streams ${after.streams}`);
  assert.ok(after.consumers.every((n) => n === 3), `consumers ${after.consumers}`);
  // The peers really follow: each stream reports two replicas beside its leader.
  await waitFor(async () => ((await raised.jsm.streams.info(names.renderStream)).cluster?.replicas?.length ?? 0) === 2, 'RENDERS has two followers');
  await waitFor(async () => ((await raised.jsm.streams.info('KV_usage')).cluster?.replicas?.length ?? 0) === 2, 'KV_usage has two followers');

  // The CLI run without JETSTREAM_REPLICAS must not shrink anything.
  await ensureTopology(nc, configWith());
  const kept = await replicasOf(raised.jsm);
  assert.ok(kept.streams.every((n) => n === 3), `streams after a start with the default: ${kept.streams}`);
});

topology('a start with one node of three down opens everything', async () => {
  await cluster.kill('n3');
  try {
    const opened = await ensureTopology(nc, configWith('3'));
    const info = await opened.jsm.streams.info(names.renderStream);
    assert.is(info.config.num_replicas, 3);
  } finally {
    await cluster.restart('n3');
  }
});

topology.run();
