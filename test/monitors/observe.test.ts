// Observing a monitor's renders against a real JetStream and S3 store: renders that end out of order
// or at once (two workers, a redelivery) announce a change once, and an older capture never becomes
// the baseline again.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import type { WebhookPayload } from '../../src/delivery/records.ts';
import type { Monitor } from '../../src/domain/monitor.ts';
import type { RenderRecord } from '../../src/domain/render.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { createLogger } from '../../src/log.ts';
import { MonitorObserver } from '../../src/monitors/observe.ts';
import { MonitorStore } from '../../src/monitors/store.ts';
import { FileStore } from '../../src/storage/store.ts';
import { monitorRecord } from '../helpers/monitors.ts';
import { startNats, startS3, type NatsServer, type S3Server } from '../helpers/stack.ts';

const observe = suite('observing a monitor’s renders');
let nats: NatsServer;
let s3: S3Server;
let nc: NatsConnection;
let monitors: MonitorStore;
let store: FileStore;
let observer: MonitorObserver;
/** Every event the observer queued, in order. */
const announced: WebhookPayload[] = [];
const WORKSPACE = 'ws_observe';

const png = (gray: number) =>
  sharp({ create: { width: 64, height: 64, channels: 3, background: { r: gray, g: gray, b: gray } } })
    .png()
    .toBuffer();

observe.before(async () => {
  [nats, s3] = await Promise.all([startNats(), startS3()]);
  nc = await connect({ servers: nats.url });
  const config = loadConfig({
    NATS_URL: nats.url,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: 'shutterbus-observe',
    LOG_LEVEL: 'silent',
  });
  const topology = await ensureTopology(nc, config);
  monitors = new MonitorStore(topology.monitors);
  store = new FileStore(config.s3);
  await store.ensureBucket();
  await Promise.all([
    store.put('white.png', await png(255), 'png'),
    store.put('black-1.png', await png(0), 'png'),
    store.put('black-2.png', await png(0), 'png'),
    store.put('white-1.png', await png(255), 'png'),
  ]);
  observer = new MonitorObserver({
    log: createLogger(config),
    monitors,
    store,
    deliveries: { enqueueEvent: async (_target, payload) => void announced.push(payload) },
    filesBaseUrl: 'http://127.0.0.1:9/files',
  });
});

observe.after(async () => {
  await nc?.close();
  await Promise.allSettled([nats?.stop(), s3?.stop()]);
});

/** A monitor whose baseline is the white capture of tick 0. */
const newMonitor = async (): Promise<Monitor> => {
  const monitor = monitorRecord(WORKSPACE, {
    last_file_name: 'white.png',
    observed: 'tick-0:white.png',
    observed_tick_at: '2026-01-01T00:00:00.000Z',
  });
  assert.ok(await monitors.create(monitor));
  return monitor;
};

/** The succeeded render of `monitor`'s tick `minute`, whose capture is `fileName`. */
const render = (monitor: Monitor, minute: number, fileName: string): RenderRecord =>
  ({
    render_id: `${monitor.monitor_id}-tick-${minute}`,
    workspace_id: WORKSPACE,
    status: 'succeeded',
    created_at: new Date().toISOString(),
    finished_at: new Date().toISOString(),
    file_name: fileName,
    monitor_id: monitor.monitor_id,
    monitor_tick_at: `2026-01-01T00:0${minute}:00.000Z`,
  }) as RenderRecord;

const changesAnnounced = (monitor: Monitor) =>
  new Set(
    announced
      .filter((event) => event.type === 'monitor.changed' && event.data.monitor_id === monitor.monitor_id)
      .map((event) => event.id),
  );

observe('a render of an earlier tick ending later is not compared, nor made the baseline', async () => {
  const monitor = await newMonitor();
  await observer.observe(render(monitor, 2, 'black-1.png'));
  await observer.observe(render(monitor, 1, 'white-1.png'));
  const after = (await monitors.get(WORKSPACE, monitor.monitor_id))!;
  assert.is(changesAnnounced(monitor).size, 1, 'the change announced once');
  assert.equal(
    after.changes.map((change) => change.render_id),
    [`${monitor.monitor_id}-tick-2`],
  );
  assert.is(after.last_file_name, 'black-1.png', 'the newer capture stays the baseline');
});

observe('two renders ending at once are compared one after the other: one change', async () => {
  for (let round = 0; round < 5; round++) {
    const monitor = await newMonitor();
    await Promise.all([
      observer.observe(render(monitor, 1, 'black-1.png')),
      observer.observe(render(monitor, 2, 'black-2.png')),
    ]);
    const after = (await monitors.get(WORKSPACE, monitor.monitor_id))!;
    assert.is(changesAnnounced(monitor).size, 1, `round ${round}: the change announced once`);
    assert.is(after.changes.length, 1, `round ${round}: one change recorded`);
    assert.is(after.last_file_name, 'black-2.png', `round ${round}: the newer capture is the baseline`);
  }
});

observe('a render observed again announces its change again under the same delivery id', async () => {
  const monitor = await newMonitor();
  const record = render(monitor, 1, 'black-1.png');
  await observer.observe(record);
  await observer.observe(record);
  const ids = announced.filter((event) => event.data.monitor_id === monitor.monitor_id).map((event) => event.id);
  assert.is(ids.length, 2, 'announced again (its first announcement may have been lost with its process)');
  assert.is(new Set(ids).size, 1, 'one delivery');
  assert.is((await monitors.get(WORKSPACE, monitor.monitor_id))!.changes.length, 1);
});

observe.run();
