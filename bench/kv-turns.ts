// How many compare-and-set writes a second one KV bucket takes, on one node (per-key revision
// checks) and on a 3-node cluster with 3 replicas, where every write expects the whole stream's last
// sequence (src/jetstream/kv-json.ts: nats-server 2.9 does not enforce a key's revision against
// writes still being replicated) and so writers to one bucket take turns. Each writer updates keys
// of its own, as the ingresses and workers of many workspaces do. Part of `make bench ARGS=nats`:
// the bucket a render writes most (KV_usage) sets the cluster's first limit (docs/operations.md, "Sizing").

import { connect } from '@nats-io/transport-node';
import { loadConfig } from '../src/config.ts';
import { updateJson } from '../src/jetstream/kv-json.ts';
import { ensureTopology } from '../src/jetstream/topology.ts';
import { startNatsCluster } from '../test/helpers/cluster.ts';
import { startNats } from '../test/helpers/stack.ts';

/** One measurement: writers at once, and the writes a second they made together. */
export interface KvTurns {
  nodes: 1 | 3;
  writers: number;
  writesPerSecond: number;
}

/** Counts `writers` concurrent read-modify-writes of the usage bucket for `seconds`, over one connection. */
async function measure(url: string, replicas: 1 | 3, writers: number, seconds: number): Promise<number> {
  const nc = await connect({ servers: url.split(',') });
  try {
    const topology = await ensureTopology(nc, loadConfig({ NATS_URL: url, JETSTREAM_REPLICAS: String(replicas) }));
    let writes = 0;
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        while (performance.now() < until) {
          await updateJson<number>(topology.usage, `bench.${writer}`, (current) => (current ?? 0) + 1);
          writes++;
        }
      }),
    );
    return writes / seconds;
  } finally {
    await nc.close();
  }
}

/** The writes a second of 1, 8 and 32 writers, on one node and on three. */
export async function measureKvTurns(seconds = 4): Promise<KvTurns[]> {
  const results: KvTurns[] = [];
  const single = await startNats();
  try {
    for (const writers of [1, 8, 32])
      results.push({ nodes: 1, writers, writesPerSecond: await measure(single.url, 1, writers, seconds) });
  } finally {
    await single.stop();
  }
  const cluster = await startNatsCluster();
  try {
    for (const writers of [1, 8, 32])
      results.push({ nodes: 3, writers, writesPerSecond: await measure(cluster.url, 3, writers, seconds) });
  } finally {
    await cluster.stop();
  }
  return results;
}

export function kvTurnsLines(results: KvTurns[]): string[] {
  return [
    'KV compare-and-set writes/s, one bucket, distinct keys   writers: ' +
      [...new Set(results.map((r) => r.writers))].join(' / '),
    ...[1, 3].map(
      (nodes) =>
        `  ${nodes === 1 ? 'one node, 1 replica' : '3 nodes, 3 replicas (stream-wide check)'}: ` +
        results
          .filter((r) => r.nodes === nodes)
          .map((r) => r.writesPerSecond.toFixed(0))
          .join(' / '),
    ),
  ];
}
