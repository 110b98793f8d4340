// Dependencies killed under a running service on one node: NATS and the object store each SIGKILLed and
// started again. Callers get 503 with Retry-After, never a 500; accepted renders end succeeded once
// the dependency is back; a caller answered with an error is never charged.
import type { ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import {
  call,
  createWorkspace,
  spawnService,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { names } from '../../src/jetstream/topology.ts';

const outages = suite('NATS and the object store die under a running service');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let auth: { headers: Record<string, string> };
const spawned: ChildProcess[] = [];
// A short ack wait: what a killed NATS held comes back soon.
const settings = { RENDER_ACK_WAIT: '5', RENDER_CONCURRENCY: '4' };

outages.before(async () => {
  stack = await startStack();
  service = await startService(stack, settings);
  workspace = await createWorkspace(stack, { quota: 50 });
  auth = { headers: { 'x-access-key': workspace.access_key } };
});
outages.after(async () => {
  for (const child of spawned) child.kill('SIGKILL');
  await service?.close();
  await stack?.stop();
});

const take = (query: Record<string, string>) =>
  call(`${service.base}/api/take?${new URLSearchParams({ url: `${stack.site.url}/`, ...query })}`, auth);
const readiness = async () =>
  (await call(`${service.base}/readyz`)).json as { status: string; dependencies: Record<string, string> };
const usage = async () =>
  (await shutterbus(stack, 'usage', '--workspace', workspace.workspace_id)).json as { used: number; in_flight: number };
// A render's record says it ended a moment before its charge is written (docs/operations.md,
// "Outages"), longer when NATS dies in between: counts are read once nothing is in flight.
const settledUsage = async () => {
  await waitFor(async () => (await usage()).in_flight === 0, 'no reservation left', 20_000, 500);
  return usage();
};
const consumerState = async () => {
  const nc = await connect({ servers: stack.nats.url });
  try {
    return await (await jetstreamManager(nc)).consumers.info(names.renderStream, names.renderConsumer);
  } finally {
    await nc.close();
  }
};
const statusOf = async (renderId: string) => (await call(`${service.base}/api/renders/${renderId}`, auth)).json?.status;

const assertUnavailable = (answer: Awaited<ReturnType<typeof call>>, what: string) => {
  assert.is(answer.status, 503, `${what}: ${answer.status} ${answer.bytes.toString().slice(0, 200)}`);
  assert.is(answer.json?.error_code, 'temporary_unavailable', what);
  assert.ok(Number(answer.headers.get('retry-after')) > 0, `${what}: Retry-After`);
};

outages(
  'NATS down: every endpoint answers 503 with Retry-After, /readyz fails, the CLI says so in one line',
  async () => {
    const accepted = await take({ async: 'true' });
    assert.is(accepted.status, 202);
    await waitFor(async () => (await statusOf(accepted.json!.render_id)) === 'succeeded', 'a render before the outage');

    await stack.nats.kill!();
    await waitFor(async () => (await readiness()).status === 'not_ready', '/readyz notices');
    const ready = await readiness();
    assert.is(ready.dependencies.nats, 'unavailable');
    assert.is(ready.dependencies.jetstream, 'unavailable');

    assertUnavailable(await take({}), 'GET /api/take');
    assertUnavailable(await take({ async: 'true' }), 'GET /api/take async');
    assertUnavailable(
      await call(`${service.base}/api/take`, {
        method: 'POST',
        headers: { ...auth.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${stack.site.url}/` }),
      }),
      'POST /api/take',
    );
    assertUnavailable(
      await call(`${service.base}/api/renders/${accepted.json!.render_id}`, auth),
      'GET /api/renders/{id}',
    );
    const page = await call(`${service.base}/dashboard/keys`);
    assert.is(page.status, 503, 'a dashboard page');
    assert.ok(Number(page.headers.get('retry-after')) > 0, 'a dashboard page: Retry-After');
    assert.is((await call(`${service.base}/healthz`)).status, 200, 'the process itself is alive');

    const cli = await shutterbus(stack, 'usage', '--workspace', workspace.workspace_id);
    assert.is(cli.code, 1);
    assert.is(cli.stderr.trim().split('\n').length, 1, 'one line');
    assert.is(cli.json.error_code, 'temporary_unavailable');

    await stack.nats.restart!();
    await waitFor(async () => (await readiness()).status === 'ready', '/readyz recovers', 30_000);
    const after = await take({});
    assert.is(after.status, 200, JSON.stringify(after.json));
  },
);

outages('an async render accepted before NATS dies ends succeeded once NATS is back, charged once', async () => {
  const before = await settledUsage();
  const accepted = await take({ url: `${stack.site.url}/slow?ms=3000`, async: 'true' });
  assert.is(accepted.status, 202);
  await waitFor(() => (stack.site.hits.get('/slow') ?? 0) >= 1, 'the render started');
  await stack.nats.kill!();
  await pause(5000);
  await stack.nats.restart!();
  await waitFor(
    async () => (await statusOf(accepted.json!.render_id)) === 'succeeded',
    'the render succeeded after the outage',
    60_000,
    500,
  );
  assert.is((await settledUsage()).used, before.used + 1, 'charged once, no reservation left');
});

outages(
  'the store down for 20 s: a sync caller is answered within its timeout, async succeeds after, each charged once',
  async () => {
    const before = await settledUsage();
    await stack.s3.kill();
    await waitFor(
      async () => (await readiness()).dependencies.object_store === 'unavailable',
      '/readyz notices the store',
    );

    const started = Date.now();
    const timed = async (query: Record<string, string>) => {
      const asked = Date.now();
      const answer = await take(query);
      return { answer, seconds: (Date.now() - asked) / 1000 };
    };
    // Each waits its timeout (10 s) and a few seconds, not 10 + RENDER_ACK_WAIT + 5: the store is still down then.
    const early = timed({ timeout: '10', url: `${stack.site.url}/?early-image` });
    const refused = timed({ timeout: '10', response_type: 'json', url: `${stack.site.url}/?early-json` });
    const asyncRender = await take({ async: 'true', url: `${stack.site.url}/?async-outage` });
    assert.is(asyncRender.status, 202);
    // Waits up to 40 + 5 + 5 s: the store is back at 20 s.
    const patient = take({ timeout: '40', url: `${stack.site.url}/?patient` });

    const image = await early;
    assert.is(
      image.answer.status,
      200,
      `the image before it is stored: ${image.answer.status} ${image.answer.bytes.toString().slice(0, 200)}`,
    );
    assert.ok(image.answer.contentType.startsWith('image/png'), image.answer.contentType);
    assert.is(image.answer.headers.get('x-render-stored'), 'false', 'the answer says the image is not stored yet');
    assert.ok(image.seconds < 10 + 5, `answered within its timeout and a few seconds: ${image.seconds} s`);
    const json = await refused;
    assertUnavailable(json.answer, 'a sync json render, which needs a stored file');
    assert.ok(json.seconds < 10 + 5, `json refused within its timeout and a few seconds: ${json.seconds} s`);
    assert.ok(Date.now() - started < 20_000, 'both answered before the store came back');

    await pause(Math.max(0, 20_000 - (Date.now() - started)));
    await stack.s3.restart();

    const served = await patient;
    assert.is(served.status, 200, JSON.stringify(served.json));
    assert.ok(served.contentType.startsWith('image/png'));
    assert.is(served.headers.get('x-render-stored'), null, 'a stored image says nothing of the kind');
    await waitFor(
      async () => (await statusOf(asyncRender.json!.render_id)) === 'succeeded',
      'the async render succeeded',
      60_000,
      500,
    );

    // The image answered before the store came back is stored once it is, under the same render.
    const earlyId = image.answer.headers.get('x-render-id')!;
    await waitFor(
      async () => (await statusOf(earlyId)) === 'succeeded',
      'the early-answered render stored its image',
      60_000,
      500,
    );
    const record = (await call(`${service.base}/api/renders/${earlyId}`, auth)).json as { file_url: string };
    const file = await call(record.file_url);
    assert.is(file.status, 200, 'its file is served');
    assert.ok(file.bytes.equals(image.answer.bytes), 'the file is the image the caller got');

    const refusedId = json.answer.headers.get('x-render-id');
    assert.ok(refusedId, 'the refused render is named');
    await waitFor(
      async () => (await statusOf(refusedId!)) === 'failed',
      'the refused render ended failed',
      10_000,
      500,
    );

    // Settled after the store came back, which may be past the reservations' lapse: still once each.
    const after = await settledUsage();
    assert.is(
      after.used,
      before.used + 3,
      'the async, the patient and the early-answered render charged once each; the refused one not',
    );
  },
);

outages('every slot held by renders stuck on the store: a sync caller is answered within timeout + 5 s', async () => {
  const before = await settledUsage();
  const hitsBefore = stack.site.hits.get('/slow') ?? 0;
  const tallBefore = stack.site.hits.get('/tall') ?? 0;
  await stack.s3.kill();
  await waitFor(
    async () => (await readiness()).dependencies.object_store === 'unavailable',
    '/readyz notices the store',
  );
  // As many asynchronous renders as the worker has slots: each captures its page, then holds its
  // slot waiting for the store (up to 3 minutes).
  const held = await Promise.all(
    Array.from({ length: Number(settings.RENDER_CONCURRENCY) }, (_, i) =>
      take({ async: 'true', url: `${stack.site.url}/slow?ms=50&held=${i}` }),
    ),
  );
  for (const answer of held) assert.is(answer.status, 202);
  await waitFor(
    () => (stack.site.hits.get('/slow') ?? 0) >= hitsBefore + held.length,
    'every slot captured its page and waits for the store',
    30_000,
  );

  const asked = Date.now();
  const answer = await take({ timeout: '10', url: `${stack.site.url}/tall` });
  const seconds = (Date.now() - asked) / 1000;
  assertUnavailable(answer, 'a sync render that found no free slot');
  assert.ok(seconds < 10 + 5, `answered within its timeout and 5 s: ${seconds} s`);
  const askedId = answer.headers.get('x-render-id');
  assert.ok(askedId, 'the refused render is named');
  assert.is(await statusOf(askedId!), 'failed', 'its render ended with its answer');

  await stack.s3.restart();
  for (const { json } of held) {
    await waitFor(
      async () => (await statusOf(json!.render_id)) === 'succeeded',
      'a held render stored its image once the store was back',
      90_000,
      500,
    );
  }
  // Its request is still in the stream: the worker that reaches it drops it unrendered.
  await waitFor(
    async () => (await consumerState()).num_pending + (await consumerState()).num_ack_pending === 0,
    'the stream worked through',
    30_000,
    500,
  );
  assert.is((stack.site.hits.get('/tall') ?? 0) - tallBefore, 0, 'the refused render never ran');
  const after = await settledUsage();
  assert.is(after.used, before.used + held.length, 'the held renders charged, the refused one not');
});

outages('a process started while NATS is down waits for it, then starts', async () => {
  await stack.nats.kill!();
  const starting = spawnService(stack, { ROLES: 'render,delivery', PORT: '0', ...settings }).then((child) =>
    spawned.push(child),
  );
  let started = false;
  void starting.then(
    () => (started = true),
    () => undefined,
  );
  await pause(3000);
  assert.is(started, false, 'not started without NATS');
  await stack.nats.restart!();
  await starting;
});

outages.run();
