// The render worker's message handling against a real NATS, with the page capture and the bucket
// swapped for doubles: no Chromium. What each delivery comes to (ack, retry with a delay, term),
// and what the record, the settlement, the webhook queue, the announcement and the log show.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { CapturePageInput } from '../../actors/render.machine.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { renderDefaults, type PageObservation } from '../../src/domain/options.ts';
import type { RenderRecord, RenderRequest } from '../../src/domain/render.ts';
import { ServiceError } from '../../src/errors.ts';
import type { Delivery } from '../../src/jetstream/consume.ts';
import { listenDone, readRenderDone, type RenderResult } from '../../src/renders/done.ts';
import { PENDING_REVISION_HEADER, RenderRecords, REPLAY_HEADER } from '../../src/renders/records.ts';
import { ensureTopology, names, type Topology } from '../../src/jetstream/topology.ts';
import type { BrowserHost } from '../../src/render/browser/browser.ts';
import { renderMessages, startRenderWorker } from '../../src/renders/worker.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { kvReads } from '../helpers/kv-reads.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const worker = suite('render worker: message handling');

let nats: NatsServer;
let nc: NatsConnection;
let js: JetStreamClient;
let config: Config;
let topology: Topology;
let records: RenderRecords;

/** Everything the doubles and the log saw in one test. */
interface Seen {
  captures: CapturePageInput[];
  stored: string[];
  settled: { record: RenderRecord }[];
  webhooks: RenderRecord[];
  /** Settlements and webhooks in the order they began and ended. */
  order: string[];
  lines: { level: number; msg: string; [field: string]: unknown }[];
}

const image = Buffer.from('a-png-the-size-of-this-string');
const observation: PageObservation = {
  finalUrl: 'https://example.com/',
  mainStatus: 200,
  subRequests: [],
  visibleText: '',
  missingSelectors: [],
  image,
};

type Capture = (input: CapturePageInput, signal: AbortSignal) => Promise<PageObservation>;

/**
 * The worker's handlers on the real records, with `capture` as the browser; and what they did.
 * `storeDown`: while it says true, the bucket refuses connections as an unreachable store does.
 */
function handlers(capture: Capture = async () => observation, storeDown?: () => boolean) {
  const seen: Seen = { captures: [], stored: [], settled: [], webhooks: [], order: [], lines: [] };
  const log = pino({ level: 'info' }, { write: (line: string) => void seen.lines.push(JSON.parse(line)) });
  const messages = renderMessages({
    log,
    nc,
    js,
    topology,
    records,
    store: {
      put: async (fileName) => {
        if (storeDown?.()) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
        seen.stored.push(fileName);
      },
    },
    // As the worker's own capture does: the machine's judge, once, on what the page showed.
    capturePage: async (input, signal) => {
      seen.captures.push(input);
      const observation = await capture(input, signal);
      return { ...observation, broken: input.judge(observation, input.options) };
    },
    // A settlement takes a moment, as a write to the ledger does.
    settle: async (record) => {
      seen.order.push('settling');
      await new Promise((resolve) => setTimeout(resolve, 10));
      seen.settled.push({ record });
      seen.order.push('settled');
    },
    enqueueWebhook: async (record) => void (seen.webhooks.push(record), seen.order.push('webhook')),
  });
  return { ...messages, seen };
}

let counter = 0;
/** The revision of each request's pending record, as its ingress's publish carries it. */
const pendingRevisions = new Map<string, number>();
/** A new request, its pending record written as the ingress does. */
async function newRequest(extra: Partial<RenderRequest> = {}): Promise<RenderRequest> {
  const request = requestOf(extra);
  const pending = await records.createPending(request);
  pendingRevisions.set(request.render_id, pending!.revision);
  return request;
}

/** A new request with a webhook, and `extra`. */
function requestOf(extra: Partial<RenderRequest>): RenderRequest {
  return {
    render_id: `rnd_worker_${++counter}`,
    workspace_id: 'ws_0000000000000001',
    created_at: new Date().toISOString(),
    options: { ...renderDefaults, url: 'https://example.com/' },
    webhook_url: 'https://hooks.example.com/shutterbus',
    ...extra,
  };
}

/** A synchronous request without a cache entry, published as RenderQueue.submit does: no pending record. */
function unrecordedRequest(): RenderRequest {
  const request = requestOf({ answer_by: Date.now() + 60_000 });
  pendingRevisions.set(request.render_id, 0);
  return request;
}

