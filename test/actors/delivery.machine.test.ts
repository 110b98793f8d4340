// The delivery actor's retry rules, with the send and record steps swapped through .provide().

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import type { AttemptResult } from '../../src/delivery/send.ts';
import {
  deliveryMachine,
  type AttemptOutcome,
  type DeliveryInput,
  type DeliveryOutput,
  type RecordAttemptInput,
  type SendWebhookInput,
} from '../../actors/delivery.machine.ts';

const test = suite('delivery machine');

/** One run of the actor, as one delivery of a job makes it: what it sent, what it recorded, how it ended. */
async function runOnce(input: DeliveryInput, answer: () => AttemptResult | undefined, recordFails = false) {
  const sent: number[] = [];
  const recorded: RecordAttemptInput[] = [];
  const machine = deliveryMachine.provide({
    actors: {
      sendWebhook: fromPromise<AttemptOutcome, SendWebhookInput>(async ({ input }) => {
        sent.push(input.attempt);
        const result = answer();
        if (!result) throw new Error('receiver unreachable');
        return result;
      }),
      recordAttempt: fromPromise<void, RecordAttemptInput>(async ({ input }) => {
        if (recordFails) throw Object.assign(new Error('no responders'), { name: 'NoRespondersError' });
        recorded.push(input);
      }),
    },
  });
  const actor = createActor(machine, { input });
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  return { output, sent, recorded, finalState: actor.getSnapshot().value };
}

/**
 * Runs a delivery the way the broker does: one run per delivery of the job, each resumed from the
 * attempts the last one recorded, until it is delivered or dead. The delays are the ones asked of the broker.
 */
async function deliver(answers: AttemptResult[], schedule: number[], attempts = 0) {
  const sent: number[] = [];
  const delays: number[] = [];
  let lastError: string | undefined;
  for (let runs = 0; runs < 20; runs++) {
    const run = await runOnce({ deliveryId: 'wh_test', attempts, schedule, lastError }, () => answers.shift());
    sent.push(...run.sent);
    assert.is(run.sent.length, 1, 'each run makes exactly one attempt');
    assert.equal(
      run.recorded.map((r) => r.attempt),
      run.sent,
      'each attempt is recorded',
    );
    const output: DeliveryOutput = run.output;
    if (output.status !== 'retryLater') return { output, sent, delays, finalState: run.finalState };
    assert.is(run.finalState, 'retryLater');
    delays.push(output.delayMs);
    attempts = output.attempts;
    lastError = output.last_error;
  }
  throw new Error('the delivery never ended');
}

const fail = (status: number, retryAfterSeconds?: number): AttemptResult => ({
  outcome: 'failed',
  status,
  error: `HTTP ${status}`,
  retryAfterSeconds,
});
const ok: AttemptResult = { outcome: 'delivered', status: 200 };

test('a 2xx on the first attempt is delivered', async () => {
  const { output, sent, finalState } = await deliver([ok], [1, 1, 1]);
  assert.equal(output, { status: 'delivered', attempts: 1 });
  assert.equal(sent, [1]);
  assert.is(finalState, 'delivered');
});

test('500, 500, 200: three attempts, the broker asked to wait by the schedule', async () => {
  const { output, sent, delays } = await deliver([fail(500), fail(500), ok], [10, 60, 300]);
  assert.equal(sent, [1, 2, 3]);
  assert.equal(delays, [10_000, 60_000]);
  assert.equal(output, { status: 'delivered', attempts: 3 });
});

test('a failed attempt ends the run in retryLater with its error and the delay', async () => {
  const { output, recorded, finalState } = await runOnce({ deliveryId: 'wh_test', attempts: 1, schedule: [5, 6] }, () =>
    fail(502),
  );
  assert.is(finalState, 'retryLater');
  assert.equal(output, { status: 'retryLater', attempts: 2, delayMs: 6000, last_error: 'HTTP 502' });
  assert.equal(recorded, [{ deliveryId: 'wh_test', attempt: 2, result: fail(502) }]);
});

test('n delays allow n + 1 attempts, then dead with the last error', async () => {
  const { output, sent, delays, finalState } = await deliver(
    [fail(500), fail(502), fail(503), fail(504), ok],
    [1, 2, 3],
  );
  assert.equal(sent, [1, 2, 3, 4]);
  assert.equal(delays, [1000, 2000, 3000]);
  assert.equal(output, { status: 'dead', attempts: 4, last_error: 'HTTP 504' });
  assert.is(finalState, 'dead');
});

test('410 stops at once; so does an address the rules refuse', async () => {
  const gone = await deliver([{ outcome: 'gone', status: 410, error: 'HTTP 410' }], [1, 1, 1]);
  assert.equal(gone.sent, [1]);
  assert.equal(gone.output, { status: 'dead', attempts: 1, last_error: 'HTTP 410' });
  const refused = await deliver([{ outcome: 'refused', error: 'url_not_allowed' }], [1, 1, 1]);
  assert.equal(refused.sent, [1]);
  assert.equal(refused.output, { status: 'dead', attempts: 1, last_error: 'url_not_allowed' });
});

test('Retry-After longer than the schedule is honoured; shorter is not', async () => {
  const { delays } = await deliver([fail(503, 120), fail(503, 1), ok], [10, 60]);
  assert.equal(delays, [120_000, 60_000]);
});

test('a failing send step counts as a failed attempt', async () => {
  const { output } = await deliver([], [1]);
  assert.equal(output, { status: 'dead', attempts: 2, last_error: 'receiver unreachable' });
});

test('resumed at a recorded attempt count, it makes only the attempts left', async () => {
  const { output, sent, delays } = await deliver([fail(500), fail(500)], [5, 6, 7], 2);
  assert.equal(sent, [3, 4]);
  assert.equal(delays, [7000]);
  assert.equal(output, { status: 'dead', attempts: 4, last_error: 'HTTP 500' });
});

test('attempts used up (the last was recorded, its end was not): dead without sending', async () => {
  const { output, sent, recorded, finalState } = await runOnce(
    { deliveryId: 'wh_test', attempts: 3, schedule: [1, 1], lastError: 'HTTP 500' },
    () => ok,
  );
  assert.equal(sent, []);
  assert.equal(recorded, []);
  assert.is(finalState, 'dead');
  assert.equal(output, { status: 'dead', attempts: 3, last_error: 'HTTP 500' });
});

test('an attempt that cannot be recorded fails the run: no verdict, the job is delivered again', async () => {
  try {
    await runOnce({ deliveryId: 'wh_test', attempts: 0, schedule: [1] }, () => ok, true);
    assert.unreachable('the run should fail');
  } catch (err) {
    assert.instance(err, Error);
    assert.is((err as Error).name, 'NoRespondersError');
  }
});

test.run();
