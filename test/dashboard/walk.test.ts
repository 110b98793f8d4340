// Every dashboard page, as an owner, an admin and a member, at 1280 and 390 px wide in Chromium:
// no console error (a Content-Security-Policy refusal is one), nothing wider than the page, every
// control in the page's styles, and the tabs on one row on a desktop screen.
// DOCS_SCREENSHOTS=1 also writes the owner's pages at 1280 px to docs/dashboard-<page>.png (the
// playground, renders and deliveries pages with a result on them are taken by tools and renders tests).
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const walk = suite('every dashboard page, every role, desktop and phone');
let stack: TestStack;
let service: TestService;
let browser: Browser;

const password = 'a long enough password';
const people = { owner: 'walk-owner@example.com', admin: 'walk-admin@example.com', member: 'walk-member@example.com' };
type Role = keyof typeof people;
const widths = [1280, 390];
const pages: Record<Role, Page[]> = { owner: [], admin: [], member: [] };
const ids: { render?: string; monitor?: string } = {};

/** The latest outbox message to `to`: its dashboard link. */
async function linkMailedTo(to: string): Promise<string> {
  const outbox = await shutterbus(stack, 'mail', 'outbox');
  assert.is(outbox.code, 0, outbox.stderr);
  const message = [...outbox.json.messages].reverse().find((m: { to: string }) => m.to === to);
  assert.ok(message, `a mail to ${to}`);
  return /https?:\/\/\S+\/dashboard\/\S+/.exec(message.text)![0];
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${service.base}/dashboard/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/keys/);
}

