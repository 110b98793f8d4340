// A cached signed GET answers every view in the kind its response_type asks for, as ScreenshotOne
// does: json views are JSON (cache_url included), empty views are empty, by_format views redirect to
// the file. Against the whole service (real NATS, store and Chromium); each view after the first is
// neither rendered nor charged.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const test = suite('cached answers by response_type');
let stack: TestStack;
let service: TestService;

test.before(async () => {
  stack = await startStack();
  service = await startService(stack);
});
test.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** The signed GET URL of `query` (the access key appended, the signature last). */
const signedUrl = (workspace: Workspace, query: string) => {
  const unsigned = `${query}&access_key=${workspace.access_key}`;
  return `${service.base}/api/take?${unsigned}&signature=${hmacHex(workspace.secret_key, unsigned)}`;
};

test('response_type=json: every view of a cached signed GET is the JSON answer, with cache_url', async () => {
  const workspace = await createWorkspace(stack);
  const url = signedUrl(
    workspace,
    `html=${encodeURIComponent('<title>Cached</title><p>json views</p>')}&response_type=json&metadata_page_title=true`,
  );
  const first = await call(url);
  assert.is(first.status, 200, first.bytes.toString());
  assert.is(first.json!.cache_url, first.json!.file_url);
  // The second view is answered from the cache; the third from the repeat views held in memory.
  for (const view of [2, 3]) {
    const again = await call(url);
    assert.is(again.status, 200, `view ${view}: ${again.status} ${again.headers.get('location') ?? ''}`);
    assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
    assert.is(again.headers.get('x-render-id'), first.json!.render_id);
    assert.is(again.json!.is_successful, true);
    assert.is(again.json!.render_id, first.json!.render_id);
    assert.is(again.json!.file_url, first.json!.file_url);
    assert.is(again.json!.screenshot_url, first.json!.file_url);
    assert.is(again.json!.cache_url, first.json!.file_url);
    assert.is(again.json!.format, 'png');
    assert.is(again.json!.size_bytes, first.json!.size_bytes);
    assert.equal(again.json!.metadata, first.json!.metadata);
  }
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);
});

test('response_type=empty: every view is 200 with no body; by_format views still redirect', async () => {
  const workspace = await createWorkspace(stack);
  const empty = signedUrl(workspace, `html=${encodeURIComponent('<p>empty views</p>')}&response_type=empty`);
  const first = await call(empty);
  assert.is(first.status, 200, first.bytes.toString());
  const renderId = first.headers.get('x-render-id');
  assert.ok(renderId);
  for (const view of [2, 3]) {
    const again = await call(empty);
    assert.is(again.status, 200, `view ${view}: ${again.status}`);
    assert.is(again.bytes.length, 0);
    assert.is(again.headers.get('x-render-id'), renderId);
  }
  const image = signedUrl(workspace, `html=${encodeURIComponent('<p>image views</p>')}`);
  assert.is((await call(image)).status, 200);
  for (const _ of [2, 3]) assert.is((await call(image)).status, 302);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 2);
});

test('bulk, executed: a request already cached answers with the JSON answer of its render', async () => {
  const workspace = await createWorkspace(stack);
  const bulk = () =>
    call(`${service.base}/api/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
      body: JSON.stringify({
        execute: true,
        requests: [{ html: '<title>Bulk</title><p>bulk twice</p>', metadata_page_title: true }],
      }),
    });
  const first = await bulk();
  assert.is(first.status, 200, first.bytes.toString());
  const rendered = first.json!.responses[0].response;
  assert.is(rendered.is_successful, true, JSON.stringify(rendered));
  const again = (await bulk()).json!.responses[0].response;
  assert.is(again.render_id, rendered.render_id);
  assert.is(again.cache_url, rendered.file_url);
  assert.is(again.format, 'png');
  assert.is(again.size_bytes, rendered.size_bytes);
  assert.equal(again.metadata, rendered.metadata);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);
});

test('cache options on a request that is not cached are a 400 naming each; cache=true caches an unsigned GET', async () => {
  const workspace = await createWorkspace(stack);
  const headers = { 'content-type': 'application/json', 'x-access-key': workspace.access_key };
  const post = (body: Record<string, unknown>) =>
    call(`${service.base}/api/take`, { method: 'POST', headers, body: JSON.stringify(body) });
  const named = (answer: Awaited<ReturnType<typeof call>>) =>
    answer.json!.error_details.map((detail: { parameter: string }) => detail.parameter);
  const refused = await post({ html: '<p>post</p>', cache: true, cache_key: 'v2', cache_ttl: 3600 });
  assert.is(refused.status, 400);
  assert.is(refused.json!.error_code, 'request_not_valid');
  assert.equal(named(refused), ['cache', 'cache_key', 'cache_ttl']);
  const unsigned = await call(
    `${service.base}/api/take?html=${encodeURIComponent('<p>get</p>')}&cache_key=v2&access_key=${workspace.access_key}`,
  );
  assert.is(unsigned.status, 400);
  assert.equal(named(unsigned), ['cache_key']);
  // cache=false says what happens anyway; null is not given.
  assert.is((await post({ html: '<p>post</p>', cache: false, cache_ttl: null })).status, 200);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);

  // An unsigned GET asking for the cache gets it: rendered and charged once, then redirected.
  const cachedUrl = `${service.base}/api/take?html=${encodeURIComponent('<p>unsigned, cached</p>')}&cache=true&cache_key=u1&access_key=${workspace.access_key}`;
  const first = await call(cachedUrl);
  assert.is(first.status, 200);
  for (let view = 0; view < 2; view++) {
    const again = await call(cachedUrl);
    assert.is(again.status, 302, `view ${view + 2}`);
    assert.ok((await call(again.headers.get('location')!)).bytes.equals(first.bytes), 'the same bytes');
  }
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 2, 'the redirects are not charged');
});

test.run();
