// The quota ledger against a real NATS: admission counts renders in flight, a success is charged
// once however often it is settled, a failure never, and a reservation nobody settles lapses.
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { ServiceError, statusOf } from '../../src/errors.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { monthOf, QuotaLedger, type Allowance } from '../../src/workspaces/usage.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const usage = suite('QuotaLedger');
let nats: NatsServer;
let nc: NatsConnection;
let ledger: QuotaLedger;

/** A month in the past, so the days of a month are known; reservations lapse by the clock, not by it. */
const createdAt = '2025-03-07T10:00:00.000Z';
const at = new Date(createdAt);
const month = monthOf(at);
const inAMinute = () => Date.now() + 60_000;
const inFlight = async (workspaceId: string) => (await ledger.month(workspaceId, month)).inFlight;

/** A workspace of its own for each test, so no test sees another's reservations. */
const allowance = (quota: number, concurrency: number): Allowance => ({
  workspaceId: `ws_${randomUUID().slice(0, 8)}`,
  quota,
  concurrency,
});

/** The error code `work` rejects with, and its HTTP status. */
async function refusal(work: Promise<unknown>): Promise<{ code: string; status: number }> {
  try {
    await work;
  } catch (error) {
    assert.instance(error, ServiceError, String(error));
    const { code } = error as ServiceError;
    return { code, status: statusOf(code) };
  }
  assert.unreachable('the reservation should have been refused');
  return { code: '', status: 0 };
}

/** A test of the suite. uvu's reporter breaks on an error whose `details` is not a string, as a ServiceError's
 * is, and then ends the suite silently with exit code 0: an escaping ServiceError is reported as a plain Error. */
const test = (name: string, body: () => Promise<void>) =>
  usage(name, () =>
    body().catch((err: unknown) => {
      throw err instanceof ServiceError ? new Error(`ServiceError ${err.code}: ${err.message}`) : err;
    }),
  );

usage.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  ledger = new QuotaLedger((await ensureTopology(nc, loadConfig({ NATS_URL: nats.url }))).usage);
});
usage.after(async () => {
  await nc?.close();
  await nats?.stop();
});

test('reserve refuses with 402 once used plus in flight reaches the quota', async () => {
  const workspace = allowance(3, 10);
  await ledger.reserve(workspace, 'r1', at, inAMinute());
  assert.is(await ledger.commit(workspace.workspaceId, 'r1', createdAt), 'settled');
  await ledger.reserve(workspace, 'r2', at, inAMinute());
  await ledger.reserve(workspace, 'r3', at, inAMinute());
  // One used and two in flight: the quota of three is spoken for although only one was charged.
  assert.equal(await refusal(ledger.reserve(workspace, 'r4', at, inAMinute())), {
    code: 'screenshots_limit_reached',
    status: 402,
  });
  await ledger.release(workspace.workspaceId, 'r2', createdAt);
  await ledger.reserve(workspace, 'r4', at, inAMinute());
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 1, inFlight: 2, days: { '07': 1 } });
});

test('reserve refuses with 429 at the concurrency limit, and admits again once one ends', async () => {
  const workspace = allowance(100, 2);
  await ledger.reserve(workspace, 'r1', at, inAMinute());
  await ledger.reserve(workspace, 'r2', at, inAMinute());
  const refused = ledger.reserve(workspace, 'r3', at, inAMinute());
  assert.equal(await refusal(refused), { code: 'concurrency_limit_reached', status: 429 });
  assert.is(await refused.catch((error: ServiceError) => error.retryAfter), 2, 'the 429 says when to retry');
  await ledger.commit(workspace.workspaceId, 'r1', createdAt);
  await ledger.reserve(workspace, 'r3', at, inAMinute());
  assert.is(await inFlight(workspace.workspaceId), 2);
});

test('commit counts once, even when called twice', async () => {
  const workspace = allowance(100, 5);
  await ledger.reserve(workspace, 'r1', at, inAMinute());
  assert.is(await ledger.commit(workspace.workspaceId, 'r1', createdAt), 'settled', 'the first commit counts');
  assert.is(
    await ledger.commit(workspace.workspaceId, 'r1', createdAt),
    'already_settled',
    'the second changes nothing',
  );
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 1, inFlight: 0, days: { '07': 1 } });
});

