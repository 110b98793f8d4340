// The tick handler against a real JetStream: handlers racing on one tick submit one render and
// claim the tick once; outdated, deleted and early tick messages; a tick past the quota fails uncharged.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { tickRenderId, type Monitor } from '../../src/domain/monitor.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import type { RenderRecord } from '../../src/domain/render.ts';
import type { Delivery, Disposition } from '../../src/jetstream/consume.ts';
import { RenderQueue } from '../../src/renders/queue.ts';
import { RenderRecords } from '../../src/renders/records.ts';
import { ensureTopology, names, type Topology } from '../../src/jetstream/topology.ts';
import { createLogger } from '../../src/log.ts';
import { monitorTicks, type TickMessage } from '../../src/monitors/schedule.ts';
import { MonitorStore } from '../../src/monitors/store.ts';
import { Sealer } from '../../src/secrets/sealer.ts';
import { RecentRenders } from '../../src/renders/recent.ts';
import { RenderCache } from '../../src/renders/cache.ts';
import { Settlement } from '../../src/renders/settlement.ts';
import { monthOf, QuotaLedger } from '../../src/workspaces/usage.ts';
import { WorkspaceStore, type Workspace } from '../../src/workspaces/workspace.ts';
import { monitorRecord } from '../helpers/monitors.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';

const schedule = suite('monitor ticks');
let nats: NatsServer;
let nc: NatsConnection;
let topology: Topology;
let monitors: MonitorStore;
let workspaces: WorkspaceStore;
let ledger: QuotaLedger;
let handle: (delivery: Delivery<TickMessage>) => Promise<Disposition>;
/** The same handler in front of a render queue that is always full. */
let handleWhenFull: (delivery: Delivery<TickMessage>) => Promise<Disposition>;
let records: RenderRecords;
const sealer = new Sealer('a test key that is long enough to seal with');
const observed: RenderRecord[] = [];

schedule.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  const config = loadConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent' });
  topology = await ensureTopology(nc, config);
  records = new RenderRecords(topology.renders);
  ledger = new QuotaLedger(topology.usage);
  const log = createLogger(config);
  const settlement = new Settlement(
    ledger,
    new RenderCache(topology.renderCache),
    records,
    new RecentRenders(topology.recentRenders),
    config,
    log,
  );
  monitors = new MonitorStore(topology.monitors);
  workspaces = new WorkspaceStore(topology.workspaces, topology.accessKeys, sealer);
  const deps = {
    log,
    monitors,
    settlement,
    workspaces,
    sealer,
    observe: async (record: RenderRecord) => void observed.push(record),
  };
  handle = monitorTicks({ ...deps, renderQueue: new RenderQueue(nc, jetstream(nc), topology, records, 100) });
  handleWhenFull = monitorTicks({ ...deps, renderQueue: new RenderQueue(nc, jetstream(nc), topology, records, 0) });
});
schedule.after(async () => {
  await nc?.close();
  await nats?.stop();
});

const newMonitor = async (workspace: Workspace, fields: Partial<Monitor> = {}): Promise<Monitor> => {
  const monitor = monitorRecord(workspace.workspace_id, {
    sealed_options: sealer.seal(JSON.stringify({ ...renderDefaults, url: 'http://127.0.0.1:9/page' })),
    next_run_at: new Date(Date.now() - 1000).toISOString(),
    ...fields,
  });
  assert.ok(await monitors.create(monitor));
  return monitor;
};

const deliveryOf = (monitor: Monitor, generation = monitor.generation): Delivery<TickMessage> => ({
  message: { monitor_id: monitor.monitor_id, workspace_id: monitor.workspace_id, generation },
  streamSequence: 1,
  deliveryCount: 1,
  isLastDelivery: false,
  signal: new AbortController().signal,
  header: () => undefined,
});

/** The render requests published for a workspace. */
const published = async (workspaceId: string) => {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(names.renderStream, { subjects_filter: names.renderSubject(workspaceId) });
  return state.subjects?.[names.renderSubject(workspaceId)] ?? 0;
};

