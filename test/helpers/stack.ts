// Real servers for integration tests: NATS with JetStream and the s3rver store, each a child
// process on a free loopback port with its own temp directory, stopped by pid. How each is started
// and known to answer is infra/local-stack.ts's, the launcher `make run` uses too.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { natsServer, s3Server } from '../../infra/local-stack.ts';

export { canConnect, natsServerBinary } from '../../infra/local-stack.ts';

/** A server a test can SIGKILL and start again on the same port and directory (a crash and a recovery). */
export interface Restartable {
  kill(): Promise<void>;
  restart(): Promise<void>;
}

/** A running NATS server with JetStream. */
export interface NatsServer extends Partial<Restartable> {
  url: string;
  port: number;
  /** JetStream's store directory (what a grep for secrets at rest reads). */
  dir?: string;
  /** The HTTP monitoring port (/varz, /jsz), when it was asked for. */
  monitorPort?: number;
  stop(): Promise<void>;
}

/** A running S3-compatible store; the keys are s3rver's fixed pair unless others were asked for. */
export interface S3Server extends Restartable {
  endpoint: string;
  port: number;
  accessKey: string;
  secretKey: string;
  /** The directory the store keeps its buckets in. */
  directory: string;
  stop(): Promise<void>;
}

/** A store playing a customer's: its own key pair (the service's S3RVER pair is refused) and a bucket. */
export interface OwnStoreOptions {
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** Host names s3.NAME are the store itself (path-style), not a bucket: for endpoints named in tests. */
  serviceEndpoint?: string;
}

const readyTimeoutMs = 20_000;
const stopTimeoutMs = 5_000;

/** Children still running, with the temp directory each owns: the exit hook's safety net. */
const running = new Map<ChildProcess, string>();
let hooksInstalled = false;

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const [child, dir] of running) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
  // Node's default for these signals skips 'exit'; kill the children, then let the signal act.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      for (const child of running.keys()) child.kill('SIGKILL');
      process.removeListener(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

// The first port of the kernel's ephemeral range: an outgoing connection may take any port from it
// as its source port, also one a test just found free and has not yet listened on.
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();
const LOWEST_PORT = 10_000;

/**
 * A port free on 127.0.0.1 now, below the ephemeral range: between this check and a server's listen
 * no outgoing connection can take it (one did, mid-bench, with thousands of connections open and
 * closed meanwhile). Random, so that test files running side by side rarely try the same one.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (EPHEMERAL_LOW - LOWEST_PORT));
    if (await listens(port)) return port;
  }
  const port = await listens(0);
  if (port === 0) throw new Error('no free port on 127.0.0.1');
  return port;
}

// Listens on `port` of 127.0.0.1 and closes at once: the port it got, or 0 when it was taken.
function listens(port: number): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(0));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/** A child process we own: its output tail for error messages, and a way to stop it. */
export interface Owned {
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** Spawns a child the exit hooks kill; stop() ends it (SIGTERM, then SIGKILL) and removes `dir`. */
export function own(command: string, args: string[], dir: string): Owned {
  installExitHooks();
  // Same process group as the test: the runner's group kill reaches these too.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.set(child, dir);
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    // A binary that cannot start emits 'error' and may never emit 'close'.
    child.once('error', (error) => {
      keep(Buffer.from(`cannot start ${command}: ${error.message}\n`));
      resolve();
    });
  });
  exited.then(() => running.delete(child));
  // A test that forgets stop() must still be able to exit; the exit hook then kills the child.
  child.unref();
  (child.stdout as net.Socket).unref();
  (child.stderr as net.Socket).unref();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  return { child, output: () => tail, exited, stop };
}

async function waitUntil(owned: Owned, name: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let gone = false;
  owned.exited.then(() => {
    gone = true;
  });
  while (!(await ready())) {
    if (gone) throw new Error(`${name} exited before it answered:\n${owned.output()}`);
    if (Date.now() > deadline) {
      await owned.stop();
      throw new Error(`${name} did not answer within ${readyTimeoutMs} ms:\n${owned.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Something else may have taken the port between freePort() and the bind; then ours exits.
  await new Promise((resolve) => setTimeout(resolve, 50));
  if (gone) throw new Error(`${name} exited right after start:\n${owned.output()}`);
}

/** Starts a server on a free port, trying again on another port if one was taken meanwhile. */
async function startOnFreePort(
  name: string,
  prefix: string,
  command: (port: number, dir: string) => [string, string[]],
  ready: (port: number, output: () => string) => Promise<boolean>,
): Promise<{ port: number; dir: string; owned: Owned } & Restartable> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    const [binary, args] = command(port, dir);
    const owned = own(binary, args, dir);
    try {
      await waitUntil(owned, name, () => ready(port, owned.output));
      let current = owned;
      return {
        port,
        dir,
        // Stops whichever process runs now (and removes the directory).
        owned: { ...owned, stop: () => current.stop() },
        kill: async () => {
          current.child.kill('SIGKILL');
          await current.exited;
        },
        restart: async () => {
          current = own(binary, args, dir);
          await waitUntil(current, name, () => ready(port, current.output));
        },
      };
    } catch (error) {
      lastError = error;
      await owned.stop();
    }
  }
  throw lastError;
}

/**
 * Starts nats-server with JetStream on a free 127.0.0.1 port and a fresh store directory;
 * `monitor`: with its HTTP monitoring port too (/varz, /jsz: what KEDA and the bench read).
 */
export async function startNats(options: { monitor?: boolean } = {}): Promise<NatsServer> {
  const monitorPort = options.monitor ? await freePort() : undefined;
  const extra = monitorPort === undefined ? [] : ['-m', String(monitorPort)];
  const { port, dir, owned, kill, restart } = await startOnFreePort(
    'nats-server',
    'shutterbus-nats-',
    (port, dir) => natsServer.command(port, dir, extra),
    natsServer.answers,
  );
  return { url: `nats://127.0.0.1:${port}`, port, dir, monitorPort, stop: owned.stop, kill, restart };
}

/** Starts the s3rver store (infra/s3rver.js) on a free 127.0.0.1 port and a fresh directory. */
export async function startS3(own?: OwnStoreOptions): Promise<S3Server> {
  const keys = own
    ? ['--access-key-id', own.accessKey, '--secret-access-key', own.secretKey, '--bucket', own.bucket]
    : [];
  if (own?.serviceEndpoint) keys.push('--service-endpoint', own.serviceEndpoint);
  const { port, dir, owned, kill, restart } = await startOnFreePort(
    's3rver',
    'shutterbus-s3-',
    (port, dir) => s3Server.command(port, dir, keys),
    // Its own line after the bind: another lane's server that took the port meanwhile answers HTTP
    // too, long before this Node process has loaded far enough to fail its bind and exit.
    async (port, output) => output().includes(`s3rver listening on http://127.0.0.1:${port}`) && s3Server.answers(port),
  );
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    accessKey: own?.accessKey ?? 'S3RVER',
    secretKey: own?.secretKey ?? 'S3RVER',
    directory: dir,
    stop: owned.stop,
    kill,
    restart,
  };
}
