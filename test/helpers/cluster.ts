// A 3-node NATS JetStream cluster for tests: three nats-server processes on loopback (n1, n2,
// n3), each with its own client, cluster and monitoring port and its own store directory, all
// routed to each other. Nodes can be SIGKILLed and restarted on the same ports and store.
// The exit hooks of stack.ts kill every node when the test process ends.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { startFixtureSite, type FixtureRoute } from '../fixtures/site.ts';
import { spawnService, type TestStack } from './service.ts';
import { canConnect, freePort, natsServerBinary, own, startS3, type Owned } from './stack.ts';

/** The node names, in order. */
export const nodeNames = ['n1', 'n2', 'n3'] as const;
export type NodeName = (typeof nodeNames)[number];

/** A running 3-node cluster. */
export interface NatsCluster {
  /** The client URLs of n1, n2, n3, in that order. */
  urls: string[];
  /** The three client URLs comma-separated, as NATS_URL takes them. */
  url: string;
  /** The client URL of one node. */
  urlOf(name: NodeName): string;
  /** The monitoring address of one node (http://127.0.0.1:port; /healthz, /jsz, /varz). */
  monitorOf(name: NodeName): string;
  /** Whether a node's process is running (not killed or stopped). */
  isRunning(name: NodeName): boolean;
  /** SIGKILLs one node by pid and waits until the process is gone; its store stays. */
  kill(name: NodeName): Promise<void>;
  /** Starts a killed node again on the same ports and store; waits until its client port answers. */
  restart(name: NodeName): Promise<void>;
  /**
   * Waits until a node's /healthz is 200: it sees a meta leader and its streams and consumers are
   * current. On nats-server 2.9.10 a restarted node's replica of a consumer that was busy while it
   * was down can stay behind for good (see cluster.test.ts), and then this times out.
   */
  waitHealthy(name: NodeName, timeoutMs?: number): Promise<void>;
  /** The server name of a stream's leader (a KV bucket's stream is KV_<bucket>); retries while there is none. */
  leaderOf(stream: string, timeoutMs?: number): Promise<NodeName>;
  /** Waits until the stream has a leader other than `notName` (if given) and returns its name. */
  waitForLeader(stream: string, notName?: NodeName, timeoutMs?: number): Promise<NodeName>;
  /** Waits until `name` is a current replica (or the leader) of every one of `streams`: it rejoined them. */
  waitCurrent(name: NodeName, streams: string[], timeoutMs?: number): Promise<void>;
  /** Stops every node by pid (SIGKILL: the data is thrown away) and removes the temp directories. */
  stop(): Promise<void>;
}

interface NodePorts {
  client: number;
  cluster: number;
  http: number;
}

const startAttempts = 3;
const readyTimeoutMs = 30_000;
const defaultLeaderTimeoutMs = 30_000;
const pollMs = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function configText(name: NodeName, ports: Record<NodeName, NodePorts>, storeDir: string): string {
  const mine = ports[name];
  const routes = nodeNames.map((other) => `    nats-route://127.0.0.1:${ports[other].cluster}`).join('\n');
  return [
    `server_name: ${name}`,
    `listen: 127.0.0.1:${mine.client}`,
    `http: 127.0.0.1:${mine.http}`,
    'jetstream {',
    `  store_dir: ${JSON.stringify(storeDir)}`,
    '  max_memory_store: 64MB',
    '  max_file_store: 1GB',
    '}',
    'cluster {',
    '  name: shutterbus-test',
    `  listen: 127.0.0.1:${mine.cluster}`,
    '  routes: [',
    routes,
    '  ]',
    '}',
    '',
  ].join('\n');
}

/** Resolves when the node's /healthz is 200; otherwise throws with what it said. */
async function healthz(monitor: string): Promise<true> {
  const response = await fetch(`${monitor}/healthz`, { signal: AbortSignal.timeout(1000) });
  const body = await response.text();
  if (!response.ok) throw new Error(`/healthz ${response.status} ${body.trim()}`);
  return true;
}

/** A short-lived client of the whole cluster, for one admin question; closed by `use`'s end. */
async function withManager<T>(urls: string[], use: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc: NatsConnection = await connect({
    servers: urls,
    timeout: 2000,
    reconnect: false,
    // The helper must not learn (and later try) addresses beyond the three it was given.
    ignoreClusterUpdates: true,
  });
  try {
    return await use(await jetstreamManager(nc, { timeout: 2000, checkAPI: false }));
  } finally {
    await nc.close().catch(() => {});
  }
}

