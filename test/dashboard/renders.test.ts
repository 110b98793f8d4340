// The renders pages and the playground's states in real Chromium against the real stack: the list with
// each render's target and the status filters, a render's timeline, output and webhook, a failed
// render's capture of the page, another workspace's render refused, and the playground's success,
// failure and long wait (the time elapsed, Cancel). DOCS_SCREENSHOTS=1 also writes
// docs/dashboard-renders.png, docs/dashboard-render-failure.png and docs/dashboard-playground-failure.png.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const renders = suite('dashboard in Chromium: renders pages and the playground states');
let stack: TestStack;
let service: TestService;
let browser: Browser;
let receiver: Server;
let receiverUrl: string;
let hooksReceived = 0;

renders.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hooksReceived++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
renders.after(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await service?.close();
  await stack?.stop();
});

const password = 'a long enough password';
const fixture = (path: string) => `${stack.site.url}${path}`;
const state: { page?: Page; accessKey?: string; ids: Record<string, string> } = { ids: {} };

/** Signs up `email` in a new browser context, confirms the address, and returns the page and the access key. */
async function signUp(
  email: string,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; accessKey: string }> {
  const page = await (await browser.newContext({ viewport })).newPage();
  await page.goto(`${service.base}/dashboard/sign-up`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  assert.match(
    (await page.textContent('main'))!,
    /npx shutterbus mail outbox/,
    'no SMTP_URL: the page says where the mail is',
  );
  await page.click('a.button:has-text("Sign in")');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  // Not confirmed yet: no workspace, and the page says where the link is.
  assert.is(await page.locator('#access-key').count(), 0);
  assert.not.match(
    (await page.textContent('.notice.warn'))!,
    /We sent/,
    'no mail was sent, and the page does not say so',
  );
  assert.match((await page.textContent('.notice.warn'))!, /npx shutterbus mail outbox/);
  await page.click('text=Make a new link');
  assert.match((await page.textContent('.notice.ok'))!, /in the outbox/);
  const outbox = await shutterbus(stack, 'mail', 'outbox');
  const message = [...outbox.json.messages].reverse().find((m: { to: string }) => m.to === email);
  await page.goto(/https?:\/\/\S+\/dashboard\/\S+/.exec(message.text)![0]);
  await page.goto(`${service.base}/dashboard/keys`);
  const accessKey = (await page.textContent('#access-key'))!.trim();
  return { page, accessKey };
}

/** A render through the public API, as a customer's server makes it; its render id. */
async function take(query: string): Promise<{ status: number; id: string; json?: Record<string, any> }> {
  const answer = await call(`${service.base}/api/take?${query}&access_key=${state.accessKey}`);
  return {
    status: answer.status,
    id: String(answer.headers.get('x-render-id') ?? answer.json?.render_id ?? ''),
    json: answer.json,
  };
}

const status = async (id: string) =>
  (await call(`${service.base}/api/renders/${id}`, { headers: { 'x-access-key': state.accessKey! } })).json!;

renders('the renders page lists each render with its target, and filters by status', async () => {
  const { page, accessKey } = await signUp('owner@renders.example.com');
  state.page = page;
  state.accessKey = accessKey;
  const url = await take(`url=${encodeURIComponent(fixture('/'))}&viewport_width=640&viewport_height=400`);
  assert.is(url.status, 200);
  state.ids.url = url.id;
  const document = await take(
    `html=${encodeURIComponent('<h1>An HTML document</h1>')}&format=jpeg&viewport_width=400&viewport_height=300`,
  );
  assert.is(document.status, 200);
  state.ids.document = document.id;
  const hostError = await take(`url=${encodeURIComponent(fixture('/status/500'))}`);
  assert.is(hostError.json?.error_code, 'host_returned_error');
  state.ids.hostError = hostError.id;
  const hooked = await take(
    `url=${encodeURIComponent(fixture('/page/hooked'))}&async=true&webhook_url=${encodeURIComponent(receiverUrl)}`,
  );
  assert.is(hooked.status, 202);
  state.ids.hooked = hooked.id;
  await waitFor(
    async () => (await status(hooked.id)).status === 'succeeded' && hooksReceived === 1,
    'the async render ends and its webhook arrives',
    30_000,
    200,
  );

  await page.goto(`${service.base}/dashboard/renders`);
  assert.is(await page.locator('nav >> text=Renders').getAttribute('aria-current'), 'page');
  await waitFor(
    async () => {
      await page.reload();
      return (await page.locator('#renders tbody tr').count()) === 4;
    },
    'four renders listed',
    10_000,
    200,
  );
  assert.is((await page.textContent(`#render-${state.ids.url} .target`))!.trim(), fixture('/'));
  assert.is((await page.textContent(`#render-${state.ids.document} .target`))!.trim(), 'HTML document');
  assert.match((await page.textContent(`#render-${state.ids.document}`))!, /jpeg/);
  assert.match((await page.textContent(`#render-${state.ids.hostError}`))!, /host_returned_error/);
  assert.match((await page.textContent(`#render-${state.ids.url}`))!, /\d+(\.\d+)? (ms|s)/, 'a duration');

  await page.click('#filter-failed');
  assert.match(page.url(), /status=failed/);
  assert.equal(
    await page.locator('#renders tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))),
    ['failed'],
  );
  await page.click('#filter-succeeded');
  assert.equal(
    await page.locator('#renders tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))),
    ['succeeded', 'succeeded', 'succeeded'],
  );
  await page.click('#filter-all');
  assert.is(await page.locator('#renders tbody tr').count(), 4);

  // The usage page names the HTML render too, instead of an empty cell.
  await page.goto(`${service.base}/dashboard/usage`);
  assert.match((await page.textContent('#renders'))!, /HTML document/);
});

renders("a render's page: its timeline, its output inline, its webhook delivery", async () => {
  const page = state.page!;
  await page.goto(`${service.base}/dashboard/renders`);
  await page.click(`#render-${state.ids.hooked} a`);
  assert.match(page.url(), new RegExp(`/dashboard/renders/${state.ids.hooked}$`));
  const steps = await page
    .locator('#timeline tbody tr')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-step')));
  for (const step of ['queued', 'started', 'navigated', 'captured', 'stored', 'delivered'])
    assert.ok(steps.includes(step), `${step} in ${steps}`);
  const image = (await page.getAttribute('#output-image', 'src'))!;
  assert.is(image, (await status(state.ids.hooked)).file_url);
  // The image loads after the page's own load on a busy machine: it is waited for, then looked at.
  const shown = await page
    .waitForFunction(
      () => {
        const img = document.getElementById('output-image') as HTMLImageElement;
        return img.complete && img.naturalWidth > 0;
      },
      undefined,
      { timeout: 10_000 },
    )
    .then(
      () => true,
      () => false,
    );
  assert.ok(shown, 'the image is shown');
  assert.match((await page.textContent('#webhook'))!, /delivered/);
  await page.click('#delivery-link');
  assert.match(page.url(), /\/dashboard\/deliveries\/wh_[0-9a-f]{32}$/);
  assert.match((await page.textContent('#delivery-body'))!, new RegExp(state.ids.hooked));

  // An HTML document rendered: the target says so.
  await page.goto(`${service.base}/dashboard/renders/${state.ids.document}`);
  assert.is((await page.textContent('#render-target'))!.trim(), 'HTML document');
  assert.ok(
    await page.evaluate(() => (document.getElementById('output-image') as HTMLImageElement).naturalWidth === 400),
  );
  if (process.env.DOCS_SCREENSHOTS) {
    await page.goto(`${service.base}/dashboard/renders`);
    await page.screenshot({ path: 'docs/dashboard-renders.png', fullPage: true });
  }
});

renders(
  'a render that failed after its page loaded shows what the page looked like; a success keeps no capture',
  async () => {
    const page = state.page!;
    const failed = await take(
      `url=${encodeURIComponent(fixture('/'))}&wait_for_selector=${encodeURIComponent('#never-there')}&timeout=3&viewport_width=800&viewport_height=500`,
    );
    assert.is(failed.json?.error_code, 'selector_not_found');
    const record = await status(failed.id);
    assert.match(record.failure_capture_url ?? '', /\/files\/\d{8}-[0-9a-f]{32}\.jpg$/);
    // Kept for a day: the file name carries tomorrow's date (the end of the day it may be swept).
    const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10).replaceAll('-', '');
    assert.ok(record.failure_capture_url.includes(`/files/${tomorrow}-`), record.failure_capture_url);
    const capture = await call(record.failure_capture_url);
    assert.is(capture.contentType, 'image/jpeg');
    const meta = await sharp(capture.bytes).metadata();
    assert.equal([meta.width, meta.height], [480, 300], 'the viewport as the render saw it, scaled down to 480 px');
    assert.ok(capture.bytes.length < 30_000, `small: ${capture.bytes.length} bytes`);
    const { data } = await sharp(capture.bytes).greyscale().raw().toBuffer({ resolveWithObject: true });
    assert.ok(
      data.some((value) => value < 100),
      'the page is on it, not a blank frame',
    );
    // The host's error page too (a failure rule over a loaded page).
    assert.match((await status(state.ids.hostError)).failure_capture_url ?? '', /\.jpg$/);
    assert.is((await status(state.ids.url)).failure_capture_url, undefined, 'a render that succeeds keeps none');
    const scriptError = await take(
      `url=${encodeURIComponent(fixture('/'))}&scripts=${encodeURIComponent("throw new Error('broken')")}`,
    );
    assert.is(scriptError.json?.error_code, 'script_error');
    assert.match(
      (await status(scriptError.id)).failure_capture_url ?? '',
      /\.jpg$/,
      'a script that failed on a loaded page',
    );
    const unreachable = await take(`url=${encodeURIComponent('http://127.0.0.1:1/')}`);
    assert.is(unreachable.json?.is_successful, false);
    const unreachableStatus = await status(unreachable.id);
    assert.is(unreachableStatus.status, 'failed', JSON.stringify(unreachableStatus));
    assert.is(unreachableStatus.failure_capture_url, undefined, 'a page that never loaded has nothing to show');

    await page.goto(`${service.base}/dashboard/renders/${failed.id}`);
    assert.is((await page.textContent('#error-code'))!.trim(), 'selector_not_found');
    assert.is(await page.getAttribute('#failure-capture', 'src'), record.failure_capture_url);
    assert.ok(
      await page.evaluate(() => (document.getElementById('failure-capture') as HTMLImageElement).naturalWidth === 480),
      'the capture is shown',
    );
    if (process.env.DOCS_SCREENSHOTS)
      await page.screenshot({ path: 'docs/dashboard-render-failure.png', fullPage: true });
  },
);

renders("another workspace's render is not found; its list shows none of ours", async () => {
  const other = await signUp('someone@else.example.com');
  const response = await other.page.goto(`${service.base}/dashboard/renders/${state.ids.url}`);
  assert.is(response!.status(), 404);
  assert.not.match((await other.page.textContent('main'))!, new RegExp(state.ids.url));
  await other.page.goto(`${service.base}/dashboard/renders`);
  assert.is(await other.page.locator('#renders tbody tr').count(), 0);
  assert.ok(await other.page.locator('#no-renders').isVisible());
  // The unknown and the malformed answer the same.
  assert.is(
    (await other.page.goto(`${service.base}/dashboard/renders/00000000-0000-0000-0000-000000000000`))!.status(),
    404,
  );
  assert.is((await other.page.goto(`${service.base}/dashboard/renders/nope`))!.status(), 404);
  await other.page.context().close();
});

renders('playground: the Render button stays in view, and the result is scrolled into view', async () => {
  // Narrow: the result sits under the long form.
  const page = await (
    await browser.newContext({
      viewport: { width: 760, height: 800 },
      storageState: await state.page!.context().storageState(),
    })
  ).newPage();
  await page.goto(`${service.base}/dashboard/playground`);
  await page.fill('#field-url', fixture('/'));
  await page.locator('#field-hide_selectors').scrollIntoViewIfNeeded();
  const inView = (selector: string) =>
    page.evaluate((s) => {
      const box = document.querySelector(s)!.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= innerHeight && box.height > 0;
    }, selector);
  assert.ok(await inView('#render'), 'the Render button is where the user is');
  await page.click('#render');
  await page.waitForSelector('#result[data-outcome=succeeded]');
  assert.match((await page.textContent('#render-state'))!, /^Rendered in \d+\.\d s\.$/);
  await waitFor(() => inView('#result h2'), 'the result is scrolled into view', 5000);
  assert.ok(await page.evaluate(() => (document.getElementById('result-image') as HTMLImageElement | null) !== null));
  await page.context().close();
});

renders('playground without JavaScript: the form still renders, and the answer opens at the result', async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 760, height: 800 },
    storageState: await state.page!.context().storageState(),
  });
  const page = await context.newPage();
  await page.goto(`${service.base}/dashboard/playground`);
  assert.ok(await page.locator('#render-cancel').isHidden(), 'no Cancel without a script to cancel with');
  await page.fill('#field-url', fixture('/'));
  await page.click('#render');
  await page.waitForSelector('#result-image');
  assert.match(page.url(), /[?&]result=[0-9a-f-]{36}(&cached=true)?#result$/, page.url());
  assert.ok(
    await page.evaluate(
      () => window.scrollY > 0 && document.getElementById('result')!.getBoundingClientRect().top < innerHeight,
    ),
    'scrolled to the result',
  );
  await context.close();
});

