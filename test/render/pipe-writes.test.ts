// What Playwright's server writes to Chromium's pipe once batchPipeWrites has taken it over: the
// messages of one synchronous stretch in one write, each whole, in order, each answered.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser } from 'playwright-core';
import { cdp } from '../../src/render/browser/cdp.ts';
import { batchPipeWrites, chromium } from '../../src/render/browser/playwright.ts';
import { CHROMIUM } from '../helpers/render.ts';

const test = suite('one write a turn on the pipe to Chromium');

let browser: Browser;
// The writes on the pipe, seen where Playwright's server makes them (its transport's stream).
const writes: string[] = [];

test.before(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM });
  batchPipeWrites(browser);
  const server = (browser as unknown as { _connection: { toImpl(object: unknown): unknown } })._connection.toImpl(
    browser,
  ) as { _connection: { _transport: { _pipeWrite: { write(chunk: string): boolean } } } };
  const pipe = server._connection._transport._pipeWrite;
  const write = pipe.write.bind(pipe);
  pipe.write = (chunk: string) => {
    writes.push(chunk);
    return write(chunk);
  };
});

test.after(async () => {
  await browser?.close();
});

test('commands sent in one stretch go in one write, whole and in order, and each gets its own answer', async () => {
  const session = cdp(await browser.newBrowserCDPSession());
  const before = writes.length;
  const answers = await Promise.all([
    ...Array.from({ length: 40 }, () => session.Browser.getVersion()),
    session.Target.getTargets(),
  ]);
  assert.is(writes.length - before, 1, 'one write');
  const messages = writes[before].split('\0');
  assert.is(messages.at(-1), '', 'every message ends with its separator');
  const sent = messages.slice(0, -1).map((text) => JSON.parse(text) as { id: number; method: string });
  assert.is(sent.length, 41);
  assert.equal(
    sent.map((message) => message.id),
    [...sent.map((message) => message.id)].sort((a, b) => a - b),
    'in the order they were sent',
  );
  assert.is(sent.at(-1)!.method, 'Target.getTargets');
  for (const answer of answers.slice(0, -1)) assert.match((answer as { product: string }).product, /Chrome/);
  assert.ok(Array.isArray((answers.at(-1) as { targetInfos: unknown[] }).targetInfos));
  await session.detach();
});

test("Playwright's own calls work through it: a page loads, evaluates and is captured", async () => {
  const page = await browser.newPage();
  await page.setContent('<title>batched</title><h1>Hello</h1>');
  assert.is(await page.title(), 'batched');
  assert.is(await page.evaluate(() => document.querySelector('h1')!.textContent), 'Hello');
  const png = await page.screenshot();
  assert.equal([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
  await page.close();
});

test.run();
