// The dashboard end to end in real Chromium, as a new customer uses it: sign up, verify, keys,
// a screenshot, the signed-requests setting, a member's limits, rotation, a forged cross-site post.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const dashboard = suite('dashboard in Chromium: sign-up to rotation');
let stack: TestStack;
let service: TestService;
let browser: Browser;
let evil: Server;
let evilUrl: string;

dashboard.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  // Another origin that posts a form at the dashboard, as a malicious site would.
  evil = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><form id="f" method="post" action="${service.base}/dashboard/settings">
      <input name="require_signed_requests" value="off"><input name="_csrf" value="guessed"></form>
      <script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
});
dashboard.after(async () => {
  await browser?.close();
  await new Promise((resolve) => evil?.close(resolve));
  await service?.close();
  await stack?.stop();
});

const owner = 'founder@example.com';
const teammate = 'teammate@example.com';
const password = 'a long enough password';
const state: { accessKey?: string; secretKey?: string; ownerPage?: Page } = {};

/** The latest outbox message to `to`, and the first dashboard link in it. */
async function mailTo(to: string): Promise<{ subject: string; link: string }> {
  const outbox = await shutterbus(stack, 'mail', 'outbox');
  assert.is(outbox.code, 0, outbox.stderr);
  const message = [...outbox.json.messages].reverse().find((m: { to: string }) => m.to === to);
  assert.ok(message, `a mail to ${to} is in the outbox`);
  assert.type(message.created_at, 'string');
  const link = /https?:\/\/\S+\/dashboard\/\S+/.exec(message.text)?.[0];
  assert.ok(link, 'the mail carries a dashboard link');
  return { subject: message.subject, link: link! };
}

const take = (query: string) => call(`${service.base}/api/take?${query}`);
const fixture = (path: string) => encodeURIComponent(`${stack.site.url}${path}`);
const signed = (secret: string, query: string) => `${query}&signature=${hmacHex(secret, query)}`;

dashboard(
  'sign up, see that nothing opens before the address is confirmed, confirm it, take a screenshot',
  async () => {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    state.ownerPage = page;
    await page.goto(`${service.base}/dashboard`);
    assert.match(page.url(), /\/dashboard\/sign-in$/);
    await page.click('text=Create an account');
    await page.fill('#email', owner);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
    assert.match((await page.textContent('h1'))!, /Check your mail/);
    await page.click('a.button:has-text("Sign in")');
    await page.fill('#email', owner);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
    assert.match(page.url(), /\/dashboard\/keys/);
    // An account whose address is not confirmed opens no workspace (docs/security.md).
    assert.match((await page.textContent('h1'))!, /Confirm your address/);
    assert.is(await page.locator('#access-key').count(), 0);

    const mail = await mailTo(owner);
    assert.match(mail.subject, /Confirm your email/);
    await page.goto(mail.link);
    assert.match((await page.textContent('h1'))!, /Email confirmed/);
    await page.goto(`${service.base}/dashboard/keys`);
    const accessKey = (await page.textContent('#access-key'))!.trim();
    assert.match(accessKey, /^ak_/);
    assert.is(await page.locator('.notice.warn').count(), 0, 'the keys work once confirmed');

    const shot = await take(`url=${fixture('/')}&access_key=${accessKey}&viewport_width=400&viewport_height=300`);
    assert.is(shot.status, 200, JSON.stringify(shot.json));
    assert.is(shot.contentType, 'image/png');
    state.accessKey = accessKey;
  },
);

