// The delivery worker's message handling against a real NATS, with the POST swapped for a double:
// what each delivery of a job comes to (ack, retry with a delay, term) and what its KV record says.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { loadConfig } from '../../src/config.ts';
import { DeliveryQueue, type DeliveryJob, type DeliveryRecord } from '../../src/delivery/records.ts';
import type { AttemptResult, DeliveryAttempt } from '../../src/delivery/send.ts';
import { deliveryMessages, startDeliveryWorker } from '../../src/delivery/worker.ts';
import type { Delivery } from '../../src/jetstream/consume.ts';
import { createJson } from '../../src/jetstream/kv-json.ts';
import { ensureTopology, names, type Topology } from '../../src/jetstream/topology.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const worker = suite('delivery worker: message handling');

let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let topology: Topology;
let queue: DeliveryQueue;

/** Seconds before each retry: three attempts in all. */
const schedule = [10, 60];
const WORKSPACE = 'ws_00000000000000aa';

/** Everything the double and the log saw in one test. */
interface Seen {
  sent: DeliveryAttempt[];
  lines: { level: number; msg: string; [field: string]: unknown }[];
}

/** The worker's handler on the real records; each POST answers the next of `answers`. */
function handler(answers: AttemptResult[] = []) {
  const seen: Seen = { sent: [], lines: [] };
  const log = pino({ level: 'info' }, { write: (line: string) => void seen.lines.push(JSON.parse(line)) });
  const handle = deliveryMessages({
    config: { allowPrivateTargets: false, webhookRetrySchedule: schedule },
    log,
    deliveries: queue,
    workspaces: {
      get: async (id) => (id === WORKSPACE ? ({ workspace_id: id, secret_key: 'sk_test' } as Workspace) : null),
    },
    sendWebhook: async (attempt) => {
      seen.sent.push(attempt);
      const answer = answers.shift();
      if (!answer) throw new Error('an attempt nobody expected');
      return answer;
    },
  });
  return { handle, seen };
}

let counter = 0;
/** A new delivery's record, as `DeliveryQueue.enqueue` writes it, with `changes`; and its job. */
async function newDelivery(changes: Partial<DeliveryRecord> = {}): Promise<DeliveryJob> {
  const now = new Date().toISOString();
  const job: DeliveryJob = {
    id: `wh_worker_${++counter}`,
    render_id: `rnd_${counter}`,
    workspace_id: WORKSPACE,
    webhook_url: 'https://hooks.example.com/shutterbus',
    body: '{"type":"render.succeeded"}',
    round: 0,
  };
  await createJson<DeliveryRecord>(topology.deliveries, job.id, {
    ...job,
    status: 'pending',
    attempts: 0,
    created_at: now,
    updated_at: now,
    ...changes,
  });
  return job;
}

/** One delivery of `job`, as the consume loop hands it over. */
function deliveryOf(job: DeliveryJob, count = 1): Delivery<DeliveryJob> {
  return {
    message: job,
    streamSequence: 1,
    deliveryCount: count,
    isLastDelivery: false,
    signal: new AbortController().signal,
    header: () => undefined,
  };
}

const recordOf = async (job: DeliveryJob) => (await queue.get(job.id))!;
const linesSaying = (seen: Seen, msg: string) => seen.lines.filter((line) => line.msg === msg);
const failed = (status: number, retryAfterSeconds?: number): AttemptResult => ({
  outcome: 'failed',
  status,
  error: `HTTP ${status}`,
  ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
});

worker.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  topology = await ensureTopology(nc, loadConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent' }));
  queue = new DeliveryQueue(js, topology.deliveries);
});
worker.after(async () => {
  await nc?.close();
  await nats?.stop();
});