/** One delivery of `message`, as the consume loop hands it over. */
function deliveryOf<T>(
  message: T,
  options: { count?: number; isLast?: boolean; replay?: boolean; signal?: AbortSignal; asPublished?: boolean } = {},
): Delivery<T> {
  const { count = 1, isLast = false, replay = false, signal = new AbortController().signal } = options;
  const headers: Record<string, string> = {
    ...(replay ? { [REPLAY_HEADER]: new Date().toISOString() } : {}),
    // What RenderQueue.submit sends with the request: the revision of the pending record it wrote.
    ...(options.asPublished
      ? { [PENDING_REVISION_HEADER]: String(pendingRevisions.get((message as RenderRequest).render_id)) }
      : {}),
  };
  return {
    message,
    streamSequence: 1,
    deliveryCount: count,
    isLastDelivery: isLast,
    signal,
    header: (name) => headers[name],
  };
}

/** The reads of render records while `work` runs. */
const recordReads = (work: () => Promise<unknown>) => kvReads(nc, names.rendersBucket, work);

/** Collects the announcements of a render's end. */
function announcements(renderId: string) {
  const heard: RenderResult[] = [];
  const subscription = nc.subscribe(names.renderDone(renderId), {
    callback: (_err, msg) => void heard.push(readRenderDone(msg)),
  });
  return { heard, flush: async () => (await nc.flush(), subscription.unsubscribe()) };
}

/** Another process's ingress listening to a render's done subject, on a connection of its own. */
async function listenElsewhere(renderId: string) {
  const connection = await connect({ servers: nats.url });
  const heard: RenderResult[] = [];
  connection.subscribe(names.renderDone(renderId), {
    callback: (_err, msg) => void heard.push(readRenderDone(msg)),
  });
  await connection.flush();
  return {
    heard,
    /** Answers once everything published before it has reached this connection. */
    flush: async () => (await nc.flush(), await connection.flush()),
    close: () => connection.close(),
  };
}

const linesSaying = (seen: Seen, msg: string) => seen.lines.filter((line) => line.msg === msg);

worker.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  config = loadConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent', RENDER_MAX_DELIVER: '3', RENDER_ACK_WAIT: '2' });
  topology = await ensureTopology(nc, config);
  records = new RenderRecords(topology.renders);
});
worker.after(async () => {
  await nc?.close();
  await nats?.stop();
});

worker(
  'a render that succeeds: recorded with its file, charged, then queued, announced with its image, one log line',
  async () => {
    const { handle, seen } = handlers();
    const request = await newRequest();
    const done = announcements(request.render_id);
    const disposition = await handle(deliveryOf(request));
    await done.flush();

    assert.equal(disposition, { kind: 'ack' });
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'succeeded');
    assert.equal(seen.stored, [record.file_name]);
    assert.is(record.size_bytes, image.length);
    assert.equal(
      seen.settled.map((s) => s.record.status),
      ['succeeded'],
    );
    assert.equal(
      seen.webhooks.map((r) => r.render_id),
      [request.render_id],
    );
    assert.equal(seen.order, ['settling', 'settled', 'webhook'], 'charged before the webhook is queued');
    assert.is(done.heard.length, 1);
    assert.ok(done.heard[0].image?.equals(image), 'the image travels in the announcement');
    assert.equal(
      linesSaying(seen, 'render ended').map((line) => line.outcome),
      ['succeeded'],
    );
  },
);

worker(
  'an ingress waiting in the same process hears the end in memory; the message then carries no image',
  async () => {
    const { handle } = handlers();
    // A cached render: its concurrent views may wait on another ingress.
    const request = await newRequest({ cache: { key: 'ws_0000000000000001/view', ttl: 3600 } });
    const local = listenDone(nc, request.render_id);
    const elsewhere = await listenElsewhere(request.render_id);
    const heardElsewhere = elsewhere.heard;
    try {
      await handle(deliveryOf(request));
      const result = await local.first(1000);
      assert.is(result?.record.status, 'succeeded');
      assert.ok(result?.image?.equals(image), 'the image is handed over in memory');
      await waitFor(() => heardElsewhere.length === 1, 'the message on the subject');
      assert.is(heardElsewhere[0].record.file_name, result?.record.file_name);
      assert.is(heardElsewhere[0].image, undefined, 'the message goes without the image: the bucket has it');
    } finally {
      local.stop();
      await elsewhere.close();
    }
    // With no ingress waiting here any more, the next announcement carries its image again.
    const next = await newRequest();
    const done = announcements(next.render_id);
    await handle(deliveryOf(next));
    await done.flush();
    assert.ok(done.heard[0]?.image?.equals(image));
  },
);

