// ScreenshotOne's other endpoints against the whole service (real NATS, store and Chromium): bulk
// (lazy and executed), usage after renders, the device list and every ScreenshotOne device id, the
// JSON answer's ScreenshotOne names, and the longer limits of asynchronous renders.
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { SCREENSHOTONE_DEVICE_IDS } from '../fixtures/screenshotone-devices.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('screenshotone api');
let stack: TestStack;
let service: TestService;

test.before(async () => {
  stack = await startStack();
  // A short ack wait: an asynchronous render longer than it is kept by in-progress heartbeats.
  service = await startService(stack, { RENDER_ACK_WAIT: '6' });
});
test.after(async () => {
  await service?.close();
  await stack?.stop();
});

const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(`${service.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const sizeOf = async (bytes: Buffer) => {
  const { width, height } = await sharp(bytes).metadata();
  return [width, height];
};

test('bulk, lazy: signed /api/take URLs in order, nothing rendered or charged until one is fetched', async () => {
  const workspace = await createWorkspace(stack);
  const from = stack.site.received.length;
  const answer = await postJson(
    '/api/bulk',
    {
      options: { url: `${stack.site.url}/`, viewport_width: 400, viewport_height: 300 },
      requests: [{}, { viewport_width: 500 }, { url: `${stack.site.url}/tall`, format: 'jpeg' }],
    },
    { 'x-access-key': workspace.access_key },
  );
  assert.is(answer.status, 200, answer.bytes.toString());
  const urls = answer.json!.responses.map((entry: { url: string }) => entry.url);
  assert.is(urls.length, 3);
  assert.ok(answer.json!.responses.every((entry: object) => !('response' in entry)));
  // Each URL is the request: options overlaid by its own parameters.
  const second = new URL(urls[1]);
  assert.is(second.searchParams.get('viewport_width'), '500');
  assert.is(second.searchParams.get('viewport_height'), '300');
  assert.is(new URL(urls[2]).searchParams.get('url'), `${stack.site.url}/tall`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.is(stack.site.received.length, from, 'nothing was rendered');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 0);

  const image = await call(urls[1]);
  assert.is(image.status, 200, image.bytes.toString().slice(0, 300));
  assert.equal(await sizeOf(image.bytes), [500, 300]);
  const jpeg = await call(urls[2]);
  assert.is(jpeg.contentType, 'image/jpeg');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 2);
});

test('bulk, lazy: a URL too long to fetch is refused in place as the fetch would be; executed, it renders', async () => {
  const workspace = await createWorkspace(stack);
  const long = `<p>${'x'.repeat(20_000)}</p>`;
  const body = { requests: [{ html: '<p>short</p>' }, { html: long }] };
  const headers = { 'x-access-key': workspace.access_key };
  const lazy = await postJson('/api/bulk', body, headers);
  assert.is(lazy.status, 200, lazy.bytes.toString());
  const [short, tooLong] = lazy.json!.responses;
  assert.not.ok('response' in short);
  assert.is(tooLong.response.error_code, 'request_header_too_large');
  assert.is((await call(tooLong.url)).status, 431, 'a fetch of it is refused, as said');
  const executed = await postJson('/api/bulk', { ...body, execute: true }, headers);
  assert.is(executed.json!.responses[1].response.is_successful, true, JSON.stringify(executed.json));
});

test('bulk URLs are signed with the secret key: they work where signatures are required, and a tampered one does not', async () => {
  const workspace = await createWorkspace(stack);
  const { WorkspaceStore } = await import('../../src/workspaces/workspace.ts');
  const { connect } = await import('@nats-io/transport-node');
  const { ensureTopology } = await import('../../src/jetstream/topology.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { createSealer } = await import('../../src/secrets/key.ts');
  const nc = await connect({ servers: stack.nats.url.split(',') });
  const topology = await ensureTopology(nc, loadConfig(stack.env));
  await new WorkspaceStore(topology.workspaces, topology.accessKeys, createSealer(loadConfig(stack.env))).update(
    workspace.workspace_id,
    (w: Workspace) => ({ ...w, require_signed_requests: true }),
  );
  await nc.close();
  // Bulk's X-Signature is over its method, path and raw body (docs/api.md, "Signatures").
  const body = JSON.stringify({
    access_key: workspace.access_key,
    options: { html: '<p>signed</p>', viewport_width: 300, viewport_height: 200 },
    requests: [{}],
  });
  const bulk = await call(`${service.base}/api/bulk`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': hmacHex(workspace.secret_key, `POST /api/bulk\n${body}`),
    },
    body,
  });
  assert.is(bulk.status, 200, bulk.bytes.toString());
  const url: string = bulk.json!.responses[0].url;
  const image = await call(url);
  assert.is(image.status, 200, image.bytes.toString().slice(0, 300));
  assert.equal(await sizeOf(image.bytes), [300, 200]);
  const tampered = await call(url.replace('viewport_width=300', 'viewport_width=301'));
  assert.is(tampered.json?.error_code, 'signature_is_not_valid');
  const unsigned = await postJson('/api/bulk', { access_key: workspace.access_key, requests: [{ html: '<p>x</p>' }] });
  assert.is(unsigned.json?.error_code, 'signature_is_required');
});

test('bulk, executed: each request answered in place in order, an invalid one carries its 400 and stops nothing; each charged once', async () => {
  const workspace = await createWorkspace(stack, { plan: 'free', quota: 50 });
  const answer = await postJson('/api/bulk', {
    access_key: workspace.access_key,
    execute: true,
    options: { viewport_width: 320, viewport_height: 240 },
    requests: [
      { html: '<p>one</p>' },
      { url: `${stack.site.url}/`, viewport_width: 50 },
      { url: `${stack.site.url}/status/404` },
      ...Array.from({ length: 6 }, (_, i) => ({ html: `<p>${i}</p>`, image_quality: 50 + i, format: 'webp' })),
    ],
  });
  assert.is(answer.status, 200, answer.bytes.toString());
  const { responses } = answer.json!;
  assert.is(responses.length, 9);
  const [first, invalid, failed, ...rest] = responses;
  assert.is(first.response.is_successful, true, JSON.stringify(first));
  assert.is(first.response.screenshot_url, first.response.file_url);
  assert.is(first.response.cache_url, first.response.file_url, 'the render fills the cache of its signed URL');
  assert.equal(invalid.response.error_code, 'request_not_valid');
  assert.equal(
    invalid.response.error_details.map((d: { parameter: string }) => d.parameter),
    ['viewport_width'],
  );
  assert.is(failed.response.error_code, 'host_returned_error');
  assert.is(failed.response.returned_status_code, 404);
  for (const entry of rest) {
    assert.is(entry.response.is_successful, true, JSON.stringify(entry));
    assert.is(entry.response.format, 'webp');
  }
  const stored = await call(first.response.file_url);
  assert.equal(await sizeOf(stored.bytes), [320, 240]);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 7);
  // The executed request's URL is its cached file now: fetching it renders and charges nothing more.
  const again = await call(first.url);
  assert.is(again.status, 302);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 7);
});

test('bulk, executed: a quota that runs out mid-bulk is a 402 in place for the rest, each charged once', async () => {
  const workspace = await createWorkspace(stack, { quota: 2 });
  const answer = await postJson('/api/bulk', {
    access_key: workspace.access_key,
    execute: true,
    options: { viewport_width: 200, viewport_height: 150 },
    requests: Array.from({ length: 4 }, (_, i) => ({ html: `<p>quota ${i}</p>` })),
  });
  assert.is(answer.status, 200, answer.bytes.toString());
  const codes = answer.json!.responses.map((entry: { response: { is_successful: boolean; error_code?: string } }) =>
    entry.response.is_successful ? 'ok' : entry.response.error_code,
  );
  assert.equal([...codes].sort(), ['ok', 'ok', 'screenshots_limit_reached', 'screenshots_limit_reached']);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 2);
});

test('bulk, executed: the renders run side by side, not one after another', async () => {
  const workspace = await createWorkspace(stack);
  const slow = (n: number) =>
    stack.site.received.filter((request) => request.path === '/slow' && request.search.includes(`bulk=${n}`));
  const bulk = postJson(
    '/api/bulk',
    {
      execute: true,
      options: { url: `${stack.site.url}/slow?ms=3000&bulk=1`, viewport_width: 200, viewport_height: 200 },
      requests: [{}, { viewport_width: 201 }, { viewport_width: 202 }],
    },
    { 'x-access-key': workspace.access_key },
  );
  await waitFor(() => slow(1).length >= 1, 'the first render reaches the page', 20_000);
  const first = Date.now();
  // Each page answers after 3 s: a second arriving sooner was asked for while the first was still loading.
  await waitFor(() => slow(1).length >= 2, 'a second render reaches the page', 20_000);
  assert.ok(Date.now() - first < 2500, `the second render started ${Date.now() - first} ms after the first`);
  const answer = await bulk;
  assert.ok(
    answer.json!.responses.every((entry: { response: { is_successful: boolean } }) => entry.response.is_successful),
    answer.bytes.toString(),
  );
});

test('bulk: a malformed body is a 400 naming the part; no key is a 401', async () => {
  const workspace = await createWorkspace(stack);
  const headers = { 'x-access-key': workspace.access_key };
  const empty = await postJson('/api/bulk', { requests: [] }, headers);
  assert.is(empty.status, 400);
  assert.is(empty.json!.error_details[0].parameter, 'requests');
  const tooMany = await postJson('/api/bulk', { requests: Array.from({ length: 21 }, () => ({ html: 'x' })) }, headers);
  assert.is(tooMany.json!.error_details[0].parameter, 'requests');
  const unknown = await postJson('/api/bulk', { requests: [{ html: 'x' }], colour: 'red' }, headers);
  assert.is(unknown.json!.error_details[0].parameter, 'colour');
  const anonymous = await postJson('/api/bulk', { requests: [{ html: 'x' }] });
  assert.is(anonymous.status, 401);
});

test('usage: total, available and used of this month, and the concurrency left, after renders', async () => {
  const workspace = await createWorkspace(stack, { plan: 'free', quota: 30 });
  const before = await call(`${service.base}/api/usage?access_key=${workspace.access_key}`);
  assert.is(before.status, 200);
  assert.equal(
    { ...before.json, concurrency: { ...before.json!.concurrency, reset: 0 } },
    { total: 30, available: 30, used: 0, concurrency: { limit: 5, remaining: 5, reset: 0 } },
  );
  assert.ok(Math.abs(before.json!.concurrency.reset / 1e6 - Date.now()) < 5000, 'reset is a time in nanoseconds');
  for (const text of ['a', 'b', 'c']) {
    const take = await postJson(
      '/api/take',
      { html: `<p>${text}</p>`, viewport_width: 200, viewport_height: 200, response_type: 'json' },
      { 'x-access-key': workspace.access_key },
    );
    assert.is(take.status, 200, take.bytes.toString());
  }
  // A failed render is not used.
  await postJson('/api/take', { url: `${stack.site.url}/status/404` }, { 'x-access-key': workspace.access_key });
  const after = await call(`${service.base}/api/usage`, { headers: { 'x-access-key': workspace.access_key } });
  assert.equal([after.json!.total, after.json!.available, after.json!.used], [30, 27, 3]);
  assert.is((await call(`${service.base}/api/usage?access_key=nope`)).status, 401);
});

test('devices: every preset with its id and metrics; every ScreenshotOne device id is listed and accepted', async () => {
  const answer = await call(`${service.base}/api/devices`);
  assert.is(answer.status, 200);
  const list: Array<{
    id: string;
    name: string;
    viewport: { width: number; height: number };
    device_scale_factor: number;
    is_mobile: boolean;
    has_touch: boolean;
    user_agent: string;
  }> = answer.json!.devices;
  const ids = new Set(list.map((device) => device.id));
  for (const id of SCREENSHOTONE_DEVICE_IDS) assert.ok(ids.has(id), `${id} is not listed`);
  assert.equal(
    list.find((device) => device.id === 'iphone_4'),
    {
      id: 'iphone_4',
      name: 'iPhone 4',
      viewport: { width: 320, height: 480 },
      device_scale_factor: 2,
      is_mobile: true,
      has_touch: true,
      user_agent: list.find((device) => device.id === 'iphone_4')!.user_agent,
    },
  );
  assert.match(list.find((device) => device.id === 'ipad_gen_7')!.name, 'iPad (gen 7)');
  const workspace = await createWorkspace(stack);
  // Every id passes validation (a 400 would name viewport_device); a handful render for real.
  for (const id of SCREENSHOTONE_DEVICE_IDS) {
    const { parseTakeParams } = await import('../../src/http/params.ts');
    const parsed = parseTakeParams({
      kind: 'query',
      entries: [
        ['url', 'https://a.example'],
        ['viewport_device', id],
      ],
    });
    assert.ok('request' in parsed, `${id}: ${JSON.stringify('problems' in parsed ? parsed.problems : '')}`);
  }
  assert.equal(list.find((device) => device.id === 'ipad_gen_7')!.viewport, { width: 810, height: 1080 });
  for (const id of ['iphone_4', 'ipad_gen_7', 'jiophone_2', 'pixel_4a_5g_landscape', 'galaxy_s9+']) {
    const { viewport, device_scale_factor: scale } = list.find((device) => device.id === id)!;
    const image = await postJson(
      '/api/take',
      { html: '<p>device</p>', viewport_device: id },
      { 'x-access-key': workspace.access_key },
    );
    assert.is(image.status, 200, `${id}: ${image.bytes.toString().slice(0, 300)}`);
    assert.equal(
      await sizeOf(image.bytes),
      [Math.round(viewport.width * scale), Math.round(viewport.height * scale)],
      id,
    );
  }
});

test('the JSON answer names the file as ScreenshotOne does: screenshot_url, and cache_url for a cached signed GET', async () => {
  const workspace = await createWorkspace(stack);
  const plain = await postJson(
    '/api/take',
    { html: '<p>json</p>', response_type: 'json' },
    { 'x-access-key': workspace.access_key },
  );
  assert.is(plain.json!.screenshot_url, plain.json!.file_url);
  assert.is(plain.json!.cache_url, undefined);
  const query = `html=${encodeURIComponent('<p>cached</p>')}&response_type=json&access_key=${workspace.access_key}`;
  const signed = await call(`${service.base}/api/take?${query}&signature=${hmacHex(workspace.secret_key, query)}`);
  assert.is(signed.status, 200, signed.bytes.toString());
  assert.is(signed.json!.screenshot_url, signed.json!.file_url);
  assert.is(signed.json!.cache_url, signed.json!.file_url);
});

test('asynchronous renders get the longer limits: a delay past the synchronous 30 s ends, outliving the ack wait', async () => {
  const workspace = await createWorkspace(stack);
  const headers = { 'x-access-key': workspace.access_key };
  const sync = await postJson('/api/take', { html: '<p>slow</p>', delay: 31 }, headers);
  assert.is(sync.status, 400);
  assert.equal(
    sync.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['delay'],
  );
  const accepted = await postJson('/api/take', { html: '<p>slow</p>', delay: 32, timeout: 120, async: true }, headers);
  assert.is(accepted.status, 202, accepted.bytes.toString());
  const started = Date.now();
  let status: Record<string, any> = {};
  await waitFor(
    async () => {
      status = (await call(accepted.json!.status_url, { headers })).json!;
      return ['succeeded', 'failed'].includes(status.status);
    },
    'the slow render ends',
    90_000,
    500,
  );
  assert.is(status.status, 'succeeded', JSON.stringify(status));
  assert.ok(Date.now() - started > 25_000);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);
});

test.run();