worker(
  'through the real loop: a job that is not JSON or lacks a field is terminated and logged, not retried forever',
  async () => {
    const terminated: number[] = [];
    const advisories = nc.subscribe(
      `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${names.deliveryStream}.${names.deliveryConsumer}`,
      {
        callback: (_err, msg) => void terminated.push((msg.json() as { stream_seq: number }).stream_seq),
      },
    );
    const lines: { msg: string; reason?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const subject = names.deliverySubject(WORKSPACE);
    // A job whose delivery already ended: handled (acked) without a POST.
    const ended = await newDelivery({ status: 'delivered', attempts: 1 });
    const bad = [
      (await js.publish(subject, '{"id": "wh_broken"')).seq,
      (await js.publish(subject, JSON.stringify({ ...ended, round: '0' }))).seq,
    ];
    const good = (await js.publish(subject, JSON.stringify(ended))).seq;
    const running = await startDeliveryWorker({
      config: { allowPrivateTargets: false, webhookRetrySchedule: schedule },
      log,
      js,
      deliveries: queue,
      workspaces: { get: async () => null },
    });
    try {
      await waitFor(() => terminated.length === 2, 'two jobs terminated');
      await waitFor(
        async () =>
          (await topology.jsm.consumers.info(names.deliveryStream, names.deliveryConsumer)).ack_floor.stream_seq >=
          good,
        'the good job acked',
      );
      // The claim: the consumer has no delivery limit, yet neither bad job comes back.
      await pause(1500);
    } finally {
      await running.stop();
      advisories.unsubscribe();
    }
    assert.equal(
      terminated.sort((a, b) => a - b),
      bad,
    );
    const refused = lines.filter((line) => line.msg === 'delivery message not valid; terminated');
    assert.equal(
      refused.map((line) => line.reason),
      ['the message is not JSON', 'round is missing or not a number'],
    );
    const info = await topology.jsm.consumers.info(names.deliveryStream, names.deliveryConsumer);
    assert.is(info.num_redelivered, 0);
    assert.is(info.num_ack_pending, 0);
  },
);

worker('a failed attempt with attempts left: recorded, backing off, retried after the scheduled delay', async () => {
  const { handle, seen } = handler([failed(500)]);
  const job = await newDelivery();
  assert.equal(await handle(deliveryOf(job)), { kind: 'retry', delayMs: 10_000 });
  const record = await recordOf(job);
  assert.equal([record.status, record.attempts, record.last_error], ['backing_off', 1, 'HTTP 500']);
  assert.equal(
    seen.sent.map((attempt) => [attempt.id, attempt.webhookUrl, attempt.body, attempt.secretKey]),
    [[job.id, job.webhook_url, job.body, 'sk_test']],
  );
  assert.equal(
    linesSaying(seen, 'webhook attempt').map((line) => [line.attempt, line.outcome, line.status]),
    [[1, 'failed', 500]],
  );
});

worker('Retry-After longer than the schedule sets the delay', async () => {
  const { handle } = handler([failed(503, 120)]);
  const job = await newDelivery();
  assert.equal(await handle(deliveryOf(job)), { kind: 'retry', delayMs: 120_000 });
});

worker('the next delivery resumes at the recorded attempt: a 2xx ends it delivered', async () => {
  const job = await newDelivery({ status: 'backing_off', attempts: 1, last_error: 'HTTP 500' });
  const { handle, seen } = handler([{ outcome: 'delivered', status: 204 }]);
  assert.equal(await handle(deliveryOf(job, 2)), { kind: 'ack' });
  const record = await recordOf(job);
  assert.equal([record.status, record.attempts], ['delivered', 2]);
  assert.equal(
    linesSaying(seen, 'webhook attempt').map((line) => line.attempt),
    [2],
  );
});

worker('410 stops at once: dead, acked, dead-lettered in the log', async () => {
  const { handle, seen } = handler([{ outcome: 'gone', status: 410, error: 'HTTP 410' }]);
  const job = await newDelivery();
  assert.equal(await handle(deliveryOf(job)), { kind: 'ack' });
  const record = await recordOf(job);
  assert.equal([record.status, record.attempts, record.last_error], ['dead', 1, 'HTTP 410']);
  assert.equal(
    linesSaying(seen, 'webhook dead-lettered').map((line) => line.last_error),
    ['HTTP 410'],
  );
});

worker('the last attempt failing: dead with its error', async () => {
  const job = await newDelivery({ status: 'backing_off', attempts: 2, last_error: 'HTTP 500' });
  const { handle } = handler([failed(502)]);
  assert.equal(await handle(deliveryOf(job, 3)), { kind: 'ack' });
  const record = await recordOf(job);
  assert.equal([record.status, record.attempts, record.last_error], ['dead', 3, 'HTTP 502']);
});

worker('attempts used up (the last was recorded, then the sender died): dead without a POST', async () => {
  const job = await newDelivery({ status: 'backing_off', attempts: 3, last_error: 'HTTP 500' });
  const { handle, seen } = handler();
  assert.equal(await handle(deliveryOf(job, 4)), { kind: 'ack' });
  const record = await recordOf(job);
  assert.equal([record.status, record.attempts, record.last_error], ['dead', 3, 'HTTP 500']);
  assert.is(seen.sent.length, 0);
});

worker('a workspace that no longer exists: refused, dead', async () => {
  const job = { ...(await newDelivery()), workspace_id: 'ws_00000000000000bb' };
  const { handle, seen } = handler();
  assert.equal(await handle(deliveryOf(job)), { kind: 'ack' });
  assert.is((await recordOf(job)).status, 'dead');
  assert.is(seen.sent.length, 0);
});

worker('a job of an older round, or of an ended delivery: acked without a POST', async () => {
  const { handle, seen } = handler();
  const redriven = await newDelivery({ round: 1 });
  assert.equal(await handle(deliveryOf({ ...redriven, round: 0 })), { kind: 'ack' });
  const ended = await newDelivery({ status: 'dead', attempts: 3 });
  assert.equal(await handle(deliveryOf(ended)), { kind: 'ack' });
  assert.is(seen.sent.length, 0);
  assert.is((await recordOf(redriven)).attempts, 0);
});

worker('a job before its record: retried, waiting longer each time; after about an hour, terminated', async () => {
  const { handle, seen } = handler();
  const job: DeliveryJob = {
    id: 'wh_without_record',
    render_id: 'rnd_x',
    workspace_id: WORKSPACE,
    webhook_url: 'https://hooks.example.com/',
    body: '{}',
    round: 0,
  };
  assert.equal(await handle(deliveryOf(job, 1)), { kind: 'retry', delayMs: 1000 });
  assert.equal(await handle(deliveryOf(job, 50)), { kind: 'retry', delayMs: 30_000 });
  assert.equal(await handle(deliveryOf(job, 120)), { kind: 'term', reason: 'no delivery record' });
  assert.is(linesSaying(seen, 'webhook job has no delivery record; terminated').length, 1);
  assert.is(seen.sent.length, 0);
});

worker.run();
