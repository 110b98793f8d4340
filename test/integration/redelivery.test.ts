import type { ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { imageSize } from 'image-size';
import { names } from '../../src/jetstream/topology.ts';
import {
  call,
  createWorkspace,
  usedThisMonth,
  spawnService,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const redelivery = suite('a render worker killed mid-render loses nothing');
let stack: TestStack;
let ingress: TestService;
const workers: ChildProcess[] = [];
// A short ack wait so the redelivery comes within the test's patience.
const ackWait = { RENDER_ACK_WAIT: '3' };

redelivery.before(async () => {
  stack = await startStack();
  ingress = await startService(stack, { ROLES: 'ingress', ...ackWait });
});
redelivery.after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await ingress?.close();
  await stack?.stop();
});

/** How many max-deliveries advisories of the render consumer were ever stored, waiting for a worker. */
const giveUpsStored = async (): Promise<number> => {
  const nc = await connect({ servers: stack.nats.url });
  try {
    return (await (await jetstreamManager(nc)).streams.info(names.renderGiveUpStream)).state.last_seq;
  } finally {
    await nc.close();
  }
};

redelivery('SIGKILL during a render: redelivered after restart, completed once', async () => {
  workers.push(await spawnService(stack, { ROLES: 'render', ...ackWait }));
  const url = `${stack.site.url}/slow?ms=2500`;
  const workspace = await createWorkspace(stack, { quota: 5 });
  const auth = { headers: { 'x-access-key': workspace.access_key } };
  const pending = call(`${ingress.base}/api/take?url=${encodeURIComponent(url)}&response_type=json`, auth);
  await waitFor(() => (stack.site.hits.get('/slow') ?? 0) >= 1, 'the render started', 20_000);
  workers[0].kill('SIGKILL');
  workers.push(await spawnService(stack, { ROLES: 'render', ...ackWait }));

  const answer = await pending;
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.is(answer.json!.is_successful, true);
  const file = await call(answer.json!.file_url);
  assert.equal([imageSize(file.bytes).width, imageSize(file.bytes).height], [1280, 720]);
  assert.is(stack.site.hits.get('/slow'), 2, 'rendered once by the killed worker and once after restart');

  const status = await call(`${ingress.base}/api/renders/${answer.json!.render_id}`, auth);
  assert.is(status.json!.status, 'succeeded');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1, 'charged once');
});

redelivery('a request whose last delivery dies with its worker ends as a failed render, uncharged', async () => {
  for (const worker of workers.splice(0)) worker.kill('SIGKILL');
  // One delivery only: the consumer is reconfigured by whoever starts with the new setting.
  const strict = { RENDER_ACK_WAIT: '8', RENDER_MAX_DELIVER: '1' };
  const ingressOnce = await startService(stack, { ROLES: 'ingress', ...strict });
  try {
    workers.push(await spawnService(stack, { ROLES: 'render', RENDER_CONCURRENCY: '1', ...strict }));
    const workspace = await createWorkspace(stack, { quota: 5 });
    const auth = { headers: { 'x-access-key': workspace.access_key } };
    const before = stack.site.hits.get('/slow') ?? 0;
    const giveUpsBefore = await giveUpsStored();
    const pending = call(
      `${ingressOnce.base}/api/take?url=${encodeURIComponent(`${stack.site.url}/slow?ms=25000`)}`,
      auth,
    );
    await waitFor(() => (stack.site.hits.get('/slow') ?? 0) > before, 'the render started', 20_000);
    workers[0].kill('SIGKILL');
    // The claim is about time: no worker runs when the dead one's claim lapses (the ack wait, 8 s).
    // Nothing shows the lapse to wait on: nats-server 2.9 changes no consumer state then and raises
    // the max-deliveries advisory only at the next pull, which the next worker makes.
    await pause(Number(strict.RENDER_ACK_WAIT) * 1000 + 2000);
    workers.push(await spawnService(stack, { ROLES: 'render', ...strict }));
    const answer = await pending;
    assert.is(answer.status, 500, JSON.stringify(answer.json));
    assert.is(answer.json!.error_code, 'internal_application_error');
    assert.is(stack.site.hits.get('/slow'), before + 1, 'never delivered again');
    assert.ok((await giveUpsStored()) > giveUpsBefore, 'ended by its max-deliveries advisory');
    assert.is(await usedThisMonth(stack, workspace.workspace_id), 0);
  } finally {
    await ingressOnce.close();
  }
});

redelivery.run();
