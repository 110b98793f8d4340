// A render stays in its box, seen through the API: a memory bomb is 422 page_memory_exceeded and
// the next shot works; an image too large is a 400 before any browser work; a shot cannot go
// back to the previous shot's page.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { errorTable } from '../../src/errors.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const box = suite("a render's box, end to end");
let stack: TestStack;
let service: TestService;
let workspace: Workspace;

const shot = (params: Record<string, string>) =>
  call(`${service.base}/api/take?${new URLSearchParams(params)}`, {
    headers: { 'x-access-key': workspace.access_key },
  });

box.before(async () => {
  stack = await startStack();
  // A low bound, to spare a machine shared with other work.
  service = await startService(stack, { RENDERER_MEMORY_LIMIT_MB: '300' });
  workspace = await createWorkspace(stack);
});
box.after(async () => {
  await service?.close();
  await stack?.stop();
});

box('a scripts memory bomb is 422 page_memory_exceeded, and the next shot works', async () => {
  const bomb = await shot({
    url: `${stack.site.url}/`,
    scripts: 'const kept = []; for (;;) kept.push(new Uint8Array(16 * 1024 * 1024).fill(7));',
    timeout: '30',
  });
  assert.is(bomb.status, 422, bomb.bytes.toString().slice(0, 300));
  assert.is(bomb.json!.error_code, 'page_memory_exceeded');
  assert.is(bomb.json!.error_message, errorTable.page_memory_exceeded.message);

  const next = await shot({ url: `${stack.site.url}/` });
  assert.is(next.status, 200);
  assert.is(next.contentType, 'image/png');
});

box('an image too large is a 400 naming the parameter, before any browser work', async () => {
  const hitsBefore = stack.site.received.length;
  const large = await shot({
    url: `${stack.site.url}/`,
    viewport_width: '3840',
    viewport_height: '2160',
    device_scale_factor: '5',
  });
  assert.is(large.status, 400);
  assert.is(large.json!.error_code, 'request_not_valid');
  assert.equal(
    large.json!.error_details.map((detail: { parameter: string }) => detail.parameter),
    ['device_scale_factor'],
  );
  assert.is(stack.site.received.length, hitsBefore, 'the page was never fetched');
});

box("history.back() in a shot finds nothing of the workspace's previous shot", async () => {
  const token = 'tok-e2e-51c0';
  // The fixture's named page shows its name: the token is on that page's screen.
  const first = await shot({ url: `${stack.site.url}/page/${token}?token=${token}` });
  assert.is(first.status, 200);
  const tokenRequests = () => stack.site.received.filter((request) => request.search.includes(token)).length;
  assert.is(tokenRequests(), 1);
  // Reaching the previous shot's page would put the token on screen: 422 content_contains_specified_string.
  const next = await shot({
    html: '<p>next</p>',
    // An html document replaces the wipe's blank page in place: one step back is the previous shot.
    scripts: 'history.back(); new Promise((resolve) => setTimeout(resolve, 300))',
    scripts_wait_until: 'load',
    fail_if_content_contains: token,
  });
  assert.is(next.status, 200, next.bytes.toString().slice(0, 300));
  assert.is(tokenRequests(), 1, "the previous shot's URL was not fetched again");
});

box.run();
