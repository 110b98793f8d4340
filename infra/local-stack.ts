// The local NATS server (with JetStream) and S3-compatible store (infra/s3rver.js): how each is
// started and how it is known to answer, for `make run` (infra/local.sh) and, through
// test/helpers/stack.ts, for the tests and the bench.
//
//   node --import tsx infra/local-stack.ts up       start (or reuse) both, detached, with pid files
//   node --import tsx infra/local-stack.ts down     stop them (TERM, then KILL after 5 s)
//   node --import tsx infra/local-stack.ts status   say which one runs
//
// Settings (environment): DATA_DIR (.data), LOCAL_NATS_PORT (4222), LOCAL_S3_PORT (9000),
// READY_TIMEOUT (seconds, 30); NATS_URL and S3_ENDPOINT, when set, mean nothing local is started.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../src/config.ts';

/** The nats-server binary: Debian's, or whichever is on PATH. */
export function natsServerBinary(): string {
  // Debian puts it in /usr/sbin, which is not on every user's PATH.
  for (const candidate of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) {
    if (existsSync(candidate)) return candidate;
  }
  return 'nats-server';
}

const s3rverScript = fileURLToPath(new URL('./s3rver.js', import.meta.url));

/** A local server: the command that starts it on a port and directory, and how it is known to answer. */
export interface LocalServer {
  name: 'nats' | 's3';
  command(port: number, dir: string, extraArgs?: string[]): [string, string[]];
  answers(port: number): Promise<boolean>;
}

export const natsServer: LocalServer = {
  name: 'nats',
  command: (port, dir, extraArgs = []) => [
    natsServerBinary(),
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, ...extraArgs],
  ],
  answers: (port) => canConnect(port),
};

export const s3Server: LocalServer = {
  name: 's3',
  command: (port, dir, extraArgs = []) => [
    process.execPath,
    [s3rverScript, '--address', '127.0.0.1', '--port', String(port), '--directory', dir, ...extraArgs],
  ],
  answers: (port) => answersHttp(port),
};

/** Whether 127.0.0.1:port accepts a TCP connection within a second. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Whether an HTTP server answers on 127.0.0.1:port within a second. */
export function answersHttp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/', timeout: 1000, agent: false }, (response) => {
      response.resume();
      resolve(true);
    });
    request.once('error', () => resolve(false));
    request.once('timeout', () => {
      request.destroy();
      resolve(false);
    });
  });
}

// --- make run: detached servers kept in DATA_DIR ------------------------------------------

const say = (text: string) => console.log(`local: ${text}`);

class LocalError extends Error {}

interface Settings {
  dataDir: string;
  readyMs: number;
  servers: { server: LocalServer; port: number; skipBecause?: string }[];
}

function settings(env = process.env): Settings {
  const dataDir = path.resolve(env.DATA_DIR || '.data');
  return {
    dataDir,
    readyMs: Number(env.READY_TIMEOUT || 30) * 1000,
    servers: [
      {
        server: natsServer,
        port: Number(env.LOCAL_NATS_PORT || 4222),
        skipBecause: env.NATS_URL ? `NATS_URL is set (${env.NATS_URL}): not starting a local NATS` : undefined,
      },
      {
        server: s3Server,
        port: Number(env.LOCAL_S3_PORT || 9000),
        skipBecause: env.S3_ENDPOINT
          ? `S3_ENDPOINT is set (${env.S3_ENDPOINT}): not starting a local S3 store`
          : undefined,
      },
    ],
  };
}

const pidFile = (dataDir: string, server: LocalServer) => path.join(dataDir, `${server.name}.pid`);

