// Streams, consumers and buckets on a real 3-node cluster: created with one replica, raised to three in
// place by a later start (each raised consumer's leadership handed over, even by a later start), never
// lowered by a start without the setting, and opened with a node down (by a start and by the CLI).
import type { NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { connectNats, untilJetStreamAnswers } from '../../src/jetstream/connection.ts';
import { HAND_OVER_PENDING } from '../../src/jetstream/hand-over.ts';
import { allStreams, ensureTopology as ensureOnce, names } from '../../src/jetstream/topology.ts';
import { shutterbus } from '../helpers/cli.ts';
import { nodeNames, startNatsCluster, type NatsCluster, type NodeName } from '../helpers/cluster.ts';
import { waitFor } from '../helpers/wait.ts';

const topology = suite('JetStream topology on a cluster');
// The start's warnings are kept, to be shown when a start does not finish.
const warnings: string[] = [];
const log = pino({ level: 'warn', base: null }, { write: (line: string) => void warnings.push(line.trim()) });
// As a process starts: while leaders are elected (after a raise, or with a node down) it waits and tries again.
const ensureTopology = (...args: Parameters<typeof ensureOnce>) =>
  untilJetStreamAnswers(log, 'topology', () => ensureOnce(...args));
let cluster: NatsCluster;
let nc: NatsConnection;
const configWith = (replicas?: string) =>
  loadConfig({ NATS_URL: cluster.url, ...(replicas ? { JETSTREAM_REPLICAS: replicas } : {}) });
const consumers = [
  [names.renderStream, names.renderConsumer],
  [names.renderGiveUpStream, names.renderGiveUpConsumer],
  [names.deliveryStream, names.deliveryConsumer],
  [names.monitorTickStream, names.monitorTickConsumer],
] as const;

topology.before(async () => {
  cluster = await startNatsCluster();
  // As a process connects: to any node, reconnecting to another when its node dies.
  nc = await connectNats({ natsServers: cluster.urls }, 'topology-test');
});
topology.after(async () => {
  await nc?.close();
  await cluster?.stop();
});

const replicasOf = async (jsm: Awaited<ReturnType<typeof ensureOnce>>['jsm']) => ({
  streams: await Promise.all(allStreams.map(async (stream) => (await jsm.streams.info(stream)).config.num_replicas)),
  consumers: await Promise.all(
    consumers.map(async ([stream, consumer]) => (await jsm.consumers.info(stream, consumer)).config.num_replicas),
  ),
});

topology(
  'a first start with one replica, a later one with three raises every stream, bucket and consumer in place',
  async () => {
    const { jsm } = await ensureTopology(nc, configWith());
    const before = await replicasOf(jsm);
    assert.ok(
      before.streams.every((n) => n === 1),
      `streams ${before.streams}`,
    );

    const raised = await ensureTopology(nc, configWith('3'));
    // Right after a raise a stream can answer "not found" for a moment while its peers move (2.9.10).
    let after: Awaited<ReturnType<typeof replicasOf>> = { streams: [0], consumers: [0] };
    await waitFor(
      async () => {
        after = await replicasOf(raised.jsm).catch(() => after);
        return after.streams.every((n) => n === 3) && after.consumers.every((n) => n === 3);
      },
      'every stream and consumer at 3 replicas',
      20_000,
      250,
    );
    assert.ok(
      after.streams.every((n) => n === 3),
      `streams ${after.streams}`,
    );
    assert.ok(
      after.consumers.every((n) => n === 3),
      `consumers ${after.consumers}`,
    );
    // The peers really follow: each stream reports two replicas beside its leader.
    await waitFor(
      async () => ((await raised.jsm.streams.info(names.renderStream)).cluster?.replicas?.length ?? 0) === 2,
      'RENDERS has two followers',
    );
    await waitFor(
      async () => ((await raised.jsm.streams.info('KV_usage')).cluster?.replicas?.length ?? 0) === 2,
      'KV_usage has two followers',
    );

    // The CLI run without JETSTREAM_REPLICAS must not shrink anything.
    await ensureTopology(nc, configWith());
    const kept = await replicasOf(raised.jsm);
    assert.ok(
      kept.streams.every((n) => n === 3),
      `streams after a start with the default: ${kept.streams}`,
    );
  },
);

topology('a start with one node of three down opens everything', async () => {
  // Only a healthy cluster can lose a node: every stream and consumer has two current followers first.
  const { jsm } = await ensureTopology(nc, configWith('3'));
  const current = (replicas?: { current: boolean }[]) =>
    replicas?.length === 2 && replicas.every((peer) => peer.current);
  await waitFor(
    async () => {
      const streams = await Promise.all(
        allStreams.map(async (stream) => current((await jsm.streams.info(stream)).cluster?.replicas)),
      );
      const durable = await Promise.all(
        consumers.map(async ([stream, consumer]) =>
          current((await jsm.consumers.info(stream, consumer)).cluster?.replicas),
        ),
      );
      return [...streams, ...durable].every(Boolean);
    },
    'every replica current',
    60_000,
    500,
  );
  // The node to lose is the render consumer's leader: the consumer a raise in place left unable to
  // elect another (nats-server 2.9.10) until its leadership was handed over (hand-over.ts).
  const victim = (await jsm.consumers.info(names.renderStream, names.renderConsumer)).cluster?.leader as NodeName;
  const survivor = nodeNames.find((name) => name !== victim)!;
  await cluster.kill(victim);
  // An operator's CLI run at the same moment waits out the elections instead of failing.
  const cliRun = shutterbus({ env: { NATS_URL: cluster.url, JETSTREAM_REPLICAS: '3' } }, 'webhooks', 'dead');
  // A new process, as the issue asks: it connects to whichever node answers and opens everything.
  const fresh = await connectNats({ natsServers: cluster.urls }, 'topology-test-start');
  try {
    let timer: NodeJS.Timeout | undefined;
    const opened = await Promise.race([
      ensureTopology(fresh, configWith('3')),
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            async () =>
              reject(
                new Error(
                  `the start did not finish within 120 s with ${victim} down\n${warnings.join('\n')}\n${await leadersSeenBy(survivor)}`,
                ),
              ),
            120_000,
          )),
      ),
    ]).finally(() => clearTimeout(timer));
    const info = await opened.jsm.streams.info(names.renderStream);
    assert.is(info.config.num_replicas, 3);
    const cli = await cliRun;
    assert.is(cli.code, 0, `the CLI with ${victim} down: ${cli.stderr}`);
    assert.equal(cli.json.deliveries, []);
  } finally {
    await fresh.close();
    await cluster.restart(victim);
  }
});

