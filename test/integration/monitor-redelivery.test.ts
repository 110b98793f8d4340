// A render worker (which also runs the monitors' scheduler) killed mid-schedule: no tick lost, none rendered twice.
import type { ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RenderRecord, RenderRequest } from '../../src/domain/render.ts';
import { names } from '../../src/jetstream/topology.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { monitorPages } from '../fixtures/monitor-pages.ts';
import {
  call,
  createWorkspace,
  spawnService,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { freePort } from '../helpers/stack.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const redelivery = suite('a monitor through the loss of its render worker');
let stack: TestStack;
let site: FixtureSite;
let ingress: TestService;
const workers: ChildProcess[] = [];
// A short ack wait so that what the dead worker held comes back within the test's patience.
const settings = { RENDER_ACK_WAIT: '3', MONITOR_MIN_INTERVAL: '2' };

redelivery.before(async () => {
  stack = await startStack();
  site = await startFixtureSite(monitorPages().routes);
  ingress = await startService(stack, { ROLES: 'ingress,delivery', ...settings });
});
redelivery.after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await ingress?.close();
  await site?.close();
  await stack?.stop();
});

/** Every render request of the workspace in the render stream, and the records of their renders. */
async function monitorRenders(
  workspaceId: string,
): Promise<{ requests: RenderRequest[]; records: Map<string, RenderRecord> }> {
  const nc = await connect({ servers: stack.nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(names.renderStream);
    const requests: RenderRequest[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(names.renderStream, { seq }).catch(() => null);
      if (message?.subject === names.renderSubject(workspaceId)) requests.push(message.json<RenderRequest>());
    }
    const records = new Map<string, RenderRecord>();
    const kv = await jsm.streams.info(`KV_${names.rendersBucket}`);
    for (let seq = kv.state.first_seq; seq <= kv.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(`KV_${names.rendersBucket}`, { seq }).catch(() => null);
      if (!message || message.data.length === 0) continue;
      const record = message.json<RenderRecord>();
      if (record.workspace_id === workspaceId) records.set(record.render_id, record);
    }
    return { requests, records };
  } finally {
    await nc.close();
  }
}

redelivery(
  'SIGKILL while a tick renders: the tick completes once, the schedule goes on, each tick charged once',
  async () => {
    // Each worker answers its health routes on a port of its own, never the default one.
    const worker = async () => spawnService(stack, { ROLES: 'render', PORT: String(await freePort()), ...settings });
    workers.push(await worker());
    const workspace = await createWorkspace(stack, { quota: 100 });
    const auth = { 'x-access-key': workspace.access_key, 'content-type': 'application/json' };
    const hits = () => site.hits.get('/monitor/slow') ?? 0;
    const created = await call(`${ingress.base}/api/monitors`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: `${site.url}/monitor/slow?ms=1500`, interval: 3, webhook_url: `${site.url}/empty` }),
    });
    assert.is(created.status, 201, JSON.stringify(created.json));
    const monitorId = created.json!.monitor_id as string;

    // Two ticks done, then the third one's page is loading (it answers after 1.5 s): kill its worker.
    await waitFor(() => hits() >= 3, 'the third tick started', 60_000);
    workers[0].kill('SIGKILL');
    const killedAt = hits();
    workers.push(await worker());
    await waitFor(() => hits() >= killedAt + 3, 'three more ticks after the restart', 60_000);

    const paused = await call(`${ingress.base}/api/monitors/${monitorId}`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ status: 'paused' }),
    });
    assert.is(paused.status, 200);
    // What is in flight ends (the page takes 1.5 s); nothing starts after.
    await pause(3000);
    await waitFor(
      async () => {
        const { requests, records } = await monitorRenders(workspace.workspace_id);
        return requests.every((request) =>
          ['succeeded', 'failed'].includes(records.get(request.render_id)?.status ?? ''),
        );
      },
      'every tick render ended',
      60_000,
      500,
    );

    const { requests, records } = await monitorRenders(workspace.workspace_id);
    const tickTimes = requests.map((request) => request.monitor?.tick_at);
    assert.ok(tickTimes.every(Boolean), 'every render of the workspace is a monitor tick');
    assert.is(new Set(tickTimes).size, tickTimes.length, 'one render request per tick');
    const ids = [...new Set(requests.map((request) => request.render_id))];
    assert.ok(ids.length >= 5, `ticks before and after the kill (${ids.length})`);
    for (const id of ids) assert.is(records.get(id)?.status, 'succeeded', `tick render ${id} completed`);
    // The page was loaded once per tick, and once more by the worker that was killed loading it.
    assert.is(hits(), ids.length + 1, 'no tick rendered twice');
    assert.is(await usedThisMonth(stack, workspace.workspace_id), ids.length, 'each tick charged once');

    const shown = await call(`${ingress.base}/api/monitors/${monitorId}`, { headers: auth });
    assert.is(shown.json!.last_status, 'succeeded');
    assert.is(shown.json!.changes.length, 0, 'a page that did not change');
  },
);

redelivery.run();
