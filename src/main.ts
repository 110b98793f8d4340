// Composition root: config → connections → the roles this process runs → graceful close.
import { pathToFileURL } from 'node:url';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { checkChromiumPath, ConfigError, loadConfig, type Config } from './config.ts';
import { buildApp, type AppDeps } from './http/app.ts';
import { createDashboardDeps } from './http/dashboard/deps.ts';
import { buildHealthApp, type ReadinessCheck } from './http/health.ts';
import { RenderQueue } from './renders/queue.ts';
import type { RenderRecord } from './domain/render.ts';
import { RenderRecords } from './renders/records.ts';
import { connectNats, NatsLink, untilJetStreamAnswers } from './jetstream/connection.ts';
import { allStreams, ensureTopology, type Topology } from './jetstream/topology.ts';
import { DeliveryQueue } from './delivery/records.ts';
import { startDeliveryWorker } from './delivery/worker.ts';
import { createLogger, type Logger } from './log.ts';
import { startEgressProxy } from './net/egress-proxy.ts';
import { checkTargetUrl } from './net/target.ts';
import { BrowserFleet } from './render/browser/fleet.ts';
import { startRenderWorker } from './renders/worker.ts';
import { RenderCache } from './renders/cache.ts';
import { retryWhile } from './retry.ts';
import { FileStore, isStoreUnavailable } from './storage/store.ts';
import { startFileSweeper } from './storage/sweeper.ts';
import { WorkspaceCache } from './workspaces/cache.ts';
import { RecentRenders } from './renders/recent.ts';
import { Settlement } from './renders/settlement.ts';
import { QuotaLedger } from './workspaces/usage.ts';
import { WorkspaceStore } from './workspaces/workspace.ts';
import { createSealer, sealingKeySource } from './secrets/key.ts';
import { checkSealingKey } from './secrets/key-check.ts';
import { queueGauges } from './jetstream/queue-metrics.ts';
import { startTracing } from './tracing.ts';
import { addGaugeCollector } from './metrics.ts';
import type { Sealer } from './secrets/sealer.ts';
import { MonitorManager } from './monitors/manage.ts';
import { ProfileStore } from './profiles/store.ts';
import { MonitorObserver } from './monitors/observe.ts';
import { startMonitorScheduler } from './monitors/schedule.ts';
import { MonitorStore } from './monitors/store.ts';

/** How long a start waits for the object store to answer before it gives up. */
const STORE_START_PATIENCE_MS = 60_000;

/** A running Shutterbus process. */
export interface Shutterbus {
  /** The address the ingress listens on, when this process runs it. */
  url?: string;
  config: Config;
  close(): Promise<void>;
}

