// The production image in tests and the bench: containers of localhost/shutterbus:local started with
// podman as an operator runs them (read-only root filesystem, a tmpfs at /tmp, the seccomp profile,
// no capabilities, not root), on the host's network so they reach the NATS, store and sites a test
// starts on loopback. `make image` (infra/image.sh) builds the image and writes podman's settings.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { listProcesses, processTree } from './processes.ts';
import { waitFor } from './wait.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

export const IMAGE = process.env.IMAGE || 'localhost/shutterbus:local';
export const SECCOMP_PROFILE = path.join(root, 'infra/production/chromium-seccomp.json');
/** How long a container is given between SIGTERM and SIGKILL (compose's stop_grace_period says the same). */
export const GRACE_SECONDS = 30;

let conf: string | undefined;
/** podman's environment: the containers.conf `make image` writes (runc, this machine's ulimits). */
export function podmanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  conf ??= execFileSync(path.join(root, 'infra/image.sh'), ['conf'], { encoding: 'utf8' }).trim();
  return { ...process.env, CONTAINERS_CONF: conf, ...extra };
}

/** Runs podman and returns what it printed; throws with its error output when it fails. */
export async function podman(args: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await run('podman', args, { env: podmanEnv(env), maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`podman ${args.slice(0, 2).join(' ')}: ${(stderr || stdout || String(error)).trim()}`);
  }
}

/** True when the image has been built (by `make image`, or the runner's set-up before test/image). */
export async function imageExists(image = IMAGE): Promise<boolean> {
  return podman(['image', 'exists', image]).then(
    () => true,
    () => false,
  );
}

/** A running container of the image. */
export interface Container {
  name: string;
  /** Its first process (tini) as the host sees it. */
  pid: number;
  /** Its first process and every process below it, as the host sees them. */
  processes(): number[];
  logs(): Promise<string>;
  /** Resolves with the exit code once it has stopped. */
  exited(): Promise<number>;
  /** Removes it, stopping it first (SIGKILL) if it still runs. */
  remove(): Promise<void>;
}

/**
 * Starts a container of the image with `env` (passed by name from podman's environment, so that no
 * secret is on a command line), hardened as in production.
 */
export async function startContainer(name: string, env: Record<string, string>, image = IMAGE): Promise<Container> {
  await podman(['rm', '--force', '--ignore', name]);
  const names = Object.keys(env).flatMap((key) => ['--env', key]);
  await podman(
    [
      'run',
      '--detach',
      '--name',
      name,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp:rw,nosuid,nodev,mode=1777,size=512m',
      '--security-opt',
      `seccomp=${SECCOMP_PROFILE}`,
      '--cap-drop',
      'ALL',
      '--shm-size',
      '1g',
      '--stop-timeout',
      String(GRACE_SECONDS),
      ...names,
      image,
    ],
    env,
  );
  const pid = Number(await podman(['inspect', '--format', '{{.State.Pid}}', name]));
  return {
    name,
    pid,
    processes: () => processTree([pid], listProcesses()),
    logs: async () => {
      const { stdout, stderr } = await run('podman', ['logs', name], {
        env: podmanEnv(),
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error) => error as { stdout: string; stderr: string });
      return `${stdout ?? ''}${stderr ?? ''}`;
    },
    exited: async () => Number(await podman(['wait', name])),
    remove: async () => {
      await podman(['rm', '--force', '--ignore', name]);
    },
  };
}

/** Waits until `url` answers 200 (a container's /readyz); throws with the container's log if it stops first. */
export async function waitUntilReady(container: Container, url: string, timeoutMs = 90_000): Promise<void> {
  let last = 'no answer';
  await waitFor(
    async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', container.name]).catch(() => 'gone');
      if (state !== 'running')
        throw new Error(`${container.name} is ${state}:\n${(await container.logs()).slice(-4000)}`);
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
        last = `${response.status} ${(await response.text()).slice(0, 300)}`;
        return response.ok;
      } catch (error) {
        last = String(error);
        return false;
      }
    },
    () => `${url} (last: ${last})`,
    timeoutMs,
    250,
  );
}

/** What /proc says of one process: its ids, its seccomp mode and its command line. */
export interface ProcessFacts {
  pid: number;
  /** Real, effective, saved and file-system user ids. */
  uids: number[];
  gids: number[];
  groups: number[];
  /** 0 none, 1 strict, 2 filter. */
  seccomp: number;
  noNewPrivs: boolean;
  argv: string[];
}

/** The facts of `pid`, or null when it ended meanwhile. */
export function processFacts(pid: number): ProcessFacts | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => (new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '').trim();
    const numbers = (name: string) => field(name).split(/\s+/).filter(Boolean).map(Number);
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return {
      pid,
      uids: numbers('Uid'),
      gids: numbers('Gid'),
      groups: numbers('Groups'),
      seccomp: Number(field('Seccomp')),
      noNewPrivs: field('NoNewPrivs') === '1',
      argv: argv.length === 1 ? argv[0].split(' ') : argv,
    };
  } catch {
    return null;
  }
}