worker('an uncached render heard by its ingress in the same process sends no message: nobody else waits', async () => {
  const { handle } = handlers();
  const request = unrecordedRequest();
  const local = listenDone(nc, request.render_id);
  const elsewhere = await listenElsewhere(request.render_id);
  try {
    await handle(deliveryOf(request, { asPublished: true }));
    const result = await local.first(1000);
    assert.is(result?.record.status, 'succeeded');
    assert.ok(result?.image?.equals(image));
    await elsewhere.flush();
    assert.is(elsewhere.heard.length, 0);
  } finally {
    local.stop();
    await elsewhere.close();
  }
});

worker('a first delivery starts from the pending record its ingress wrote, without reading it', async () => {
  const { handle } = handlers();
  const published = await newRequest();
  assert.is(await recordReads(() => handle(deliveryOf(published, { asPublished: true }))), 0);
  assert.is((await records.get(published.render_id))!.status, 'succeeded');
  // Without the revision (a monitor's tick, an older ingress), a redelivery or a replay: read first.
  const unmarked = await newRequest();
  assert.is(await recordReads(() => handle(deliveryOf(unmarked))), 1);
  const redelivered = await newRequest();
  assert.is(await recordReads(() => handle(deliveryOf(redelivered, { asPublished: true, count: 2 }))), 1);
});

worker('a first delivery published without a pending record writes the record once, without reading it', async () => {
  const { handle, seen } = handlers();
  const request = unrecordedRequest();
  assert.is(await recordReads(() => handle(deliveryOf(request, { asPublished: true }))), 0);
  const record = (await records.get(request.render_id))!;
  assert.is(record.status, 'succeeded');
  const writes = [];
  for await (const entry of await topology.renders.history({ key: request.render_id })) writes.push(entry.revision);
  assert.is(writes.length, 1, 'written once, at its end');
  assert.equal(record.timeline!.map((step) => step.step).slice(0, 2), ['queued', 'started']);
  assert.equal(
    seen.settled.map((s) => s.record.status),
    ['succeeded'],
  );
});

worker(
  'a request published without a pending record and given back before its first delivery: the ended record stands',
  async () => {
    const { handle, seen } = handlers();
    const request = unrecordedRequest();
    // The caller's give-up writes the record the ingress never wrote.
    await records.abandon(request, 'temporary_unavailable');
    assert.equal(await handle(deliveryOf(request, { asPublished: true })), { kind: 'ack' });
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'failed');
    assert.ok(record.abandoned);
    assert.equal(
      seen.settled.map((s) => s.record.abandoned),
      [true],
      'settled as abandoned: nothing charged',
    );
  },
);

worker(
  'a request given back before its first delivery that carries its pending revision: its ended record stands, nothing charged',
  async () => {
    const { handle, seen } = handlers();
    const request = await newRequest();
    await records.abandon(request, 'temporary_unavailable');
    const done = announcements(request.render_id);
    assert.equal(await handle(deliveryOf(request, { asPublished: true })), { kind: 'ack' });
    await done.flush();
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'failed');
    assert.ok(record.abandoned);
    assert.equal(seen.stored.length, 1, 'rendered: the first write is where the record is read');
    assert.equal(
      seen.settled.map((s) => s.record.abandoned),
      [true],
    );
    assert.is(seen.webhooks.length, 0);
    assert.equal(
      done.heard.map((heard) => [heard.record.abandoned, heard.image]),
      [[true, undefined]],
    );
  },
);

worker(
  'a redelivery of an ended render: ack, nothing rendered, settled and queued again (idempotent), announced without an image',
  async () => {
    const first = handlers();
    const request = await newRequest();
    await first.handle(deliveryOf(request));

    const again = handlers(async () => assert.unreachable('rendered again') as never);
    const done = announcements(request.render_id);
    const disposition = await again.handle(deliveryOf(request, { count: 2 }));
    await done.flush();

    assert.equal(disposition, { kind: 'ack' });
    assert.is(again.seen.captures.length, 0);
    assert.equal(again.seen.settled.length, 1, 'settled again (idempotent in the ledger)');
    assert.is(again.seen.webhooks.length, 1);
    assert.is(done.heard.length, 1);
    assert.is(done.heard[0].record.status, 'succeeded');
    assert.is(done.heard[0].image, undefined);
    assert.is(linesSaying(again.seen, 'render ended').length, 0, 'the render ended once, and said so once');
  },
);

