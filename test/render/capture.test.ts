// capturePage against real Chromium and the local fixture site: what a user would get back.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { imageSize } from 'image-size';
import { startEgressProxy } from '../../src/net/egress-proxy.ts';
import { BrowserHost } from '../../src/render/browser/browser.ts';
import { capturePage } from '../../src/render/capture.ts';
import { chromium } from '../../src/render/browser/playwright.ts';
import { ServiceError } from '../../src/errors.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { waitFor } from '../helpers/wait.ts';
import { listProcesses, processTree } from '../helpers/processes.ts';
import { CHROMIUM } from '../helpers/render.ts';

const test = suite('capturePage');

let site: FixtureSite;
let host: BrowserHost;

const defaults: Omit<RenderOptions, 'url'> = {
  ...renderDefaults,
  timeout: 15,
};

// Renders a fixture path with the given options.
function render(
  path: string,
  options: Partial<RenderOptions> = {},
  signal = new AbortController().signal,
): Promise<PageObservation> {
  return capturePage(host, { ...defaults, ...options, url: site.url + path }, signal, { workspaceId: 'ws_capture' });
}

// The code a failed render rejects with.
async function failureCode(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    assert.instance(error, ServiceError, String(error));
    return (error as ServiceError).code;
  }
  assert.unreachable('the render should have failed');
  return '';
}

const size = (image: Buffer) => {
  const { width, height } = imageSize(image);
  return { width, height };
};

/** How often Playwright's client captured its caller's stack (captureRawStack formats one) while `work` ran. */
async function stackCaptures(work: () => Promise<unknown>): Promise<number> {
  let captures = 0;
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, callSites) => {
    if (callSites.some((callSite) => callSite.getFunctionName() === 'captureRawStack')) captures++;
    return `${error}${callSites.map((callSite) => `\n    at ${callSite}`).join('')}`;
  };
  try {
    await work();
    return captures;
  } finally {
    Error.prepareStackTrace = previous;
  }
}

/** The kinds of objects Playwright's server had its client make a copy of while `work` ran. */
async function clientCopies(work: () => Promise<unknown>): Promise<string[]> {
  const connection = (chromium as unknown as { _connection: { dispatch(message: unknown): void } })._connection;
  const dispatch = connection.dispatch;
  const made: string[] = [];
  connection.dispatch = function (message) {
    const { method, params } = message as { method?: string; params?: { type?: string } };
    if (method === '__create__' && params?.type) made.push(params.type);
    return dispatch.call(this, message);
  };
  try {
    await work();
    return made;
  } finally {
    connection.dispatch = dispatch;
  }
}

test.before(async () => {
  site = await startFixtureSite();
  host = new BrowserHost({ executablePath: CHROMIUM });
  await host.start();
});

test.after(async () => {
  await host.close();
  await site.close();
});

test('default viewport is 1280×720 and the browser is healthy', async () => {
  const started = performance.now();
  const observation = await render('/', { fail_if_content_missing: ['Hello'] });
  const ms = Math.round(performance.now() - started);
  assert.equal(size(observation.image), { width: 1280, height: 720 });
  assert.is(observation.mainStatus, 200);
  assert.is(observation.finalUrl, `${site.url}/`);
  assert.match(observation.visibleText, 'Hello from the fixture site.');
  assert.ok(host.isHealthy());
  assert.ok(await host.ping());
  console.log(`    one render of / took ${ms} ms`);
});

test('custom viewport and device scale factor', async () => {
  assert.equal(size((await render('/', { viewport_width: 800, viewport_height: 600 })).image), {
    width: 800,
    height: 600,
  });
  assert.equal(size((await render('/', { device_scale_factor: 2 })).image), { width: 2560, height: 1440 });
});

test('selector captures the element box, scaled by device_scale_factor', async () => {
  assert.equal(size((await render('/element', { selector: '#box' })).image), { width: 200, height: 100 });
  assert.equal(size((await render('/element', { selector: '#box', device_scale_factor: 2 })).image), {
    width: 400,
    height: 200,
  });
});

test('a selector matching nothing is reported and the viewport captured', async () => {
  const observation = await render('/element', { selector: '#missing', scroll_into_view: '#also-missing' });
  assert.equal(observation.missingSelectors.sort(), ['#also-missing', '#missing']);
  assert.equal(size(observation.image), { width: 1280, height: 720 });
});

test('full_page captures the whole page, cut at 16384 px', async () => {
  assert.equal(size((await render('/tall', { full_page: true })).image), { width: 1280, height: 5000 });
  assert.equal(
    size((await render('/very-tall', { full_page: true, full_page_scroll: false, viewport_width: 400 })).image),
    { width: 400, height: 16384 },
  );
});

