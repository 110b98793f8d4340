// A render's money against a real NATS: admitted renders hold a slot, a success is charged once
// however often it is settled, and a request answered with an error gives back all it held.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import type { RenderRecord, RenderRequest } from '../../src/domain/render.ts';
import { ServiceError } from '../../src/errors.ts';
import { RenderRecords } from '../../src/renders/records.ts';
import { ensureTopology, type Topology } from '../../src/jetstream/topology.ts';
import { RecentRenders } from '../../src/renders/recent.ts';
import { cacheKeyOf, RenderCache } from '../../src/renders/cache.ts';
import { Settlement } from '../../src/renders/settlement.ts';
import { monthOf, QuotaLedger } from '../../src/workspaces/usage.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const settlement = suite('Settlement');
let nats: NatsServer;
let nc: NatsConnection;
let topology: Topology;
let ledger: QuotaLedger;
let cache: RenderCache;
let records: RenderRecords;
let recentRenders: RecentRenders;
let money: Settlement;
/** What Settlement logged, one JSON object per line. */
const logged: Record<string, unknown>[] = [];

/** A workspace of its own for each test. */
const workspaceOf = (quota = 100): Workspace => ({
  workspace_id: `ws_${randomUUID().slice(0, 8)}`,
  plan: 'free',
  quota,
  access_key: 'unused',
  secret_key: 'unused',
  require_signed_requests: false,
  members: [],
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
});

/** An asynchronous request of `workspace`, optionally a cached signed GET. */
const requestOf = (workspace: Workspace, extra: Partial<RenderRequest> = {}): RenderRequest => ({
  render_id: randomUUID(),
  workspace_id: workspace.workspace_id,
  created_at: new Date().toISOString(),
  options: { ...renderDefaults, url: 'https://example.com/' },
  ...extra,
});
const withCache = () => ({ cache: { key: cacheKeyOf('ws', randomUUID()), ttl: 3600 } });

/** The record a worker ends `request` with. */
const endedRecord = (request: RenderRequest, status: 'succeeded' | 'failed'): RenderRecord => ({
  render_id: request.render_id,
  workspace_id: request.workspace_id,
  status,
  url: request.options.url ?? '',
  format: request.options.format,
  created_at: request.created_at,
  finished_at: new Date().toISOString(),
  ...(status === 'succeeded'
    ? { file_name: `file-${request.render_id}.png`, size_bytes: 100 }
    : { error_code: 'host_returned_error' as const }),
  ...(request.cache ? { cache: request.cache } : {}),
});

const monthNow = (workspace: Workspace) => ledger.month(workspace.workspace_id, monthOf(new Date()));

/** A test of the suite. uvu's reporter breaks on an error whose `details` is not a string, as a ServiceError's
 * is, and then ends the suite silently with exit code 0: an escaping ServiceError is reported as a plain Error. */
const test = (name: string, body: () => Promise<void>) =>
  settlement(name, () =>
    body().catch((err: unknown) => {
      throw err instanceof ServiceError ? new Error(`ServiceError ${err.code}: ${err.message}`) : err;
    }),
  );

settlement.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  topology = await ensureTopology(nc, loadConfig({ NATS_URL: nats.url }));
  ledger = new QuotaLedger(topology.usage);
  cache = new RenderCache(topology.renderCache);
  records = new RenderRecords(topology.renders);
  recentRenders = new RecentRenders(topology.recentRenders);
  const log = pino(
    { level: 'warn' },
    new Writable({ write: (line, _encoding, done) => done(void logged.push(JSON.parse(String(line)))) }),
  );
  money = new Settlement(ledger, cache, records, recentRenders, { renderAckWaitSeconds: 30, renderMaxDeliver: 3 }, log);
});
settlement.after(async () => {
  await nc?.close();
  await nats?.stop();
});

