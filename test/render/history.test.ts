// A render's navigation history stays in its box: the next render on the same warm page cannot go
// back to the previous render's pages (their URLs may carry a customer's tokens).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('navigation history across renders of a warm page');

const TOKEN = 'tok-a-7f3e91';
let rig: RenderRig;

const html = (res: ServerResponse, body: string) =>
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>t</title><p>${body}</p>`);

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_history',
    // One warm page, so both renders use it; a content rule makes the render read the page's text.
    host: { poolSize: 1 },
    defaults: { viewport_width: 800, viewport_height: 600, fail_if_content_contains: ['never-there'] },
    routes: {
      '/account': (_req: IncomingMessage, res: ServerResponse, url: URL) =>
        html(res, `account of ${url.searchParams.get('token')}`),
      '/next': (_req: IncomingMessage, res: ServerResponse) => html(res, 'the next render'),
    },
  });
});

test.after(async () => {
  await rig.stop();
});

const tokenRequests = () => rig.site.received.filter((request) => request.search.includes(TOKEN)).length;

for (const goBack of ['history.go(-2)', 'history.back()', 'history.go(-1)']) {
  test(`${goBack} in the next render finds nothing of the previous one`, async () => {
    const before = tokenRequests();
    const first = await rig.render(`/account?token=${TOKEN}`);
    assert.ok(first.visibleText.includes(TOKEN), 'the first render showed its page');
    assert.is(tokenRequests(), before + 1);

    const next = await rig.render('/next', {
      scripts: `${goBack}; new Promise((resolve) => setTimeout(resolve, 300))`,
      scripts_wait_until: ['load'],
    });
    assert.not.ok(
      next.visibleText.includes(TOKEN),
      `the capture shows no trace of the first render: "${next.visibleText}"`,
    );
    assert.is(tokenRequests(), before + 1, "the first render's URL was not fetched again");
  });
}

test('the next render sees a history of its own page alone', async () => {
  await rig.render(`/account?token=${TOKEN}`);
  const next = await rig.render('/next', { scripts: 'document.body.append("length=" + history.length)' });
  // The wipe's blank page may remain behind the render's own page, nothing more.
  const length = Number(/length=(\d+)/.exec(next.visibleText)?.[1]);
  assert.ok(length <= 2, `history.length is ${length}`);
});

test.run();