/** Tries `attempt` until it returns a value; the last error is in the timeout message. */
async function poll<T>(what: string, timeoutMs: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`${what} within ${timeoutMs} ms${why}`);
    }
    await sleep(pollMs);
  }
}

/** Starts three nats-server nodes and waits until all answer and JetStream places a stream on all three. */
export async function startNatsCluster(): Promise<NatsCluster> {
  let lastError: unknown;
  for (let attempt = 0; attempt < startAttempts; attempt++) {
    try {
      return await startOnce();
    } catch (error) {
      // Most likely a port taken between freePort() and the bind: try again on other ports.
      lastError = error;
    }
  }
  throw lastError;
}

async function startOnce(): Promise<NatsCluster> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-cluster-'));
  const ports = {} as Record<NodeName, NodePorts>;
  const taken = new Set<number>();
  const pick = async () => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  for (const name of nodeNames) ports[name] = { client: await pick(), cluster: await pick(), http: await pick() };
  const configs = {} as Record<NodeName, string>;
  for (const name of nodeNames) {
    const store = path.join(root, name, 'store');
    mkdirSync(store, { recursive: true });
    configs[name] = path.join(root, name, 'nats.conf');
    writeFileSync(configs[name], configText(name, ports, store));
  }

  const urls = nodeNames.map((name) => `nats://127.0.0.1:${ports[name].client}`);
  const urlOf = (name: NodeName) => `nats://127.0.0.1:${ports[name].client}`;
  const monitorOf = (name: NodeName) => `http://127.0.0.1:${ports[name].http}`;
  // Every node's child owns the root directory: whichever stop() or exit hook runs removes it all.
  const nodes = new Map<NodeName, Owned>();
  const spawnNode = (name: NodeName) => {
    const owned = own(natsServerBinary(), ['--config', configs[name]], root);
    nodes.set(name, owned);
    return owned;
  };
  const isRunning = (name: NodeName) => {
    const child = nodes.get(name)?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  };

  const waitAnswers = async (name: NodeName) => {
    const owned = nodes.get(name)!;
    let gone = false;
    owned.exited.then(() => {
      gone = true;
    });
    const deadline = Date.now() + readyTimeoutMs;
    while (!(await canConnect(ports[name].client))) {
      if (gone) throw new Error(`nats-server ${name} exited before it answered:\n${owned.output()}`);
      if (Date.now() > deadline)
        throw new Error(`nats-server ${name} did not answer within ${readyTimeoutMs} ms:\n${owned.output()}`);
      await sleep(50);
    }
    // Another process may hold the cluster or monitoring port; then ours exits right away.
    await sleep(50);
    if (gone) throw new Error(`nats-server ${name} exited right after start:\n${owned.output()}`);
  };

  const kill = async (name: NodeName) => {
    const owned = nodes.get(name);
    if (!owned || !isRunning(name)) return;
    process.kill(owned.child.pid!, 'SIGKILL');
    // The child is unref'd: without a timer of ours, Node would exit before it is reaped.
    const keepAlive = setInterval(() => {}, 1000);
    try {
      await owned.exited;
    } finally {
      clearInterval(keepAlive);
    }
  };
  // All gone before the shared directory goes: a node still writing would race the removal.
  const stop = async () => {
    await Promise.all(nodeNames.map(kill));
    await Promise.all([...nodes.values()].map((owned) => owned.stop()));
    rmSync(root, { recursive: true, force: true });
  };

  try {
    for (const name of nodeNames) spawnNode(name);
    await Promise.all(nodeNames.map(waitAnswers));
    // The meta leader answers $JS.API.INFO; before it is elected the request fails or times out.
    await poll('JetStream meta leader not elected', readyTimeoutMs, () =>
      withManager(urls, async (jsm) => {
        await jsm.getAccountInfo();
        return true;
      }),
    );
    // An elected leader may not know every peer yet, and places no replicated stream until it does
    // ("no suitable peers for placement"): one is placed, then removed, before the cluster is ready.
    await poll('JetStream peers not all known', readyTimeoutMs, () =>
      withManager(urls, async (jsm) => {
        await jsm.streams.add({ name: 'cluster_ready', subjects: ['cluster.ready'], num_replicas: 3 });
        await jsm.streams.delete('cluster_ready');
        return true;
      }),
    );
  } catch (error) {
    await stop();
    throw error;
  }

  // One question to whichever running node answers; undefined while the stream has no leader.
  const leaderNow = (stream: string) =>
    withManager(
      urls.filter((_, i) => isRunning(nodeNames[i])),
      async (jsm) => (await jsm.streams.info(stream)).cluster?.leader as NodeName | undefined,
    );
  const waitForLeader = (stream: string, notName?: NodeName, timeoutMs = defaultLeaderTimeoutMs) =>
    poll(`stream ${stream} has no leader${notName ? ` other than ${notName}` : ''}`, timeoutMs, async () => {
      const leader = await leaderNow(stream);
      return leader !== undefined && leader !== notName ? leader : undefined;
    });

  return {
    urls,
    url: urls.join(','),
    urlOf,
    monitorOf,
    isRunning,
    kill,
    async restart(name) {
      if (isRunning(name)) throw new Error(`nats-server ${name} is still running; kill it first`);
      spawnNode(name);
      await waitAnswers(name);
    },
    waitHealthy: (name, timeoutMs = readyTimeoutMs) =>
      poll(`nats-server ${name} not healthy`, timeoutMs, () => healthz(monitorOf(name))).then(() => undefined),
    leaderOf: (stream, timeoutMs) => waitForLeader(stream, undefined, timeoutMs),
    // Stream-level, not /healthz: on 2.9.10 a restarted node's consumer replica can stay behind for long.
    waitCurrent: async (name, streams, timeoutMs = defaultLeaderTimeoutMs) => {
      for (const stream of streams) {
        await poll(`${name} current in ${stream}`, timeoutMs, () =>
          withManager(
            urls.filter((_, i) => isRunning(nodeNames[i])),
            async (jsm) => {
              const { cluster } = await jsm.streams.info(stream);
              const peer = cluster?.replicas?.find((replica) => replica.name === name);
              return cluster?.leader === name || (peer?.current && !peer.offline) ? true : undefined;
            },
          ),
        );
      }
    },
    waitForLeader,
    stop,
  };
}

