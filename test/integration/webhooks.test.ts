// Signed webhooks end to end: real NATS, S3 store, Chromium; the delivery role in its own process (so it can be killed).
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryIsGenuine as verifyWebhook } from '../../src/client/webhook.ts';
import { DeliveryQueue, type DeliveryRecord } from '../../src/delivery/records.ts';
import { loadConfig } from '../../src/config.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { shutterbus } from '../helpers/cli.ts';
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
import { pause, waitFor } from '../helpers/wait.ts';

const webhooks = suite('signed webhooks, dead letters and replay');
const schedule = { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s' };
let stack: TestStack;
let service: TestService;
let sender: ChildProcess | undefined;
let workspace: Workspace;
let receiver: http.Server;
let hookBase: string;

/** One POST the receiver got, and when (ms). */
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}
const received: Received[] = [];
/** Per path: the statuses to answer in turn (the last one repeats). */
const script = new Map<string, number[]>();
/** Per path: the Retry-After (seconds) sent with its 5xx answers. */
const retryAfter = new Map<string, number>();
const hitsOf = (path: string) => received.filter((r) => r.path === path);
/** Milliseconds between the receiver getting attempt `n` and attempt `n + 1` (n from 0). */
const gapAfter = (path: string, n: number) => hitsOf(path)[n + 1].at - hitsOf(path)[n].at;
/** The wait between attempts the schedule above asks for, in ms. */
const scheduledMs = 1000;

const deliveryRecord = async (id: string): Promise<DeliveryRecord | null> => {
  const nc = await connect({ servers: stack.nats.url });
  try {
    const topology = await ensureTopology(nc, loadConfig(stack.env));
    return await new DeliveryQueue(topology.jsm.jetstream(), topology.deliveries).get(id);
  } finally {
    await nc.close();
  }
};

/** Starts an async render that reports to `/hook/<name>` on the receiver. */
const renderWithHook = async (name: string, target: string, owner: Workspace = workspace) => {
  const query = new URLSearchParams({
    url: `${stack.site.url}${target}`,
    async: 'true',
    webhook_url: `${hookBase}/hook/${name}`,
    external_identifier: `ext-${name}`,
  });
  const answer = await call(`${service.base}/api/take?${query}`, { headers: { 'x-access-key': owner.access_key } });
  assert.is(answer.status, 202, JSON.stringify(answer.json));
  return answer.json!.render_id as string;
};

const startSender = async () => {
  sender = await spawnService(stack, { ROLES: 'delivery', ...schedule });
};

