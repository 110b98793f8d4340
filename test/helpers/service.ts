// A whole Shutterbus for integration tests: real NATS, the real S3 store, real Chromium, a fixture site.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { loadConfig, type Config } from '../../src/config.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { monthOf, QuotaLedger } from '../../src/workspaces/usage.ts';
import { WorkspaceStore, type Workspace } from '../../src/workspaces/workspace.ts';
import { createLogger } from '../../src/log.ts';
import { startShutterbus, type Shutterbus } from '../../src/main.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { freePort, startNats, startS3, type NatsServer, type S3Server } from './stack.ts';
import { createSealer } from '../../src/secrets/key.ts';

/** The shared servers one test file runs against. */
export interface TestStack {
  nats: NatsServer;
  s3: S3Server;
  site: FixtureSite;
  /** Environment that points a service at this stack. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts NATS (`natsMonitor`: with its monitoring port), the S3 store and the fixture site. */
export async function startStack(options: { natsMonitor?: boolean } = {}): Promise<TestStack> {
  const [nats, s3, site] = await Promise.all([
    startNats({ monitor: options.natsMonitor }),
    startS3(),
    startFixtureSite(),
  ]);
  const env = {
    NATS_URL: nats.url,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: 'shutterbus-test',
    S3_REGION: 'us-east-1',
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'shutterbus-test-')),
    // One key for every process of the stack (service, CLI, spawned roles): each opens what another sealed.
    SECRETS_KEY: randomBytes(32).toString('base64url'),
  };
  return {
    nats,
    s3,
    site,
    env,
    async stop() {
      await Promise.allSettled([site.close(), nats.stop(), s3.stop()]);
    },
  };
}

/** A service started in this process, with its base URL. */
export interface TestService extends Shutterbus {
  base: string;
}

/**
 * Starts Shutterbus in this process against `stack`, with extra environment on top. A free port
 * can be taken by another process between freePort closing it and the service listening on it (a
 * connection's ephemeral port, another test file): the start, which closes what it opened when it
 * fails, is then tried again on another port.
 */
export async function startService(stack: TestStack, extra: Record<string, string> = {}): Promise<TestService> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config: Config = loadConfig({ ...stack.env, PORT: String(port), ...extra });
    try {
      const service = await startShutterbus(config, createLogger(config));
      return { ...service, base: config.baseUrl };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3 || extra.PORT !== undefined) throw err;
    }
  }
}

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The sources through tsx, or the bundle `make build` writes (what `make run` and the image start). */
export type ServiceEntry = 'src' | 'dist';
const entryArgs: Record<ServiceEntry, string[]> = {
  src: ['--import', 'tsx', path.join(root, 'src/main.ts')],
  dist: [path.join(root, 'dist/main.js')],
};

/** Starts Shutterbus as a child process (so a test can SIGKILL it); resolves once it logs that it started. */
export async function spawnService(
  stack: TestStack,
  extra: Record<string, string> = {},
  entry: ServiceEntry = 'src',
): Promise<ChildProcess> {
  // A port of its own unless told one: every role answers health checks on PORT, and two files
  // running side by side must not both take the default.
  const port = String(await freePort());
  const child = spawn(process.execPath, entryArgs[entry], {
    // glibc's trim threshold as `make run` and the image set it (docs/performance.md).
    env: { MALLOC_TRIM_THRESHOLD_: '131072', ...process.env, ...stack.env, LOG_LEVEL: 'info', PORT: port, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.on('exit', () => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (/shutterbus started/i.test(output)) {
        clearTimeout(timer);
        // From here on the output is only drained: keeping it would cost the caller memory and time.
        child.stdout!.off('data', watch);
        child.stderr!.off('data', watch);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve();
      }
    };
    child.stdout!.on('data', watch);
    child.stderr!.on('data', watch);
    child.once('exit', (code) => reject(new Error(`service exited with ${code}:\n${output}`)));
  });
  return child;
}

/** Decoded essentials of a /api/take answer. */
export interface TakeAnswer {
  status: number;
  contentType: string;
  headers: Headers;
  bytes: Buffer;
  json?: Record<string, any>;
}

/** The longest a test waits for one answer: beyond the longest synchronous render (90 s). */
const answerTimeoutMs = 120_000;

/** Calls the service and reads the whole answer; one that never comes fails naming the address. */
export async function call(url: string, init?: RequestInit): Promise<TakeAnswer> {
  const signal = init?.signal ?? AbortSignal.timeout(answerTimeoutMs);
  let response: Response;
  let bytes: Buffer;
  try {
    response = await fetch(url, { redirect: 'manual', ...init, signal });
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error;
    throw new Error(`${init?.method ?? 'GET'} ${url}: no whole answer within ${answerTimeoutMs / 1000} s`);
  }
  const contentType = response.headers.get('content-type') ?? '';
  const json = contentType.includes('application/json') ? JSON.parse(bytes.toString('utf8')) : undefined;
  return { status: response.status, contentType, headers: response.headers, bytes, json };
}

/** Options of a test workspace: by default a verified pro workspace with room to spare. */
export interface TestWorkspaceOptions {
  plan?: 'free' | 'pro';
  quota?: number;
  verified?: boolean;
  members?: { email: string; role: 'owner' | 'admin' | 'member'; verified?: boolean }[];
}

/** Creates a workspace straight in the stack's KV, as the CLI would. */
export async function createWorkspace(stack: TestStack, options: TestWorkspaceOptions = {}): Promise<Workspace> {
  const nc = await connect({ servers: stack.nats.url.split(',') });
  try {
    const topology = await ensureTopology(nc, loadConfig(stack.env));
    const store = new WorkspaceStore(topology.workspaces, topology.accessKeys, createSealer(loadConfig(stack.env)));
    const created = await store.create({
      plan: options.plan ?? 'pro',
      quota: options.quota,
      owner: 'owner@example.com',
    });
    return await store.update(created.workspace_id, (current) => ({
      ...current,
      members: [
        { email: 'owner@example.com', role: 'owner' as const, verified: options.verified ?? true },
        ...(options.members ?? []).map((m) => ({ ...m, verified: m.verified ?? false })),
      ],
    }));
  } finally {
    await nc.close();
  }
}

/** Screenshots a workspace has used this UTC month, read straight from KV. */
export async function usedThisMonth(stack: TestStack, workspaceId: string): Promise<number> {
  const nc = await connect({ servers: stack.nats.url.split(',') });
  try {
    const topology = await ensureTopology(nc, loadConfig(stack.env));
    return await new QuotaLedger(topology.usage).used(workspaceId, monthOf(new Date()));
  } finally {
    await nc.close();
  }
}
