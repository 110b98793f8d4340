// The warm page pool against real Chromium: a page that keeps its renderer busy after its render
// does not hold the workspace's next render hostage.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium, type Browser } from 'playwright-core';
import { chromiumArgs } from '../../src/render/chromium.ts';
import { PagePool } from '../../src/render/pool.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';

const test = suite('PagePool');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium';

let site: FixtureSite;
let browser: Browser;

test.before(async () => {
  site = await startFixtureSite();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs() });
});
test.after(async () => {
  await browser?.close();
  await site?.close();
});

test('a page whose renderer is busy when it is given back is replaced, not waited for', async () => {
  const pool = new PagePool(browser, { maxPages: 4, maxRenders: 100 });
  const first = await pool.acquire('ws_busy', 1);
  await first.page.goto(`${site.url}/`);
  // After the render: the page's own script takes the renderer and never gives it back.
  await first.page.evaluate('setTimeout(() => { for (;;) {} }, 0)');
  pool.release(first);

  let timer: NodeJS.Timeout | undefined;
  const next = await Promise.race([
    pool.acquire('ws_busy', 1),
    new Promise<null>((resolve) => (timer = setTimeout(resolve, 30_000, null))),
  ]).finally(() => clearTimeout(timer));
  assert.ok(next, 'the next render of the workspace got a page');
  assert.is.not(next, first, 'a fresh page, not the busy one');
  await next.page.goto(`${site.url}/`);
  assert.ok((await next.page.screenshot()).length > 1000, 'and it renders');
  assert.is(pool.size, 1, 'the busy page was closed');
  await pool.discard(next);
});

test.run();