test('release frees the slot and never counts, nor does a commit after it', async () => {
  const workspace = allowance(100, 5);
  await ledger.reserve(workspace, 'r1', at, inAMinute());
  assert.is(await ledger.release(workspace.workspaceId, 'r1', createdAt), 'settled');
  assert.is(await ledger.release(workspace.workspaceId, 'r1', createdAt), 'already_settled');
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 0, inFlight: 0, days: {} });
  assert.is(
    await ledger.commit(workspace.workspaceId, 'r1', createdAt),
    'already_settled',
    'a released render is settled',
  );
  assert.is(await ledger.used(workspace.workspaceId, month), 0);
});

test('a reservation that lapses frees its slot', async () => {
  const workspace = allowance(100, 1);
  await ledger.reserve(workspace, 'r1', at, Date.now() + 1000);
  assert.is((await refusal(ledger.reserve(workspace, 'r2', at, inAMinute()))).status, 429, 'held until it lapses');
  await waitFor(async () => (await inFlight(workspace.workspaceId)) === 0, 'the reservation lapsed', 5000);
  await ledger.reserve(workspace, 'r2', at, inAMinute());
  assert.is(await inFlight(workspace.workspaceId), 1);
});

test('a render that outlived its reservation is charged once when it ends; settling it again charges nothing', async () => {
  const workspace = allowance(100, 5);
  await ledger.reserve(workspace, 'r1', at, Date.now() + 500);
  await waitFor(async () => (await inFlight(workspace.workspaceId)) === 0, 'the reservation lapsed', 5000);
  // The next admission rewrites the month: the lapsed reservation is kept aside, holding no slot.
  await ledger.reserve(workspace, 'r2', at, inAMinute());
  assert.is(
    await ledger.commit(workspace.workspaceId, 'r1', createdAt),
    'settled_after_lapse',
    'the render that just ended is charged',
  );
  assert.is(
    await ledger.commit(workspace.workspaceId, 'r1', createdAt),
    'already_settled',
    'a redelivery or a retried write is not',
  );
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 1, inFlight: 1, days: { '07': 1 } });
  assert.is(
    await ledger.commit(workspace.workspaceId, 'never-admitted', createdAt),
    'already_settled',
    'a render never admitted is never charged',
  );
  assert.is(await ledger.used(workspace.workspaceId, month), 1);
});

test('month() returns used, in flight and used per UTC day', async () => {
  const workspace = allowance(100, 5);
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 0, inFlight: 0, days: {} });
  const days = ['2025-03-07T23:59:00.000Z', '2025-03-08T00:01:00.000Z', '2025-03-08T12:00:00.000Z'];
  for (const [i, day] of days.entries()) {
    await ledger.reserve(workspace, `done${i}`, new Date(day), inAMinute());
    await ledger.commit(workspace.workspaceId, `done${i}`, day);
  }
  await ledger.reserve(workspace, 'running', at, inAMinute());
  await ledger.reserve(workspace, 'failed', at, inAMinute());
  await ledger.release(workspace.workspaceId, 'failed', createdAt);
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 3, inFlight: 1, days: { '07': 1, '08': 2 } });
  assert.equal(
    await ledger.month(workspace.workspaceId, '2025-04'),
    { used: 0, inFlight: 0, days: {} },
    'another month is its own',
  );
});

test('standing() gives used, in flight and when the first reservation lapses at the latest', async () => {
  const workspace = allowance(100, 5);
  assert.equal(await ledger.standing(workspace.workspaceId, month), { used: 0, inFlight: 0 });
  const soon = Date.now() + 30_000;
  await ledger.reserve(workspace, 'later', at, soon + 60_000);
  await ledger.reserve(workspace, 'sooner', at, soon);
  await ledger.reserve(workspace, 'done', at, soon);
  await ledger.commit(workspace.workspaceId, 'done', createdAt);
  assert.equal(await ledger.standing(workspace.workspaceId, month), { used: 1, inFlight: 2, firstLapse: soon });
});

usage.run();