walk.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  const context = () => browser.newContext({ viewport: { width: 1280, height: 900 } });

  // The owner signs up and confirms the address through the mailed link.
  const owner = await (await context()).newPage();
  await owner.goto(`${service.base}/dashboard/sign-up`);
  await owner.fill('#email', people.owner);
  await owner.fill('#password', password);
  await owner.click('button[type=submit]');
  await owner.goto(await linkMailedTo(people.owner));
  await signIn(owner, people.owner);
  const accessKey = (await owner.textContent('#access-key'))!.trim();

  // An admin and a member, invited and joining through their links.
  for (const role of ['admin', 'member'] as const) {
    await owner.goto(`${service.base}/dashboard/members`);
    await owner.fill('#invite-email', people[role]);
    await owner.selectOption('#invite-role', role);
    await owner.click('button:has-text("Send invitation")');
    // No SMTP_URL here: the page says where the invitation is, not that it was sent.
    assert.match((await owner.textContent('.notice.ok'))!, /outbox/);
    const joining = await (await context()).newPage();
    await joining.goto(await linkMailedTo(people[role]));
    await joining.fill('#password', password);
    await joining.click('button[type=submit]');
    await joining.waitForURL(/\/dashboard\//);
    await joining.context().close();
  }

  // Something on every page: a render, a failed one, and a monitor with a capture.
  const auth = { 'x-access-key': accessKey };
  const shot = await call(`${service.base}/api/take?url=${encodeURIComponent(`${stack.site.url}/`)}&cache=false`, {
    headers: auth,
  });
  assert.is(shot.status, 200, JSON.stringify(shot.json));
  ids.render = shot.headers.get('x-render-id')!;
  await call(`${service.base}/api/take?url=${encodeURIComponent(`${stack.site.url}/status/500`)}`, { headers: auth });
  const monitor = await call(`${service.base}/api/monitors`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${stack.site.url}/`, interval: 3600, webhook_url: `${stack.site.url}/hook/walk` }),
  });
  assert.is(monitor.status, 201, JSON.stringify(monitor.json));
  ids.monitor = monitor.json!.monitor_id;
  await waitFor(
    async () => (await call(`${service.base}/api/monitors/${ids.monitor}`, { headers: auth })).json?.last_run_at,
    'the monitor to run once',
  );
  await owner.context().close();

  for (const role of Object.keys(people) as Role[]) {
    for (const width of widths) {
      const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
      await signIn(page, people[role]);
      pages[role].push(page);
    }
  }
});
walk.after(async () => {
  await browser?.close();
  await service?.close();
  await stack?.stop();
});

/** What is wrong with the page as loaded: the problems found, each a line. */
async function problemsOf(page: Page, path: string): Promise<string[]> {
  const errors: string[] = [];
  const onConsole = (message: { type(): string; text(): string }) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  };
  const onError = (error: Error) => errors.push(`page error: ${error.message}`);
  page.on('console', onConsole);
  page.on('pageerror', onError);
  try {
    const response = await page.goto(`${service.base}${path}`, { waitUntil: 'load' });
    assert.ok(response && response.status() < 400, `${path}: ${response?.status()}`);
    // Console messages of the load arrive on their own task.
    await page.waitForTimeout(150);
    // tsx names the functions it compiles with a helper the page does not have.
    await page.evaluate('globalThis.__name ??= (f) => f');
    const found = await page.evaluate(() => {
      const problems: string[] = [];
      const describe = (el: Element) =>
        `<${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''}>`;
      const width = document.documentElement.clientWidth;
      if (document.documentElement.scrollWidth > width + 1) {
        // The innermost elements that reach past the page's right edge.
        const wide = [...document.querySelectorAll('body *')].filter((el) => {
          const box = el.getBoundingClientRect();
          if (box.width === 0 || box.right <= width + 1) return false;
          // Inside a box that scrolls on its own, it does not widen the page.
          for (let up = el.parentElement; up; up = up.parentElement) {
            const overflow = getComputedStyle(up).overflowX;
            if (overflow === 'auto' || overflow === 'scroll' || overflow === 'hidden') return false;
          }
          return true;
        });
        const innermost = wide.filter((el) => !wide.some((other) => other !== el && el.contains(other)));
        problems.push(
          `wider than the page (${document.documentElement.scrollWidth} > ${width}): ${innermost.slice(0, 3).map(describe).join(', ')}`,
        );
      }
      // Every visible control wears the page's styles (rounded, the page's font), not the browser's.
      const bodyFont = getComputedStyle(document.body).fontFamily;
      for (const control of document.querySelectorAll('input, select, textarea, button')) {
        const style = getComputedStyle(control);
        if (style.display === 'none' || (control as HTMLElement).offsetParent === null) continue;
        if (control instanceof HTMLInputElement && ['hidden', 'checkbox', 'radio'].includes(control.type)) continue;
        if (control.classList.contains('link')) continue;
        if (style.borderTopLeftRadius !== '8px' || style.fontFamily !== bodyFont)
          problems.push(`unstyled control: ${describe(control)} (radius ${style.borderTopLeftRadius})`);
      }
      const tabs = [...document.querySelectorAll<HTMLElement>('nav.tabs a')];
      const nav = document.querySelector<HTMLElement>('nav.tabs');
      if (nav && window.innerWidth >= 1200) {
        if (new Set(tabs.map((tab) => tab.offsetTop)).size > 1) problems.push('the tabs wrap onto two rows');
        if (nav.scrollWidth > nav.clientWidth + 1) problems.push('the tabs do not fit their row');
      }
      if (nav && tabs.some((tab) => tab.getBoundingClientRect().height === 0)) problems.push('a tab is not shown');
      return problems;
    });
    return [...errors, ...found];
  } finally {
    page.off('console', onConsole);
    page.off('pageerror', onError);
  }
}

const screenshotted = ['keys', 'usage', 'monitors', 'storage', 'members', 'account'];
const paths = () => [
  'keys',
  'playground',
  'playground?mode=animate',
  'renders',
  `renders/${ids.render}`,
  'usage',
  'monitors',
  `monitors/${ids.monitor}`,
  'deliveries',
  'storage',
  'members',
  'account',
];

for (const role of Object.keys(people) as Role[]) {
  walk(`as ${role}: every page at ${widths.join(' and ')} px`, async () => {
    const problems: string[] = [];
    for (const [index, width] of widths.entries()) {
      const page = pages[role][index];
      for (const path of paths()) {
        for (const problem of await problemsOf(page, `/dashboard/${path}`))
          problems.push(`${width} px /${path}: ${problem}`);
        if (process.env.DOCS_SCREENSHOTS && role === 'owner' && width === 1280 && screenshotted.includes(path))
          await page.screenshot({ path: `docs/dashboard-${path}.png`, fullPage: true });
      }
    }
    assert.equal(problems, [], problems.join('\n'));
  });
}

walk('the pages say what is true: no format as a reason, no request shown for an empty form', async () => {
  const page = pages.owner[0];
  await page.goto(`${service.base}/dashboard/usage`);
  const succeeded = page.locator('#renders tr', { hasText: 'succeeded' }).first();
  assert.not.match((await succeeded.textContent())!, /\bpng\b/, 'a success has no reason to show');
  await page.goto(`${service.base}/dashboard/playground`);
  assert.is(await page.locator('#signed-url').count(), 0, 'no signed URL for an empty request');
  assert.is(await page.locator('#no-request').count(), 1);
  const formatHelp = (await page.textContent('label[for="field-format"]'))!;
  for (const format of await page.locator('#field-format option').allTextContents())
    assert.ok(formatHelp.includes(format), `the help names ${format}`);
  assert.not.match(formatHelp, /jp2|heif/, 'nor any format the menu lacks');
});

walk('signed out: sign-in and sign-up at both widths', async () => {
  const problems: string[] = [];
  for (const width of widths) {
    const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
    for (const path of ['/dashboard/sign-in', '/dashboard/sign-up'])
      for (const problem of await problemsOf(page, path)) problems.push(`${width} px ${path}: ${problem}`);
    await page.context().close();
  }
  assert.equal(problems, [], problems.join('\n'));
});

walk.run();
