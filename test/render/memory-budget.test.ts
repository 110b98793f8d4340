// The memory budget shared by the pools of a worker's browsers: one reading for all of them, and
// idle pages made smaller, then closed, least recently used first whichever pool holds them.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryBudget, PAGE_MB, type BudgetedPage, type BudgetedPool } from '../../src/render/memory-budget.ts';
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
      actions.push(`compact ${page.name}`);
      page.compacted = true;
    },
    async discard(page) {
      actions.push(`close ${page.name}`);
      pages.splice(pages.indexOf(page), 1);
    },
  };
}

const page = (name: string, lastUsed: number, compacted = false): Page => ({ name, lastUsed, compacted });

test('one reading for every pool; the oldest idle pages across them go first, compacted ones closed', async () => {
  const first = pool([page('a1', 10), page('a2', 40, true)]);
  const second = pool([page('b1', 20, true), page('b2', 30)]);
  let reading = 0;
  // 1,000 MB read against a budget of 1,000: idle pages may fill 850.
  const budget = new MemoryBudget(
    () => 1000,
    async () => {
      reading += 1;
      return 1000;
    },
  );
  budget.join(first);
  budget.join(second);
  budget.measure();
  await waitFor(() => budget.memoryMb !== null, 'a reading');
  assert.is(reading, 1);
  // Each compaction counts 8 MB and each closing 40 until the next reading: the oldest first.
  assert.equal([...first.actions, ...second.actions].sort(), ['close a2', 'close b1', 'compact a1', 'compact b2']);
  assert.is(first.actions[0], 'compact a1', 'a1, the least recently used, first');
  budget.measure();
  assert.is(reading, 1, 'read at most every 2 s');
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
  assert.ok(budget.fits(PAGE_MB), '700 + 40 within 850');
  second.pages.push(page('b1', 1), page('b2', 2), page('b3', 3));
  assert.not.ok(budget.fits(PAGE_MB), 'three pages opened since: 700 + 120 + 40 over 850');
  budget.leave(second);
  assert.ok(budget.fits(PAGE_MB), 'its pages gone with its browser');
});

test.run();
