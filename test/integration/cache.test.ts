import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { shutterbus } from '../helpers/cli.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TakeAnswer,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const cached = suite('cached signed URLs: render once, redirect for free');
let stack: TestStack;
let service: TestService;
let secondIngress: TestService;
let expiring: { url: string; path: string; workspace: Workspace; firstAt: number };

const signed = (workspace: Workspace, query: string) => `${query}&signature=${hmacHex(workspace.secret_key, query)}`;
const queryFor = (workspace: Workspace, path: string, extra = '') =>
  `url=${encodeURIComponent(`${stack.site.url}${path}`)}&access_key=${workspace.access_key}&viewport_width=320&viewport_height=240${extra}`;
const fresh = () => `/page/${randomUUID()}`;
const hitsOf = (path: string) => stack.site.hits.get(path) ?? 0;

/** Follows one redirect by hand, as a browser would from an <img>. */
const view = async (base: string, query: string): Promise<{ first: TakeAnswer; image: TakeAnswer }> => {
  const first = await call(`${base}/api/take?${query}`);
  const image = first.status === 302 ? await call(first.headers.get('location')!) : first;
  return { first, image };
};

cached.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  secondIngress = await startService(stack, { ROLES: 'ingress' });
  // The shortest cache_ttl is a minute: start it first, check it last.
  const workspace = await createWorkspace(stack);
  const path = fresh();
  expiring = {
    url: signed(workspace, queryFor(workspace, path, '&cache_ttl=60')),
    path,
    workspace,
    firstAt: Date.now(),
  };
  assert.is((await call(`${service.base}/api/take?${expiring.url}`)).status, 200);
});
cached.after(async () => {
  await secondIngress?.close();
  await service?.close();
  await stack?.stop();
});

cached('first view renders and charges; the second redirects to the same bytes for free', async () => {
  const workspace = await createWorkspace(stack);
  const path = fresh();
  const url = signed(workspace, queryFor(workspace, path));
  const first = await call(`${service.base}/api/take?${url}`);
  assert.is(first.status, 200);
  assert.is(first.contentType, 'image/png');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);

  const second = await view(service.base, url);
  assert.is(second.first.status, 302);
  assert.match(second.first.headers.get('location')!, new RegExp(`^${service.base}/files/\\d{8}-[0-9a-f]{32}\\.png$`));
  assert.is(second.image.status, 200);
  assert.is(second.image.contentType, 'image/png');
  assert.ok(second.image.bytes.equals(first.bytes), 'the same bytes');
  assert.ok(second.image.headers.get('etag'));
  assert.match(second.image.headers.get('cache-control')!, /public, max-age=\d+/);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1, 'the redirect was free');
  assert.is(hitsOf(path), 1, 'rendered once');
});

cached('with the quota used up, the cached URL still redirects', async () => {
  const workspace = await createWorkspace(stack, { quota: 1 });
  const url = signed(workspace, queryFor(workspace, fresh()));
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 200);
  const other = await call(`${service.base}/api/take?${signed(workspace, queryFor(workspace, fresh()))}`);
  assert.is(other.json!.error_code, 'screenshots_limit_reached');
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 302);
});

