// What a new user meets first, against the real stack: a typo named with what was meant, a local
// URL refused with how to allow it, a HEAD that renders nothing, a failed render's timeline that
// says it failed and why.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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
import { waitFor } from '../helpers/wait.ts';

const firstHour = suite("a new user's first requests");
let stack: TestStack;
let service: TestService;
let strict: TestService;
let workspace: Workspace;

firstHour.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  // As production runs: private and loopback targets refused.
  strict = await startService(stack, { ALLOW_PRIVATE_TARGETS: 'false' });
  workspace = await createWorkspace(stack);
});
firstHour.after(async () => {
  await strict?.close();
  await service?.close();
  await stack?.stop();
});

const auth = () => ({ headers: { 'x-access-key': workspace.access_key } });
const take = (base: string, query: string, init: RequestInit = {}) =>
  call(`${base}/api/take?url=${encodeURIComponent(`${stack.site.url}/`)}&${query}`, { ...auth(), ...init });

firstHour('a misspelt parameter is named with the one meant, on take, animate and bulk', async () => {
  const shot = await take(service.base, 'formt=png');
  assert.is(shot.status, 400);
  assert.equal(shot.json!.error_details, [
    { parameter: 'formt', message: 'is not a known parameter; did you mean `format`?' },
  ]);
  const video = await call(`${service.base}/api/animate?url=${encodeURIComponent(stack.site.url)}&duraton=2`, auth());
  assert.is(video.status, 400);
  assert.match(JSON.stringify(video.json!.error_details), 'did you mean `duration`?');
  const bulk = await call(`${service.base}/api/bulk`, {
    method: 'POST',
    headers: { ...auth().headers, 'content-type': 'application/json' },
    body: JSON.stringify({ request: [{ url: stack.site.url }] }),
  });
  assert.is(bulk.status, 400);
  assert.match(JSON.stringify(bulk.json!.error_details), 'did you mean `requests`?');
});

firstHour('a loopback URL refused in production says how local pages are rendered', async () => {
  const refused = await take(strict.base, 'format=png');
  assert.is(refused.status, 400);
  assert.is(refused.json!.error_code, 'url_not_allowed');
  assert.match(JSON.stringify(refused.json!.error_details), 'ALLOW_PRIVATE_TARGETS=true');
});

firstHour('HEAD /api/take renders nothing and charges nothing: 405 with Allow', async () => {
  const before = await usedThisMonth(stack, workspace.workspace_id);
  for (const path of ['/api/take', '/api/animate']) {
    const response = await fetch(`${service.base}${path}?url=${encodeURIComponent(`${stack.site.url}/`)}`, {
      method: 'HEAD',
      headers: auth().headers,
    });
    assert.is(response.status, 405, path);
    assert.is(response.headers.get('allow'), 'GET, POST', path);
    assert.is(response.headers.get('x-render-id'), null, `${path}: no render was made`);
  }
  assert.is(await usedThisMonth(stack, workspace.workspace_id), before);
  // GET still renders.
  const shot = await take(service.base, 'format=png&cache=false');
  assert.is(shot.status, 200);
});

firstHour("a failed render's timeline ends with a failed step carrying its error", async () => {
  const accepted = await take(service.base, 'wait_for_selector=%23never&timeout=3&async=true');
  assert.is(accepted.status, 202, JSON.stringify(accepted.json));
  const renderId = accepted.json!.render_id as string;
  let status: Record<string, unknown> = {};
  await waitFor(async () => {
    status = (await call(`${service.base}/api/renders/${renderId}`, auth())).json!;
    return status.status === 'failed';
  }, 'the render to fail');
  const timeline = status.timeline as { step: string; ms: number; error_code?: string }[];
  const last = timeline.at(-1)!;
  assert.is(last.step, 'failed', JSON.stringify(timeline));
  assert.is(last.error_code, status.error_code);
  assert.ok(
    timeline.some((step) => step.step === 'started'),
    'the steps it reached come before',
  );
  assert.is(timeline.filter((step) => step.step === 'failed').length, 1);
});

firstHour.run();