webhooks.before(async () => {
  stack = await startStack();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body, at: Date.now() });
      const statuses = script.get(path) ?? [200];
      const status = statuses.length > 1 ? statuses.shift()! : statuses[0];
      const headers: Record<string, string> = status === 302 ? { location: `${hookBase}/followed` } : {};
      if (retryAfter.has(path) && status >= 500) headers['retry-after'] = String(retryAfter.get(path));
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  service = await startService(stack, { ROLES: 'ingress,render', ...schedule });
  workspace = await createWorkspace(stack);
  await startSender();
});
webhooks.after(async () => {
  sender?.kill('SIGKILL');
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

webhooks('a succeeded and a failed render each deliver one signed POST', async () => {
  const okId = await renderWithHook('ok', '/page/hook-ok');
  const failedId = await renderWithHook('failed', '/status/500');
  await waitFor(() => hitsOf('/hook/ok').length === 1 && hitsOf('/hook/failed').length === 1, 'both deliveries');
  const deliveryIds = [hitsOf('/hook/ok')[0], hitsOf('/hook/failed')[0]].map((hit) =>
    String(hit.headers['x-webhook-id']),
  );
  // Once recorded delivered, a job is acked: no attempt can follow.
  await waitFor(
    async () => (await Promise.all(deliveryIds.map(deliveryRecord))).every((record) => record?.status === 'delivered'),
    'both recorded delivered',
  );
  assert.is(hitsOf('/hook/ok').length, 1, 'one delivery, no retry');
  assert.is(hitsOf('/hook/failed').length, 1);
  for (const id of deliveryIds) assert.is((await deliveryRecord(id))!.attempts, 1);

  const [ok] = hitsOf('/hook/ok');
  assert.is(ok.headers['content-type'], 'application/json');
  assert.ok(verifyWebhook(workspace.secret_key, ok.headers, ok.body), 'the signature verifies');
  assert.not.ok(
    verifyWebhook(workspace.secret_key, ok.headers, JSON.stringify(JSON.parse(ok.body), null, 2)),
    'a re-serialised body fails',
  );
  const payload = JSON.parse(ok.body);
  assert.is(payload.id, ok.headers['x-webhook-id']);
  assert.match(payload.id, /^wh_[0-9a-f]{32}$/);
  assert.is(payload.type, 'render.succeeded');
  assert.is(payload.data.render_id, okId);
  assert.is(payload.data.format, 'png');
  assert.is(payload.data.external_identifier, 'ext-ok');
  const file = await call(payload.data.file_url);
  assert.is(file.status, 200);
  assert.is(file.contentType, 'image/png');
  assert.is(file.bytes.length, payload.data.size_bytes);

  const [failed] = hitsOf('/hook/failed');
  assert.ok(verifyWebhook(workspace.secret_key, failed.headers, failed.body));
  const failure = JSON.parse(failed.body);
  assert.is(failure.type, 'render.failed');
  assert.is(failure.data.render_id, failedId);
  assert.is(failure.data.error_code, 'host_returned_error');
  assert.is(failure.data.file_url, undefined);
});

webhooks("a render's timeline: queued, started, navigated, captured, stored, then delivered", async () => {
  const renderId = await renderWithHook('timeline', '/page/timeline');
  await waitFor(() => hitsOf('/hook/timeline').length === 1, 'the delivery');
  const auth = { headers: { 'x-access-key': workspace.access_key } };
  let timeline: { step: string; at: string; ms: number }[] = [];
  await waitFor(async () => {
    timeline = (await call(`${service.base}/api/renders/${renderId}`, auth)).json!.timeline;
    return timeline.at(-1)?.step === 'delivered';
  }, 'the delivered step');
  assert.equal(
    timeline.map((entry) => entry.step),
    ['queued', 'started', 'navigated', 'captured', 'stored', 'delivered'],
  );
  timeline.forEach((entry, index) => {
    const before = timeline[index - 1];
    assert.ok(entry.ms >= 0 && Number.isInteger(entry.ms), `${entry.step}: ms`);
    if (before)
      assert.is(entry.ms, Date.parse(entry.at) - Date.parse(before.at), `${entry.step}: ms since ${before.step}`);
    if (before) assert.ok(entry.at >= before.at, `${entry.step} after ${before.step}`);
  });
});

webhooks('500, 500, then 200: three attempts with the same id and fresh signatures', async () => {
  script.set('/hook/flaky', [500, 500, 200]);
  await renderWithHook('flaky', '/page/hook-flaky');
  await waitFor(() => hitsOf('/hook/flaky').length === 3, 'three attempts');
  const id = String(hitsOf('/hook/flaky')[0].headers['x-webhook-id']);
  await waitFor(async () => (await deliveryRecord(id))?.status === 'delivered', 'recorded delivered');
  const attempts = hitsOf('/hook/flaky');
  assert.is(attempts.length, 3);
  assert.is((await deliveryRecord(id))!.attempts, 3);
  assert.is(new Set(attempts.map((a) => a.headers['x-webhook-id'])).size, 1);
  for (const attempt of attempts) assert.ok(verifyWebhook(workspace.secret_key, attempt.headers, attempt.body));
  for (const n of [0, 1])
    assert.ok(
      gapAfter('/hook/flaky', n) >= scheduledMs,
      `attempt ${n + 2} waited out the schedule: ${gapAfter('/hook/flaky', n)} ms`,
    );
});

webhooks('410 is tried once; a 302 is never followed and ends dead-lettered; redrive sends it again', async () => {
  script.set('/hook/gone', [410]);
  script.set('/hook/moved', [302]);
  await renderWithHook('gone', '/page/hook-gone');
  await renderWithHook('moved', '/page/hook-moved');
  await waitFor(
    () => hitsOf('/hook/moved').length === 4 && hitsOf('/hook/gone').length === 1,
    'four attempts at the redirecting receiver',
    30_000,
  );
  const movedId = String(hitsOf('/hook/moved')[0].headers['x-webhook-id']);
  const goneId = String(hitsOf('/hook/gone')[0].headers['x-webhook-id']);
  // Once recorded dead, a job is acked: no attempt can follow.
  await waitFor(
    async () => (await deliveryRecord(movedId))?.status === 'dead' && (await deliveryRecord(goneId))?.status === 'dead',
    'both dead-lettered',
  );
  assert.is(hitsOf('/hook/gone').length, 1, '410 stops at once');
  assert.is(hitsOf('/hook/moved').length, 4, 'three delays: four attempts');
  assert.is(hitsOf('/followed').length, 0, 'the redirect was not followed');
  const dead = await shutterbus(stack, 'webhooks', 'dead', '--workspace', workspace.workspace_id);
  assert.is(dead.code, 0, dead.stderr);
  const listed = new Map<string, any>(dead.json.deliveries.map((d: any) => [d.id, d]));
  assert.equal(Object.keys(listed.get(movedId)).slice(0, 2), ['id', 'render_id']);
  assert.is(listed.get(movedId).attempts, 4);
  assert.is(listed.get(movedId).last_error, 'HTTP 302');
  assert.is(listed.get(movedId).webhook_url, `${hookBase}/hook/moved`);
  assert.is(listed.get(goneId).attempts, 1);
  const other = await shutterbus(stack, 'webhooks', 'dead', '--workspace', 'ws_0000000000000000');
  assert.equal(other.json.deliveries, []);

  script.set('/hook/moved', [200]);
  const redriven = await shutterbus(stack, 'webhooks', 'redrive', '--id', movedId);
  assert.equal(redriven.json, { redriven: 1 });
  await waitFor(() => hitsOf('/hook/moved').length === 5, 'the redriven attempt');
  const again = hitsOf('/hook/moved')[4];
  assert.is(again.headers['x-webhook-id'], movedId, 'the same id');
  assert.ok(verifyWebhook(workspace.secret_key, again.headers, again.body));
  await waitFor(async () => (await deliveryRecord(movedId))?.status === 'delivered', 'delivered');
  const unknown = await shutterbus(stack, 'webhooks', 'redrive', '--id', 'wh_unknown');
  assert.is(unknown.code, 1);
  assert.is(unknown.json.error_code, 'not_found');
});

webhooks('a Retry-After longer than the schedule sets the gap between attempts', async () => {
  script.set('/hook/retry-after', [503, 200]);
  retryAfter.set('/hook/retry-after', 3);
  await renderWithHook('retry-after', '/page/hook-retry-after');
  await waitFor(() => hitsOf('/hook/retry-after').length === 2, 'the second attempt');
  const gap = gapAfter('/hook/retry-after', 0);
  // The schedule alone would try again after 1 s.
  assert.ok(gap >= 3000, `the second attempt came ${gap} ms after the first; Retry-After asked for 3000`);
  assert.ok(gap < 3000 + 5000, `the second attempt came ${gap} ms after the first: not the Retry-After's wait`);
  const id = String(hitsOf('/hook/retry-after')[0].headers['x-webhook-id']);
  await waitFor(async () => (await deliveryRecord(id))?.status === 'delivered', 'delivered');
  assert.is((await deliveryRecord(id))!.attempts, 2);
});

webhooks('the delivery process killed between attempts resumes after restart, nothing lost', async () => {
  // A long Retry-After keeps the next attempt away while the process is killed and started again.
  script.set('/hook/crash', [503, 200]);
  retryAfter.set('/hook/crash', 6);
  await renderWithHook('crash', '/page/hook-crash');
  await waitFor(() => hitsOf('/hook/crash').length === 1, 'the first attempt');
  const id = String(hitsOf('/hook/crash')[0].headers['x-webhook-id']);
  await waitFor(async () => (await deliveryRecord(id))?.status === 'backing_off', 'the attempt recorded');
  const killed = sender!;
  killed.kill('SIGKILL');
  await waitFor(() => killed.exitCode !== null || killed.signalCode !== null, 'the delivery process gone');
  assert.is(hitsOf('/hook/crash').length, 1);
  await startSender();
  // Killed after recording but before its nak, the job comes back after the ack wait (30 s) instead.
  await waitFor(() => hitsOf('/hook/crash').length === 2, 'the second attempt after restart', 45_000);
  const second = hitsOf('/hook/crash')[1];
  assert.is(second.headers['x-webhook-id'], id);
  assert.ok(
    gapAfter('/hook/crash', 0) >= 6000,
    `the wait asked for outlived the crash: ${gapAfter('/hook/crash', 0)} ms`,
  );
  assert.ok(verifyWebhook(workspace.secret_key, second.headers, second.body));
  await waitFor(async () => (await deliveryRecord(id))?.status === 'delivered', 'delivered');
  assert.is((await deliveryRecord(id))!.attempts, 2);
});

webhooks('replay deliveries and renders: same ids, no second charge, --dry-run changes nothing', async () => {
  const replayed = await createWorkspace(stack);
  const since = new Date(Date.now() - 1000).toISOString();
  const renderId = await renderWithHook('replay', '/page/hook-replay', replayed);
  await waitFor(() => hitsOf('/hook/replay').length === 1, 'the first delivery');
  const id = String(hitsOf('/hook/replay')[0].headers['x-webhook-id']);
  assert.is(await usedThisMonth(stack, replayed.workspace_id), 1);

  const dry = await shutterbus(
    stack,
    'replay',
    'deliveries',
    '--since',
    since,
    '--workspace',
    replayed.workspace_id,
    '--dry-run',
  );
  assert.is(dry.code, 0, dry.stderr);
  assert.is(dry.json.replayed, 1);
  assert.is(dry.json.items[0].id, id);
  const dryRenders = await shutterbus(
    stack,
    'replay',
    'renders',
    '--since',
    since,
    '--workspace',
    replayed.workspace_id,
    '--dry-run',
  );
  assert.is(dryRenders.json.replayed, 1);
  assert.is(dryRenders.json.items[0].render_id, renderId);
  // The claim is that nothing happens: a second POST or render would come within moments (1 s schedule).
  await pause(1500);
  assert.is(hitsOf('/hook/replay').length, 1, 'a dry run sends nothing');
  assert.is(stack.site.hits.get('/page/hook-replay'), 1, 'a dry run renders nothing');

  const deliveries = await shutterbus(
    stack,
    'replay',
    'deliveries',
    '--since',
    since,
    '--workspace',
    replayed.workspace_id,
  );
  assert.is(deliveries.json.replayed, 1);
  await waitFor(() => hitsOf('/hook/replay').length === 2, 'the replayed delivery');
  const again = hitsOf('/hook/replay')[1];
  assert.is(again.headers['x-webhook-id'], id, 'the same id');
  assert.ok(verifyWebhook(replayed.secret_key, again.headers, again.body));

  const renders = await shutterbus(stack, 'replay', 'renders', '--since', since, '--workspace', replayed.workspace_id);
  assert.is(renders.json.replayed, 1);
  await waitFor(() => stack.site.hits.get('/page/hook-replay') === 2, 'rendered again', 30_000);
  const auth = { headers: { 'x-access-key': replayed.access_key } };
  await waitFor(
    async () => (await call(`${service.base}/api/renders/${renderId}`, auth)).json?.status === 'succeeded',
    'the record ends again',
  );
  // The claim is that nothing happens: the record ends before its settlement and webhook, so give a
  // second charge or POST the time to show.
  await pause(1000);
  assert.is(await usedThisMonth(stack, replayed.workspace_id), 1, 'not charged twice');
  assert.is(hitsOf('/hook/replay').length, 2, 'the same delivery id is not announced again by a replayed render');

  const bad = await shutterbus(stack, 'replay', 'renders', '--since', 'yesterday');
  assert.is(bad.code, 2);
  const both = await shutterbus(stack, 'replay', 'deliveries', '--since', since, '--from-seq', '1');
  assert.is(both.code, 2);
});

webhooks.run();