/** Starts every role named in `config.roles`; `close` stops them in reverse order. */
export async function startShutterbus(config: Config, log: Logger = createLogger(config)): Promise<Shutterbus> {
  // A missing SECRETS_KEY in production stops the start before anything is opened.
  const sealer = createSealer(config);
  // First in, so that its last spans are flushed after every role has closed.
  const closers: (() => Promise<unknown>)[] = [await startTracing(config)];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch((err) => log.error({ err }, 'close failed'));
  };
  // The browser launch is the slowest step of a start: it runs while NATS and the bucket are set up.
  const renderer = config.roles.has('render') ? startRenderer(config, log) : undefined;
  // Awaited below, or closed in the catch: this only keeps an early failure from going unhandled.
  renderer?.catch(() => undefined);
  let rendererOwned = false;
  // A browser that cannot start (its sandbox refused) stops the start at once, not once NATS and
  // the store have answered: the waits below give way to it.
  const browserFailed: Promise<never> = renderer
    ? renderer.then(() => new Promise<never>(() => {}))
    : new Promise<never>(() => {});
  browserFailed.catch(() => undefined);
  let ingress: ReturnType<typeof prepareIngress> | undefined;
  let ingressOwned = false;
  try {
    const connecting = connectNats(config, `shutterbus-${process.pid}`);
    const nc: NatsConnection = await Promise.race([connecting, browserFailed]).catch((err) => {
      void connecting.then(
        (late) => late.close(),
        () => undefined,
      );
      throw err;
    });
    closers.push(() => nc.drain());
    const natsLink = new NatsLink(nc, log);
    const js = jetstream(nc);
    const topology = await Promise.race([
      untilJetStreamAnswers(log, 'creating streams and buckets', () => ensureTopology(nc, config)),
      browserFailed,
    ]);
    // A key that cannot open what is sealed in NATS stops the start in one line, not every request later.
    const keySource = sealingKeySource(config);
    await Promise.race([
      untilJetStreamAnswers(log, 'checking the sealing key', () => checkSealingKey(topology, sealer, keySource)),
      browserFailed,
    ]);
    log.info({ key_id: sealer.keyId, from: keySource }, 'sealing key');
    const records = new RenderRecords(topology.renders);
    const recentRenders = new RecentRenders(topology.recentRenders);
    const webhooks = new DeliveryQueue(js, topology.deliveries);
    const cache = new RenderCache(topology.renderCache);
    const settlement = new Settlement(new QuotaLedger(topology.usage), cache, records, recentRenders, config, log);
    const workspaceStore = new WorkspaceStore(topology.workspaces, topology.accessKeys, sealer);
    const monitors = new MonitorManager(new MonitorStore(topology.monitors), js);
    const store = new FileStore(config.s3);
    const storeReady = retryWhile(
      () => store.ensureBucket(),
      isStoreUnavailable,
      Date.now() + STORE_START_PATIENCE_MS,
    ).catch((err) => {
      throw new Error(`the object store at ${config.s3.endPoint} did not answer`, { cause: err });
    });
    await Promise.race([storeReady, browserFailed]);

    const readiness: ReadinessCheck[] = [
      { name: 'nats', check: async () => void (await nc.rtt()) },
      // Every stream and bucket has its own leader: each must answer, or renders and reads fail.
      {
        name: 'jetstream',
        check: async () => void (await Promise.all(allStreams.map((stream) => topology.jsm.streams.info(stream)))),
      },
      { name: 'object_store', check: () => store.ping() },
      // The witness is re-sealed by a rotation: a process left with only the old key says so here.
      { name: 'secrets_key', check: () => checkSealingKey(topology, sealer, keySource) },
    ];
    for (const gauge of queueGauges(topology.jsm)) addGaugeCollector(gauge);

    // The ingress is built while the browser starts (building it is this thread's work, the launch
    // mostly Chromium's); it listens once every role is up.
    ingress = config.roles.has('ingress')
      ? prepareIngress({
          config,
          log,
          nc,
          js,
          topology,
          records,
          store,
          settlement,
          cache,
          workspaceStore,
          recentRenders,
          webhooks,
          readiness,
          natsLink,
          sealer,
          monitors: { manager: monitors, sealer },
        })
      : undefined;
    ingress?.catch(() => undefined);

    if (renderer) {
      const { proxy, browser } = await renderer;
      rendererOwned = true;
      for (const gauge of browser.gauges()) addGaugeCollector(gauge);
      closers.push(
        () => proxy.close(),
        () => browser.close(),
      );
      readiness.push({
        name: 'browser',
        check: async () => {
          if (!browser.isHealthy() || !(await browser.ping())) throw new Error('the browser does not answer');
        },
      });
      const settle = (record: RenderRecord) => settlement.settle(record);
      // A monitor's render is compared with its last capture once it ended (docs/monitors.md).
      const observer = new MonitorObserver({
        log,
        monitors: monitors.store,
        store,
        deliveries: webhooks,
        filesBaseUrl: config.filesBaseUrl,
      });
      const enqueueWebhook = async (record: RenderRecord) => {
        await webhooks.enqueue(record, config.filesBaseUrl);
        await observer.observe(record);
      };
      const customerBuckets = { sealer, allowPrivate: config.allowPrivateTargets };
      const worker = await startRenderWorker({
        config,
        log,
        nc,
        js,
        topology,
        records,
        store,
        browser,
        settle,
        enqueueWebhook,
        sealer,
        egress: proxy,
        customerBuckets,
        profiles: new ProfileStore(topology.profiles, sealer),
      });
      closers.push(() => worker.stop());
      const scheduler = await startMonitorScheduler({
        js,
        log,
        monitors: monitors.store,
        renderQueue: new RenderQueue(nc, js, topology, records, config.renderQueueLimit),
        settlement,
        workspaces: workspaceStore,
        sealer,
        observe: (record) => observer.observe(record),
        ackWaitSeconds: config.renderAckWaitSeconds,
      });
      closers.push(() => scheduler.stop());
      const stopSweeper = startFileSweeper(store, log);
      closers.push(async () => stopSweeper());
    }

    if (config.roles.has('delivery')) {
      const sender = await startDeliveryWorker({
        config,
        log,
        js,
        deliveries: webhooks,
        workspaces: workspaceStore,
        renders: records,
      });
      closers.push(() => sender.stop());
    }

    let url: string | undefined;
    if (ingress) {
      const { app, workspaces } = await ingress;
      ingressOwned = true;
      closers.push(async () => workspaces.stop());
      url = await app.listen({ port: config.port, host: config.host });
      closers.push(() => app.close());
    } else {
      // Render and delivery processes answer /healthz, /readyz and /metrics too, for orchestrators.
      const health = buildHealthApp(log, readiness);
      url = await health.listen({ port: config.port, host: config.host });
      closers.push(() => health.close());
    }
    return { url, config, close };
  } catch (err) {
    if (renderer && !rendererOwned) {
      await renderer.then(({ proxy, browser }) => Promise.all([browser.close(), proxy.close()])).catch(() => undefined);
    }
    if (ingress && !ingressOwned) {
      await ingress.then(({ app, workspaces }) => (workspaces.stop(), app.close())).catch(() => undefined);
    }
    await close();
    throw err;
  }
}

