// headers, authorization, cookies and bypass_csp against real Chromium behind the egress proxy and
// the fixture site, which answers as 127.0.0.1 (the target) and as localhost (a second origin):
// what the site received, what a second origin did not, and that nothing is left for the next render.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { BrowserHost } from '../../src/render/browser/browser.ts';
import { capturePage } from '../../src/render/capture.ts';
import { applyRequestSettings } from '../../src/render/steps/request-settings.ts';
import { PagePool } from '../../src/render/browser/pool.ts';
import { wipe } from '../../src/render/browser/warm-page.ts';
import { startEgressProxy, type EgressProxy } from '../../src/net/egress-proxy.ts';
import { ServiceError } from '../../src/errors.ts';
import { renderDefaults, type RenderOptions } from '../../src/domain/options.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { Progress } from '../../src/render/browser/progress.ts';
import { CHROMIUM } from '../helpers/render.ts';

const test = suite('request settings');

let site: FixtureSite;
let proxy: EgressProxy;
let host: BrowserHost;
/** The fixture site as a second origin. */
let other: string;

const defaults: Omit<RenderOptions, 'url'> = {
  ...renderDefaults,
  viewport_width: 400,
  viewport_height: 300,
  timeout: 15,
  // A content rule makes the render read the page's text, which is where /rs/page reports.
  fail_if_content_missing: ['doc '],
};

const options = (path: string, extra: Partial<RenderOptions> = {}): RenderOptions => ({
  ...defaults,
  ...extra,
  url: site.url + path,
});

// The visible text of one render.
async function textOf(
  path: string,
  extra: Partial<RenderOptions> = {},
  workspaceId = 'ws_request_settings',
): Promise<string> {
  return (await capturePage(host, options(path, extra), new AbortController().signal, { workspaceId })).visibleText;
}

// One line of /rs/page's report: the document ("doc"), js, or a sub-resource ("same", "other", "hop").
const line = (text: string, slot: string) =>
  text.split('\n').find((l) => l.startsWith(`${slot} `)) ?? `${slot}: missing in ${text}`;

// The requests the site received since `from` for `path` (with `search` in their query), with the host they were asked as.
const receivedSince = (from: number, path: string, search = '') =>
  site.received.slice(from).filter((request) => request.path === path && request.search.includes(search));

// The colour of the pixel at (10, 10) of a PNG.
async function pixel(image: Buffer): Promise<[number, number, number]> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const at = (10 * info.width + 10) * info.channels;
  return [data[at], data[at + 1], data[at + 2]];
}

// Inserts an inline script that paints the body blue; the body's background colour after it.
async function insertInlineScript(page: Page): Promise<string> {
  return page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = "document.body.style.background = 'rgb(0, 0, 255)';";
    document.head.appendChild(script);
    return getComputedStyle(document.body).backgroundColor;
  });
}

const GREEN: [number, number, number] = [0, 170, 0];
const WHITE: [number, number, number] = [255, 255, 255];

test.before(async () => {
  site = await startFixtureSite();
  other = site.url.replace('127.0.0.1', 'localhost');
  proxy = await startEgressProxy({ allowPrivate: true });
  host = new BrowserHost({ executablePath: CHROMIUM, proxyServer: proxy.browserProxy, poolSize: 3 });
  await host.start();
});

test.after(async () => {
  await host.close();
  await proxy.close();
  await site.close();
});

test('the fixture page reports what each request carried, and the second origin is another origin', async () => {
  const text = await textOf('/rs/page');
  for (const slot of ['doc', 'same', 'other', 'hop'])
    assert.is(line(text, slot), `${slot} x-test=none auth=none cookie=none`);
  assert.ok(text.includes('js cookie=none'), text);
  assert.is.not(new URL(other).origin, new URL(site.url).origin);
});

test('headers and authorization reach the target origin only: the document and its sub-resource, not another origin, not through a redirect', async () => {
  const from = site.received.length;
  const text = await textOf('/rs/page', {
    headers: ['X-Test: hello', 'Accept-Language: fr'],
    authorization: 'Bearer s3cret',
  });
  assert.is(line(text, 'doc'), 'doc x-test=hello auth=Bearer s3cret cookie=none');
  assert.is(line(text, 'same'), 'same x-test=hello auth=Bearer s3cret cookie=none');
  assert.is(line(text, 'other'), 'other x-test=none auth=none cookie=none');
  assert.is(line(text, 'hop'), 'hop x-test=none auth=none cookie=none');
  // What the server itself recorded: the first leg of the redirect is on the target's origin.
  const [document] = receivedSince(from, '/rs/page');
  assert.is(document.headers['accept-language'], 'fr');
  const [redirect] = receivedSince(from, '/redirect');
  assert.is(redirect.headers['x-test'], 'hello');
  const offOrigin = receivedSince(from, '/rs/echo.js').filter((request) =>
    request.headers.host?.startsWith('localhost'),
  );
  assert.is(offOrigin.length, 2, 'the second origin was asked twice (directly and through the redirect)');
  for (const request of offOrigin) {
    assert.is(request.headers['x-test'], undefined);
    assert.is(request.headers.authorization, undefined);
    // An Accept-Language line also sets the page's locale (docs/options.md): the browser then speaks
    // that language to every origin, as a browser set to French would; the other headers stay home.
    assert.is(request.headers['accept-language'], 'fr', "the browser's language is the page's locale");
  }
});