renders('playground: a failure shows as a failure with its error code, never "Done."', async () => {
  const page = await (
    await browser.newContext({
      viewport: { width: 1280, height: 900 },
      storageState: await state.page!.context().storageState(),
    })
  ).newPage();
  await page.goto(`${service.base}/dashboard/playground`);
  await page.fill('#field-url', fixture('/'));
  await page.fill('#field-wait_for_selector', '#never-there');
  await page.fill('#field-timeout', '3');
  await page.click('#render');
  await page.waitForSelector('#result[data-outcome=failed]', { timeout: 15_000 });
  const said = (await page.textContent('#render-state'))!;
  assert.match(said, /^The render failed after \d+\.\d s: selector_not_found$/);
  assert.not.match(said, /Done/);
  assert.is((await page.textContent('#error-code'))!.trim(), 'selector_not_found');
  assert.match((await page.textContent('#error-message'))!, /\w+/);
  // The render's own page is a click away, with what the page looked like.
  const renderPage = (await page.getAttribute('#render-link', 'href'))!;
  assert.match(renderPage, /^\/dashboard\/renders\/[0-9a-f-]{36}$/);
  if (process.env.DOCS_SCREENSHOTS)
    await page.screenshot({ path: 'docs/dashboard-playground-failure.png', fullPage: false });
  await page.goto(`${service.base}${renderPage}`);
  assert.is(await page.locator('#failure-capture').count(), 1);
  await page.context().close();
});

