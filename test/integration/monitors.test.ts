// Monitors end to end: real NATS, S3 store, Chromium; pages that change (or not) between ticks, a signed-webhook receiver.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Webhook } from 'standardwebhooks';
import sharp from 'sharp';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { monitorPages } from '../fixtures/monitor-pages.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { shutterbus } from '../helpers/cli.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const monitors = suite('monitors: scheduled renders that announce changes');
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let workspace: Workspace;
let other: Workspace;
let receiver: http.Server;
let hookBase: string;
const pages = monitorPages();

/** One POST the receiver got. */
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
const hooksOf = (path: string) => received.filter((r) => r.path === path);

monitors.before(async () => {
  stack = await startStack();
  site = await startFixtureSite(pages.routes);
  // Ticks every 2 s at the shortest; a webhook retried after 1 s.
  service = await startService(stack, { MONITOR_MIN_INTERVAL: '2', WEBHOOK_RETRY_SCHEDULE: '1s,1s' });
  workspace = await createWorkspace(stack, { quota: 500 });
  other = await createWorkspace(stack, { quota: 500 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

monitors.after(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await site?.close();
  await stack?.stop();
});

const api = (path: string, owner: Workspace, init: { method?: string; body?: unknown } = {}) =>
  call(`${service.base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'x-access-key': owner.access_key,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

const createMonitor = async (body: Record<string, unknown>, owner = workspace) => {
  const answer = await api('/api/monitors', owner, { method: 'POST', body });
  assert.is(answer.status, 201, JSON.stringify(answer.json));
  return answer.json!;
};

monitors('bad monitors are 400 naming each parameter', async () => {
  const answer = await api('/api/monitors', workspace, {
    method: 'POST',
    body: { url: `${site.url}/monitor/stable`, interval: 1, threshold: 2, format: 'pdf', no_such: 1 },
  });
  assert.is(answer.status, 400);
  assert.is(answer.json!.error_code, 'request_not_valid');
  const named = (answer.json!.error_details as { parameter: string }[]).map((d) => d.parameter).sort();
  assert.equal(named, ['format', 'interval', 'no_such', 'threshold', 'webhook_url']);
  const nullInterval = await api('/api/monitors', workspace, {
    method: 'POST',
    body: { url: `${site.url}/monitor/stable`, interval: null, webhook_url: `${hookBase}/hook/none` },
  });
  assert.equal(nullInterval.json!.error_details, [{ parameter: 'interval', message: 'is required' }]);
  // A format in any case is the format, as on /api/take; a cache key is accepted and changes nothing.
  const cased = await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 600,
    format: 'PNG',
    cache_key: 'v2',
    webhook_url: `${hookBase}/hook/cased`,
  });
  assert.is(cased.format, 'png');
  assert.is((await api(`/api/monitors/${cased.monitor_id}`, workspace, { method: 'DELETE' })).status, 204);
  const unauthenticated = await call(`${service.base}/api/monitors`);
  assert.is(unauthenticated.status, 401);
  // The access key comes before the body, as on /api/take: an unreadable body without a key is a 401.
  for (const method of ['POST', 'PATCH']) {
    const path = method === 'POST' ? '/api/monitors' : '/api/monitors/mon_0000000000000000';
    const send = (headers: Record<string, string>, body: string) =>
      call(`${service.base}${path}`, { method, headers, body });
    const keyless = await send({ 'content-type': 'application/json' }, '{not json');
    assert.is(keyless.status, 401, `${method} ${JSON.stringify(keyless.json)}`);
    const notJson = await send({ 'content-type': 'text/plain', 'x-access-key': workspace.access_key }, 'interval=60');
    assert.is(notJson.status, 400, method);
    assert.equal(notJson.json!.error_details, [{ parameter: 'Content-Type', message: 'must be application/json' }]);
    const unparsed = await send({ 'content-type': 'application/json', 'x-access-key': workspace.access_key }, '[1]');
    assert.equal(unparsed.json!.error_details, [{ parameter: 'body', message: 'must be a JSON object' }], method);
  }
});

monitors('create, list, show, pause, delete; another workspace gets 404', async () => {
  const created = await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 600,
    webhook_url: `${hookBase}/hook/crud`,
    // null is a parameter not given, as on /api/take: the default threshold.
    threshold: null,
    // Any /api/take parameter: those that shape one answer are accepted without effect.
    async: true,
    cache: false,
    response_type: 'json',
    external_identifier: 'crud-42',
  });
  assert.match(created.monitor_id, /^mon_[0-9a-f]{16}$/);
  assert.is(created.status, 'active');
  assert.is(created.interval, 600);
  assert.is(created.threshold, 0.01);
  assert.is(created.external_identifier, 'crud-42');
  assert.ok(Date.parse(created.next_run_at) > 0);
  const id = created.monitor_id as string;

  const list = await api('/api/monitors', workspace);
  assert.ok(list.json!.monitors.some((m: { monitor_id: string }) => m.monitor_id === id));
  assert.not.ok(
    (await api('/api/monitors', other)).json!.monitors.some((m: { monitor_id: string }) => m.monitor_id === id),
  );

  // A PATCH whose body is bad is still not found: another workspace's monitor is not judged.
  for (const [method, body] of [
    ['GET'],
    ['PATCH', { status: 'paused' }],
    ['PATCH', { interval: 1 }],
    ['DELETE'],
  ] as const) {
    const answer = await api(`/api/monitors/${id}`, other, { method, body });
    assert.is(answer.status, 404, `${method} by another workspace`);
    assert.is(answer.json!.error_code, 'not_found');
  }

  const paused = await api(`/api/monitors/${id}`, workspace, {
    method: 'PATCH',
    body: { status: 'paused', threshold: 0.2 },
  });
  assert.is(paused.status, 200, JSON.stringify(paused.json));
  assert.is(paused.json!.status, 'paused');
  assert.is(paused.json!.threshold, 0.2);
  assert.is(paused.json!.next_run_at, null);
  const badPatch = await api(`/api/monitors/${id}`, workspace, {
    method: 'PATCH',
    body: { status: 'sleeping', url: 'http://x' },
  });
  assert.is(badPatch.status, 400);

  // A PATCH is signed over its method, path and body (docs/api.md, "Signatures").
  const body = JSON.stringify({ status: 'active' });
  const patch = (signature: string) =>
    call(`${service.base}/api/monitors/${id}`, {
      method: 'PATCH',
      headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json', 'x-signature': signature },
      body,
    });
  const forged = await patch(hmacHex(workspace.secret_key, body));
  assert.is(forged.status, 403);
  assert.is(forged.json!.error_code, 'signature_is_not_valid');
  const signed = await patch(hmacHex(workspace.secret_key, `PATCH /api/monitors/${id}\n${body}`));
  assert.is(signed.status, 200, JSON.stringify(signed.json));
  assert.is(signed.json!.status, 'active');

  // Sent as API clients with a default JSON Content-Type send it: that header and no body.
  const removed = await call(`${service.base}/api/monitors/${id}`, {
    method: 'DELETE',
    headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json' },
  });
  assert.is(removed.status, 204, JSON.stringify(removed.json));
  assert.is((await api(`/api/monitors/${id}`, workspace)).status, 404);
});

monitors('operators list and remove monitors with the CLI', async () => {
  // A document of its own, so that its tick loads none of the pages whose loads the next test counts.
  const created = await createMonitor(
    { html: '<p>Watched by an operator</p>', interval: 600, webhook_url: `${hookBase}/hook/cli` },
    other,
  );
  const listed = await shutterbus(stack, 'monitors', 'list', '--workspace', other.workspace_id);
  assert.is(listed.code, 0, listed.stderr);
  assert.equal(
    listed.json.monitors.map((m: { monitor_id: string; workspace_id: string }) => [m.monitor_id, m.workspace_id]),
    [[created.monitor_id, other.workspace_id]],
  );
  const everyone = await shutterbus(stack, 'monitors', 'list');
  assert.ok(everyone.json.monitors.some((m: { monitor_id: string }) => m.monitor_id === created.monitor_id));

  const removed = await shutterbus(stack, 'monitors', 'remove', '--id', created.monitor_id);
  assert.is(removed.code, 0, removed.stderr);
  assert.equal(removed.json, { removed: created.monitor_id, workspace_id: other.workspace_id });
  assert.is((await api(`/api/monitors/${created.monitor_id}`, other)).status, 404);
  const again = await shutterbus(stack, 'monitors', 'remove', '--id', created.monitor_id);
  assert.is(again.code, 1);
  assert.is(again.json.error_code, 'not_found');
});

monitors('a page that changes is announced once per change, signed; a page that does not, never', async () => {
  const changing = await createMonitor({
    url: `${site.url}/monitor/page?key=a`,
    interval: 2,
    webhook_url: `${hookBase}/hook/changing`,
  });
  const stable = await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 2,
    webhook_url: `${hookBase}/hook/stable`,
  });
  // The same changing page, compared only where it does not change.
  const scoped = await createMonitor({
    url: `${site.url}/monitor/page?key=a`,
    selector: '#fixed',
    interval: 2,
    webhook_url: `${hookBase}/hook/scoped`,
  });
  const ticks = (path: string) => site.hits.get(path) ?? 0;
  // The first tick is the baseline; then two unchanged ticks.
  await waitFor(
    () => ticks('/monitor/page') >= 3 && ticks('/monitor/stable') >= 3,
    'three ticks of each monitor',
    60_000,
  );
  assert.is(hooksOf('/hook/changing').length, 0, 'no change yet');

  pages.setVersion('a', 1);
  await waitFor(() => hooksOf('/hook/changing').length >= 1, 'the change announced', 30_000);
  const changedAt = ticks('/monitor/page');
  await waitFor(() => ticks('/monitor/page') >= changedAt + 3, 'three more ticks after the change', 60_000);
  // A delivery in flight would have arrived within its retry schedule.
  await pause(1500);
  assert.is(hooksOf('/hook/changing').length, 1, 'exactly one monitor.changed');
  assert.is(hooksOf('/hook/stable').length, 0, 'an unchanged page announces nothing');
  assert.is(hooksOf('/hook/scoped').length, 0, 'a change outside the selector is no change');
  const scopedShown = await api(`/api/monitors/${scoped.monitor_id}`, workspace);
  assert.is(scopedShown.json!.last_status, 'succeeded');
  assert.is(
    (await sharp((await call(scopedShown.json!.last_file_url)).bytes).metadata()).width,
    300,
    'the capture is the element',
  );

  const [hook] = hooksOf('/hook/changing');
  const payload = new Webhook(Buffer.from(workspace.secret_key).toString('base64')).verify(
    hook.body,
    hook.headers as Record<string, string>,
  ) as Record<string, any>;
  assert.is(payload.type, 'monitor.changed');
  assert.is(payload.data.monitor_id, changing.monitor_id);
  assert.ok(payload.data.changed_share > 0.01 && payload.data.changed_share <= 1, String(payload.data.changed_share));
  for (const name of ['file_url', 'previous_file_url', 'diff_url']) {
    const file = await call(payload.data[name]);
    assert.is(file.status, 200, name);
    assert.is((await sharp(file.bytes).metadata()).width, 1280, name);
  }
  // The diff marks the changed block red and leaves the rest grey.
  const diff = await sharp((await call(payload.data.diff_url)).bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pixel = (x: number, y: number) => [
    ...diff.data.subarray((y * diff.info.width + x) * 3, (y * diff.info.width + x) * 3 + 3),
  ];
  assert.equal(pixel(100, 100), [255, 0, 0], 'inside the block that changed colour');
  assert.not.equal(pixel(1200, 700), [255, 0, 0], 'a corner that did not change');

  const shown = await api(`/api/monitors/${changing.monitor_id}`, workspace);
  assert.is(shown.json!.changes.length, 1);
  assert.is(shown.json!.changes[0].diff_url, payload.data.diff_url);
  assert.is(shown.json!.changes[0].render_id, payload.data.render_id);
  assert.ok(shown.json!.last_run_at && shown.json!.last_file_url);

  // Each tick is one screenshot, charged once: pause both, let what is in flight end, count.
  for (const monitor of [changing, stable, scoped]) {
    const paused = await api(`/api/monitors/${monitor.monitor_id}`, workspace, {
      method: 'PATCH',
      body: { status: 'paused' },
    });
    assert.is(paused.status, 200);
  }
  // A tick handled as the pause landed may still start a render; none starts after that.
  await pause(3000);
  const rendered = ticks('/monitor/page') + ticks('/monitor/stable');
  await waitFor(
    async () => (await usedThisMonth(stack, workspace.workspace_id)) === rendered,
    'one charge per tick',
    30_000,
    250,
  );
  await pause(3000);
  assert.is(ticks('/monitor/page') + ticks('/monitor/stable'), rendered, 'paused monitors do not tick');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), rendered, 'one charge per tick, and no more');

  // A replay renders the monitor's ticks again, uncharged, and compares them as ticks are.
  const replay = await shutterbus(
    stack,
    'replay',
    'renders',
    '--since',
    new Date(Date.now() - 3_600_000).toISOString(),
    '--workspace',
    workspace.workspace_id,
  );
  assert.is(replay.code, 0, replay.stderr);
  assert.ok(replay.json.replayed >= rendered - 1, `replayed ${replay.json.replayed}`);
  await waitFor(
    () => ticks('/monitor/page') + ticks('/monitor/stable') >= rendered + replay.json.replayed,
    'the replayed renders',
    60_000,
  );
  await pause(2000);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), rendered, 'a replay charges nothing');
  assert.is(hooksOf('/hook/stable').length, 0, 'a replayed stable page is no change');
  assert.is(hooksOf('/hook/changing').length, 1, 'the page as it is now, compared with its last capture: no change');
});

monitors('a failing tick sends monitor.failed, with its external_identifier; unsigned or none on request', async () => {
  const failing = await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 600,
    fail_if_content_contains: ['nothing changes here'],
    webhook_url: `${hookBase}/hook/failing`,
    external_identifier: 'failing-7',
  });
  const quiet = await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 600,
    fail_if_content_contains: ['nothing changes here'],
    webhook_url: `${hookBase}/hook/quiet`,
    webhook_errors: false,
  });
  await createMonitor({
    url: `${site.url}/monitor/stable`,
    interval: 600,
    fail_if_content_contains: ['nothing changes here'],
    webhook_url: `${hookBase}/hook/unsigned`,
    webhook_sign: false,
  });
  await waitFor(() => hooksOf('/hook/failing').length >= 1, 'monitor.failed', 30_000);
  assert.ok(hooksOf('/hook/failing')[0].headers['webhook-signature'], 'signed by default');
  const body = JSON.parse(hooksOf('/hook/failing')[0].body);
  assert.is(body.type, 'monitor.failed');
  assert.is(body.data.monitor_id, failing.monitor_id);
  assert.is(body.data.error_code, 'content_contains_specified_string');
  assert.is(body.data.external_identifier, 'failing-7');
  const shown = await api(`/api/monitors/${failing.monitor_id}`, workspace);
  assert.is(shown.json!.last_status, 'failed');
  const tick = await api(`/api/renders/${body.data.render_id}`, workspace);
  assert.is(tick.json!.external_identifier, 'failing-7', "the tick's render carries it too");

  await waitFor(
    async () => (await api(`/api/monitors/${quiet.monitor_id}`, workspace)).json!.last_status === 'failed',
    'the quiet monitor ticked and failed',
    30_000,
  );
  await waitFor(() => hooksOf('/hook/unsigned').length >= 1, 'the unsigned monitor.failed', 30_000);
  const unsigned = hooksOf('/hook/unsigned')[0].headers;
  assert.is(unsigned['webhook-signature'], undefined, 'webhook_sign=false: no signature');
  assert.is(unsigned['x-signature'], undefined);
  await pause(2000);
  assert.is(hooksOf('/hook/quiet').length, 0, 'webhook_errors=false: no monitor.failed');
});

monitors.run();