test('a main document redirected to another origin arrives there without the headers', async () => {
  const target = `/redirect?to=${encodeURIComponent(`${other}/rs/page`)}`;
  const from = site.received.length;
  const text = await textOf(target, { headers: ['X-Test: hello'], authorization: 'Bearer s3cret' });
  assert.is(line(text, 'doc'), 'doc x-test=none auth=none cookie=none');
  assert.is(receivedSince(from, '/redirect')[0].headers['x-test'], 'hello');
  // The page on localhost loads its "other" echo from 127.0.0.1, the target's origin: it gets them.
  assert.is(line(text, 'other'), 'other x-test=hello auth=Bearer s3cret cookie=none');
});

test("cookies: sent in the Cookie header and seen by document.cookie, with the target's host and path by default; a Path is honoured", async () => {
  const cookies = [
    'session=abc',
    'locked=1; HttpOnly',
    'deep=2; Path=/rs/deep',
    'elsewhere=3; Path=/elsewhere',
    'parent=4; Domain=127.0.0.1; Path=/',
  ];
  const text = await textOf('/rs/page', { cookies });
  assert.is(line(text, 'doc'), 'doc x-test=none auth=none cookie=session=abc; locked=1; parent=4');
  assert.is(line(text, 'same'), 'same x-test=none auth=none cookie=session=abc; locked=1; parent=4');
  assert.is(line(text, 'other'), 'other x-test=none auth=none cookie=none');
  assert.ok(text.includes('js cookie=session=abc; parent=4'), text);
  const deep = await textOf('/rs/deep/page', { cookies });
  const sent = /cookie=(.*)$/.exec(line(deep, 'doc'))?.[1].split('; ').sort();
  assert.equal(sent, ['deep=2', 'locked=1', 'parent=4', 'session=abc']);
});

test('a cookie the browser refuses for the target is a request_not_valid naming cookies', async () => {
  try {
    await textOf('/rs/page', { cookies: ['ok=1', 'cross=1; SameSite=None'] });
    assert.unreachable('the render should have failed');
  } catch (error) {
    assert.instance(error, ServiceError, String(error));
    assert.is((error as ServiceError).code, 'request_not_valid');
    assert.equal(
      ((error as ServiceError).details.error_details as { parameter: string }[]).map((detail) => detail.parameter),
      ['cookies'],
    );
  }
  const text = await textOf('/rs/page');
  assert.is(line(text, 'doc'), 'doc x-test=none auth=none cookie=none');
});

test("bypass_csp: the page's CSP forbids inline scripts, except with bypass_csp", async () => {
  const colour = (bypass: boolean) =>
    host.withPage(
      { ...options('/rs/csp'), workspaceId: 'ws_csp' },
      new AbortController().signal,
      async (page, progress, session) => {
        await applyRequestSettings({ page, session, options: options('/rs/csp', { bypass_csp: bypass }), progress });
        await page.goto(`${site.url}/rs/csp`);
        return await insertInlineScript(page);
      },
    );
  assert.is(await colour(false), 'rgb(255, 255, 255)');
  assert.is(await colour(true), 'rgb(0, 0, 255)');
  assert.is(await colour(false), 'rgb(255, 255, 255)', 'the CSP applies again on the same warm page');
  // The page's own inline script, in the image.
  const shot = async (bypass_csp: boolean) =>
    pixel(
      (
        await capturePage(host, options('/rs/csp', { bypass_csp }), new AbortController().signal, {
          workspaceId: 'ws_csp',
        })
      ).image,
    );
  assert.equal(await shot(true), GREEN);
  assert.equal(await shot(false), WHITE);
});

test('a CSP that refuses inline styles: styles go without, hide_selectors still hides, bypass_csp applies both', async () => {
  const shot = async (extra: Partial<RenderOptions>) =>
    pixel(
      (
        await capturePage(host, options('/rs/csp-styles', extra), new AbortController().signal, {
          workspaceId: 'ws_csp',
        })
      ).image,
    );
  const BLUE: [number, number, number] = [0, 0, 255];
  const styles = '#cover { background: rgb(0, 0, 255) !important }';
  assert.equal(await shot({}), GREEN);
  assert.equal(await shot({ styles }), GREEN, 'the policy stops the styles; the render goes on');
  assert.equal(await shot({ styles, bypass_csp: true }), BLUE);
  assert.equal(await shot({ hide_selectors: ['#cover'] }), WHITE);
  assert.equal(await shot({ hide_selectors: ['#cover'], bypass_csp: true }), WHITE);
  assert.equal(await shot({}), GREEN, 'nothing is left for the next render');
});

