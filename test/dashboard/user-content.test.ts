// Documents a page or a customer wrote never run on our origin: an HTML render carrying a script,
// opened in real Chromium by a signed-in member of another workspace, runs nothing and reaches
// no dashboard page, from /files/* and straight from /api/take; FILES_BASE_URL moves files to an
// origin of their own, where no cookie goes and no dashboard answers.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mailedLink } from '../helpers/visitor.ts';
import { closePage } from '../helpers/pages.ts';
import { freePort } from '../helpers/stack.ts';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const userContent = suite('user content in Chromium: sandboxed, nosniff, its own origin');
let stack: TestStack;
let service: TestService;
/** An ingress whose files live on FILES_BASE_URL = http://localhost:PORT (another host for cookies). */
let split: TestService;
let filesBase: string;
let browser: Browser;
let victim: BrowserContext;
let attacker: Workspace;

// Acts only where a victim opens it (a file or an /api/take answer), not while it is rendered.
const hostile = `<!doctype html><html><head><title>quarterly report</title></head><body><p>report</p>
<script>
if (/^\\/(files|api)\\//.test(location.pathname)) {
  document.title = 'script ran';
  fetch('/dashboard/keys', { credentials: 'include' }).then((r) => r.text()).then((page) => {
    document.body.setAttribute('data-stolen', String(page.length));
  });
}
</script></body></html>`;

userContent.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  const port = await freePort();
  filesBase = `http://localhost:${port}`;
  split = await startService(stack, { ROLES: 'ingress', PORT: String(port), FILES_BASE_URL: filesBase });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  attacker = await createWorkspace(stack);

  // The victim: signed in to the dashboard as the owner of a workspace of their own.
  victim = await browser.newContext();
  const page = await victim.newPage();
  await page.goto(`${service.base}/dashboard/sign-up`);
  await page.fill('#email', 'victim@example.com');
  await page.fill('#password', 'a long enough password');
  await page.click('button[type=submit]');
  assert.match((await page.textContent('h1'))!, /Check your mail/);
  await page.click('a.button:has-text("Sign in")');
  await page.fill('#email', 'victim@example.com');
  await page.fill('#password', 'a long enough password');
  await page.click('button[type=submit]');
  assert.match(page.url(), /\/dashboard\/keys/);
  await page.goto(`${service.base}${await mailedLink(stack, 'victim@example.com', '/dashboard/verify')}`);
  await page.goto(`${service.base}/dashboard/keys`);
  assert.is(await page.locator('#access-key').count(), 1, 'the victim opens a workspace of their own');
  await closePage(page);
});
userContent.after(async () => {
  await browser?.close();
  await split?.close();
  await service?.close();
  await stack?.stop();
});

/** Opens `url` as the victim; what the page did and every request it made. */
async function open(
  url: string,
): Promise<{ page: Page; title: string; stolen: string | null; requests: { url: string; cookie?: string }[] }> {
  const page = await victim.newPage();
  const requests: { url: string; cookie?: string }[] = [];
  page.on('request', (request) => requests.push({ url: request.url(), cookie: request.headers().cookie }));
  const response = await page.goto(url);
  assert.is(response?.status(), 200, url);
  // The claim is that nothing happens: the script would have run and fetched at once.
  await page.waitForTimeout(1000);
  const title = await page.title();
  const stolen = await page.evaluate(() => document.body.getAttribute('data-stolen'));
  return { page, title, stolen, requests };
}

/** Opens `url` as the victim and finds that its script ran not and reached no dashboard page. */
async function assertInertWhenOpened(url: string): Promise<void> {
  const opened = await open(url);
  assert.is(opened.title, 'quarterly report', 'the script did not run');
  assert.is(opened.stolen, null);
  assert.equal(
    opened.requests.filter((r) => r.url.includes('/dashboard')),
    [],
    'no dashboard request',
  );
  await closePage(opened.page);
}

/** The headers that keep a document inert wherever it is opened. */
function assertInertHeaders(headers: Headers): void {
  assert.is(headers.get('content-security-policy'), 'sandbox');
  assert.is(headers.get('x-content-type-options'), 'nosniff');
}

const renderHtml = async (base: string, extra = '') => {
  const query = `html=${encodeURIComponent(hostile)}&format=html&response_type=json&cache=false${extra}`;
  const answer = await call(`${base}/api/take?${query}`, { headers: { 'x-access-key': attacker.access_key } });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.is(answer.headers.get('x-content-type-options'), 'nosniff', 'API answers carry nosniff');
  return answer.json!.file_url as string;
};

userContent(
  'an HTML file opened by a signed-in member of another workspace runs no script and reaches no dashboard page',
  async () => {
    const fileUrl = await renderHtml(service.base);
    assert.ok(fileUrl.startsWith(`${service.base}/files/`), fileUrl);
    await assertInertWhenOpened(fileUrl);

    const file = await call(fileUrl);
    assert.match(
      file.bytes.toString(),
      /<script>/,
      'the document still carries the script: only the headers keep it inert',
    );
    assertInertHeaders(file.headers);
  },
);

userContent('a plain link to /api/take with format=html runs nothing either', async () => {
  const link = `${service.base}/api/take?access_key=${attacker.access_key}&format=html&cache=false&html=${encodeURIComponent(hostile)}`;
  await assertInertWhenOpened(link);

  const answer = await call(link);
  assert.is(answer.status, 200);
  assertInertHeaders(answer.headers);
});

userContent("answers Fastify never sees carry nosniff too: a refused key, a repeat view's redirect", async () => {
  const refused = await call(`${service.base}/api/take?url=https://example.com`);
  assert.is(refused.status, 401);
  assert.is(refused.headers.get('x-content-type-options'), 'nosniff');
  const notFound = await call(`${service.base}/files/nothing-here.png`);
  assert.is(notFound.status, 404);
  assert.is(notFound.headers.get('x-content-type-options'), 'nosniff');
});

userContent(
  'FILES_BASE_URL: file URLs and cached redirects point there; no cookie goes there and no dashboard answers there',
  async () => {
    const fileUrl = await renderHtml(split.base);
    assert.ok(fileUrl.startsWith(`${filesBase}/files/`), fileUrl);

    // A cached signed GET: the first view renders, the later ones redirect to the files origin.
    const query = `html=${encodeURIComponent('<p>cached</p>')}&access_key=${attacker.access_key}&format=png&cache_key=split${Date.now()}`;
    const signedUrl = `${split.base}/api/take?${query}&signature=${hmacHex(attacker.secret_key, query)}`;
    assert.is((await call(signedUrl)).status, 200);
    for (let view = 0; view < 2; view++) {
      const again = await call(signedUrl);
      assert.is(again.status, 302);
      assert.ok(again.headers.get('location')!.startsWith(`${filesBase}/files/`), again.headers.get('location')!);
      assert.is(again.headers.get('x-content-type-options'), 'nosniff');
    }

    const opened = await open(fileUrl);
    assert.is(opened.title, 'quarterly report');
    const file = opened.requests.find((r) => r.url === fileUrl);
    assert.ok(file, 'the file was requested');
    assert.is(file!.cookie, undefined, 'the session cookie stays on the dashboard origin');
    assert.equal(
      opened.requests.filter((r) => r.url.includes('/dashboard')),
      [],
    );
    await closePage(opened.page);

    const dashboardThere = await call(`${filesBase}/dashboard/sign-in`);
    assert.is(dashboardThere.status, 404, 'no dashboard (and so no cookie) on the files origin');
    assert.is((await call(`${split.base}/dashboard/sign-in`)).status, 200, 'the dashboard stays on BASE_URL');
  },
);

userContent.run();
