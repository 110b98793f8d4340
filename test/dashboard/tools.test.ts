// The playground and the deliveries page end to end in real Chromium against the real stack: a render
// with a device and dark mode whose signed URL serves the same bytes from the cache, a failing render
// without JavaScript, a dead webhook sent again from the page, and a member without the role refused.
// DOCS_SCREENSHOTS=1 also writes docs/dashboard-playground.png and docs/dashboard-deliveries.png.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { presetOptions } from '../../src/domain/devices.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, usedThisMonth, type TestService, type TestStack } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const tools = suite('dashboard in Chromium: playground and webhook deliveries');
let stack: TestStack;
let service: TestService;
let browser: Browser;
let receiver: Server;
let receiverUrl: string;
/** What the local webhook receiver answers, and what it received. */
const hook = { status: 500, received: [] as { headers: IncomingHttpHeaders; body: string; answered: number }[] };

tools.before(async () => {
  stack = await startStack();
  // One retry a second apart: a failing receiver makes a dead letter within a few seconds.
  service = await startService(stack, { WEBHOOK_RETRY_SCHEDULE: '1s' });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hook.received.push({ headers: req.headers, body, answered: hook.status });
      res.writeHead(hook.status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
tools.after(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await service?.close();
  await stack?.stop();
});

const owner = 'owner@tools.example.com';
const teammate = 'member@tools.example.com';
const password = 'a long enough password';
const state: { ownerPage?: Page; workspaceId?: string; accessKey?: string; deliveryId?: string } = {};
const fixture = (path: string) => `${stack.site.url}${path}`;
const darkAwarePage = `<!doctype html><meta name="viewport" content="width=device-width"><style>body{margin:0;padding:24px;font:20px system-ui,sans-serif;background:#fff;color:#111}
@media (prefers-color-scheme: dark){body{background:#0f172a;color:#e2e8f0}}</style><h1>Hello from the playground</h1><p>An iPhone 13 in dark mode.</p>`;

/** The latest outbox message to `to`: its first dashboard link. */
async function mailedLink(to: string): Promise<string> {
  const outbox = await shutterbus(stack, 'mail', 'outbox');
  const message = [...outbox.json.messages].reverse().find((m: { to: string }) => m.to === to);
  return /https?:\/\/\S+\/dashboard\/\S+/.exec(message.text)![0];
}

tools('an owner signs up and verifies; the playground renders a device in dark mode without a page load', async () => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  state.ownerPage = page;
  await page.goto(`${service.base}/dashboard/sign-up`);
  await page.fill('#email', owner);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  assert.match((await page.textContent('h1'))!, /Check your mail/);
  await page.click('a.button:has-text("Sign in")');
  await page.fill('#email', owner);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.goto(await mailedLink(owner));
  await page.goto(`${service.base}/dashboard/keys`);
  state.accessKey = (await page.textContent('#access-key'))!.trim();
  state.workspaceId = (await page.textContent('.who .mono'))!.trim();

  await page.goto(`${service.base}/dashboard/playground`);
  assert.is(await page.locator('nav >> text=Playground').getAttribute('aria-current'), 'page');
  for (const name of ['url', 'format', 'viewport_device', 'dark_mode', 'hide_selectors', 'cache'])
    assert.is((await page.locator(`[name=${name}]`).count()) > 0, true, name);
  await page.fill('#field-html', darkAwarePage);
  await page.fill('#field-viewport_device', 'iPhone 13');
  await page.check('#field-dark_mode');
  const before = page.url();
  let navigations = 0;
  const countNavigations = (request: Request) => void (request.isNavigationRequest() && navigations++);
  page.on('request', countNavigations);
  await page.click('#render');
  await page.waitForSelector('#result-image');
  page.off('request', countNavigations);
  assert.is(navigations, 0, 'the result came without a page load');
  assert.is.not(page.url(), before);
  const shared = new URL(page.url());
  assert.is(shared.searchParams.get('viewport_device'), 'iPhone 13');
  assert.is(shared.searchParams.get('dark_mode'), 'true');
  assert.match(shared.searchParams.get('result') ?? '', /^[0-9a-f-]{36}$/);

  const imageUrl = (await page.getAttribute('#result-image', 'src'))!;
  const shown = await call(imageUrl);
  assert.is(shown.contentType, 'image/png');
  const device = presetOptions('iPhone 13');
  const { data, info } = await sharp(shown.bytes).raw().toBuffer({ resolveWithObject: true });
  assert.is(info.width, device.viewport_width * device.device_scale_factor, 'the PNG is as wide as the device');
  assert.ok(data[0] < 40 && data[1] < 40 && data[2] < 60, 'the page was rendered in dark mode');
  assert.match((await page.textContent('#result-size'))!, /KB/);
  assert.is(await usedThisMonth(stack, state.workspaceId!), 1, 'the render counts toward the quota');

  // The signed URL beside it is the request that rendered: fetched, the cache redirects to the same bytes.
  const signedUrl = (await page.textContent('#signed-url'))!.trim();
  assert.match(signedUrl, /&signature=[0-9a-f]{64}$/);
  const first = await call(signedUrl);
  assert.is(first.status, 302);
  const file = await call(first.headers.get('location')!);
  assert.ok(file.bytes.equals(shown.bytes), 'same bytes from the cache');
  assert.is(await usedThisMonth(stack, state.workspaceId!), 1, 'a cached redirect is not charged');
  assert.ok((await page.textContent('#curl-line'))!.includes(signedUrl));
  assert.match((await page.textContent('#client-snippet'))!, /viewport_device: "iPhone 13",\n {2}dark_mode: true,/);
  assert.match((await page.textContent('#sdk-snippet'))!, /\.viewportDevice\("iPhone 13"\)\s+\.darkMode\(true\)/);

  // The shared address shows the same result to a member of the workspace, server-rendered.
  await page.goto(shared.toString());
  assert.is(await page.getAttribute('#result-image', 'src'), imageUrl);
  assert.is(await page.inputValue('#field-viewport_device'), 'iPhone 13');
  assert.ok(await page.isChecked('#field-dark_mode'));
  if (process.env.DOCS_SCREENSHOTS) await page.screenshot({ path: 'docs/dashboard-playground.png', fullPage: true });
});

tools('without JavaScript, a failing render shows its error code; a refused one its details', async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    storageState: await state.ownerPage!.context().storageState(),
  });
  const page = await context.newPage();
  await page.goto(`${service.base}/dashboard/playground`);
  await page.fill('#field-url', fixture('/status/500'));
  await page.click('#render');
  assert.is((await page.textContent('#error-code'))!.trim(), 'host_returned_error');
  assert.match(page.url(), /[?&]result=/);
  await page.fill('#field-url', fixture('/'));
  await page.fill('#field-viewport_device', 'No Such Phone');
  await page.click('#render');
  assert.is((await page.textContent('#error-code'))!.trim(), 'request_not_valid');
  assert.match((await page.textContent('#render-error'))!, /viewport_device/);
  assert.is(await page.inputValue('#field-viewport_device'), 'No Such Phone', 'the form keeps the choices');
  await context.close();
});