worker('a render its caller abandoned: ack, not rendered, never announced by webhook', async () => {
  const { handle, seen } = handlers();
  const request = await newRequest();
  await records.abandon(request, 'temporary_unavailable');
  assert.equal(await handle(deliveryOf(request)), { kind: 'ack' });
  assert.is(seen.captures.length, 0);
  assert.is(seen.webhooks.length, 0);
  assert.equal(
    seen.settled.map((s) => s.record.abandoned),
    [true],
  );
});

worker(
  "an operator's replay renders an ended render again into the same record; its caller's old deadline does not apply",
  async () => {
    const request = await newRequest({ answer_by: Date.now() + 60_000 });
    await handlers().handle(deliveryOf(request));
    const before = (await records.get(request.render_id))!;
    // The replay republishes the original message: its deadline is long gone.
    const replayed = { ...request, answer_by: Date.now() - 60_000 };

    const { handle, seen } = handlers();
    assert.equal(await handle(deliveryOf(replayed, { replay: true })), { kind: 'ack' });
    const after = (await records.get(request.render_id))!;
    assert.is(seen.captures.length, 1, 'rendered again');
    assert.is(after.status, 'succeeded');
    assert.is.not(after.file_name, before.file_name, 'a new file');
    assert.equal(seen.settled.length, 1);
  },
);

worker(
  'a retryable failure with deliveries left: retry after a delay growing per delivery; the record is not ended',
  async () => {
    const { handle, seen } = handlers(async () => {
      throw new Error('the browser went away');
    });
    const request = await newRequest();
    assert.equal(await handle(deliveryOf(request, { count: 1 })), { kind: 'retry', delayMs: 1000 });
    assert.equal(await handle(deliveryOf(request, { count: 2 })), { kind: 'retry', delayMs: 2000 });
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'rendering');
    assert.equal(
      record.timeline?.map((entry) => entry.step),
      ['queued', 'started', 'retry', 'started', 'retry'],
      'each try that failed is in the timeline',
    );
    assert.is(seen.settled.length, 0);
    assert.is(seen.webhooks.length, 0);
    assert.is(linesSaying(seen, 'render ended').length, 0);
    const retries = linesSaying(seen, 'render will be retried');
    assert.equal(
      retries.map((line) => line.error_code),
      ['internal_application_error', 'internal_application_error'],
    );
    assert.match(
      String((retries[0].err as { message: string }).message),
      /browser went away/,
      'the cause is in the log',
    );
  },
);

worker('the same failure on the last delivery: failed, settled, queued, ack, one render ended line', async () => {
  const { handle, seen } = handlers(async () => {
    throw new Error('the browser went away');
  });
  const request = await newRequest();
  assert.equal(await handle(deliveryOf(request, { count: 3, isLast: true })), { kind: 'ack' });
  const record = (await records.get(request.render_id))!;
  assert.is(record.status, 'failed');
  assert.is(record.error_code, 'internal_application_error');
  assert.equal(
    seen.settled.map((s) => s.record.status),
    ['failed'],
  );
  assert.is(seen.webhooks.length, 1);
  assert.equal(
    linesSaying(seen, 'render ended').map((line) => line.error_code),
    ['internal_application_error'],
  );
});

worker('a failure the rules find is final on the first delivery', async () => {
  const { handle } = handlers(async () => {
    throw new ServiceError('timeout_error');
  });
  const request = await newRequest();
  assert.equal(await handle(deliveryOf(request)), { kind: 'ack' });
  assert.is((await records.get(request.render_id))!.error_code, 'timeout_error');
});

