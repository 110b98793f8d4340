// A monitor on a 3-node NATS cluster with 3 replicas keeps ticking through the loss of the node
// that leads its tick stream: no tick lost, none run twice, its change announced once.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryIsGenuine as verifyWebhook } from '../../src/client/webhook.ts';
import type { RenderRecord, RenderRequest } from '../../src/domain/render.ts';
import { names } from '../../src/jetstream/topology.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { monitorPages } from '../fixtures/monitor-pages.ts';
import { shutterbus } from '../helpers/cli.ts';
import { spawnRoles, startClusterStack, type NatsCluster, type NodeName } from '../helpers/cluster.ts';
import { call, createWorkspace, type TestStack } from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const cluster = suite('a monitor on a 3-node cluster through the loss of a node');
const pages = monitorPages();
let nats: NatsCluster;
let stack: TestStack;
let base: string;
let workspace: Workspace;
let receiver: http.Server;
let hookUrl: string;
const processes: ChildProcess[] = [];
/** monitor.changed deliveries received, by delivery id, each verified. */
const changes = new Map<string, { times: number; verified: boolean }>();

cluster.before(async () => {
  // The ack wait outlasts a leader election (4–9 s on nats-server 2.9): a shorter one lets the new
  // leader of the render queue deliver again a tick render still running (docs/operations.md).
  ({ nats, stack } = await startClusterStack(
    'monitor-cluster',
    { RENDER_ACK_WAIT: '15', MONITOR_MIN_INTERVAL: '1', WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s,8s' },
    pages.routes,
  ));
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const event = JSON.parse(raw.toString('utf8'));
      const seen = changes.get(event.id);
      changes.set(event.id, {
        times: (seen?.times ?? 0) + 1,
        verified: verifyWebhook(workspace.secret_key, req.headers, raw) && (seen?.verified ?? true),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  // The ingress and the delivery role in one process, two render workers (each runs the scheduler).
  base = await spawnRoles(stack, processes, 'ingress,delivery', ['render', 'render'], 1);
  workspace = await createWorkspace(stack, { quota: 1000 });
});

cluster.after(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

/** The workspace's render requests in the render stream, and the records of their renders. */
async function monitorRenders(): Promise<{ requests: RenderRequest[]; records: Map<string, RenderRecord> }> {
  const nc = await connect({ servers: nats.urls });
  try {
    const jsm = await jetstreamManager(nc);
    const read = async (stream: string, keep: (subject: string, data: Uint8Array) => void) => {
      const { state } = await jsm.streams.info(stream);
      for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
        const message = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
        if (message && message.data.length > 0) keep(message.subject, message.data);
      }
    };
    const requests: RenderRequest[] = [];
    await read(names.renderStream, (subject, data) => {
      if (subject === names.renderSubject(workspace.workspace_id))
        requests.push(JSON.parse(new TextDecoder().decode(data)));
    });
    const records = new Map<string, RenderRecord>();
    await read(`KV_${names.rendersBucket}`, (_subject, data) => {
      const record = JSON.parse(new TextDecoder().decode(data)) as RenderRecord;
      if (record.workspace_id === workspace.workspace_id) records.set(record.render_id, record);
    });
    return { requests, records };
  } finally {
    await nc.close();
  }
}

cluster('the tick stream and the monitors bucket have 3 replicas', async () => {
  for (const stream of [names.monitorTickStream, `KV_${names.monitorsBucket}`]) {
    assert.ok(['n1', 'n2', 'n3'].includes(await nats.leaderOf(stream)), `${stream} has a leader`);
  }
});

cluster(
  "SIGKILL of the tick stream's leader: the monitor goes on ticking, each tick rendered and charged once, its change announced once",
  async () => {
    const auth = { 'x-access-key': workspace.access_key, 'content-type': 'application/json' };
    const created = await call(`${base}/api/monitors`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: `${stack.site.url}/monitor/page?key=cluster`, interval: 2, webhook_url: hookUrl }),
    });
    assert.is(created.status, 201, JSON.stringify(created.json));
    const ticks = () => stack.site.hits.get('/monitor/page') ?? 0;
    await waitFor(() => ticks() >= 2, 'two ticks before the fault', 60_000);

    const leader: NodeName = await nats.leaderOf(names.monitorTickStream);
    await nats.kill(leader);
    await nats.waitForLeader(names.monitorTickStream, leader);
    const atLoss = ticks();
    await waitFor(() => ticks() >= atLoss + 3, 'three ticks with a node down', 120_000, 250);
    pages.setVersion('cluster', 1);
    await waitFor(() => changes.size >= 1, 'the change announced with a node down', 60_000, 250);
    await nats.restart(leader);
    await nats.waitCurrent(leader, [names.monitorTickStream, `KV_${names.monitorsBucket}`, names.renderStream], 60_000);
    const healed = ticks();
    await waitFor(() => ticks() >= healed + 2, 'two ticks after the node came back', 60_000, 250);

    const paused = await call(`${base}/api/monitors/${created.json!.monitor_id}`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ status: 'paused' }),
    });
    assert.is(paused.status, 200, JSON.stringify(paused.json));
    // A tick handled as the pause landed may still start a render; none starts after that.
    await pause(3000);
    await waitFor(
      async () => {
        const { requests, records } = await monitorRenders();
        return requests.every((request) =>
          ['succeeded', 'failed'].includes(records.get(request.render_id)?.status ?? ''),
        );
      },
      'every tick render ended',
      60_000,
      500,
    );

    const { requests, records } = await monitorRenders();
    const tickTimes = requests.map((request) => request.monitor?.tick_at);
    assert.is(new Set(tickTimes).size, tickTimes.length, 'one render request per tick');
    const ids = [...new Set(requests.map((request) => request.render_id))];
    for (const id of ids) assert.is(records.get(id)?.status, 'succeeded', `tick render ${id}`);
    assert.is(ticks(), ids.length, 'each tick rendered once');
    const usage = await shutterbus(stack, 'usage', '--workspace', workspace.workspace_id);
    assert.is(usage.json.used, ids.length, 'each tick charged once');
    assert.is(usage.json.in_flight, 0);

    assert.is(changes.size, 1, 'one monitor.changed');
    assert.equal(
      [...changes.values()].map((c) => c.verified),
      [true],
    );
    console.log(
      `monitor cluster figures: ${ids.length} ticks, deliveries of the change ${[...changes.values()][0].times}`,
    );
  },
);

cluster.run();
