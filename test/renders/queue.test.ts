// What the render queue writes before it publishes a request (src/renders/queue.ts): a pending record
// where somebody may ask for it before the render ends, none for a synchronous uncached request; the
// request carries which, for its first delivery to start from (src/renders/worker.ts).
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import { pendingRecord, type RenderRecord, type RenderRequest } from '../../src/domain/render.ts';
import { ensureTopology, names, type Topology } from '../../src/jetstream/topology.ts';
import { announceDone, doneSubjectOf, listenOwnDone } from '../../src/renders/done.ts';
import { RenderQueue } from '../../src/renders/queue.ts';
import { PENDING_REVISION_HEADER, RenderRecords } from '../../src/renders/records.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';

const queue = suite('the render queue');
let nats: NatsServer;
let nc: NatsConnection;
let topology: Topology;
let records: RenderRecords;
let renderQueue: RenderQueue;

queue.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  topology = await ensureTopology(nc, loadConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent' }));
  records = new RenderRecords(topology.renders);
  renderQueue = new RenderQueue(nc, jetstream(nc), topology, records, 100);
});
queue.after(async () => {
  await nc?.close();
  await nats?.stop();
});

let counter = 0;
const newRequest = (extra: Partial<RenderRequest> = {}): RenderRequest => ({
  render_id: `rnd_queue_${++counter}`,
  // A workspace of its own per request: the stream's last message of its subject is the request's.
  workspace_id: `ws_queue_${counter}`,
  created_at: new Date().toISOString(),
  options: { ...renderDefaults, url: 'https://example.com/' },
  ...extra,
});

/** The revision header the request was published with. */
const publishedRevision = async (request: RenderRequest) => {
  const stored = await topology.jsm.streams.getMessage(names.renderStream, {
    last_by_subj: names.renderSubject(request.workspace_id),
  });
  assert.ok(stored, 'published');
  return stored!.header.get(PENDING_REVISION_HEADER);
};

queue('an asynchronous request is recorded as pending before it is published, with its revision', async () => {
  const request = newRequest();
  await renderQueue.submit(request);
  const pending = await records.read(request.render_id);
  assert.is(pending.value?.status, 'pending');
  assert.is(await publishedRevision(request), String(pending.revision));
});

queue('a synchronous request with a cache entry is recorded too: other views wait on its record', async () => {
  const request = newRequest({ answer_by: Date.now() + 30_000, cache: { key: 'ws_queue/abc', ttl: 3600 } });
  await renderQueue.submit(request);
  const pending = await records.read(request.render_id);
  assert.is(pending.value?.status, 'pending');
  assert.is(await publishedRevision(request), String(pending.revision));
});

queue('a synchronous request without one is published with no record, and says so', async () => {
  const request = newRequest({ answer_by: Date.now() + 30_000 });
  await renderQueue.submit(request);
  assert.is(await records.get(request.render_id), null);
  assert.is(await publishedRevision(request), '0');
});

/** The request as the stream holds it, once it has been published. */
const published = async (request: RenderRequest): Promise<RenderRequest> => {
  for (let waited = 0; waited < 5000; waited += 20) {
    const stored = await topology.jsm.streams
      .getMessage(names.renderStream, { last_by_subj: names.renderSubject(request.workspace_id) })
      .catch(() => null);
    if (stored) return stored.json<RenderRequest>();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${request.render_id} was not published`);
};

const succeeded = (request: RenderRequest): RenderRecord => ({
  ...pendingRecord(request),
  status: 'succeeded',
  finished_at: new Date().toISOString(),
  file_name: 'x.png',
  size_bytes: 3,
});

queue(
  'a synchronous uncached request names its connection’s own done subject, heard from another process',
  async () => {
    const worker = await connect({ servers: nats.url });
    try {
      const request = newRequest({ answer_by: Date.now() + 10_000 });
      const answer = renderQueue.submitAndWait(request);
      const stored = await published(request);
      assert.match(stored.done_to ?? '', /^sb\.render\.done\.to\.[0-9a-f]+\./);
      assert.ok(stored.done_to!.endsWith(`.${request.render_id}`));
      // What a worker on another connection does at the render's end (src/renders/outcome.ts).
      announceDone(worker, doneSubjectOf(stored), succeeded(request), Buffer.from('png'));
      const result = await answer;
      assert.is(result.record.status, 'succeeded');
      assert.is(result.image?.toString(), 'png');
    } finally {
      await worker.close();
    }
  },
);

queue(
  'every such wait on one connection shares its subject’s subscription; a cached one keeps the render’s',
  async () => {
    const first = listenOwnDone(nc, 'rnd_queue_shared_1');
    const second = listenOwnDone(nc, 'rnd_queue_shared_2');
    first.stop();
    second.stop();
    assert.is(first.subject.split('.')[4], second.subject.split('.')[4]);
    const worker = await connect({ servers: nats.url });
    try {
      const cached = newRequest({ answer_by: Date.now() + 10_000, cache: { key: 'ws_queue/shared', ttl: 60 } });
      const answer = renderQueue.submitAndWait(cached);
      const stored = await published(cached);
      assert.is(stored.done_to, undefined);
      assert.is(doneSubjectOf(stored), names.renderDone(cached.render_id));
      announceDone(worker, doneSubjectOf(stored), succeeded(cached));
      assert.is((await answer).record.status, 'succeeded');
    } finally {
      await worker.close();
    }
  },
);

queue.run();