/**
 * A whole test stack on a 3-node cluster: the cluster, the S3 store and a fixture site (with
 * `routes`), and the environment that points a service at them with 3 replicas; `name` names the
 * bucket and the data directory, `extra` adds settings (ack waits, retry schedules).
 */
export async function startClusterStack(
  name: string,
  extra: Record<string, string> = {},
  routes: Record<string, FixtureRoute> = {},
): Promise<{ nats: NatsCluster; stack: TestStack }> {
  const nats = await startNatsCluster();
  const [s3, site] = await Promise.all([startS3(), startFixtureSite(routes)]);
  const env = {
    NATS_URL: nats.url,
    JETSTREAM_REPLICAS: '3',
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: `shutterbus-${name}`,
    S3_REGION: 'us-east-1',
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), `shutterbus-${name}-`)),
    ...extra,
  };
  const stack: TestStack = {
    nats: { url: nats.url, port: 0, stop: () => nats.stop() },
    s3,
    site,
    env,
    stop: async () => void (await Promise.allSettled([site.close(), nats.stop(), s3.stop()])),
  };
  return { nats, stack };
}

/**
 * The service split over processes on `stack`: the ingress (with `ingressRoles`) on a free port,
 * then one process per role of `workers`, each rendering `concurrency` at once. Returns the
 * ingress's base URL and the processes, pushed into `processes` as they start (so that an after
 * hook can kill those that started when a later one fails).
 */
export async function spawnRoles(
  stack: TestStack,
  processes: ChildProcess[],
  ingressRoles: string,
  workers: string[],
  concurrency: number,
): Promise<string> {
  const port = String(await freePort());
  processes.push(await spawnService(stack, { ROLES: ingressRoles, PORT: port, LOG_LEVEL: 'warn' }));
  for (const role of workers) {
    processes.push(
      await spawnService(stack, {
        ROLES: role,
        PORT: String(await freePort()),
        RENDER_CONCURRENCY: String(concurrency),
        LOG_LEVEL: 'warn',
      }),
    );
  }
  return `http://127.0.0.1:${port}`;
}
