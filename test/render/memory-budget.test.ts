// The memory budget shared by the pools of a worker's browsers: one reading for all of them, and
// idle pages made smaller, then closed, whichever pool holds them: a workspace's extra pages first,
// then least recently used first.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryBudget, PAGE_MB, type BudgetedPage, type BudgetedPool } from '../../src/render/memory-budget.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('MemoryBudget');

interface Page extends BudgetedPage {
  name: string;
}

// A pool's side of the budget, recording what the budget did to its pages; `budget`, when given,
// is told of each compaction, as the real pool tells it.
function pool(open: Page[], budget?: () => MemoryBudget): BudgetedPool<Page> & { actions: string[]; open: Page[] } {
  const actions: string[] = [];
  return {
    actions,
    open,
    get size() {
      return open.length;
    },
    pages: () => open,
    compact(page) {
      actions.push(`compact ${page.name}`);
      page.compacted = true;
      budget?.().compacted();
    },
    async discard(page) {
      actions.push(`close ${page.name}`);
      open.splice(open.indexOf(page), 1);
    },
  };
}

// Each page its own workspace's unless `key` says otherwise; idle unless `state` does.
const page = (
  name: string,
  lastUsed: number,
  compacted = false,
  { key = name, state = 'idle' }: { key?: string | null; state?: Page['state'] } = {},
): Page => ({ name, key, state, lastUsed, compacted });

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
  second.open.push(page('b1', 1), page('b2', 2), page('b3', 3));
  assert.not.ok(budget.fits(PAGE_MB), 'three pages opened since: 700 + 120 + 40 over 850');
  budget.leave(second);
  assert.ok(budget.fits(PAGE_MB), 'its pages gone with its browser');
});

test("a workspace's extra pages go before any workspace's last page, however recently used", async () => {
  // w1 renders on one page now: both its idle ones are extra. w2's newer idle page is its last; its
  // older one is extra. w3 and the blank spare have one page each: theirs go last, oldest first.
  const first = pool(
    [
      page('w3', 10),
      page('w1a', 60, false, { key: 'w1' }),
      page('w1b', 70, false, { key: 'w1' }),
      page('w1c', 5, false, { key: 'w1', state: 'busy' }),
    ],
    () => budget,
  );
  const second = pool(
    [
      page('spare', 20, false, { key: null }),
      page('w2a', 30, false, { key: 'w2' }),
      page('w2b', 80, false, { key: 'w2' }),
    ],
    () => budget,
  );
  // 868 MB read against 1,000: 18 over; each compaction counts 8 MB, so three are needed.
  const budget = new MemoryBudget(
    () => 1000,
    async () => 868,
  );
  budget.join(first);
  budget.join(second);
  budget.measure();
  await waitFor(() => budget.memoryMb !== null, 'a reading');
  assert.equal(first.actions, ['compact w1a', 'compact w1b']);
  assert.equal(second.actions, ['compact w2a'], 'w2a, extra, before w3 and the spare, though they are older');
  // 844 MB estimated now. An extra page already compacted is closed (the oldest, w2a) before any
  // last page is compacted.
  budget.fit(24);
  assert.equal(second.actions, ['compact w2a', 'close w2a']);
  assert.equal(first.actions, ['compact w1a', 'compact w1b']);
  // 804 MB now: 140 more needs the other two extra pages closed (80) and two last pages compacted, oldest first.
  budget.fit(140);
  assert.equal(first.actions, ['compact w1a', 'compact w1b', 'close w1a', 'close w1b', 'compact w3']);
  assert.equal(second.actions, ['compact w2a', 'close w2a', 'compact spare'], 'w2b, used last, kept');
});

test.run();
