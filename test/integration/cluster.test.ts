// A 3-node NATS cluster with 3 replicas, the service split by role, and a node SIGKILLed mid-load,
// twice: every accepted render ends once, is charged once, and announces itself once.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryIsGenuine as verifyWebhook } from '../../src/client/webhook.ts';
import { shutterbus } from '../helpers/cli.ts';
import { spawnRoles, startClusterStack, type NatsCluster, type NodeName } from '../helpers/cluster.ts';
import { call, createWorkspace, type TestStack } from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';

const cluster = suite('a 3-node NATS cluster loses a node mid-load and nothing else');
let nats: NatsCluster;
let stack: TestStack;
let base: string;
const processes: ChildProcess[] = [];
let receiver: http.Server;
let hookUrl: string;
let workspace: Workspace;
/** Webhook deliveries received, by delivery id; each verified against the workspace's secret. */
const deliveries = new Map<string, { renderId: string; verified: boolean; times: number }>();

cluster.before(async () => {
  ({ nats, stack } = await startClusterStack('cluster', {
    RENDER_ACK_WAIT: '10',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s,8s,16s',
  }));
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const event = JSON.parse(raw.toString('utf8'));
      const seen = deliveries.get(event.id);
      const verified = verifyWebhook(workspace.secret_key, req.headers, raw);
      deliveries.set(event.id, {
        renderId: event.data.render_id,
        verified: verified && (seen?.verified ?? true),
        times: (seen?.times ?? 0) + 1,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  // One ingress, two render workers, one delivery worker: each its own process on the cluster.
  base = await spawnRoles(stack, processes, 'ingress', ['render', 'render', 'delivery'], 2);
  workspace = await createWorkspace(stack, { quota: 10_000 });
});

cluster.after(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

cluster('every stream and bucket has 3 replicas', async () => {
  for (const stream of ['RENDERS', 'DELIVERIES', 'KV_renders', 'KV_usage', 'KV_deliveries', 'KV_render_cache']) {
    const leader = await nats.leaderOf(stream);
    assert.ok(['n1', 'n2', 'n3'].includes(leader), `${stream} has a leader`);
  }
  const answer = await call(`${base}/readyz`);
  assert.is(answer.status, 200, JSON.stringify(answer.json));
});

cluster(
  'async renders with webhooks survive SIGKILL of the render stream leader, then of a bucket leader',
  async () => {
    const total = 48;
    const accepted: string[] = [];
    const statuses = new Map<number, number>();
    let firstError = 0;
    let lastError = 0;
    const count = (status: number) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status !== 202 && status !== 429) {
        firstError ||= Date.now();
        lastError = Date.now();
      }
    };

    // A client as a real one behaves: a 503 or 429 is tried again after a pause.
    const send = async (i: number) => {
      const query = new URLSearchParams({
        url: `${stack.site.url}/?n=${i}`,
        async: 'true',
        webhook_url: hookUrl,
        external_identifier: `c-${i}`,
      });
      for (let attempt = 0; attempt < 60; attempt++) {
        const answer = await call(`${base}/api/take?${query}`, {
          headers: { 'x-access-key': workspace.access_key },
        }).catch(() => ({ status: 0, json: undefined }));
        count(answer.status);
        if (answer.status === 202) return void accepted.push(answer.json!.render_id);
        if (answer.status !== 503 && answer.status !== 429 && answer.status !== 0) return;
        await pause(500);
      }
    };

    const faults = (async () => {
      const killAndHeal = async (stream: string, after: number) => {
        await waitFor(() => accepted.length >= after, `${after} renders accepted before the fault`, 60_000);
        const leader: NodeName = await nats.leaderOf(stream);
        await nats.kill(leader);
        await nats.waitForLeader(stream, leader);
        await pause(2000);
        await nats.restart(leader);
        await nats.waitCurrent(leader, ['RENDERS', 'DELIVERIES', 'KV_renders', 'KV_usage', 'KV_deliveries'], 60_000);
      };
      await killAndHeal('RENDERS', 12);
      await killAndHeal('KV_usage', 30);
    })();

    const sending = (async () => {
      const running: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        running.push(send(i));
        await pause(200);
      }
      await Promise.all(running);
    })();
    await Promise.all([faults, sending]);

    const unexpected = [...statuses].filter(([status]) => ![202, 429, 503].includes(status));
    assert.equal(unexpected, [], `only 202, 429 and 503 answers: ${JSON.stringify([...statuses])}`);
    assert.is(accepted.length, total, 'every request was accepted in the end');

    // Every accepted render ends, succeeded.
    const statusOf = async (id: string) =>
      (await call(`${base}/api/renders/${id}`, { headers: { 'x-access-key': workspace.access_key } })).json?.status;
    await waitFor(
      async () => (await Promise.all(accepted.map(statusOf))).every((s) => s === 'succeeded' || s === 'failed'),
      'every render ended',
      180_000,
      1000,
    );
    const ended = await Promise.all(accepted.map(statusOf));
    assert.equal(
      ended.filter((s) => s !== 'succeeded'),
      [],
      'every render succeeded',
    );

    // Every webhook arrives, signed; a delivery may be retried, but each render has exactly one delivery id.
    await waitFor(() => deliveries.size >= total, 'every webhook delivered', 120_000, 250);
    const renderIds = new Set([...deliveries.values()].map((d) => d.renderId));
    assert.is(deliveries.size, total);
    assert.equal([...renderIds].sort(), [...accepted].sort());
    assert.ok(
      [...deliveries.values()].every((d) => d.verified),
      'every delivery verifies',
    );

    // Charged exactly once each, and no reservation left behind. A render's charge and its webhook
    // are written side by side, so a charge still riding out the lost leader may land after the
    // webhook: wait for every reservation to be settled, then count.
    const readUsage = () => shutterbus(stack, 'usage', '--workspace', workspace.workspace_id);
    // The last answer is kept for the failure's message: a CLI that never answered and a reservation
    // that was never settled are different faults.
    let lastUsage: Awaited<ReturnType<typeof readUsage>> | undefined;
    await waitFor(
      async () => (lastUsage = await readUsage()).json?.in_flight === 0,
      () =>
        `every reservation settled (last: exit ${lastUsage?.code}, ${JSON.stringify(lastUsage?.json) ?? lastUsage?.stderr})`,
      60_000,
      500,
    );
    const usage = await readUsage();
    assert.is(usage.code, 0, usage.stderr);
    assert.is(usage.json.used, total, 'each render charged once');
    assert.is(usage.json.in_flight, 0, 'no reservation left');

    const seconds = lastError ? ((lastError - firstError) / 1000).toFixed(1) : '0';
    console.log(
      `cluster figures: ${total} accepted, answers ${JSON.stringify(Object.fromEntries(statuses))}, errors over ${seconds} s, redelivered webhooks ${[...deliveries.values()].filter((d) => d.times > 1).length}`,
    );
  },
);

cluster.run();