cached('repeat views answered from memory keep every check: header key, rotation, metrics', async () => {
  const workspace = await createWorkspace(stack);
  const other = await createWorkspace(stack);
  const url = signed(workspace, queryFor(workspace, fresh()));
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 200);
  const redirects = async () =>
    Number(
      /shutterbus_http_responses_total\{route="\/api\/take",status="302"\} (\d+)/.exec(
        await (await fetch(`${service.base}/metrics`)).text(),
      )?.[1] ?? 0,
    );
  const before = await redirects();
  for (let i = 0; i < 3; i++) assert.is((await call(`${service.base}/api/take?${url}`)).status, 302);
  assert.is(await redirects(), before + 3, 'every redirect is counted');

  // A key in the header comes first (docs/api.md): the signature is then another workspace's to match.
  const withHeader = await call(`${service.base}/api/take?${url}`, { headers: { 'x-access-key': other.access_key } });
  assert.is(withHeader.json?.error_code, 'signature_is_not_valid');
  const head = await fetch(`${service.base}/api/take?${url}`, { method: 'HEAD', redirect: 'manual' });
  assert.is(head.status, 302, 'HEAD goes through the full checks');

  const rotated = await shutterbus(
    stack,
    'keys',
    'rotate',
    '--workspace',
    workspace.workspace_id,
    '--as',
    'owner@example.com',
  );
  assert.is(rotated.code, 0);
  let answer = await call(`${service.base}/api/take?${url}`);
  await waitFor(
    async () => (answer = await call(`${service.base}/api/take?${url}`)).status !== 302,
    'the rotated key stops redirecting',
    10_000,
  );
  assert.is(answer.json?.error_code, 'access_key_invalid');
});

cached('an unsigned cache=true URL stops redirecting once signed requests are required', async () => {
  const workspace = await createWorkspace(stack);
  const url = queryFor(workspace, fresh(), '&cache=true');
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 200);
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 302, 'a repeat view, answered from memory');
  const setting = await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    workspace.workspace_id,
    '--as',
    'owner@example.com',
    '--require-signed-requests',
    'on',
  );
  assert.is(setting.code, 0);
  // Another unsigned request tells when the setting has reached this ingress.
  const probe = queryFor(workspace, fresh());
  await waitFor(
    async () => (await call(`${service.base}/api/take?${probe}`)).json?.error_code === 'signature_is_required',
    'the setting reached the ingress',
    10_000,
  );
  const refused = await call(`${service.base}/api/take?${url}`);
  assert.is(refused.status, 403, 'a leaked key replays only URLs already signed');
  assert.is(refused.json?.error_code, 'signature_is_required');
});

cached('cache=false, unsigned GETs and POSTs always render and charge', async () => {
  const workspace = await createWorkspace(stack);
  const path = fresh();
  const noCache = signed(workspace, queryFor(workspace, path, '&cache=false'));
  assert.is((await call(`${service.base}/api/take?${noCache}`)).status, 200);
  assert.is((await call(`${service.base}/api/take?${noCache}`)).status, 200);
  const unsigned = queryFor(workspace, path);
  assert.is((await call(`${service.base}/api/take?${unsigned}`)).status, 200);
  assert.is((await call(`${service.base}/api/take?${unsigned}`)).status, 200);
  const body = JSON.stringify({ url: `${stack.site.url}${path}`, access_key: workspace.access_key });
  const post = () =>
    call(`${service.base}/api/take`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': hmacHex(workspace.secret_key, body) },
      body,
    });
  assert.is((await post()).status, 200);
  assert.is((await post()).status, 200);
  assert.is(hitsOf(path), 6);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 6);
});

cached("one workspace's cache is never another's", async () => {
  const path = fresh();
  const [one, two] = [await createWorkspace(stack), await createWorkspace(stack)];
  assert.is((await call(`${service.base}/api/take?${signed(one, queryFor(one, path))}`)).status, 200);
  assert.is(
    (await call(`${service.base}/api/take?${signed(two, queryFor(two, path))}`)).status,
    200,
    'renders its own',
  );
  assert.is(hitsOf(path), 2);
  assert.is(await usedThisMonth(stack, two.workspace_id), 1);
});

cached('30 concurrent first views over two ingresses: one render, one charge, all get the image', async () => {
  const workspace = await createWorkspace(stack);
  const path = fresh();
  const url = signed(workspace, queryFor(workspace, path));
  const views = await Promise.all(
    Array.from({ length: 30 }, (_, i) => view(i % 2 ? secondIngress.base : service.base, url)),
  );
  for (const { first, image } of views) {
    assert.ok([200, 302].includes(first.status), `status ${first.status}: ${first.bytes.toString().slice(0, 200)}`);
    assert.is(image.status, 200);
    assert.is(image.contentType, 'image/png');
    assert.ok(image.bytes.equals(views[0].image.bytes), 'every view got the same image');
  }
  assert.is(views.filter(({ first }) => first.status === 200).length, 1, 'exactly one answered with the render');
  assert.is(hitsOf(path), 1, 'exactly one render');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1, 'charged once');
});