tools('with "require signed requests" on, the playground still renders and shows its result', async () => {
  const setting = (value: string) =>
    shutterbus(
      stack,
      'settings',
      'set',
      '--workspace',
      state.workspaceId!,
      '--as',
      owner,
      '--require-signed-requests',
      value,
    );
  const unsigned = () =>
    call(`${service.base}/api/take?url=${encodeURIComponent(fixture('/'))}&access_key=${state.accessKey}&probe=1`);
  await setting('on');
  try {
    await waitFor(
      async () => (await unsigned()).json?.error_code === 'signature_is_required',
      'the setting reached the ingress',
      10_000,
      50,
    );
    const context = await browser.newContext({
      javaScriptEnabled: false,
      storageState: await state.ownerPage!.context().storageState(),
    });
    const page = await context.newPage();
    await page.goto(`${service.base}/dashboard/playground`);
    await page.fill('#field-url', fixture('/?signed-setting'));
    await page.click('#render');
    const refusal = page.locator('#error-code');
    assert.is(await refusal.count(), 0, (await refusal.count()) ? ((await refusal.textContent()) ?? '') : '');
    await page.waitForSelector('#result-image');
    await context.close();
  } finally {
    await setting('off');
    await waitFor(
      async () => (await unsigned()).json?.error_code === 'request_not_valid',
      'the setting is off again',
      10_000,
      50,
    );
  }
});

