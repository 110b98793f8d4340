// The warm page pool against real Chromium: a page that keeps its renderer busy after its render
// does not hold the workspace's next render hostage; blank spares wait for new workspaces; pages
// are kept within a memory budget read from Chromium's processes.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { chromiumArgs } from '../../src/render/browser/chromium.ts';
import { metrics } from '../../src/metrics.ts';
import { PagePool, type PoolOptions } from '../../src/render/browser/pool.ts';
import type { WarmPage } from '../../src/render/browser/warm-page.ts';
import { treeMemoryMb } from '../../src/render/browser/processes.ts';
import { findProcess } from '../helpers/processes.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { CHROMIUM } from '../helpers/render.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('PagePool');

const MARKER = `--shutterbus-pool-test=${randomUUID()}`;

let site: FixtureSite;
let browser: Browser;
let browserPid: number;

test.before(async () => {
  site = await startFixtureSite();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...chromiumArgs(), MARKER] });
  browserPid = findProcess([MARKER])!;
});

// One render of the fixture page on `workspace`'s page, given back and wiped.
async function render(pool: PagePool, workspace: string): Promise<WarmPage> {
  const warm = await pool.acquire(workspace, 1);
  await warm.page.goto(`${site.url}/`);
  pool.release(warm);
  await warm.wiped;
  return warm;
}
test.after(async () => {
  await browser?.close();
  await site?.close();
});

