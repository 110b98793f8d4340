// The delivery actor's retry rules, with the send step swapped through .provide().

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import { deliveryMachine, type SendWebhookInput } from '../../actors/delivery.machine.ts';
import type { AttemptResult } from '../../src/delivery/send.ts';

const test = suite('delivery machine');

/** Runs a delivery whose attempts answer `answers` in turn; records the attempts and the delays between them. */
async function run(answers: AttemptResult[], schedule: number[], attempts = 0) {
  const seen: number[] = [];
  const delays: number[] = [];
  const machine = deliveryMachine.provide({
    actors: {
      sendWebhook: fromPromise<AttemptResult, SendWebhookInput>(async ({ input }) => {
        seen.push(input.attempt);
        const answer = answers.shift();
        if (!answer) throw new Error('receiver unreachable');
        return answer;
      }),
    },
    // Backoff in this test is instant; the planned delay is read from the snapshot instead.
    delays: { backoff: 0 },
  });
  const actor = createActor(machine, { input: { deliveryId: 'wh_test', attempts, schedule } });
  actor.subscribe((snapshot) => {
    if (snapshot.matches('backingOff')) delays.push(snapshot.context.delayMs!);
  });
  actor.start();
  const output = await toPromise(actor);
  return { output, seen, delays, snapshot: actor.getSnapshot() };
}

const fail = (status: number, retryAfterSeconds?: number): AttemptResult => ({ outcome: 'failed', status, error: `HTTP ${status}`, retryAfterSeconds });
const ok: AttemptResult = { outcome: 'delivered', status: 200 };

test('a 2xx on the first attempt is delivered', async () => {
  const { output, seen, snapshot } = await run([ok], [1, 1, 1]);
  assert.equal(output, { status: 'delivered', attempts: 1, last_error: undefined });
  assert.equal(seen, [1]);
  assert.ok(snapshot.matches('delivered'));
});

test('500, 500, 200: three attempts, backing off by the schedule', async () => {
  const { output, seen, delays } = await run([fail(500), fail(500), ok], [10, 60, 300]);
  assert.equal(seen, [1, 2, 3]);
  assert.equal(delays, [10_000, 60_000]);
  assert.is(output.status, 'delivered');
  assert.is(output.attempts, 3);
});

test('n delays allow n + 1 attempts, then dead with the last error', async () => {
  const { output, seen, delays, snapshot } = await run([fail(500), fail(502), fail(503), fail(504), ok], [1, 2, 3]);
  assert.equal(seen, [1, 2, 3, 4]);
  assert.equal(delays, [1000, 2000, 3000]);
  assert.equal(output, { status: 'dead', attempts: 4, last_error: 'HTTP 504' });
  assert.ok(snapshot.matches('dead'));
});

test('410 stops at once; so does an address the rules refuse', async () => {
  const gone = await run([{ outcome: 'gone', status: 410, error: 'HTTP 410' }], [1, 1, 1]);
  assert.equal(gone.seen, [1]);
  assert.equal(gone.output, { status: 'dead', attempts: 1, last_error: 'HTTP 410' });
  const refused = await run([{ outcome: 'refused', error: 'url_not_allowed' }], [1, 1, 1]);
  assert.equal(refused.seen, [1]);
  assert.is(refused.output.status, 'dead');
});

test('Retry-After longer than the schedule is honoured; shorter is not', async () => {
  const { delays } = await run([fail(503, 120), fail(503, 1), ok], [10, 60]);
  assert.equal(delays, [120_000, 60_000]);
});

test('a failing send step counts as a failed attempt', async () => {
  const { output } = await run([], [1]);
  assert.equal(output, { status: 'dead', attempts: 2, last_error: 'receiver unreachable' });
});

test('resumed at a recorded attempt count, it makes only the attempts left', async () => {
  const { output, seen, delays } = await run([fail(500), fail(500)], [5, 6, 7], 2);
  assert.equal(seen, [3, 4]);
  assert.equal(delays, [7000]);
  assert.equal(output, { status: 'dead', attempts: 4, last_error: 'HTTP 500' });
});

test.run();