worker(
  'a synchronous render: pending until its end, written once; its caller answered meanwhile keeps the record abandoned',
  async () => {
    const request = await newRequest({ answer_by: Date.now() + 60_000 });
    const { handle, seen } = handlers(async () => {
      assert.is(
        (await records.get(request.render_id))!.status,
        'pending',
        'nobody can look while it renders: no write',
      );
      return observation;
    });
    assert.equal(await handle(deliveryOf(request)), { kind: 'ack' });
    assert.is((await records.get(request.render_id))!.status, 'succeeded');

    // The record changes under the render (its caller gave up): the end, written at the revision
    // read before, fails and is read again, so the abandonment stands and nothing is charged.
    const late = await newRequest({ answer_by: Date.now() + 60_000 });
    const abandoned = handlers(async () => (await records.abandon(late, 'temporary_unavailable'), observation));
    assert.equal(await abandoned.handle(deliveryOf(late)), { kind: 'ack' });
    const record = (await records.get(late.render_id))!;
    assert.is(record.status, 'failed');
    assert.ok(record.abandoned);
    assert.equal(
      abandoned.seen.settled.map((s) => s.record.status),
      ['failed'],
    );
    assert.is(seen.settled.length, 1);
  },
);

worker(
  "the store out of reach past a synchronous caller's timeout: the image announced unstored, then stored after the deadline, charged once",
  async () => {
    // Timeout 1 s: the store is tried 2 s after the capture; the caller's deadline is at 4 s, the store back at 6 s.
    // A cached render: besides the ingress here, views elsewhere may wait on its subject.
    const request = await newRequest({
      options: { ...renderDefaults, url: 'https://example.com/', timeout: 1 },
      answer_by: Date.now() + 4000,
      cache: { key: 'ws_0000000000000001/unstored', ttl: 3600 },
    });
    const backAt = Date.now() + 6000;
    const { handle, seen } = handlers(undefined, () => Date.now() < backAt);
    const done = announcements(request.render_id);
    const heardAt: number[] = [];
    const timing = nc.subscribe(names.renderDone(request.render_id), { callback: () => void heardAt.push(Date.now()) });
    // An ingress waiting in this process as well: it hears both ends in memory.
    const local = listenDone(nc, request.render_id);
    const started = Date.now();
    assert.equal(await handle(deliveryOf(request)), { kind: 'ack' });
    await done.flush();
    timing.unsubscribe();
    local.stop();

    assert.is(done.heard.length, 2, 'announced unstored, then ended');
    const [early, end] = done.heard;
    assert.is(early.unstored, true);
    assert.ok(early.image?.equals(image), 'the unstored announcement carries the image');
    assert.is(early.record.status, 'succeeded');
    assert.is(early.record.file_name, undefined);
    assert.ok(heardAt[0] - started < 3000, `announced within the caller's timeout and 2 s: ${heardAt[0] - started} ms`);
    assert.ok(heardAt[0] < request.answer_by!, "before the caller's deadline");
    assert.is(end.unstored, undefined);
    assert.is(end.image, undefined, 'the stored end goes without the image, heard in memory');
    assert.ok((await local.first(0))?.image?.equals(image), 'the ingress here heard the unstored image in memory');

    // Nobody waits once answered: the deadline that passed meanwhile does not end the render as late.
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'succeeded');
    assert.equal(seen.stored, [record.file_name]);
    assert.is(end.record.file_name, record.file_name);
    assert.equal(
      seen.settled.map((s) => s.record.status),
      ['succeeded'],
    );
  },
);

worker(
  'an unstored image its caller refused: the render stops trying the store, and its redelivery ends it uncharged',
  async () => {
    const request = await newRequest({
      options: { ...renderDefaults, url: 'https://example.com/', timeout: 1 },
      answer_by: Date.now() + 4000,
    });
    const { handle, seen } = handlers(undefined, () => true);
    // The ingress that cannot take the image (a json answer) abandons the render as soon as it hears it.
    const refusing = nc.subscribe(names.renderDone(request.render_id), {
      max: 1,
      callback: () => void records.abandon(request, 'temporary_unavailable'),
    });
    const started = Date.now();
    const disposition = await handle(deliveryOf(request));
    refusing.unsubscribe();
    assert.is(disposition.kind, 'retry', JSON.stringify(disposition));
    assert.ok(Date.now() - started < 15_000, `stopped trying the store once abandoned: ${Date.now() - started} ms`);
    assert.is(seen.stored.length, 0);

    assert.equal(await handle(deliveryOf(request, { count: 2 })), { kind: 'ack' });
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'failed');
    assert.ok(record.abandoned);
    assert.equal(
      seen.settled.map((s) => s.record.status),
      ['failed'],
    );
    assert.is(seen.webhooks.length, 0);
  },
);