test('admit holds a slot; settling the success charges one and fills the cache', async () => {
  const workspace = workspaceOf();
  const request = requestOf(workspace, withCache());
  assert.equal(await cache.claim(request.cache!.key, request.render_id, 60), { kind: 'render' });
  await money.admit(request, workspace);
  assert.equal(await monthNow(workspace), { used: 0, inFlight: 1, days: {} });
  await money.settle(endedRecord(request, 'succeeded'));
  const { used, inFlight } = await monthNow(workspace);
  assert.equal({ used, inFlight }, { used: 1, inFlight: 0 });
  assert.is((await cache.lookup(request.cache!.key))?.render_id, request.render_id);
  assert.equal(
    (await recentRenders.list(workspace.workspace_id)).map((recent) => recent.render_id),
    [request.render_id],
  );
});

test('a failed render releases its slot and is never charged', async () => {
  const workspace = workspaceOf();
  const request = requestOf(workspace, withCache());
  await cache.claim(request.cache!.key, request.render_id, 60);
  await money.admit(request, workspace);
  await money.settle(endedRecord(request, 'failed'));
  assert.equal(await monthNow(workspace), { used: 0, inFlight: 0, days: {} });
  assert.is((await cache.claim(request.cache!.key, randomUUID(), 60)).kind, 'render', 'the claim was freed');
});

test('settled twice (a redelivery), a success is charged once and listed once', async () => {
  const workspace = workspaceOf();
  const request = requestOf(workspace);
  await money.admit(request, workspace);
  const record = endedRecord(request, 'succeeded');
  await money.settle(record);
  await money.settle(record);
  assert.is((await monthNow(workspace)).used, 1);
  assert.is((await recentRenders.list(workspace.workspace_id)).length, 1);
});

test('admission refused at the quota gives up the cache claim', async () => {
  const workspace = workspaceOf(1);
  await money.admit(requestOf(workspace), workspace);
  const refused = requestOf(workspace, withCache());
  await cache.claim(refused.cache!.key, refused.render_id, 60);
  const error = await money.admit(refused, workspace).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(error, ServiceError);
  assert.is((error as ServiceError).code, 'screenshots_limit_reached');
  assert.is((await cache.claim(refused.cache!.key, randomUUID(), 60)).kind, 'render', 'the claim was given up');
});

test('giveBack releases the slot, frees the cache claim and ends the record abandoned', async () => {
  const workspace = workspaceOf();
  const request = requestOf(workspace, withCache());
  await cache.claim(request.cache!.key, request.render_id, 60);
  await money.admit(request, workspace);
  await records.createPending(request);
  money.giveBack(request);
  await waitFor(async () => (await records.get(request.render_id))?.status === 'failed', 'the record ended', 5000);
  const record = await records.get(request.render_id);
  assert.is(record?.abandoned, true);
  assert.is(record?.error_code, 'temporary_unavailable');
  await waitFor(async () => (await monthNow(workspace)).inFlight === 0, 'the slot released', 5000);
  await waitFor(
    async () => (await cache.claim(request.cache!.key, randomUUID(), 60)).kind === 'render',
    'the claim freed',
    5000,
  );
  assert.is((await monthNow(workspace)).used, 0);
});

test("a synchronous render's slot lapses at its caller's deadline; ending after it, it is charged once and logged", async () => {
  const workspace = workspaceOf();
  const request = requestOf(workspace, { answer_by: Date.now() + 1000 });
  await money.admit(request, workspace);
  assert.is((await monthNow(workspace)).inFlight, 1);
  await waitFor(async () => (await monthNow(workspace)).inFlight === 0, 'the slot lapsed at answer_by', 5000);
  // Another admission rewrites the month without the lapsed reservation.
  await money.admit(requestOf(workspace), workspace);
  const record = endedRecord(request, 'succeeded');
  await money.settle(record);
  await money.settle(record);
  assert.is((await monthNow(workspace)).used, 1);
  const warning = logged.find((line) => line.render_id === request.render_id);
  assert.is(warning?.outcome, 'settled_after_lapse');
});

settlement.run();