/** The pid in the server's pid file while that process lives and still runs the server's command. */
function livePid(dataDir: string, server: LocalServer): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile(dataDir, server), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return null;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const [binary, args] = server.command(0, '');
    const mark = server.name === 'nats' ? path.basename(binary) : path.basename(args[0]);
    return argv.some((arg) => arg.endsWith(mark)) ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function logTail(log: string): string {
  try {
    return readFileSync(log, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

async function waitReady(server: LocalServer, port: number, pid: number, log: string, readyMs: number) {
  const deadline = Date.now() + readyMs;
  while (!(await server.answers(port))) {
    if (!alive(pid))
      throw new LocalError(`${server.name} exited before answering on 127.0.0.1:${port}:\n${logTail(log)}`);
    if (Date.now() > deadline) {
      throw new LocalError(
        `${server.name} did not answer on 127.0.0.1:${port} within ${readyMs / 1000}s:\n${logTail(log)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function up(s: Settings): Promise<void> {
  for (const { server, port, skipBecause } of s.servers) {
    if (skipBecause) {
      say(skipBecause);
      continue;
    }
    const dir = path.join(s.dataDir, server.name);
    const log = path.join(s.dataDir, 'logs', `${server.name}.log`);
    mkdirSync(dir, { recursive: true });
    mkdirSync(path.dirname(log), { recursive: true });
    const running = livePid(s.dataDir, server);
    if (running !== null) {
      await waitReady(server, port, running, log, s.readyMs);
      say(`${server.name} already running (pid ${running}) on 127.0.0.1:${port}, reusing it`);
      continue;
    }
    rmSync(pidFile(s.dataDir, server), { force: true });
    if (await canConnect(port)) {
      const variable = server.name === 'nats' ? 'LOCAL_NATS_PORT or NATS_URL' : 'LOCAL_S3_PORT or S3_ENDPOINT';
      throw new LocalError(
        `127.0.0.1:${port} is taken by a process this DATA_DIR (${s.dataDir}) did not start; stop it, or set ${variable}`,
      );
    }
    appendFileSync(log, `\n--- ${server.name} started ${new Date().toISOString()}\n`);
    const output = openSync(log, 'a');
    const [binary, args] = server.command(port, dir);
    // Its own session: a Ctrl-C in the terminal running the service does not take it down too.
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', output, output] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid!));
      child.once('error', (error) => reject(new LocalError(`cannot start ${binary}: ${error.message}`)));
    });
    child.unref();
    writeFileSync(pidFile(s.dataDir, server), `${pid}\n`);
    await waitReady(server, port, pid, log, s.readyMs);
    say(`${server.name} started (pid ${pid}) on 127.0.0.1:${port}, log ${log}`);
  }
}

async function down(s: Settings): Promise<void> {
  for (const { server } of [...s.servers].reverse()) {
    const pid = livePid(s.dataDir, server);
    if (pid !== null) {
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 5000;
      while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      if (alive(pid)) {
        say(`${server.name} (pid ${pid}) did not stop on TERM, killing it`);
        process.kill(pid, 'SIGKILL');
      }
      say(`${server.name} stopped (pid ${pid})`);
    }
    rmSync(pidFile(s.dataDir, server), { force: true });
  }
}

function status(s: Settings): void {
  for (const { server } of s.servers) {
    const pid = livePid(s.dataDir, server);
    say(pid === null ? `${server.name} not running` : `${server.name} running (pid ${pid})`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  if (command === 'up') {
    // The service's own check of its settings, before anything is started for it: a bad
    // LOCAL_NATS_PORT (or any other value) stops `make run` with the one line naming it.
    try {
      loadConfig();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      console.error(`shutterbus: configuration: ${error.message}`);
      process.exit(1);
    }
  }
  const s = settings();
  const run = command === 'up' ? up(s) : command === 'down' ? down(s) : command === 'status' ? status(s) : null;
  if (run === null) {
    console.error('usage: node --import tsx infra/local-stack.ts up|down|status');
    process.exit(2);
  }
  Promise.resolve(run).catch((error: unknown) => {
    console.error(`local: error: ${error instanceof LocalError ? error.message : String(error)}`);
    process.exit(1);
  });
}