test("a render's Playwright calls, its page's wipe included, capture their caller's stack once in all", async () => {
  await render('/');
  // Two calls of the client outside a render (open a browser session, detach): two stacks. The
  // question between them goes by the session's end of Chromium's pipe (cdp.ts), no client call.
  assert.is(await stackCaptures(() => host.ping()), 2);
  const captures = await stackCaptures(async () => {
    await render('/', { format: 'jpeg', viewport_width: 800, dark_mode: true });
    // The next render takes the same page once the wipe the first one started has ended.
    await render('/');
  });
  assert.is(captures, 2, 'one a render');
});

test("a render's sub-requests are heard on Playwright's server: its client makes no copy of them", async () => {
  const copies = await clientCopies(async () => {
    const { subRequests } = await render('/subrequests');
    assert.ok(subRequests.length >= 4, JSON.stringify(subRequests));
  });
  // The main document's request and response: the navigation's answer.
  assert.equal(copies.filter((type) => type === 'Request' || type === 'Response').sort(), ['Request', 'Response']);
});

test('png, jpeg and webp carry their magic bytes', async () => {
  const png = (await render('/', { format: 'png' })).image;
  const jpeg = (await render('/', { format: 'jpeg', image_quality: 50 })).image;
  const webp = (await render('/', { format: 'webp', image_quality: 50 })).image;
  assert.equal([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.equal([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff]);
  assert.is(webp.subarray(0, 4).toString('latin1'), 'RIFF');
  assert.is(webp.subarray(8, 12).toString('latin1'), 'WEBP');
  assert.equal(size(webp), { width: 1280, height: 720 });
});

test('main status 404 and 500 are observed, also after a redirect', async () => {
  assert.is((await render('/status/404')).mainStatus, 404);
  assert.is((await render('/status/500')).mainStatus, 500);
  const redirected = await render('/redirect?to=/status/404');
  assert.is(redirected.mainStatus, 404);
  assert.is(redirected.finalUrl, `${site.url}/status/404`);
});

test('sub-request outcomes are observed', async () => {
  const { subRequests } = await render('/subrequests');
  const byPath = new Map(subRequests.map((outcome) => [new URL(outcome.url).pathname, outcome]));
  assert.is(byPath.get('/assets/ok.js')?.status, 200);
  assert.is(byPath.get('/assets/missing.js')?.status, 404);
  assert.is(byPath.get('/api/broken')?.status, 500);
  assert.match(byPath.get('/pixel.png')?.failure ?? '', 'ERR_CONNECTION_REFUSED');
  assert.not.ok(
    subRequests.some((outcome) => outcome.url.endsWith('/subrequests')),
    'the main document is not a sub-request',
  );
});

test('visible text and scroll_into_view', async () => {
  assert.match(
    (await render('/login-wall', { fail_if_content_contains: ['sign in'] })).visibleText,
    'Please sign in to continue',
  );
  assert.is((await render('/login-wall')).visibleText, '', 'without a content rule the text is not read');
  const scrolled = await render('/scroll', { scroll_into_view: '#far' });
  assert.equal(scrolled.missingSelectors, []);
  assert.equal(size(scrolled.image), { width: 1280, height: 720 });
});

test('a page that hangs its renderer times out, and the next render works', async () => {
  const started = performance.now();
  assert.is(await failureCode(render('/hang', { timeout: 3 })), 'timeout_error');
  const took = performance.now() - started;
  assert.ok(took < 4500, `timed out after ${Math.round(took)} ms`);
  assert.equal(size((await render('/')).image), { width: 1280, height: 720 });
});

test("a page hanging its renderer does not hold up the same workspace's render beside it", async () => {
  const hanging = failureCode(render('/hang', { timeout: 8 }));
  // The hanging page's script is running when the second render of the same site starts.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  const beside = await render('/', { timeout: 10 });
  const took = performance.now() - started;
  assert.equal(size(beside.image), { width: 1280, height: 720 });
  assert.ok(took < 4000, `the render beside the hang took ${Math.round(took)} ms`);
  assert.is(await hanging, 'timeout_error');
});

test('a renderer that crashes ends its render at once; the renders after it work', async () => {
  const hanging = render('/hang', { timeout: 20 }).then(
    () => null,
    (error: unknown) => error,
  );
  // The hanging page's renderer (and every other renderer of this browser) dies under the render.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const all = listProcesses();
  const tree = new Set(processTree([host.pid!], all));
  const renderers = all.filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
  assert.ok(renderers.length > 0, 'renderers found');
  const killedAt = performance.now();
  for (const { pid } of renderers) process.kill(pid, 'SIGKILL');
  const error = await hanging;
  const took = performance.now() - killedAt;
  // Not the page's answer: the worker reports it as an internal error and tries the render again.
  assert.match(String(error), /crash/i);
  assert.ok(took < 5000, `ended ${Math.round(took)} ms after the crash, not at the timeout`);
  for (let i = 0; i < 3; i++)
    assert.equal(size((await render('/', { timeout: 10 })).image), { width: 1280, height: 720 });
});

test('a server that never answers times out, and the next render works', async () => {
  assert.is(await failureCode(render('/never', { timeout: 2 })), 'timeout_error');
  assert.is((await render('/')).mainStatus, 200);
});

test('aborting the signal ends the render at once', async () => {
  const controller = new AbortController();
  const requested = site.hits.get('/slow') ?? 0;
  const rendering = render('/slow?ms=5000', {}, controller.signal);
  await waitFor(() => (site.hits.get('/slow') ?? 0) > requested, 'the page requested', 10_000);
  const abortedAt = performance.now();
  controller.abort(new Error('cancelled'));
  await rendering.then(
    () => assert.unreachable('should have been aborted'),
    (error: Error) => assert.is(error.message, 'cancelled'),
  );
  const took = performance.now() - abortedAt;
  assert.ok(took < 2000, `ended ${Math.round(took)} ms after the abort; the page answers after 5000`);
});

test('cookies and storage of one render are not visible to the next', async () => {
  await render('/set-cookie', { delay: 0.2 });
  const { visibleText } = await render('/read-state', { delay: 0.2, fail_if_content_missing: ['cookies='] });
  assert.match(visibleText, 'cookies=none local=none session=none idb=none');
});

test('dialogs are dismissed and downloads do not break the render', async () => {
  assert.match((await render('/dialog', { fail_if_content_missing: ['After'] })).visibleText, 'After the dialog');
  assert.match(
    (await render('/download-link', { fail_if_content_missing: ['Download'] })).visibleText,
    'Download the report',
  );
  assert.is(await failureCode(render('/download')), 'network_error');
});

test('a browser that dies is relaunched for the next render', async () => {
  const crash = new BrowserHost({ executablePath: CHROMIUM });
  await crash.start();
  try {
    const requested = site.hits.get('/slow') ?? 0;
    const inFlight = capturePage(crash, { ...defaults, url: `${site.url}/slow?ms=3000` }, new AbortController().signal);
    await waitFor(() => (site.hits.get('/slow') ?? 0) > requested, 'the page requested', 10_000);
    process.kill(-crash.pid!, 'SIGKILL');
    const code = await failureCode(inFlight);
    assert.is(code, 'internal_application_error');
    const next = await capturePage(crash, { ...defaults, url: `${site.url}/` }, new AbortController().signal);
    assert.is(next.mainStatus, 200);
  } finally {
    await crash.close();
  }
});

test('name resolution and refused connections map to their codes', async () => {
  assert.is(
    await failureCode(
      capturePage(host, { ...defaults, url: 'http://does-not-exist.invalid/' }, new AbortController().signal),
    ),
    'name_not_resolved',
  );
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const refused = `http://127.0.0.1:${port}/`;
  assert.is(
    await failureCode(capturePage(host, { ...defaults, url: refused }, new AbortController().signal)),
    'network_error',
  );
  assert.is(
    await failureCode(capturePage(host, { ...defaults, url: 'http://127.0.0.1:1/' }, new AbortController().signal)),
    'url_not_allowed',
  );
});

test('through the egress proxy, a private redirect, an unknown name and a refused connection keep their codes', async () => {
  // public.test is the only public name: 127.0.0.2 stands in for a public address, 127.0.0.1 is private.
  const page = createServer((request, response) => {
    if (request.url === '/to-private') {
      return void response.writeHead(302, { Location: `http://127.0.0.1:${new URL(site.url).port}/` }).end();
    }
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>public</h1>');
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.2', resolve));
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.2', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const proxy = await startEgressProxy({
    allowPrivate: false,
    isPublic: (ip) => ip === '127.0.0.2',
    lookup: async (name) => {
      if (name === 'public.test') return [{ address: '127.0.0.2', family: 4 }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    },
  });
  const guarded = new BrowserHost({ executablePath: CHROMIUM, proxyServer: proxy.browserProxy });
  try {
    await guarded.start();
    const at = `http://public.test:${(page.address() as AddressInfo).port}`;
    const take = (url: string) =>
      capturePage(guarded, { ...defaults, url }, new AbortController().signal, { workspaceId: 'ws_guarded' });
    assert.is((await take(`${at}/`)).mainStatus, 200);
    assert.is(await failureCode(take(`${at}/to-private`)), 'url_not_allowed');
    assert.is(await failureCode(take('http://nowhere.test/')), 'name_not_resolved');
    assert.is(await failureCode(take(`http://public.test:${closedPort}/`)), 'network_error');
    assert.is(await failureCode(take(`https://127.0.0.1:${closedPort}/`)), 'url_not_allowed');
  } finally {
    await guarded.close();
    await proxy.close();
    await new Promise((resolve) => page.close(resolve));
  }
});

test.run();
