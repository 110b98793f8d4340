// Compare-and-set on KV buckets with 3 replicas (a real 3-node cluster): concurrent writers to one key
// never lose an update, exactly one of concurrent creators wins, and a stale delete changes nothing.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { createJson, deleteJson, readJson, updateJson } from '../../src/jetstream/kv-json.ts';
import { ensureTopology, type Topology } from '../../src/jetstream/topology.ts';
import { RenderCache } from '../../src/renders/cache.ts';
import { monthOf, QuotaLedger } from '../../src/workspaces/usage.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/cluster.ts';

const replicated = suite('compare-and-set on replicated buckets');
let cluster: NatsCluster;
let connections: NatsConnection[] = [];
/** The same buckets opened through each node, as three processes would. */
let topologies: Topology[] = [];

replicated.before(async () => {
  cluster = await startNatsCluster();
  const config = loadConfig({ NATS_URL: cluster.url, JETSTREAM_REPLICAS: '3' });
  connections = await Promise.all(cluster.urls.map((url) => connect({ servers: url })));
  topologies = [];
  for (const nc of connections) topologies.push(await ensureTopology(nc, config));
});
replicated.after(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await cluster?.stop();
});

replicated('buckets are created with 3 replicas and read from the leader', async () => {
  const { config } = await topologies[0].jsm.streams.info('KV_usage');
  assert.is(config.num_replicas, 3);
  assert.is(config.allow_direct, false);
});

replicated('60 concurrent increments of one key through three nodes all land', async () => {
  const writers = Array.from({ length: 60 }, (_, i) =>
    updateJson<{ n: number }>(topologies[i % 3].recentRenders, 'counter', (current) => ({ n: (current?.n ?? 0) + 1 })),
  );
  await Promise.all(writers);
  assert.is((await readJson<{ n: number }>(topologies[0].recentRenders, 'counter')).value?.n, 60);
});

replicated('of 20 concurrent creators exactly one wins; a delete of a changed entry does nothing', async () => {
  const created = await Promise.all(
    Array.from({ length: 20 }, (_, i) => createJson(topologies[i % 3].dashboard, 'only-one', { writer: i })),
  );
  assert.is(created.filter(Boolean).length, 1);
  const winner = created.indexOf(true);
  assert.equal((await readJson(topologies[1].dashboard, 'only-one')).value, { writer: winner });
  assert.is(
    await deleteJson<{ writer: number }>(topologies[2].dashboard, 'only-one', (entry) => entry.writer !== winner),
    false,
  );
  assert.is(
    await deleteJson<{ writer: number }>(topologies[2].dashboard, 'only-one', (entry) => entry.writer === winner),
    true,
  );
  assert.is((await readJson(topologies[0].dashboard, 'only-one')).value, null);
});

replicated('30 concurrent first views claim a cache entry once', async () => {
  const caches = topologies.map((topology) => new RenderCache(topology.renderCache));
  const claims = await Promise.all(
    Array.from({ length: 30 }, (_, i) => caches[i % 3].claim('same-url', `render-${i}`, 60)),
  );
  assert.is(claims.filter((claim) => claim.kind === 'render').length, 1);
  assert.ok(claims.every((claim) => claim.kind === 'render' || claim.kind === 'follow'));
});

replicated('40 parallel admissions against a quota of 5 reserve exactly 5, each settled once', async () => {
  const ledgers = topologies.map((topology) => new QuotaLedger(topology.usage));
  const now = new Date();
  const allowance = { workspaceId: 'ws_quota', quota: 5, concurrency: 100 };
  const admitted = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      ledgers[i % 3].reserve(allowance, `r${i}`, now, Date.now() + 60_000).then(
        () => `r${i}`,
        () => null,
      ),
    ),
  );
  const ids = admitted.filter((id): id is string => id !== null);
  assert.is(ids.length, 5);
  // Each committed twice, from two nodes at once (a redelivery racing the first): counted once.
  await Promise.all(
    ids.flatMap((id) => [
      ledgers[0].commit(allowance.workspaceId, id, now.toISOString()),
      ledgers[1].commit(allowance.workspaceId, id, now.toISOString()),
    ]),
  );
  const month = await ledgers[2].month(allowance.workspaceId, monthOf(now));
  assert.is(month.used, 5);
  assert.is(month.inFlight, 0);
});

replicated.run();