schedule(
  'five handlers racing on one due tick: one render submitted, the tick claimed once, the next one an interval on',
  async () => {
    const workspace = await workspaces.create({ plan: 'pro', quota: 10 });
    const monitor = await newMonitor(workspace);
    const dispositions = await Promise.all(Array.from({ length: 5 }, () => handle(deliveryOf(monitor))));
    for (const disposition of dispositions) {
      assert.is(disposition.kind, 'retry');
      const delay = (disposition as { delayMs: number }).delayMs;
      assert.ok(delay > 55_000 && delay <= 60_000, `naked until the next tick: ${delay}`);
    }
    assert.is(await published(workspace.workspace_id), 1, 'one render request');
    const after = (await monitors.get(workspace.workspace_id, monitor.monitor_id))!;
    assert.is(Date.parse(after.next_run_at), Date.parse(monitor.next_run_at) + 60_000);
    assert.is(after.last_run_at, monitor.next_run_at);
    assert.is(after.last_render_id, tickRenderId(monitor.monitor_id, monitor.next_run_at));
    const month = await ledger.month(workspace.workspace_id, monthOf(new Date()));
    assert.is(month.inFlight, 1, 'one reservation');

    // Handled again later (its worker died after submitting): nothing new.
    await monitors.update(workspace.workspace_id, monitor.monitor_id, (current) => ({
      ...current,
      next_run_at: monitor.next_run_at,
    }));
    await handle(deliveryOf(monitor));
    assert.is(await published(workspace.workspace_id), 1, 'still one render request');
  },
);

schedule('outdated, deleted and early tick messages', async () => {
  const workspace = await workspaces.create({ plan: 'pro', quota: 10 });
  const rescheduled = await newMonitor(workspace, { generation: 2 });
  assert.equal(await handle(deliveryOf(rescheduled, 1)), { kind: 'ack' }, 'an older generation ends');
  const paused = await newMonitor(workspace, { status: 'paused' });
  assert.equal(await handle(deliveryOf(paused)), { kind: 'ack' }, 'a paused monitor ends its chain');
  const deleted = await newMonitor(workspace);
  await monitors.remove(workspace.workspace_id, deleted.monitor_id);
  assert.equal(await handle(deliveryOf(deleted)), { kind: 'ack' }, 'a deleted monitor ends its chain');
  const early = await newMonitor(workspace, { next_run_at: new Date(Date.now() + 30_000).toISOString() });
  const waiting = await handle(deliveryOf(early));
  assert.is(waiting.kind, 'retry');
  assert.ok((waiting as { delayMs: number }).delayMs > 25_000, 'naked until due');
  assert.is(await published(workspace.workspace_id), 0, 'nothing rendered');
});

schedule("a tick past the quota fails uncharged and is announced as the monitor's failure", async () => {
  const workspace = await workspaces.create({ plan: 'pro', quota: 0 });
  const monitor = await newMonitor(workspace);
  const disposition = await handle(deliveryOf(monitor));
  assert.is(disposition.kind, 'retry');
  assert.is(await published(workspace.workspace_id), 0);
  const failed = observed.find((record) => record.monitor_id === monitor.monitor_id)!;
  assert.is(failed.status, 'failed');
  assert.is(failed.error_code, 'screenshots_limit_reached');
  assert.is((await ledger.month(workspace.workspace_id, monthOf(new Date()))).used, 0);
});

schedule('a full render queue makes the tick wait, and it is rendered when there is room', async () => {
  const workspace = await workspaces.create({ plan: 'pro', quota: 10 });
  const monitor = await newMonitor(workspace);
  const waiting = await handleWhenFull(deliveryOf(monitor));
  assert.is(waiting.kind, 'retry');
  assert.ok((waiting as { delayMs: number }).delayMs <= 5000, 'tried again in a few seconds');
  assert.is(await published(workspace.workspace_id), 0);
  const unclaimed = (await monitors.get(workspace.workspace_id, monitor.monitor_id))!;
  assert.is(unclaimed.next_run_at, monitor.next_run_at, 'the tick is still due');
  const record = await records.get(tickRenderId(monitor.monitor_id, monitor.next_run_at));
  assert.not.ok(record?.abandoned, 'its record is not given up');

  await handle(deliveryOf(monitor));
  assert.is(await published(workspace.workspace_id), 1, 'rendered once there is room');
  assert.is(
    Date.parse((await monitors.get(workspace.workspace_id, monitor.monitor_id))!.next_run_at),
    Date.parse(monitor.next_run_at) + 60_000,
  );
});

schedule.run();