dashboard('reveal the secret; the example URL on the page is signed with it', async () => {
  const page = state.ownerPage!;
  assert.is(await page.locator('#secret-key').count(), 0, 'hidden until revealed');
  await page.click('text=Reveal');
  const secretKey = (await page.textContent('#secret-key'))!.trim();
  assert.match(secretKey, /^sk_/);
  const example = (await page.textContent('#signed-url'))!.trim();
  const [, query] = example.split('?');
  const unsignedPart = query.slice(0, query.lastIndexOf('&signature='));
  assert.is(query, signed(secretKey, unsignedPart));
  assert.match((await page.textContent('#curl-line'))!, /^curl -o shot\.png '/);
  state.secretKey = secretKey;
});

dashboard('turn on "require signed requests": unsigned requests are refused, signed ones render', async () => {
  const page = state.ownerPage!;
  const { accessKey, secretKey } = state as Required<typeof state>;
  await page.click('#toggle-signed');
  assert.match((await page.textContent('.notice.ok'))!, /in force on every server within about two seconds/);
  assert.is((await page.textContent('#setting-state'))!.trim(), 'On');
  const query = `url=${fixture('/')}&access_key=${accessKey}&viewport_width=400&viewport_height=300`;
  await waitFor(
    async () => (await take(query)).json?.error_code === 'signature_is_required',
    'the setting reached the ingress',
    10_000,
    100,
  );
  assert.is((await take(query)).status, 403);
  assert.is((await take(signed(secretKey, query))).status, 200);
  // A failure, for the usage page to explain.
  assert.is(
    (await take(signed(secretKey, `url=${fixture('/status/500')}&access_key=${accessKey}`))).json?.error_code,
    'host_returned_error',
  );
});

dashboard('the usage page counts this month and lists the latest renders with their errors', async () => {
  const page = state.ownerPage!;
  await page.click('nav >> text=Usage');
  assert.is((await page.textContent('#used'))!.trim(), '2');
  assert.is((await page.locator('svg.chart rect.bar').count()) >= 28, true);
  const table = (await page.textContent('#renders'))!;
  assert.match(table, /host_returned_error/);
  assert.match(table, /succeeded/);
});

dashboard('a member sees the setting and rotation refused, also when posting the forms by hand', async () => {
  const page = state.ownerPage!;
  await page.click('nav >> text=Members');
  await page.fill('#invite-email', teammate);
  await page.selectOption('#invite-role', 'member');
  await page.click('text=Send invitation');
  assert.match((await page.textContent('table'))!, new RegExp(teammate));

  const invitation = await mailTo(teammate);
  const member = await (await browser.newContext()).newPage();
  await member.goto(invitation.link);
  await member.fill('#password', password);
  await member.click('button[type=submit]');
  assert.match(member.url(), /\/dashboard\/keys/);
  assert.ok(await member.locator('#toggle-signed').isDisabled());
  assert.ok(await member.locator('#rotate-keys').isDisabled());
  assert.match((await member.textContent('main'))!, /Only owners and admins can change this; you are a member/);
  // The secret key is for owners and admins: no Reveal button, and the reveal link typed by hand is refused.
  assert.is(await member.locator('a[href*="reveal=secret"]').count(), 0);
  assert.match((await member.textContent('#secret-hidden'))!, /Only owners and admins can reveal the secret key/);
  const reveal = await member.request.get(`${service.base}/dashboard/keys?reveal=secret`, { maxRedirects: 0 });
  assert.is(reveal.status(), 403);
  assert.not.match(await reveal.text(), new RegExp(state.secretKey!));

  // As someone with the developer tools open would: enable the disabled button and submit.
  const refused = member.waitForResponse((response) => response.url().endsWith('/dashboard/settings'));
  await member.evaluate(`document.getElementById('toggle-signed').disabled = false`);
  await member.click('#toggle-signed');
  assert.is((await refused).status(), 403);
  assert.match((await member.textContent('main'))!, /Only owners and admins/);
  // And straight at the routes, with the member's session cookie, CSRF token and our origin.
  await member.goto(`${service.base}/dashboard/keys`);
  const csrf = (await member.getAttribute('input[name=_csrf]', 'value'))!;
  const headers = { origin: service.base };
  const rotate = await member.request.post(`${service.base}/dashboard/keys/rotate`, {
    form: { _csrf: csrf, confirm: 'rotate' },
    headers,
    maxRedirects: 0,
  });
  assert.is(rotate.status(), 403);
  assert.is((await member.request.get(`${service.base}/dashboard/keys/rotate`, { maxRedirects: 0 })).status(), 403);
  const setting = await member.request.post(`${service.base}/dashboard/settings`, {
    form: { _csrf: csrf, require_signed_requests: 'off' },
    headers,
    maxRedirects: 0,
  });
  assert.is(setting.status(), 403);
  const { accessKey } = state as Required<typeof state>;
  assert.is(
    (await take(`url=${fixture('/')}&access_key=${accessKey}`)).json?.error_code,
    'signature_is_required',
    'the setting stayed on',
  );
  await member.context().close();
});

dashboard('a forged cross-site form post is refused', async () => {
  const page = state.ownerPage!;
  const answer = page.waitForResponse((response) => response.url().endsWith('/dashboard/settings'));
  await page.goto(evilUrl);
  assert.is((await answer).status(), 403);
  assert.match((await page.textContent('main'))!, /did not come from a Shutterbus dashboard page/);
  await page.goto(`${service.base}/dashboard/keys`);
  assert.is((await page.textContent('#setting-state'))!.trim(), 'On');
});

dashboard('rotate the keys after a confirmation: the old ones stop working', async () => {
  const page = state.ownerPage!;
  const { accessKey: oldAccess, secretKey: oldSecret } = state as Required<typeof state>;
  await page.click('#rotate-keys');
  assert.match((await page.textContent('h1'))!, /Rotate both keys\?/);
  await page.click('#confirm-rotate');
  assert.match((await page.textContent('.notice.ok'))!, /old access key and secret key are refused/);
  const newAccess = (await page.textContent('#access-key'))!.trim();
  assert.not.equal(newAccess, oldAccess);
  await page.click('text=Reveal');
  const newSecret = (await page.textContent('#secret-key'))!.trim();
  const oldQuery = `url=${fixture('/')}&access_key=${oldAccess}&viewport_width=400&viewport_height=300`;
  assert.is((await take(signed(oldSecret, oldQuery))).json?.error_code, 'access_key_invalid');
  const newQuery = `url=${fixture('/')}&access_key=${newAccess}&viewport_width=400&viewport_height=300`;
  assert.is((await take(signed(oldSecret, newQuery))).json?.error_code, 'signature_is_not_valid');
  assert.is((await take(signed(newSecret, newQuery))).status, 200);
});

dashboard.run();