renders('playground: a long wait shows the time elapsed, and Cancel stops waiting', async () => {
  const page = await (
    await browser.newContext({
      viewport: { width: 1280, height: 900 },
      storageState: await state.page!.context().storageState(),
    })
  ).newPage();
  await page.goto(`${service.base}/dashboard/playground`);
  assert.ok(await page.locator('#render-cancel').isHidden(), 'no Cancel before a render');
  const failedBefore = (
    (await (await page.request.get(`${service.base}/dashboard/renders?status=failed`)).text()).match(
      /data-status="failed"/g,
    ) ?? []
  ).length;
  await page.fill('#field-url', fixture('/'));
  await page.fill('#field-wait_for_selector', '#never-there');
  await page.fill('#field-timeout', '8');
  await page.click('#render');
  await waitFor(
    async () => /^[1-9]\d*\.\d s$/.test((await page.textContent('#render-elapsed')) ?? ''),
    'a second or more shown as elapsed',
    10_000,
  );
  assert.is((await page.textContent('#render-state'))!.trim(), 'Rendering…');
  assert.ok(await page.isDisabled('#render'));
  await page.click('#render-cancel');
  await waitFor(
    async () => /^Cancelled after \d+\.\d s\./.test((await page.textContent('#render-state')) ?? ''),
    'the page says it was cancelled',
    5000,
  );
  assert.ok(await page.isEnabled('#render'), 'Render can be pressed again');
  assert.ok(await page.locator('#render-cancel').isHidden());
  assert.is(await page.locator('#result[data-outcome]').count(), 0, 'no result was shown');
  // The render that had started still ends, on its own timeout, and is listed like any other.
  const failedListed = async () =>
    (
      (await (await page.request.get(`${service.base}/dashboard/renders?status=failed`)).text()).match(
        /data-status="failed"/g,
      ) ?? []
    ).length;
  await waitFor(
    async () => (await failedListed()) === failedBefore + 1,
    'the abandoned wait ends as a failed render',
    20_000,
    300,
  );
  await page.context().close();
});

renders('on a phone every tab is reachable; pages name the favicon that is served', async () => {
  const page = await (
    await browser.newContext({
      viewport: { width: 375, height: 740 },
      storageState: await state.page!.context().storageState(),
    })
  ).newPage();
  await page.goto(`${service.base}/dashboard/renders`);
  const tabs = await page
    .locator('nav.tabs a')
    .evaluateAll((links) => links.map((link) => link.getBoundingClientRect()).map((box) => [box.left, box.right]));
  assert.ok(tabs.length >= 7);
  for (const [left, right] of tabs) assert.ok(left >= 0 && right <= 375, `a tab within the screen: ${left}..${right}`);
  assert.ok(
    await page.evaluate(() => document.documentElement.scrollWidth <= 375),
    'the page does not scroll sideways (a wide table scrolls in its own box)',
  );
  const icon = (await page.getAttribute('link[rel=icon]', 'href'))!;
  const served = await call(new URL(icon, service.base).toString());
  assert.is(served.status, 200);
  await page.context().close();
});

renders.run();