topology('a start after one cut off between a raise and its hand-over hands the leadership over', async () => {
  const { jsm } = await ensureTopology(nc, configWith('3'));
  const [stream, consumer] = consumers[0];
  // What a start leaves when its attempt is cut off right after raising the consumer.
  await jsm.consumers.update(stream, consumer, { description: HAND_OVER_PENDING });
  await waitFor(
    async () =>
      (await jsm.consumers.info(stream, consumer).catch(() => null))?.cluster?.replicas?.every(
        (peer) => peer.current,
      ) === true,
    'followers current',
  );
  const leader = (await jsm.consumers.info(stream, consumer)).cluster?.leader;

  await ensureTopology(nc, configWith());
  const after = await jsm.consumers.info(stream, consumer);
  assert.ok(after.cluster?.leader && after.cluster.leader !== leader, `leader ${leader} → ${after.cluster?.leader}`);
  assert.is(after.config.description, undefined);
});

/** The leader of every stream and consumer as `node` sees it, for a failure's message. */
async function leadersSeenBy(node: NodeName): Promise<string> {
  const jsz = await (await fetch(`${cluster.monitorOf(node)}/jsz?accounts=true&streams=true&consumers=true`)).json();
  const streams =
    jsz.account_details?.flatMap((account: { stream_detail?: object[] }) => account.stream_detail ?? []) ?? [];
  const lines = streams.flatMap(
    (stream: {
      name: string;
      cluster?: { leader?: string };
      consumer_detail?: { name: string; cluster?: { leader?: string } }[];
    }) => [
      `${stream.name}: leader ${stream.cluster?.leader ?? 'none'}`,
      ...(stream.consumer_detail ?? []).map(
        (consumer) => `  ${consumer.name}: leader ${consumer.cluster?.leader ?? 'none'}`,
      ),
    ],
  );
  return `as ${node} sees it: meta leader ${jsz.meta_cluster?.leader ?? 'none'}\n${lines.join('\n')}`;
}

topology.run();
