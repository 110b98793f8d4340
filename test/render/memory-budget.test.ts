// The memory budget shared by the pools of a worker's browsers: one reading for all of them, and
// idle pages made smaller, then closed, least recently used first whichever pool holds them.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Demand,
  MemoryBudget,
  PAGE_MB,
  type BudgetedPage,
  type BudgetedPool,
  type Compaction,
} from '../../src/render/browser/memory-budget.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('MemoryBudget');

interface Page extends BudgetedPage {
  name: string;
}

// A pool's side of the budget, recording what the budget did to its pages.
function pool(pages: Page[]): BudgetedPool<Page> & { actions: string[]; pages: Page[] } {
  const actions: string[] = [];
  return {
    actions,
    pages,
    get size() {
      return pages.length;
    },
    idlePages: () => [...pages],
    compact(page) {
      actions.push(`${page.compaction === 'none' ? 'collect' : 'shrink'} ${page.name}`);
      page.compaction = page.compaction === 'none' ? 'collected' : 'shrunk';
    },
    async discard(page) {
      actions.push(`close ${page.name}`);
      pages.splice(pages.indexOf(page), 1);
    },
  };
}

const page = (name: string, lastUsed: number, compaction: Compaction = 'none', key: string | null = name): Page => ({
  name,
  lastUsed,
  compaction,
  key,
});

// A budget of 1,000 MB (idle pages may fill 800) over `pools`, read once as `mb` (a number, or
// what the function gives each time it is read).
async function readOnce(
  mb: number | (() => Promise<number>),
  ...pools: BudgetedPool[]
): Promise<{ budget: MemoryBudget; readings(): number }> {
  let readings = 0;
  const budget = new MemoryBudget(
    () => 1000,
    async () => {
      readings += 1;
      return typeof mb === 'number' ? mb : mb();
    },
  );
  for (const each of pools) budget.join(each);
  budget.measure();
  await waitFor(() => budget.memoryMb !== null, 'a reading');
  return { budget, readings: () => readings };
}

test('one reading for every pool; the oldest idle pages across them first, one step each', async () => {
  const first = pool([page('a1', 10), page('a2', 40, 'collected')]);
  const second = pool([page('b1', 20, 'shrunk'), page('b2', 30)]);
  // 850 MB read: 50 over. A collection counts 6 MB until the next reading, a shrinking 3, a closing 40.
  const { budget, readings } = await readOnce(850, first, second);
  assert.is(readings(), 1);
  assert.equal(first.actions, ['collect a1'], 'a1, the least recently used, first; a2 not needed');
  assert.equal(second.actions, ['close b1', 'collect b2'], 'b1 had been shrunk: closed');
  budget.measure();
  assert.is(readings(), 1, 'read at most every 2 s');
});

test('where one step each is not enough, pages made smaller are closed too', async () => {
  const near = pool([page('n1', 10, 'collected'), page('n2', 20)]);
  await readOnce(808, near);
  assert.equal(near.actions, ['shrink n1', 'collect n2'], '3 + 6 MB make up for 8');

  const far = pool([page('f1', 10, 'collected'), page('f2', 20)]);
  await readOnce(830, far);
  assert.equal(far.actions, ['shrink f1', 'collect f2', 'close f1'], 'the oldest closed once both had a step');
});

test('a render holds its share while it runs; it waits where idle pages cannot make room', async () => {
  const rendering = pool([page('idle', 10, 'shrunk')]);
  // Each reading gives 710 MB once `reading` settles: the test holds it to keep a reading away.
  let reading = Promise.resolve();
  const { budget } = await readOnce(async () => {
    await reading;
    return 710;
  }, rendering);
  const share = { mb: 100, keptMb: 0 };
  // 710 MB read; renders hold 100 each: the third fits only once the idle page is closed.
  const first = await budget.admit(share);
  const second = await budget.admit(share);
  assert.equal(rendering.actions, []);
  const third = await budget.admit(share);
  assert.equal(rendering.actions, ['close idle'], 'the idle page made room: 670 + 300 ≤ 1,000');
  let admitted = false;
  const fourth = budget.admit(share).then((release) => {
    admitted = true;
    return release;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.not.ok(admitted, '670 + 400 > 1,000 with no idle page left: it waits');
  // Two renders end: the next waits for nothing more.
  first();
  second();
  (await fourth)();
  third();

  // What a full page's page keeps after it counts until the next reading.
  let read = () => {};
  reading = new Promise((resolve) => {
    read = resolve;
  });
  const running = await budget.admit({ mb: 25, keptMb: 0 });
  (await budget.admit({ mb: 100, keptMb: 100 }))();
  let afterIt = false;
  const next = budget.admit({ mb: 200, keptMb: 0 }).then((release) => {
    afterIt = true;
    return release;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.not.ok(afterIt, '710 read + 25 + 100 kept + 200 > 1,000, while no reading comes');
  read();
  (await next)();
  running();

  // Nothing running: a render starts whatever the reading; an aborted one holds nothing.
  const { budget: over } = await readOnce(1200, pool([]));
  const release = await over.admit(share);
  const aborted = new AbortController();
  const waiting = over.admit(share, aborted.signal);
  aborted.abort();
  (await waiting)();
  release();
});

test("a render keeps its workspace's most recent idle page out of reach until it ends", async () => {
  const first = pool([page('hot-old', 5, 'shrunk', 'hot'), page('hot', 10, 'shrunk')]);
  const second = pool([page('other', 20, 'shrunk')]);
  const { budget } = await readOnce(700, first, second);
  // Its render holds 25 MB: 700 + 25 ≤ 1,000, admitted at once.
  const release = await budget.admit({ mb: 25, keptMb: 0 }, undefined, 'hot');
  // 700 + 200 (room kept for renders) + 210 > 1,000 by 110: three pages would go, oldest first.
  // 'hot', its workspace's most recent, is what the render keeps.
  budget.fit(210);
  assert.equal(second.actions, ['close other']);
  assert.equal(first.actions, ['close hot-old'], "one render keeps one page: the workspace's most recent");
  release();
  release();
  // 620 (two pages fewer) + 200 + 210 > 1,000: one more.
  budget.fit(210);
  assert.equal(first.actions, ['close hot-old', 'close hot'], 'its render ended: nothing keeps it');
});

test('Demand: a rate that halves with each half-life, forgotten once it counts for nothing', () => {
  const demand = new Demand(10_000);
  for (let i = 0; i < 10; i++) demand.add('ws', 0);
  // Ten renders at once count as 10 × ln 2 ÷ 10 s ≈ 0.69 a second, half that 10 s later.
  assert.ok(Math.abs(demand.perSecond('ws', 0) - Math.LN2) < 0.01);
  assert.ok(Math.abs(demand.perSecond('ws', 10_000) - Math.LN2 / 2) < 0.01);
  assert.is(demand.perSecond('other', 0), 0);
});

test('a page opened in any pool counts at once; a pool that leaves no longer does', async () => {
  const first = pool([]);
  const second = pool([]);
  const budget = new MemoryBudget(
    () => 1000,
    async () => 700,
  );
  budget.join(first);
  budget.join(second);
  budget.measure();
  await waitFor(() => budget.memoryMb === 700, 'a reading');
  assert.ok(budget.fits(PAGE_MB), '700 + 40 within 800');
  second.pages.push(page('b1', 1), page('b2', 2), page('b3', 3));
  assert.not.ok(budget.fits(PAGE_MB), 'three pages opened since: 700 + 120 + 40 over 800');
  budget.leave(second);
  assert.ok(budget.fits(PAGE_MB), 'its pages gone with its browser');
});

test.run();
