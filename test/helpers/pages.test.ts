// closePage() closes a page right after a form's redirect landed, where Chromium may drop the first
// close (crbug.com/536385539) and a bare page.close() then waits for good (7 closes in 15 here, so
// 15 rounds send a close again several times).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { closePage } from './pages.ts';

const pages = suite('closePage');
let site: http.Server;
let base: string;
let browser: Browser;

pages.before(async () => {
  site = http.createServer((req, res) => {
    if (req.method === 'POST') {
      req.resume().on('end', () => res.writeHead(303, { location: '/landed' }).end());
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      req.url === '/landed'
        ? '<!doctype html><title>landed</title><p>signed in</p>'
        : '<!doctype html><title>form</title><form method=post action=/go><input id=email name=email><button>Go</button></form>',
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
});
pages.after(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
});

pages('a page closed as its form redirect lands closes, every time, within seconds', async () => {
  for (let round = 0; round < 15; round++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.fill('#email', 'someone@example.com');
    await page.click('button');
    assert.match(page.url(), /\/landed$/);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      closePage(page).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(resolve, 8000, false))),
    ]).finally(() => clearTimeout(timer));
    assert.ok(closed, `round ${round}: the page did not close within 8 s`);
    assert.ok(page.isClosed());
    assert.ok(Date.now() - started < 8000);
    await context.close();
  }
});

pages.run();