/** The ingress app, ready to listen, and the workspace cache it reads (watching KV). */
async function prepareIngress(
  deps: Pick<AppDeps, 'config' | 'log' | 'settlement' | 'readiness' | 'natsLink' | 'monitors'> & {
    nc: NatsConnection;
    js: JetStreamClient;
    topology: Topology;
    records: RenderRecords;
    store: FileStore;
    cache: RenderCache;
    workspaceStore: WorkspaceStore;
    recentRenders: RecentRenders;
    webhooks: DeliveryQueue;
    sealer: Sealer;
  },
) {
  const { config, log, nc, js, topology, records, workspaceStore, settlement, readiness, natsLink, sealer } = deps;
  const renderQueue = new RenderQueue(nc, js, topology, records, config.renderQueueLimit, sealer);
  const checkTarget = (raw: string, param: string) =>
    checkTargetUrl(raw, { allowPrivate: config.allowPrivateTargets, param });
  const workspaces = new WorkspaceCache(workspaceStore, topology, log);
  await workspaces.start();
  try {
    const dashboard = await createDashboardDeps({
      config,
      log,
      topology,
      sealer,
      workspaces: workspaceStore,
      ledger: settlement.ledger,
      recentRenders: deps.recentRenders,
      deliveries: deps.webhooks,
      monitors: deps.monitors?.manager,
      renders: records,
    });
    const services = {
      config,
      profiles: new ProfileStore(topology.profiles, sealer),
      renderQueue,
      fileStore: deps.store,
      workspaces,
      settlement,
      renderCache: deps.cache,
      checkTarget,
      sealer,
    };
    const app = buildApp({ ...services, log, readiness, natsLink, dashboard, monitors: deps.monitors });
    await app.ready();
    return { app, workspaces };
  } catch (err) {
    workspaces.stop();
    throw err;
  }
}

/** The egress proxy and, behind it, the browser a render worker drives. */
async function startRenderer(config: Config, log: Logger) {
  checkChromiumPath(config.chromiumPath);
  const proxy = await startEgressProxy({
    allowPrivate: config.allowPrivateTargets,
    log: (entry) => log.debug(entry, 'egress'),
  });
  const browser = new BrowserFleet(
    {
      executablePath: config.chromiumPath,
      proxyServer: proxy.browserProxy,
      log: browserLog(log),
      noSandbox: config.chromiumNoSandbox,
      browserUser: config.chromiumUser,
      env: config.browserEnv,
      rendererMemoryMb: config.rendererMemoryMb,
      memoryBudgetMb: config.renderMemoryBudgetMb,
      dataDir: config.dataDir,
    },
    config.renderBrowsers,
  );
  try {
    await browser.start();
  } catch (err) {
    await proxy.close();
    throw err;
  }
  return { proxy, browser };
}

/** Browser lifecycle entries carry their own level and message; the rest are fields. */
function browserLog(log: Logger) {
  return (entry: object) => {
    const { level, msg, ...fields } = entry as { level?: string; msg?: string };
    const write = level === 'error' ? log.error : level === 'warn' ? log.warn : log.info;
    write.call(log, fields, msg ?? 'browser');
  };
}

async function main(loaded?: Config): Promise<void> {
  let config: Config;
  try {
    config = loaded ?? loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`shutterbus: configuration: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config);
  const service = await startShutterbus(config, log).catch((err) => {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`shutterbus: configuration: ${err.message}`);
    process.exit(1);
  });
  log.info({ url: service.url, roles: [...config.roles] }, 'shutterbus started');
  const where = service.url ? `, listening on ${config.baseUrl}` : '';
  const docs = service.url && config.roles.has('ingress') ? `API reference: ${config.baseUrl}/docs\n` : '';
  process.stderr.write(`\nShutterbus started${where} (roles: ${[...config.roles].join(', ')})\n${docs}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await service.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * Starts the service as this process's work: what `node src/main.ts` and the bundle's entry
 * (src/boot.ts) run; the entry passes on the configuration it has loaded already.
 */
export function run(config?: Config): void {
  main(config).catch((err) => {
    console.error('shutterbus: failed to start:', err?.message ?? err);
    process.exit(1);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) run();
