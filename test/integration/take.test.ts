import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { imageSize } from 'image-size';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const take = suite('GET|POST /api/take, end to end');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;

type Params = Record<string, string | number | boolean | string[]>;
const queryOf = (params: Params) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  return search.toString();
};
const shot = (params: Params) =>
  call(`${service.base}/api/take?${queryOf(params)}`, { headers: { 'x-access-key': workspace.access_key } });
const post = (body: string, type = 'application/json') =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': type, 'x-access-key': workspace.access_key },
    body,
  });
const page = (path: string) => `${stack.site.url}${path}`;
const sizeOf = (bytes: Buffer) => {
  const { width, height } = imageSize(bytes);
  return [width, height];
};

take.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  workspace = await createWorkspace(stack);
});
take.after(async () => {
  await service?.close();
  await stack?.stop();
});

take('a default shot is a 1280×720 PNG with a render id', async () => {
  const answer = await shot({ url: page('/') });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.is(answer.contentType, 'image/png');
  assert.equal([...answer.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(sizeOf(answer.bytes), [1280, 720]);
  assert.match(answer.headers.get('x-render-id') ?? '', /^[0-9a-f-]{36}$/);
});

take('jpeg at a custom viewport', async () => {
  const answer = await shot({
    url: page('/'),
    format: 'jpg',
    viewport_width: 800,
    viewport_height: 600,
    image_quality: 50,
  });
  assert.is(answer.status, 200);
  assert.is(answer.contentType, 'image/jpeg');
  assert.equal([...answer.bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
  assert.equal(sizeOf(answer.bytes), [800, 600]);
});

take('webp at device_scale_factor 2', async () => {
  const answer = await shot({ url: page('/'), format: 'webp', device_scale_factor: 2 });
  assert.is(answer.status, 200);
  assert.is(answer.contentType, 'image/webp');
  assert.is(answer.bytes.subarray(0, 4).toString('latin1'), 'RIFF');
  assert.is(answer.bytes.subarray(8, 12).toString('latin1'), 'WEBP');
  assert.equal(sizeOf(answer.bytes), [2560, 1440]);
});

take('selector captures the element box; full_page the whole page', async () => {
  assert.equal(sizeOf((await shot({ url: page('/element'), selector: '#box' })).bytes), [200, 100]);
  assert.equal(sizeOf((await shot({ url: page('/tall'), full_page: true })).bytes), [1280, 5000]);
});

take('POST with a JSON body renders too', async () => {
  const answer = await post(
    JSON.stringify({ url: page('/'), viewport_width: 640, viewport_height: 480, fail_if_content_missing: ['fixture'] }),
  );
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.equal(sizeOf(answer.bytes), [640, 480]);
});

take('response_type=json describes the file, which is served without a key', async () => {
  const answer = await shot({ url: page('/'), response_type: 'json' });
  assert.is(answer.status, 200);
  assert.is(answer.json!.is_successful, true);
  assert.is(answer.json!.format, 'png');
  const file = await call(answer.json!.file_url);
  assert.is(file.status, 200);
  assert.is(file.contentType, 'image/png');
  assert.is(file.bytes.length, answer.json!.size_bytes);
});

take('host errors fail the render unless ignored', async () => {
  for (const status of [404, 500]) {
    const answer = await shot({ url: page(`/status/${status}`) });
    assert.is(answer.status, 502);
    assert.is(answer.json!.error_code, 'host_returned_error');
    assert.is(answer.json!.returned_status_code, status);
  }
  assert.is((await shot({ url: page('/status/404'), ignore_host_errors: true })).status, 200);
});

take('fail_if_request_failed: matching failures fail, others do not', async () => {
  const notFound = await shot({ url: page('/subrequests'), fail_if_request_failed: ['*/assets/missing.js'] });
  assert.is(notFound.status, 422);
  assert.is(notFound.json!.error_code, 'matched_failed_request');
  assert.is(notFound.json!.failed_request_url, page('/assets/missing.js'));
  assert.is(notFound.json!.returned_status_code, 404);

  const serverError = await shot({ url: page('/subrequests'), fail_if_request_failed: ['*/api/*'] });
  assert.is(serverError.json!.returned_status_code, 500);

  const refused = await shot({ url: page('/subrequests'), fail_if_request_failed: ['http://127.0.0.1:*/pixel.png'] });
  assert.is(refused.status, 422);
  assert.match(refused.json!.failed_request_url, /pixel\.png$/);
  assert.is(refused.json!.returned_status_code, undefined);

  assert.is(
    (await shot({ url: page('/subrequests'), fail_if_request_failed: ['*/assets/ok.js', '*/nothing-*'] })).status,
    200,
  );
});

take('fail_if_content_missing and fail_if_content_contains, case-insensitive', async () => {
  const wall = await shot({ url: page('/login-wall'), fail_if_content_contains: ['PLEASE SIGN IN'] });
  assert.is(wall.status, 422);
  assert.is(wall.json!.error_code, 'content_contains_specified_string');
  assert.is(wall.json!.matched_string, 'PLEASE SIGN IN');

  const empty = await shot({ url: page('/empty'), fail_if_content_missing: ['search', 'Welcome back'] });
  assert.is(empty.status, 422);
  assert.is(empty.json!.error_code, 'content_missing_specified_string');
  assert.is(empty.json!.matched_string, 'Welcome back');

  assert.is(
    (
      await shot({
        url: page('/empty'),
        fail_if_content_missing: ['no RESULTS'],
        fail_if_content_contains: ['sign in'],
      })
    ).status,
    200,
  );
});

take('a missing selector fails only when asked to', async () => {
  const lenient = await shot({ url: page('/element'), selector: '#nope' });
  assert.is(lenient.status, 200);
  assert.equal(sizeOf(lenient.bytes), [1280, 720]);
  const strict = await shot({ url: page('/element'), selector: '#nope', error_on_selector_not_found: true });
  assert.is(strict.status, 422);
  assert.is(strict.json!.error_code, 'selector_not_found');
  assert.match(JSON.stringify(strict.json!.error_details), /#nope/);
  const scroll = await shot({ url: page('/scroll'), scroll_into_view: '#missing', error_on_selector_not_found: true });
  assert.is(scroll.json!.error_code, 'selector_not_found');
});

take('a page that never loads ends in 504 timeout_error', async () => {
  const answer = await shot({ url: page('/never'), timeout: 2 });
  assert.is(answer.status, 504);
  assert.is(answer.json!.error_code, 'timeout_error');
});

take('a page that hangs the renderer times out and the next render works', async () => {
  const hung = await shot({ url: page('/hang'), timeout: 3 });
  assert.is(hung.json!.error_code, 'timeout_error');
  assert.is((await shot({ url: page('/') })).status, 200);
});

take('a cookie or storage set by one render is not seen by the next', async () => {
  assert.is((await shot({ url: page('/set-cookie') })).status, 200);
  const next = await shot({
    url: page('/read-state'),
    fail_if_content_contains: ['fixture_'],
    fail_if_content_missing: ['cookies=none local=none session=none'],
  });
  assert.is(next.status, 200, JSON.stringify(next.json));
});

take('bad input gets request_not_valid naming the parameter', async () => {
  const unknown = await shot({ url: page('/'), colour: 'red' });
  assert.is(unknown.status, 400);
  assert.is(unknown.json!.error_code, 'request_not_valid');
  assert.equal(
    unknown.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['colour'],
  );

  const missing = await shot({ format: 'png' });
  assert.equal(
    missing.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['url'],
  );

  const malformed = await post('{"url": ');
  assert.is(malformed.status, 400);
  assert.is(malformed.json!.error_code, 'request_not_valid');
  const wrongType = await post('url=x', 'application/x-www-form-urlencoded');
  assert.is(wrongType.status, 400);
  assert.is(wrongType.json!.error_code, 'request_not_valid');
  const notObject = await post('["https://example.com"]');
  assert.is(notObject.json!.error_code, 'request_not_valid');
  const huge = await post(JSON.stringify({ url: page('/'), external_identifier: 'x'.repeat(1024 * 1024 + 10) }));
  assert.is(huge.status, 413);
  assert.is(huge.json!.error_code, 'request_body_too_large');
});

take('only http and https are rendered', async () => {
  for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'ftp://example.com/file']) {
    const answer = await shot({ url });
    assert.is(answer.status, 400, url);
    assert.is(answer.json!.error_code, 'url_not_allowed', url);
  }
  assert.is((await shot({ url: 'not a url' })).json!.error_code, 'request_not_valid');
});

take('async=true answers 202 and the status endpoint follows the render', async () => {
  const accepted = await shot({ url: page('/'), async: true, external_identifier: 'order-7' });
  assert.is(accepted.status, 202);
  assert.is(accepted.json!.status, 'pending');
  let status: Record<string, any> = {};
  for (let i = 0; i < 100 && !['succeeded', 'failed'].includes(status.status); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    status = (await call(accepted.json!.status_url, { headers: { 'x-access-key': workspace.access_key } })).json!;
  }
  assert.is(status.status, 'succeeded');
  assert.is(status.external_identifier, 'order-7');
  assert.is((await call(status.file_url)).contentType, 'image/png');
  const unknown = await call(`${service.base}/api/renders/00000000-0000-0000-0000-000000000000`, {
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(unknown.status, 404);
  const other = await createWorkspace(stack);
  const foreign = await call(accepted.json!.status_url, { headers: { 'x-access-key': other.access_key } });
  assert.is(foreign.status, 404, 'another workspace sees nothing');
  assert.is((await call(accepted.json!.status_url)).status, 401);
});

take('health, readiness and metrics answer', async () => {
  assert.is((await call(`${service.base}/healthz`)).status, 200);
  const ready = await call(`${service.base}/readyz`);
  assert.is(ready.status, 200, JSON.stringify(ready.json));
  assert.is((await call(`${service.base}/nothing-here`)).json!.error_code, 'not_found');
  const exposition = await call(`${service.base}/metrics`);
  assert.match(exposition.contentType, /^text\/plain/);
  assert.match(exposition.bytes.toString(), /shutterbus_http_responses_total\{route="\/api\/take",status="200"\} \d+/);
  assert.match(
    exposition.bytes.toString(),
    /shutterbus_renders_total\{status="failed",error_code="host_returned_error"\} \d+/,
  );
  // The queues' depth, read from JetStream at the scrape: nothing waits once every render above ended.
  for (const queue of ['renders', 'deliveries']) {
    assert.match(
      exposition.bytes.toString(),
      new RegExp(`^shutterbus_queue_waiting\\{queue="${queue}"\\} 0$`, 'm'),
      queue,
    );
    assert.match(
      exposition.bytes.toString(),
      new RegExp(`^shutterbus_queue_in_progress\\{queue="${queue}"\\} \\d+$`, 'm'),
      queue,
    );
  }
  assert.match(exposition.bytes.toString(), /# TYPE shutterbus_queue_waiting gauge/);
  // The worker's pages and Chromium's memory, read from its browsers at the scrape.
  const pages = (state: string) =>
    Number(
      new RegExp(`^shutterbus_render_pages\\{state="${state}"\\} (\\d+)$`, 'm').exec(exposition.bytes.toString())?.[1],
    );
  assert.ok(pages('idle') >= 1, 'the renders above left warm pages');
  assert.is(pages('rendering'), 0);
  assert.ok(pages('spare') >= 0);
  const chromiumMb = Number(
    /^shutterbus_render_chromium_memory_megabytes (\d+)$/m.exec(exposition.bytes.toString())?.[1],
  );
  assert.ok(chromiumMb > 50, `Chromium's memory: ${chromiumMb} MB`);
});

take.run();
