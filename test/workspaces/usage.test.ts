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
import { kvReads } from '../helpers/kv-reads.ts';
import { waitFor } from '../helpers/wait.ts';

const usage = suite('QuotaLedger');
let nats: NatsServer;
let nc: NatsConnection;
let ledger: QuotaLedger;
/** The same bucket through a connection of its own, as a second process (an ingress apart from its workers). */
let other: { nc: NatsConnection; ledger: QuotaLedger };

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
  const otherNc = await connect({ servers: nats.url });
  other = {
    nc: otherNc,
    ledger: new QuotaLedger((await ensureTopology(otherNc, loadConfig({ NATS_URL: nats.url }))).usage),
  };
});
usage.after(async () => {
  await other?.nc.close();
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

test("a ledger's writes start from its own last write, and another process's write in between is read", async () => {
  const workspace = allowance(100, 2);
  const { workspaceId } = workspace;
  const reads = (work: () => Promise<unknown>) => kvReads(nc, 'usage', work);
  assert.is(await reads(() => ledger.reserve(workspace, 'r1', at, inAMinute())), 1, 'the first write reads');
  assert.is(
    await reads(async () => {
      await ledger.reserve(workspace, 'r2', at, inAMinute());
      await ledger.commit(workspaceId, 'r1', createdAt);
      await ledger.release(workspaceId, 'r2', createdAt);
      await ledger.reserve(workspace, 'r3', at, inAMinute());
    }),
    0,
    'the next ones start from what it wrote',
  );
  // Admitted here, settled by another process: what this ledger remembers is stale.
  await ledger.reserve(workspace, 'r4', at, inAMinute());
  await other.ledger.commit(workspaceId, 'r3', createdAt);
  await other.ledger.commit(workspaceId, 'r4', createdAt);
  // Two in flight as remembered, none as stored: the stale month neither refuses nor loses a change.
  await ledger.reserve(workspace, 'r5', at, inAMinute());
  // After a stale start the key reads first for a while: one failed write, not one per write.
  assert.is(
    await reads(async () => {
      await ledger.reserve(workspace, 'r6', at, inAMinute());
      await ledger.release(workspaceId, 'r5', createdAt);
      await ledger.commit(workspaceId, 'r6', createdAt);
    }),
    3,
  );
  assert.equal(await ledger.month(workspaceId, month), { used: 4, inFlight: 0, days: { '07': 4 } });
  assert.is(await ledger.commit(workspaceId, 'r4', createdAt), 'already_settled', 'nor settles twice');
});

test("a ledger's concurrent writes of one month take turns from its last write: no read, no change lost", async () => {
  const workspace = allowance(100, 20);
  const { workspaceId } = workspace;
  await ledger.reserve(workspace, 'first', at, inAMinute());
  const ids = Array.from({ length: 10 }, (_, i) => `turn${i}`);
  const reads = await kvReads(nc, 'usage', async () => {
    await Promise.all(ids.map((id) => ledger.reserve(workspace, id, at, inAMinute())));
    await Promise.all([
      ...ids.map((id) => ledger.commit(workspaceId, id, createdAt)),
      ledger.release(workspaceId, 'first', createdAt),
    ]);
  });
  assert.is(reads, 0, 'each write started from the one before it');
  assert.equal(await ledger.month(workspaceId, month), { used: 10, inFlight: 0, days: { '07': 10 } });
});

test('40 parallel admissions through two processes, each with a month remembered, reserve exactly the quota', async () => {
  const workspace = allowance(6, 100);
  const ledgers = [ledger, other.ledger];
  // Each process has written the month once: both start from a version, and one of them is stale.
  for (const [i, each] of ledgers.entries()) {
    await each.reserve(workspace, `warm${i}`, at, inAMinute());
    await each.release(workspace.workspaceId, `warm${i}`, createdAt);
  }
  await ledger.reserve(workspace, 'first', at, inAMinute());
  const admitted = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      ledgers[i % 2].reserve(workspace, `r${i}`, at, inAMinute()).then(
        () => `r${i}`,
        () => null,
      ),
    ),
  );
  const ids = admitted.filter((id): id is string => id !== null);
  assert.is(ids.length, 5);
  // Each committed from both processes at once (a redelivery racing the first): counted once.
  await Promise.all(ids.flatMap((id) => ledgers.map((each) => each.commit(workspace.workspaceId, id, createdAt))));
  assert.equal(await ledger.month(workspace.workspaceId, month), { used: 5, inFlight: 1, days: { '07': 5 } });
});

test('a render weighed as several (a merge, one per source) holds and is charged that many', async () => {
  const quota = allowance(5, 3);
  await ledger.reserve(quota, 'merge', at, inAMinute(), 3);
  // 3 held of 5: a second merge of 3 does not fit, one screenshot does.
  assert.equal(await refusal(ledger.reserve(quota, 'too-big', at, inAMinute(), 3)), {
    code: 'screenshots_limit_reached',
    status: 402,
  });
  await ledger.reserve(quota, 'one', at, inAMinute());
  assert.is(await ledger.commit(quota.workspaceId, 'merge', createdAt), 'settled');
  assert.is(await ledger.used(quota.workspaceId, month), 3);
  // Settled twice, charged once; a failed merge is charged nothing.
  assert.is(await ledger.commit(quota.workspaceId, 'merge', createdAt), 'already_settled');
  assert.is(await ledger.used(quota.workspaceId, month), 3);
  await ledger.release(quota.workspaceId, 'one', createdAt);
  await ledger.reserve(quota, 'failing', at, inAMinute(), 2);
  await ledger.release(quota.workspaceId, 'failing', createdAt);
  assert.is(await ledger.used(quota.workspaceId, month), 3);
  assert.is((await ledger.month(quota.workspaceId, month)).days['07'], 3);
});

usage.run();
