// The contract of a render step (src/render/browser/progress.ts): one deadline, one undo stack, one rule
// for a failed undo; and withPage keeps it, discarding a page whose undo failed.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Progress } from '../../src/render/browser/progress.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { waitFor } from '../helpers/wait.ts';

const rules = suite('the undo rule');

rules('undos run last first, every one even when one before it failed; failures are kept', async () => {
  const progress = Progress.start(10_000);
  const ran: string[] = [];
  progress.defer(async () => ran.push('first'));
  progress.defer(async () => {
    ran.push('second');
    throw new Error('second failed');
  });
  progress.defer(async () => ran.push('third'));
  await progress.undo();
  assert.equal(ran, ['third', 'second', 'first']);
  assert.equal(
    progress.undoFailures.map((error) => (error as Error).message),
    ['second failed'],
  );
  await progress.undo();
  assert.equal(ran.length, 3, 'each undo runs once');
});

rules("a step's own scope runs under the same rule and reports to the render's Progress", async () => {
  const progress = Progress.start(10_000);
  const scope = progress.scope();
  const ran: string[] = [];
  scope.defer(async () => ran.push('a'));
  scope.defer(() => Promise.reject(new Error('b failed')));
  await scope.run();
  assert.equal(ran, ['a']);
  assert.is(progress.undoFailures.length, 1);
});

rules('once the deadline has passed nothing is undone: the page is discarded anyway', async () => {
  const controller = new AbortController();
  const progress = Progress.start(10_000, controller.signal);
  let ran = false;
  progress.defer(async () => {
    ran = true;
  });
  controller.abort(new Error('cancelled'));
  await progress.undo();
  assert.is(ran, false);
  assert.equal(progress.undoFailures, []);
});

rules('timeLeft leaves the render time to report, and never goes below 1 ms', async () => {
  const progress = Progress.start(8000);
  const left = progress.timeLeft();
  assert.ok(left <= 7000 && left > 6500, String(left));
  assert.is(Progress.start(1).timeLeft(), 1);
});

rules.run();

const host = suite('withPage and the undo');
let rig: RenderRig;

host.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_progress' });
});

host.after(async () => {
  await rig.stop();
});

const setup = {
  timeout: 10,
  viewport_width: 800,
  viewport_height: 600,
  device_scale_factor: 1,
  workspaceId: 'ws_undo',
};

host('withPage runs the deferred undos after the task; the page serves again', async () => {
  const undone: string[] = [];
  const first = await rig.host.withPage(setup, new AbortController().signal, async (page, progress) => {
    progress.defer(async () => undone.push('a'));
    progress.defer(async () => undone.push('b'));
    return page;
  });
  assert.equal(undone, ['b', 'a']);
  const again = await rig.host.withPage(setup, new AbortController().signal, async (page) => page);
  assert.ok(again === first, 'the same warm page');
});

host('a failed undo keeps the result but discards the page; the next render gets another', async () => {
  const first = await rig.host.withPage(setup, new AbortController().signal, async (page) => page);
  const result = await rig.host.withPage(setup, new AbortController().signal, async (page, progress) => {
    progress.defer(() => Promise.reject(new Error('could not undo')));
    return page.url();
  });
  assert.type(result, 'string');
  await waitFor(() => first.isClosed(), 'the page whose undo failed closed');
  const next = await rig.host.withPage(setup, new AbortController().signal, async (page) => page);
  assert.ok(next !== first, 'a page of its own');
});

host('a failed render still runs its undos before its page goes', async () => {
  let undone = false;
  const failure = await rig.host
    .withPage(setup, new AbortController().signal, async (_page, progress) => {
      progress.defer(async () => {
        undone = true;
      });
      throw new Error('step failed');
    })
    .catch((error: unknown) => error);
  assert.is((failure as Error).message, 'step failed');
  assert.ok(undone);
});

host.run();