test("headers work beside Playwright's own request interception on the same page", async () => {
  const text = await host.withPage(
    { ...options('/rs/page'), workspaceId: 'ws_routes' },
    new AbortController().signal,
    async (page, progress, session) => {
      let routed = 0;
      await page.route('**/*.js*', (route) => {
        routed += 1;
        return route.fallback();
      });
      await applyRequestSettings({
        page,
        session,
        options: options('/rs/page', { headers: ['X-Test: routed'] }),
        progress,
      });
      try {
        await page.goto(`${site.url}/rs/page`);
        const body = await page.innerText('body');
        assert.ok(routed >= 2, `routed ${routed}`);
        return body;
      } finally {
        await progress.undo();
        await page.unrouteAll();
      }
    },
  );
  assert.is(line(text, 'doc'), 'doc x-test=routed auth=none cookie=none');
  assert.is(line(text, 'same'), 'same x-test=routed auth=none cookie=none');
  assert.is(line(text, 'other'), 'other x-test=none auth=none cookie=none');
});

test('the undo alone leaves nothing on the page: no header, no cookie, the CSP applies', async () => {
  const all = {
    headers: ['X-Test: hello'],
    authorization: 'Bearer s3cret',
    cookies: ['session=abc', 'deep=2; Path=/rs/deep', 'locked=1; HttpOnly'],
    bypass_csp: true,
  };
  await host.withPage(
    { ...options('/rs/page'), workspaceId: 'ws_undo' },
    new AbortController().signal,
    async (page, progress, session) => {
      await applyRequestSettings({ page, session, options: options('/rs/page', all), progress });
      await page.goto(`${site.url}/rs/page`);
      assert.is(
        line(await page.innerText('body'), 'doc'),
        'doc x-test=hello auth=Bearer s3cret cookie=session=abc; locked=1',
      );
      await progress.undo();
      assert.equal(progress.undoFailures, []);
      assert.equal(await page.context().cookies(), []);
      await page.goto(`${site.url}/rs/deep/page`);
      assert.is(line(await page.innerText('body'), 'doc'), 'doc x-test=none auth=none cookie=none');
      await page.goto(`${site.url}/rs/csp`);
      assert.is(await insertInlineScript(page), 'rgb(255, 255, 255)');
    },
  );
});

test('the next render on the same warm page, and one of another workspace, get no header, no cookie, and the CSP again', async () => {
  const all = {
    headers: ['X-Test: hello'],
    authorization: 'Bearer s3cret',
    cookies: ['session=abc', 'locked=1; HttpOnly; Path=/'],
    bypass_csp: true,
  };
  for (const next of ['ws_iso', 'ws_iso_other']) {
    const planted = await textOf('/rs/page', all, 'ws_iso');
    assert.is(line(planted, 'doc'), 'doc x-test=hello auth=Bearer s3cret cookie=session=abc; locked=1');
    const from = site.received.length;
    const text = await textOf('/rs/page', {}, next);
    for (const slot of ['doc', 'same', 'other', 'hop'])
      assert.is(line(text, slot), `${slot} x-test=none auth=none cookie=none`, next);
    assert.ok(text.includes('js cookie=none'), text);
    for (const request of site.received.slice(from)) {
      assert.is(request.headers['x-test'], undefined, request.path);
      assert.is(request.headers.authorization, undefined, request.path);
      assert.is(request.headers.cookie, undefined, request.path);
    }
    const csp = await capturePage(host, options('/rs/csp', { bypass_csp: true }), new AbortController().signal, {
      workspaceId: 'ws_iso',
    });
    assert.equal(await pixel(csp.image), GREEN);
    const after = await capturePage(host, options('/rs/csp'), new AbortController().signal, { workspaceId: next });
    assert.equal(await pixel(after.image), WHITE, next);
  }
});

test("the pool's wipe clears these cookies by itself (host-only, domain, HttpOnly, with a Path)", async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const pool = new PagePool(browser, { maxPages: 1, maxRenders: 10 });
    const warm = await pool.acquire('ws_wipe', 1);
    const cookies = [
      'session=abc',
      'locked=1; HttpOnly',
      'deep=2; Path=/rs/deep',
      'parent=4; Domain=127.0.0.1; Path=/',
    ];
    await applyRequestSettings({
      page: warm.page,
      session: warm.session,
      options: options('/rs/page', { cookies }),
      progress: Progress.start(30_000),
    });
    await warm.page.goto(`${site.url}/rs/page`);
    assert.is((await warm.context.cookies()).length, 4);
    await wipe(warm);
    assert.equal(await warm.context.cookies(), []);
    await warm.page.goto(`${site.url}/rs/deep/page`);
    assert.is(line(await warm.page.innerText('body'), 'doc'), 'doc x-test=none auth=none cookie=none');
  } finally {
    await browser.close();
  }
});

test('a render with none of these options makes no CDP call and opens no session', async () => {
  const untouchable = new Proxy(
    {},
    {
      get: (_, name) => {
        throw new Error(`used ${String(name)}`);
      },
    },
  );
  const progress = Progress.start(30_000);
  await applyRequestSettings({
    page: untouchable as Page,
    session: untouchable as CDPSession,
    options: options('/rs/page'),
    progress,
  });
  await progress.undo();
  assert.equal(progress.undoFailures, []);
});

test.run();