tools(
  'a dead delivery: a member sees it without the button and a forged post is refused; the owner sends it again',
  async () => {
    const page = state.ownerPage!;
    const render = await call(
      `${service.base}/api/take?url=${encodeURIComponent(fixture('/'))}&access_key=${state.accessKey}&async=true&webhook_url=${encodeURIComponent(receiverUrl)}`,
    );
    assert.is(render.status, 202, JSON.stringify(render.json));
    await waitFor(
      async () => {
        await page.goto(`${service.base}/dashboard/deliveries`);
        return (await page.locator('#deliveries tr[data-status=dead]').count()) === 1;
      },
      'the delivery is dead after its two attempts',
      30_000,
      300,
    );
    assert.is(hook.received.length, 2);
    const row = page.locator('#deliveries tr[data-status=dead]');
    assert.match((await row.textContent())!, /HTTP 500/);
    state.deliveryId = (await row.getAttribute('id'))!.replace('delivery-', '');

    await page.click(`#delivery-${state.deliveryId} >> text=Request`);
    const headers = (await page.textContent('#delivery-headers'))!;
    assert.match(headers, new RegExp(`^webhook-id: ${state.deliveryId}$`, 'm'));
    // Exactly what the last attempt sent: its timestamp and both signatures.
    const last = hook.received.at(-1)!.headers;
    for (const name of ['x-webhook-timestamp', 'x-signature', 'webhook-timestamp', 'webhook-signature']) {
      assert.ok(headers.split('\n').includes(`${name}: ${last[name]}`), `${name} as sent: ${last[name]}`);
    }
    assert.is((await page.textContent('#delivery-body'))!, hook.received[0].body, 'the body as sent');

    // A member: the page without the button; the post refused even with their own token and our origin.
    await page.goto(`${service.base}/dashboard/members`);
    await page.fill('#invite-email', teammate);
    await page.selectOption('#invite-role', 'member');
    await page.click('text=Send invitation');
    const member = await (await browser.newContext()).newPage();
    await member.goto(await mailedLink(teammate));
    await member.fill('#password', password);
    await member.click('button[type=submit]');
    await member.goto(`${service.base}/dashboard/deliveries`);
    assert.is(await member.locator(`#delivery-${state.deliveryId}`).count(), 1);
    assert.is(await member.locator('button.resend').count(), 0, 'no Send again for a member');
    const resend = `${service.base}/dashboard/deliveries/${state.deliveryId}/resend`;
    const memberCsrf = (await member.getAttribute('input[name=_csrf]', 'value'))!;
    const asMember = await member.request.post(resend, {
      form: { _csrf: memberCsrf },
      headers: { origin: service.base },
      maxRedirects: 0,
    });
    assert.is(asMember.status(), 403);
    await member.context().close();
    // The owner's own session, but without the CSRF token or from another origin.
    const ownerCsrf = (await page.getAttribute('input[name=_csrf]', 'value'))!;
    assert.is(
      (await page.request.post(resend, { form: {}, headers: { origin: service.base }, maxRedirects: 0 })).status(),
      403,
    );
    assert.is(
      (
        await page.request.post(resend, {
          form: { _csrf: ownerCsrf },
          headers: { origin: 'http://evil.example' },
          maxRedirects: 0,
        })
      ).status(),
      403,
    );
    assert.is(hook.received.length, 2, 'nothing was sent again');

    hook.status = 200;
    await page.goto(`${service.base}/dashboard/deliveries`);
    if (process.env.DOCS_SCREENSHOTS) await page.screenshot({ path: 'docs/dashboard-deliveries.png', fullPage: true });
    await page.click(`#delivery-${state.deliveryId} button.resend`);
    assert.match((await page.textContent('.notice.ok'))!, /Sent again/);
    await waitFor(
      async () => hook.received.some((r) => r.answered === 200),
      'the delivery arrives at the receiver',
      15_000,
    );
    const arrived = hook.received.find((r) => r.answered === 200)!;
    assert.is(arrived.headers['webhook-id'], state.deliveryId, 'the same delivery id');
    assert.is(arrived.body, hook.received[0].body);
    await waitFor(
      async () => {
        await page.goto(`${service.base}/dashboard/deliveries`);
        return (await page.locator(`#delivery-${state.deliveryId}[data-status=delivered]`).count()) === 1;
      },
      'the page shows it delivered',
      10_000,
      300,
    );
  },
);

tools.run();