test('a page whose renderer is busy when it is given back is replaced, not waited for', async () => {
  const pool = new PagePool(browser, { maxPages: 4, maxRenders: 100 });
  const first = await pool.acquire('ws_busy', 1);
  await first.page.goto(`${site.url}/`);
  // After the render: the page's own script takes the renderer and never gives it back. Its
  // synchronous request holds the renderer from the moment the site sees it until the loop, so
  // the page is given back only once it is surely busy.
  await first.page.evaluate(`setTimeout(() => {
    const request = new XMLHttpRequest();
    request.open('GET', '/busy-from-now', false);
    request.send();
    for (;;) {}
  }, 0)`);
  await waitFor(() => site.hits.has('/busy-from-now'), 'the page busy');
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

test('once two workspaces render, blank pages wait; a new workspace takes one and opens nothing', async () => {
  const pool = new PagePool(browser, { maxPages: 10, maxRenders: 100, spares: 2 });
  try {
    const a = await render(pool, 'ws_spare_a');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(pool.spares, 0, 'a pool serving one workspace keeps no spare');
    const b = await render(pool, 'ws_spare_b');
    await waitFor(() => pool.spares === 2, 'two spares');
    const size = pool.size;
    const c = await pool.acquire('ws_spare_c', 1);
    assert.is(pool.size, size, 'no page was opened for the new workspace');
    assert.is(pool.spares, 1, 'it took a spare');
    assert.ok(c !== a && c !== b, "not another workspace's page");
    assert.is(c.renders, 1, 'a page nobody rendered on before');
    assert.is(c.page.url(), 'about:blank');
    assert.is(c.key, 'ws_spare_c');
    pool.release(c);
    await c.wiped;
    await waitFor(() => pool.spares === 2, 'the spare replaced');
    assert.is(await pool.acquire('ws_spare_a', 1), a, 'each workspace keeps its own page');
  } finally {
    await closeAll(pool);
  }
});

test('pages are counted by what they do: rendering, idle, spare', async () => {
  const pool = new PagePool(browser, { maxPages: 10, maxRenders: 100, spares: 1 });
  try {
    await render(pool, 'ws_states_a');
    assert.equal(pool.states, { rendering: 0, idle: 1, spare: 0 }, 'one workspace: no spare');
    const b = await pool.acquire('ws_states_b', 1);
    assert.equal(pool.states, { rendering: 1, idle: 1, spare: 0 });
    pool.release(b);
    await b.wiped;
    await waitFor(() => pool.states.spare === 1, 'a spare, once two workspaces render');
    assert.equal(pool.states, { rendering: 0, idle: 2, spare: 1 });
  } finally {
    await closeAll(pool);
  }
});

test("a workspace's next render takes its most recently used idle page", async () => {
  const pool = new PagePool(browser, { maxPages: 4, maxRenders: 100 });
  try {
    // Two renders at once open two pages for the workspace; the second given back last.
    const [older, newer] = [await pool.acquire('ws_recent', 1), await pool.acquire('ws_recent', 1)];
    pool.release(older);
    await older.wiped;
    await new Promise((resolve) => setTimeout(resolve, 20));
    pool.release(newer);
    await newer.wiped;
    assert.ok(newer.lastUsed > older.lastUsed);
    const next = await pool.acquire('ws_recent', 1);
    assert.is(next, newer, 'the page used last');
    pool.release(next);
    await next.wiped;
  } finally {
    await closeAll(pool);
  }
});

test("within the memory budget every workspace's page stays warm; over it, idle pages close, least recently used first", async () => {
  const roomy = new PagePool(browser, {
    maxPages: 50,
    maxRenders: 100,
    memoryBudgetMb: 1_000_000,
    measureMb: () => treeMemoryMb(browserPid),
  });
  try {
    const first = new Map<string, WarmPage>();
    for (let i = 0; i < 8; i++) first.set(`ws_roomy_${i}`, await render(roomy, `ws_roomy_${i}`));
    for (const [workspace, warm] of first)
      assert.is(await render(roomy, workspace), warm, `${workspace} found its warm page`);
    assert.ok((roomy.memoryMb ?? 0) > 50, `Chromium's memory was read: ${roomy.memoryMb} MB`);
  } finally {
    await closeAll(roomy);
  }

  // A budget far under what Chromium holds: the reading after a render closes the idle pages.
  const tight = new PagePool(browser, {
    maxPages: 50,
    maxRenders: 100,
    memoryBudgetMb: 1,
    measureMb: () => treeMemoryMb(browserPid),
  });
  try {
    const older = await render(tight, 'ws_tight_a');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const newer = await tight.acquire('ws_tight_b', 1);
    await newer.page.goto(`${site.url}/`);
    tight.release(newer);
    await waitFor(() => older.page.isClosed(), 'the idle page closed');
    assert.ok((tight.memoryMb ?? 0) > 1, 'over the budget it read');
    assert.not.ok(newer.page.isClosed(), 'a page being wiped is not closed under it');
    await newer.wiped;
    const again = await tight.acquire('ws_tight_a', 1);
    assert.is.not(again, older, 'the workspace whose page closed gets a fresh one');
    assert.is(again.renders, 1);
  } finally {
    await closeAll(tight);
  }
});

// Two workspaces rendered on a pool whose readings all give Chromium's memory as first read
// (`mb`), then a reading taken with both pages idle under `budgetFor(mb)`.
async function twoIdlePages(budgetFor: (mb: number) => number) {
  const options: PoolOptions = {
    maxPages: 10,
    maxRenders: 100,
    spares: 0,
    memoryBudgetMb: 1_000_000,
    measureMb: firstReading(),
  };
  const pool = new PagePool(browser, options);
  const older = await render(pool, 'ws_fit_a');
  const newer = await render(pool, 'ws_fit_b');
  await waitFor(() => pool.memoryMb !== null, 'a reading');
  const mb = pool.memoryMb!;
  options.memoryBudgetMb = budgetFor(mb);
  // Readings are at most every 2 s, on a page's release.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  pool.release(await pool.acquire('ws_fit_b', 1));
  await newer.wiped;
  return { pool, options, older, newer, mb };
}

test('short of the budget, an idle page has its garbage collected, then its viewport shrunk, and it renders again', async () => {
  // Each reading 2 MB past what idle pages may fill (80 %): one step, collected (6 MB) or shrunk (3), makes up for it.
  const { pool, older, newer } = await twoIdlePages((mb) => (mb - 2) / 0.8);
  try {
    await waitFor(() => older.compaction === 'collected' && older.state === 'idle', 'the older page collected');
    assert.equal(older.page.viewportSize(), { width: 1280, height: 720 }, 'its viewport left as it is');
    assert.is(newer.compaction, 'none', 'one was enough: the other left as it is');
    assert.is(pool.size, 2, 'collected, not closed');

    // The next reading finds the same: the page collected before is shrunk.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    pool.release(await pool.acquire('ws_fit_b', 1));
    await waitFor(() => older.compaction === 'shrunk' && older.state === 'idle', 'the older page shrunk');
    assert.is(older.page.viewportSize()?.width, 1);
    assert.is(pool.size, 2, 'shrunk, not closed');

    const again = await pool.acquire('ws_fit_a', 1);
    assert.is(again, older, 'the workspace keeps its page');
    await again.page.setViewportSize({ width: 1280, height: 720 });
    await again.page.goto(`${site.url}/`);
    const png = await again.page.screenshot();
    assert.is(png.readUInt32BE(16), 1280, 'captured at its size again');
    pool.release(again);
  } finally {
    await closeAll(pool);
  }
});

test('a page opened between two readings counts at once: idle pages make room before it opens', async () => {
  const { pool, options, older, newer, mb } = await twoIdlePages((mb) => (mb - 2) / 0.8);
  try {
    await waitFor(() => older.compaction === 'collected' && older.state === 'idle', 'the older page collected');
    // As last read, less the collection, the two pages fit with room to spare; a third (40 MB
    // until read) only once the older page is shrunk and the other's garbage collected.
    options.memoryBudgetMb = (mb + 30) / 0.8;
    const third = await pool.acquire('ws_fit_c', 1);
    assert.is(older.compaction, 'shrunk', 'shrunk before the third opened');
    assert.is(newer.compaction, 'collected', 'collected before the third opened');
    assert.is(pool.size, 3);
    pool.release(third);
  } finally {
    await closeAll(pool);
  }
});

test('at a full budget a spare taken is replaced: the least recently used idle page makes room, off the path of a render', async () => {
  const options: PoolOptions = {
    maxPages: 10,
    maxRenders: 100,
    spares: 1,
    memoryBudgetMb: 1_000_000,
    measureMb: firstReading(),
  };
  const pool = new PagePool(browser, options);
  try {
    const older = await render(pool, 'ws_full_a');
    const newer = await render(pool, 'ws_full_b');
    await waitFor(() => pool.spares === 1 && pool.memoryMb !== null, 'a spare and a reading');
    // A reading with the three pages open (readings are at most every 2 s, on a release): the
    // estimate is then the reading itself, and the budget leaves no room for one more page.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await render(pool, 'ws_full_b');
    options.memoryBudgetMb = (pool.memoryMb! + 20) / 0.8;
    const open = new Set(browser.contexts());
    const taken = await pool.acquire('ws_full_c', 1);
    assert.is(taken.renders, 1);
    assert.ok(open.has(taken.context), 'the new workspace took the spare: nothing opened on its path');
    await waitFor(() => pool.spares === 1, 'another spare, opened once room was made');
    assert.ok(older.page.isClosed(), 'the least recently used idle page made room');
    assert.not.ok(newer.page.isClosed(), 'the other idle page stays');
    pool.release(taken);
  } finally {
    await closeAll(pool);
  }
});

test('a render that comes while a spare is being opened takes it: nothing opens on its path', async () => {
  const pool = new PagePool(browser, { maxPages: 10, maxRenders: 100, spares: 1 });
  const onPath = metrics.pagesOpened.labels({ for: 'render' });
  try {
    await render(pool, 'ws_wait_a');
    await render(pool, 'ws_wait_b');
    await waitFor(() => pool.spares === 1, 'a spare');
    const opened = onPath.value;
    // The first takes the spare, whose replacement starts opening; the second comes meanwhile.
    const [c, d] = await Promise.all([pool.acquire('ws_wait_c', 1), pool.acquire('ws_wait_d', 1)]);
    assert.is(onPath.value, opened, 'no page opened on either render path');
    assert.ok(c !== d && c.renders === 1 && d.renders === 1, 'each a page nobody rendered on');
    assert.is(d.key, 'ws_wait_d');
    pool.release(c);
    pool.release(d);
  } finally {
    await closeAll(pool);
  }
});

// Chromium's memory as first read, then the same figure at every reading: the budget a test sets
// after it stands in a known relation to what the pool reads.
function firstReading(): () => Promise<number | null> {
  let reading: Promise<number | null> | undefined;
  return () => (reading ??= treeMemoryMb(browserPid));
}

// Closes every page a test's pool opened (its contexts are all the browser has), spares still opening included.
async function closeAll(_pool: PagePool): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  await Promise.all(browser.contexts().map((context) => context.close().catch(() => {})));
}

test.run();