cached('an async view while the first view renders is accepted at once with its render id', async () => {
  const workspace = await createWorkspace(stack);
  const url = signed(workspace, queryFor(workspace, `/slow?ms=3000&id=${randomUUID()}`, '&async=true'));
  const first = await call(`${service.base}/api/take?${url}`);
  assert.is(first.status, 202, JSON.stringify(first.json));
  // The page takes 3 s: a view that waited for the render would take as long.
  const started = Date.now();
  const second = await call(`${secondIngress.base}/api/take?${url}`);
  assert.ok(Date.now() - started < 1500, `answered at once, not after the render (${Date.now() - started} ms)`);
  assert.is(second.status, 202, JSON.stringify(second.json));
  assert.equal(
    { is_successful: second.json?.is_successful, render_id: second.json?.render_id, status: second.json?.status },
    { is_successful: true, render_id: first.json?.render_id, status: 'pending' },
    'the render under way, which this view follows',
  );
  assert.is(second.headers.get('x-render-id'), first.json?.render_id, 'X-Render-Id says the same render');
  const status = async () =>
    (await call(second.json!.status_url, { headers: { 'x-access-key': workspace.access_key } })).json?.status;
  await waitFor(async () => (await status()) === 'succeeded', 'the render');
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 302, 'a later view redirects');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1, 'charged once');
});

cached('concurrent first views with the quota used up: each is refused 402 at once, async or not', async () => {
  const workspace = await createWorkspace(stack, { quota: 0 });
  for (const extra of ['', '&async=true']) {
    const url = signed(workspace, queryFor(workspace, fresh(), extra));
    const started = Date.now();
    // The view that claims the entry is refused at admission; the others, which followed it, must not
    // wait for a render that never comes (nor be accepted for it).
    const views = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(`${(i % 2 ? secondIngress : service).base}/api/take?${url}`)),
    );
    assert.equal(
      views.map((answer) => `${answer.status} ${answer.json?.error_code}`),
      Array(6).fill('402 screenshots_limit_reached'),
      `views${extra}`,
    );
    assert.ok(Date.now() - started < 5000, `answered at once (${Date.now() - started} ms)`);
  }
});

cached('a render failure is not cached', async () => {
  const workspace = await createWorkspace(stack);
  const url = signed(workspace, queryFor(workspace, '/status/500'));
  const before = hitsOf('/status/500');
  const first = await call(`${service.base}/api/take?${url}`);
  assert.is(first.status, 502);
  assert.is(first.json?.error_code, 'host_returned_error');
  assert.is(hitsOf('/status/500'), before + 1);
  // A failed render left behind as a claim would be followed: a 502 too, but without visiting the site.
  assert.is((await call(`${service.base}/api/take?${url}`)).status, 502);
  assert.is(hitsOf('/status/500'), before + 2, 'renders again rather than answering from the failed render');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 0);
});

cached('an expired entry renders (and charges) again', async () => {
  assert.is((await call(`${service.base}/api/take?${expiring.url}`)).status, 302, 'still cached within its TTL');
  assert.is(hitsOf(expiring.path), 1);
  // The claim is about time: the entry answers for its 60 s TTL (counted from the first view), then not.
  await pause(Math.max(0, expiring.firstAt + 61_000 - Date.now()));
  assert.is((await call(`${service.base}/api/take?${expiring.url}`)).status, 200);
  assert.is(hitsOf(expiring.path), 2, 'rendered again');
  assert.is(await usedThisMonth(stack, expiring.workspace.workspace_id), 2);
  assert.is((await call(`${service.base}/api/take?${expiring.url}`)).status, 302, 'and is cached again');
});

cached.run();
