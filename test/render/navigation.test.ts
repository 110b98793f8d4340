// How a navigation's end is reported, against real Chromium and the fixture site: a target that
// asks for HTTP authentication nobody answers is the host's error, not the network's, and its page
// is captured with ignore_host_errors; the wipe's navigation waits for its document's load.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { cdp } from '../../src/render/browser/cdp.ts';
import { gotoDocument, mainFrameUrl } from '../../src/render/browser/playwright.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('navigation');

let rig: RenderRig;

/** The page a navigation test is lent. */
const setup = {
  timeout: 10,
  viewport_width: 800,
  viewport_height: 600,
  device_scale_factor: 1,
  workspaceId: 'ws_navigation',
};

/** How long /slow-load's image takes: its document's load comes no sooner. */
const SLOW_IMAGE_MS = 800;

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_navigation',
    routes: {
      '/basic-auth': (_req, res) => {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="members"', 'content-type': 'text/html' });
        res.end('<h1>Sign in</h1>');
      },
      '/slow-load': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<h1>Slow</h1><img src="/slow-image">');
      },
      '/moved': (_req, res) => {
        res.writeHead(302, { location: '/landing' }).end();
      },
      '/landing': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': ['a=1', 'b=2'] });
        res.end('<h1>Landed</h1>');
      },
      '/never-loads': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<h1>Waiting</h1><img src="/never">');
      },
      '/never': () => {},
      '/slow-image': (_req, res) => {
        setTimeout(() => res.writeHead(404).end(), SLOW_IMAGE_MS);
      },
    },
  });
});

test.after(async () => {
  await rig?.stop();
});

test('a 401 with a Basic challenge and no authorization is host_returned_error with returned_status_code 401', async () => {
  const error = await rig.render('/basic-auth').then(
    () => null,
    (err: unknown) => err,
  );
  assert.instance(error, ServiceError);
  assert.is((error as ServiceError).code, 'host_returned_error');
  assert.equal((error as ServiceError).details, { returned_status_code: 401 });
  // The next render on the same warm page works.
  const next = await rig.render('/');
  assert.ok(next.image.length > 0);
});

test('with ignore_host_errors the 401 page itself is captured, and the next render on the warm page has no challenge declined for it', async () => {
  const observation = await rig.render('/basic-auth', {
    ignore_host_errors: true,
    fail_if_content_missing: ['Sign in'],
  });
  assert.is(observation.mainStatus, 401);
  assert.match(observation.visibleText, 'Sign in');
  const error = await rig.render('/basic-auth').then(
    () => null,
    (err: unknown) => err,
  );
  assert.is((error as ServiceError).code, 'host_returned_error');
});

test('gotoDocument is one Page.navigate on the pipe, settled once the new document has fired load, with its response', async () => {
  await rig.host.withPage(setup, new AbortController().signal, async (page, _progress, session) => {
    const navigate = (url: string) => cdp(session).Page.navigate({ url });
    const goto = page.goto;
    page.goto = () => Promise.reject(new Error('page.goto was called'));
    try {
      // The page starts loaded: that load must not settle the navigation to the next document.
      const started = Date.now();
      const response = await gotoDocument(page, `${rig.site.url}/slow-load`, 'load', navigate);
      assert.ok(Date.now() - started >= SLOW_IMAGE_MS - 50, `settled after ${Date.now() - started} ms`);
      assert.is(await page.evaluate(() => document.readyState), 'complete');
      assert.is(response?.status(), 200);
      assert.is(response?.header('content-type'), 'text/html');
      assert.is(mainFrameUrl(page), `${rig.site.url}/slow-load`);
      assert.is(await gotoDocument(page, 'about:blank', 'load', navigate), null, 'about:blank has no response');
      // Asked of the page: the client's page.url() hears of the commit by an event that may still
      // be on its way when the server's frame has fired load.
      assert.is(await page.evaluate(() => location.href), 'about:blank');
      assert.is(await page.evaluate(() => document.readyState), 'complete');
    } finally {
      page.goto = goto;
    }
  });
});

test("gotoDocument's response is the redirect's end, and a page closed while it waits fails it at once", async () => {
  await rig.host.withPage(setup, new AbortController().signal, async (page, _progress, session) => {
    const navigate = (url: string) => cdp(session).Page.navigate({ url });
    const response = await gotoDocument(page, `${rig.site.url}/moved`, 'domcontentloaded', navigate);
    assert.is(response?.status(), 200);
    assert.is(response?.url(), `${rig.site.url}/landing`);
    assert.is(mainFrameUrl(page), `${rig.site.url}/landing`);
    assert.is((await response!.allHeaders())['set-cookie'], 'a=1\nb=2');
    const waiting = gotoDocument(page, `${rig.site.url}/never-loads`, 'load', navigate).then(
      () => null,
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closedAt = Date.now();
    await page.close();
    const error = await waiting;
    assert.match(String(error), /closed/);
    assert.ok(Date.now() - closedAt < 2000, `failed ${Date.now() - closedAt} ms after the close`);
  });
});

test.run();