worker("a request whose caller's deadline passed: failed late without rendering, never a charge", async () => {
  const { handle, seen } = handlers();
  const request = await newRequest({ answer_by: Date.now() - 1 });
  assert.equal(await handle(deliveryOf(request)), { kind: 'ack' });
  const record = (await records.get(request.render_id))!;
  assert.is(record.status, 'failed');
  assert.is(record.error_code, 'temporary_unavailable');
  assert.is(seen.captures.length, 0);
  assert.equal(
    seen.settled.map((s) => s.record.status),
    ['failed'],
  );
});

worker(
  'the loop stopping mid-render: the capture is aborted and the request handed back at once, even on its last delivery',
  async () => {
    let aborted = false;
    const { handle, seen } = handlers(
      (_input, signal) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)));
        }),
    );
    const request = await newRequest();
    const stopping = new AbortController();
    const disposition = handle(deliveryOf(request, { isLast: true, signal: stopping.signal }));
    await waitFor(() => seen.captures.length === 1, 'the capture under way');
    stopping.abort();
    assert.equal(await disposition, { kind: 'retry', delayMs: 0 });
    assert.ok(aborted, 'the capture saw its signal abort');
    assert.is((await records.get(request.render_id))!.status, 'rendering', 'not ended: the next delivery renders it');
    assert.is(seen.settled.length, 0);
  },
);

worker(
  'a max-deliveries advisory ends its request as failed; one for a request gone from the stream is acked',
  async () => {
    const { giveUp, seen } = handlers();
    const request = await newRequest();
    // In the stream, as its every delivery left it (the last test's loop finds it ended, and renders nothing).
    const { seq } = await js.publish(names.renderSubject(request.workspace_id), JSON.stringify(request));
    assert.equal(await giveUp(deliveryOf({ stream_seq: seq, deliveries: 3 })), { kind: 'ack' });
    const record = (await records.get(request.render_id))!;
    assert.is(record.status, 'failed');
    assert.is(record.error_code, 'internal_application_error');
    assert.equal(seen.settled.length, 1);
    assert.equal(linesSaying(seen, 'render gave up after its last delivery').length, 1);

    assert.equal(await giveUp(deliveryOf({ stream_seq: seq + 1000, deliveries: 3 })), { kind: 'ack' });
  },
);

worker(
  'through the real loop: a request that is not JSON or lacks its render id is terminated and logged, never rendered; a valid one is',
  async () => {
    const terminated: number[] = [];
    const advisories = nc.subscribe(
      `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${names.renderStream}.${names.renderConsumer}`,
      {
        callback: (_err, msg) => void terminated.push((msg.json() as { stream_seq: number }).stream_seq),
      },
    );
    const lines: { msg: string; reason?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    let captures = 0;
    // capturePage asks the browser for a page and returns what the task made of it: this browser
    // skips the page and answers with the observation.
    const browser = { withPage: async () => (captures++, observation) } as unknown as BrowserHost;
    const subject = names.renderSubject('ws_0000000000000001');
    const valid = await newRequest();
    const bad = [
      (await js.publish(subject, 'not json {')).seq,
      (await js.publish(subject, JSON.stringify({ ...valid, render_id: undefined }))).seq,
      (await js.publish(subject, JSON.stringify({ ...valid, options: { format: 'png' } }))).seq,
    ];
    await js.publish(subject, JSON.stringify(valid));

    const running = await startRenderWorker({
      config,
      log,
      nc,
      js,
      topology,
      records,
      store: { put: async () => undefined },
      browser,
      settle: async () => undefined,
    });
    try {
      await waitFor(
        async () => (await records.get(valid.render_id))?.status === 'succeeded',
        'the valid request rendered',
      );
      await waitFor(() => terminated.length === 3, 'three requests terminated');
      // The claim: none of them comes back, for longer than the ack wait.
      await pause(2500);
    } finally {
      await running.stop();
      advisories.unsubscribe();
    }
    assert.is(captures, 1, 'only the valid request was rendered');
    assert.equal(
      terminated.sort((a, b) => a - b),
      bad,
    );
    const refused = lines.filter((line) => line.msg === 'render message not valid; terminated');
    assert.equal(
      refused.map((line) => line.reason),
      ['the message is not JSON', 'render_id is missing or not a string', 'options.timeout is missing or not a number'],
    );
    const info = await topology.jsm.consumers.info(names.renderStream, names.renderConsumer);
    assert.is(info.num_redelivered, 0);
    assert.is(info.num_ack_pending, 0);
  },
);

worker.run();
