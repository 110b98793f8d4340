// Several browsers for one worker (BrowserFleet) against real Chromium: the second is launched only
// once renders overlap; a workspace's renders follow its idle warm page, and new workspaces' pages
// spread over the browsers; a page never serves two workspaces on any browser; a browser killed
// under load is relaunched while the other renders on.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Browser, Page } from 'playwright-core';
import { BrowserFleet } from '../../src/render/browser/fleet.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { CHROMIUM } from '../helpers/render.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('BrowserFleet');

let site: FixtureSite;
let fleet: BrowserFleet;

test.before(async () => {
  // A page that takes a while to answer, so that renders of it overlap.
  site = await startFixtureSite({
    '/slow': (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<h1>slow</h1>');
      }, 300);
    },
  });
  fleet = new BrowserFleet({ executablePath: CHROMIUM, memoryBudgetMb: 1024 }, 2);
  await fleet.start();
});

test.after(async () => {
  await fleet?.close();
  await site?.close();
});

// Two browsers launched, each with its process running.
const bothUp = () => fleet.pids.length === 2 && fleet.pids.every((pid) => pid !== null) && fleet.isHealthy();

interface Served {
  browser: Browser;
  page: Page;
}

// One render of `path` for `workspace` through the fleet: which browser and page it ran on.
function render(workspace: string, path = '/'): Promise<Served> {
  const setup = { ...renderDefaults, timeout: 15, workspaceId: workspace };
  return fleet.withPage(setup, new AbortController().signal, async (page) => {
    await page.goto(`${site.url}${path}`);
    return { browser: page.context().browser()!, page };
  });
}

test('one browser until renders overlap, then a second', async () => {
  for (let i = 0; i < 3; i++) await render('ws_alone');
  assert.is(fleet.pids.length, 1, 'renders one after another need one browser');
  await Promise.all([render('ws_a', '/slow'), render('ws_a', '/slow'), render('ws_a', '/slow')]);
  await waitFor(() => bothUp(), 'a second browser up');
  const served = await Promise.all(Array.from({ length: 4 }, () => render('ws_a', '/slow')));
  assert.is(new Set(served.map(({ browser }) => browser)).size, 2, 'overlapping renders on both browsers');
  assert.ok(await fleet.ping());
});

test("a workspace's renders one after another stay on the browser of its warm page", async () => {
  const first = await render('ws_follow');
  for (let i = 0; i < 5; i++) {
    const next = await render('ws_follow');
    assert.is(next.browser, first.browser);
  }
});

test('workspaces that first come one at a time spread their pages over both browsers', async () => {
  await waitFor(() => bothUp(), 'both browsers up');
  const workspaces = Array.from({ length: 10 }, (_, i) => `ws_spread_${i}`);
  const first: Served[] = [];
  for (const workspace of workspaces) first.push(await render(workspace));
  assert.is(new Set(first.map(({ browser }) => browser)).size, 2, 'pages opened in both browsers');
  // Coming together, they follow their pages: both browsers render.
  const together = await Promise.all(workspaces.map((workspace) => render(workspace, '/slow')));
  assert.is(new Set(together.map(({ browser }) => browser)).size, 2, 'renders on both browsers');
});

test('a page serves one workspace only, whichever browser it is on', async () => {
  const workspaceOf = new Map<Page, string>();
  for (let round = 0; round < 4; round++) {
    const workspaces = ['ws_x', 'ws_y', 'ws_z', 'ws_x', 'ws_y', 'ws_z'];
    const served = await Promise.all(workspaces.map((workspace) => render(workspace, '/slow')));
    served.forEach(({ page }, i) => {
      const owner = workspaceOf.get(page) ?? workspaces[i];
      assert.is(owner, workspaces[i], 'a page of one workspace served another');
      workspaceOf.set(page, owner);
    });
  }
  assert.ok(workspaceOf.size >= 3);
});

test('a browser killed under load is relaunched; renders go on', async () => {
  await waitFor(() => bothUp(), 'both browsers up');
  const [, second] = fleet.pids;
  const renders = Array.from({ length: 6 }, (_, i) =>
    render(`ws_kill_${i % 2}`, '/slow').then(
      () => true,
      () => false,
    ),
  );
  process.kill(-second!, 'SIGKILL');
  assert.ok(fleet.isHealthy(), 'the worker still renders: its other browser is up');
  const outcomes = await Promise.all(renders);
  assert.ok(outcomes.some(Boolean), 'renders on the other browser succeed');
  await waitFor(
    () => bothUp() && !fleet.pids.includes(second),
    () => `both browsers up again (pids ${fleet.pids.join(', ')})`,
  );
  assert.ok(await fleet.ping());
  const after = await Promise.all(Array.from({ length: 4 }, () => render('ws_kill_after', '/slow')));
  assert.ok(
    after.every(({ browser }) => browser.isConnected()),
    'renders after the relaunch ran on browsers that are up',
  );
});

test.run();
