// The stack a benchmark measures: real NATS, the s3rver store and the service bundle as a child
// process, with a pro workspace, and the helpers to find its processes.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { ensureTopology } from '../src/jetstream/topology.ts';
import { createSealer } from '../src/secrets/key.ts';
import { WorkspaceStore, type Workspace } from '../src/workspaces/workspace.ts';
import { createWorkspace, spawnService, type TestStack } from '../test/helpers/service.ts';
import { freePort, startNats, startS3 } from '../test/helpers/stack.ts';
import { findProcess, isChromium, labelTree, listProcesses, processTree } from './measure.ts';
import { AD_PAGE_HOSTS, type BenchSite } from './site.ts';

/** A running bench stack. */
export interface BenchStack {
  base: string;
  workspace: Workspace;
  /** The stack's S3 store: the service's bucket, and a local bucket for the store=true row. */
  s3: { endpoint: string; accessKey: string; secretKey: string };
  service: ChildProcess;
  /** The service's NODE_COMPILE_CACHE: a cold start finds it on disk, not in memory. */
  compileCache: string;
  /** When the service was spawned (performance.now()). */
  spawnedAt: number;
  /** nats-server's HTTP monitoring port (/varz, /jsz). */
  natsMonitorPort: number;
  /** Every process of the stack: the service's tree (with Chromium), nats-server, s3rver. */
  pids(): number[];
  /** The stack's processes labelled for a CpuMeter: service, chromium <kind>, nats-server, s3rver. */
  labels(): Map<number, string>;
  /** The Chromium processes below the service now. */
  chromiumPids(): number[];
  /** Creates `count` more pro workspaces (the many-workspace rows), over one NATS connection. */
  createWorkspaces(count: number): Promise<Workspace[]>;
  /** Starts a second service process on the same NATS and store running only `ROLES=ingress`, as production deploys it. */
  startIngress(): Promise<{ base: string; process: ChildProcess; stop(): Promise<void> }>;
  /**
   * Stops the service, runs `beforeSpawn`, and starts another like it on the same NATS and store;
   * `spawnedAt` as above. The stack's own service stays stopped.
   */
  spawnAnother(
    beforeSpawn: () => Promise<void>,
  ): Promise<{ base: string; service: ChildProcess; spawnedAt: number; stop(): Promise<void> }>;
  /** Stops the service (SIGTERM, waits for its exit), then NATS and s3rver. */
  stop(): Promise<void>;
}

/** Sends SIGTERM to a service process and waits for its exit. */
async function stopService(service: ChildProcess): Promise<void> {
  if (service.exitCode !== null || service.signalCode !== null) return;
  const exited = new Promise((resolve) => service.once('exit', resolve));
  service.kill('SIGTERM');
  await exited;
}

/** Starts NATS, s3rver and the service (dist bundle) with `extraEnv`; resolves once the service logged its start. */
export async function startBenchStack(site: BenchSite, extraEnv: Record<string, string> = {}): Promise<BenchStack> {
  const [nats, s3] = await Promise.all([startNats({ monitor: true }), startS3()]);
  const stack: TestStack = {
    nats,
    s3,
    site: { url: site.light, hits: new Map(), received: [], close: site.close },
    env: {
      NATS_URL: nats.url,
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY: s3.accessKey,
      S3_SECRET_KEY: s3.secretKey,
      S3_BUCKET: 'shutterbus-bench',
      S3_REGION: 'us-east-1',
      ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'shutterbus-bench-')),
    },
    stop: async () => void (await Promise.allSettled([nats.stop(), s3.stop()])),
  };
  const workspace = await createWorkspace(stack, { plan: 'pro', quota: 1_000_000 });
  // V8's compiled code of the bundle, as `make run` sets it: the build primed it, starts add to it.
  const compileCache = path.join(import.meta.dirname, '..', 'dist', 'compile-cache');
  // The ad-heavy page's host names resolve to the bench site inside the service; any other name fails.
  const spawnBenchService = async () => {
    const port = await freePort();
    const spawnedAt = performance.now();
    const service = await spawnService(
      stack,
      {
        PORT: String(port),
        LOG_LEVEL: 'info',
        NODE_OPTIONS: [`--import ${path.join(import.meta.dirname, 'local-names.mjs')}`, extraEnv.NODE_OPTIONS ?? '']
          .join(' ')
          .trim(),
        BENCH_LOCAL_NAMES: [...AD_PAGE_HOSTS, new URL(site.ads).hostname].join(','),
        NODE_COMPILE_CACHE: compileCache,
        ...Object.fromEntries(Object.entries(extraEnv).filter(([name]) => name !== 'NODE_OPTIONS')),
      },
      'dist',
    );
    return { base: `http://127.0.0.1:${port}`, service, spawnedAt };
  };
  const { base, service, spawnedAt } = await spawnBenchService();
  // Found once: each look-up scans the whole of /proc, and the meters ask several times a second.
  const found: Record<string, number | null> = { 'nats-server': null, s3rver: null };
  const named = () => {
    found['nats-server'] ??= findProcess(['-p', String(nats.port)]);
    found.s3rver ??= findProcess(['--port', String(s3.port)]);
    return found;
  };
  return {
    base,
    workspace,
    compileCache,
    s3: { endpoint: s3.endpoint, accessKey: s3.accessKey, secretKey: s3.secretKey },
    service,
    spawnedAt,
    natsMonitorPort: nats.monitorPort!,
    pids: () =>
      [...processTree([service.pid!]), ...Object.values(named())].filter((pid): pid is number => pid !== null),
    labels: () => labelTree([service.pid!], named()),
    chromiumPids: () => {
      const processes = listProcesses();
      const tree = new Set(processTree([service.pid!], processes));
      return processes.filter((proc) => tree.has(proc.pid) && isChromium(proc)).map((proc) => proc.pid);
    },
    createWorkspaces: async (count) => {
      const nc = await connect({ servers: nats.url.split(',') });
      try {
        const config = loadConfig(stack.env);
        const topology = await ensureTopology(nc, config);
        const store = new WorkspaceStore(topology.workspaces, topology.accessKeys, createSealer(config));
        const created: Workspace[] = [];
        for (let i = 0; i < count; i++) {
          const { workspace_id } = await store.create({ plan: 'pro', quota: 1_000_000, owner: 'owner@example.com' });
          created.push(
            await store.update(workspace_id, (current) => ({
              ...current,
              members: [{ email: 'owner@example.com', role: 'owner' as const, verified: true }],
            })),
          );
        }
        return created;
      } finally {
        await nc.close();
      }
    },
    startIngress: async () => {
      const ingressPort = await freePort();
      const ingress = await spawnService(
        stack,
        { PORT: String(ingressPort), LOG_LEVEL: 'info', ROLES: 'ingress' },
        'dist',
      );
      return { base: `http://127.0.0.1:${ingressPort}`, process: ingress, stop: () => stopService(ingress) };
    },
    spawnAnother: async (beforeSpawn) => {
      await stopService(service);
      await beforeSpawn();
      const another = await spawnBenchService();
      return { ...another, stop: () => stopService(another.service) };
    },
    stop: async () => {
      await stopService(service);
      await stack.stop();
    },
  };
}
