// Warm pages never carry state from one render to the next: each kind of browser state is
// planted in one render and looked for in the next, for the same and for another workspace.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, startRenderRig, type RenderRig } from '../helpers/render.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('warm page isolation');

let rig: RenderRig;
let site: RenderRig['site'];

// The visible text of one render of `path` for `workspaceId`.
async function textOf(path: string, workspaceId: string): Promise<string> {
  return (await rig.render(path, {}, workspaceId)).visibleText;
}

const figure = (text: string, name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(text)?.[1]);

// Runs `task` on the warm page a render of `workspaceId` gets now, as a render would.
const onPage = <T>(workspaceId: string, task: (page: Page) => Promise<T>) =>
  rig.host.withPage(
    { timeout: 10, viewport_width: 800, viewport_height: 600, device_scale_factor: 1, workspaceId },
    new AbortController().signal,
    task,
  );

// The warm page a render of `workspaceId` at `scale` gets now (the wipe resets history.length, so
// the page itself tells whether it was reused).
const pageOf = (workspaceId: string, scale = 1) =>
  rig.host.withPage(
    { timeout: 10, viewport_width: 800, viewport_height: 600, device_scale_factor: scale, workspaceId },
    new AbortController().signal,
    async (page) => page,
  );

const CLEAN = [
  'cookies=none',
  'local=none',
  'session=none',
  'idb=none',
  'name=none',
  'caches=none',
  'sw=0',
  'notifications=default',
  'geolocation=prompt',
];

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_isolation',
    host: { poolSize: 3 },
    // A content rule makes the render read the page's text, which is how the probe reports.
    defaults: { viewport_width: 800, viewport_height: 600, delay: 0.4, fail_if_content_missing: ['cookies='] },
  });
  site = rig.site;
});

test.after(async () => {
  await rig.stop();
});

test('without a wipe, the probe finds every kind of planted state', async () => {
  // Proves the probe notices: the same two pages, one after the other on a page nobody wipes.
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const page = await browser.newPage();
    await page.goto(`${site.url}/plant`);
    // /plant writes some of its state asynchronously: wait until every kind is in place.
    const planted = () =>
      page.evaluate(
        async () =>
          document.cookie.includes('fixture_js=1') &&
          localStorage.getItem('fixture_local') !== null &&
          sessionStorage.getItem('fixture_session') !== null &&
          (await indexedDB.databases()).some((db) => db.name === 'fixture_idb') &&
          (await caches.has('fixture_cache')),
      );
    await waitFor(planted, 'the state planted', 10_000);
    const assetHits = site.hits.get('/cached-asset') ?? 0;
    await page.goto(`${site.url}/probe`);
    // The probe reports the asynchronous kinds as they answer: wait for the last of them.
    let probe = '';
    const reported = async () => {
      probe = await page.innerText('#state');
      return ['idb=', 'caches=', 'sw=', 'geolocation='].every((kind) => probe.includes(kind));
    };
    await waitFor(reported, 'the probe reported', 10_000);
    for (const planted of [
      'fixture_header=1',
      'fixture_js=1',
      'local=fixture_local',
      'session=fixture_session',
      'idb=fixture_idb',
      'name=fixture_window',
      'caches=fixture_cache',
    ]) {
      assert.ok(probe.includes(planted), `${planted} not in: ${probe}`);
    }
    assert.is(site.hits.get('/cached-asset'), assetHits, 'the asset came from the HTTP cache');
  } finally {
    await browser.close();
  }
});

test('the next render of the same workspace reuses the page but finds nothing', async () => {
  await textOf('/plant', 'ws_a');
  const planted = await pageOf('ws_a');
  const assetHits = site.hits.get('/cached-asset') ?? 0;
  const probe = await textOf('/probe', 'ws_a');
  assert.ok((await pageOf('ws_a')) === planted, 'the warm page was reused');
  // The history holds nothing of earlier renders: the wipe's blank page at most, then the probe.
  assert.ok(figure(probe, 'history') <= 2, `expected a history of the probe alone: ${probe}`);
  for (const clean of CLEAN) assert.ok(probe.includes(clean), `${clean} not in: ${probe}`);
  assert.is(
    site.hits.get('/cached-asset'),
    assetHits + 1,
    'the cached asset was fetched again, not served from the HTTP cache',
  );
});

test('another workspace never gets the page and finds nothing', async () => {
  await textOf('/plant', 'ws_a');
  const assetHits = site.hits.get('/cached-asset') ?? 0;
  const probe = await textOf('/probe', 'ws_b');
  assert.ok(figure(probe, 'history') <= 2, `expected a page never used before: ${probe}`);
  for (const clean of CLEAN) assert.ok(probe.includes(clean), `${clean} not in: ${probe}`);
  assert.is(site.hits.get('/cached-asset'), assetHits + 1);
});

test('state planted on a page at a different scale and viewport does not survive either', async () => {
  await rig.render('/plant', { device_scale_factor: 2 }, 'ws_c');
  const planted = await pageOf('ws_c', 2);
  const again = await rig.render('/probe', { device_scale_factor: 2, viewport_width: 400 }, 'ws_c');
  assert.ok((await pageOf('ws_c', 2)) === planted, 'the scale-2 page was reused at another viewport');
  for (const clean of CLEAN) assert.ok(again.visibleText.includes(clean), `${clean} not in: ${again.visibleText}`);
});

test('session storage of an origin the page left is gone too', async () => {
  // localhost is another origin of the same fixture server: planted, then left for 127.0.0.1, so
  // that no frame shows it at the wipe. (A frame of another site cannot use session storage at all
  // in a warm page's context: its storage is third-party.)
  const other = site.url.replace('127.0.0.1', 'localhost');
  const planted = await onPage('ws_gone', async (page) => {
    await page.goto(`${other}/probe`);
    await page.evaluate(() => sessionStorage.setItem('fixture_session', '1'));
    await page.goto(`${site.url}/probe`);
    return page;
  });
  const found = await onPage('ws_gone', async (page) => {
    assert.is(page, planted, 'the warm page was reused');
    await page.goto(`${other}/probe`);
    return page.evaluate(() => Object.keys(sessionStorage).join(',') || 'none');
  });
  assert.is(found, 'none');
});

test('what a page writes as the wipe leaves it (pagehide, unload) is gone too', async () => {
  const planted = await onPage('ws_leaving', async (page) => {
    await page.goto(`${site.url}/probe`);
    // A string: the test's bundler would name a function written here, and the page has no helper for that.
    await page.evaluate(`{
      const write = (event) => {
        sessionStorage.setItem('fixture_session', event.type);
        localStorage.setItem('fixture_local', event.type);
        document.cookie = 'fixture_leaving=' + event.type + '; max-age=600';
      };
      for (const type of ['pagehide', 'unload', 'beforeunload', 'visibilitychange']) addEventListener(type, write);
    }`);
    return page;
  });
  const found = await onPage('ws_leaving', async (page) => {
    assert.is(page, planted, 'the warm page was reused');
    await page.goto(`${site.url}/probe`);
    return page.evaluate(() =>
      [Object.keys(sessionStorage).join(','), Object.keys(localStorage).join(','), document.cookie]
        .map((kind) => kind || 'none')
        .join(' '),
    );
  });
  assert.is(found, 'none none none');
});

test.run();
