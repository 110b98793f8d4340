// How Chromium is started: in its own sandbox (renderers in seccomp-bpf and namespaces of their
// own), never as root. When this process is root (a development machine, CI), Chromium is started
// through a small wrapper that hands its profile to an unprivileged user and drops to that user
// before Chromium runs; Playwright's pipes survive the exec. In the image the service is not root:
// there the wrapper becomes the browser's user through the image's switch, a set-user-ID copy of
// setpriv owned by that user (BROWSER_USER_SWITCH), and the service signals the browser through it
// too. See docs/browser.md.

import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The start cannot have the browser's sandbox: the message is the one line the operator reads. */
export class SandboxError extends Error {}

/** How the browser is to be sandboxed. */
export interface SandboxSettings {
  /** No sandbox at all (CHROMIUM_NO_SANDBOX=true): every renderer shares the browser's privileges. */
  noSandbox: boolean;
  /** The unprivileged user Chromium runs as when this process is root. */
  user: string;
}

/** The user Chromium runs as when the service runs as root, unless CHROMIUM_USER names another. */
export const DEFAULT_BROWSER_USER = 'shutterbus-chromium';

/** How to launch: the executable Playwright starts (Chromium, or the wrapper that drops to the user) and whether Chromium keeps its sandbox. */
export interface LaunchPlan {
  executablePath: string;
  chromiumSandbox: boolean;
  /** The user Chromium runs as, when this process drops to one. */
  user?: string;
  /** The switch to the browser's user, when this process is not root (the image): signals go through it. */
  userSwitch?: { path: string; uid: number; gid: number };
}

const SETPRIV = '/usr/bin/setpriv';
/**
 * Where the image installs the switch to the browser's user (infra/production/Dockerfile): setpriv,
 * set-user-ID and set-group-ID to that user (never root), in a directory only the service's group enters.
 */
export const BROWSER_USER_SWITCH = '/usr/libexec/shutterbus/browser-user';
const SET_IDS = 0o6000; // set-user-ID and set-group-ID
const NO_SANDBOX_HINT = 'set CHROMIUM_NO_SANDBOX=true to run without it (not for untrusted pages)';

/**
 * Checks that the sandbox can be had here and returns how to launch `chromiumPath`; throws
 * SandboxError naming what is missing. Chromium's own launch is the last check (see sandboxFailure).
 */
export function planLaunch(
  chromiumPath: string,
  settings: SandboxSettings,
  switchPath: string = BROWSER_USER_SWITCH,
): LaunchPlan {
  const chromiumSandbox = !settings.noSandbox;
  if (chromiumSandbox) checkUserNamespaces();
  // Without its sandbox too, Chromium never runs as root.
  if (process.getuid?.() !== 0) {
    const userSwitch = userSwitchAt(switchPath);
    if (!userSwitch) return { executablePath: chromiumPath, chromiumSandbox };
    return {
      executablePath: switchWrapperFor(chromiumPath, userSwitch),
      chromiumSandbox,
      user: String(userSwitch.uid),
      userSwitch,
    };
  }
  const { uid, gid } = lookUpUser(settings.user);
  try {
    accessSync(SETPRIV, constants.X_OK);
  } catch {
    throw new SandboxError(
      `browser sandbox: ${SETPRIV} is missing (Debian package util-linux); it drops the browser to user ${settings.user}`,
    );
  }
  return { executablePath: wrapperFor(chromiumPath, uid, gid), chromiumSandbox, user: settings.user };
}

/**
 * Sends SIGKILL to `target` (a pid, or a process group as a negative pid) of the browser's. A
 * browser of another user is signalled as that user, through the switch. False when it was gone.
 */
export function killBrowserProcess(plan: LaunchPlan | null, target: number): boolean {
  const userSwitch = plan?.userSwitch;
  if (!userSwitch) {
    try {
      process.kill(target, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  }
  const { status } = spawnSync(
    userSwitch.path,
    [...switchArgs(userSwitch), '/bin/sh', '-c', 'exec kill -s KILL -- "$1" 2>/dev/null', 'kill', String(target)],
    { stdio: 'ignore', timeout: 5000 },
  );
  return status === 0;
}

// The switch when this (non-root) process may use it: set-user-ID to another user, never to root.
function userSwitchAt(switchPath: string): LaunchPlan['userSwitch'] | null {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(switchPath);
    accessSync(switchPath, constants.X_OK);
  } catch {
    return null; // Not the image, or not the service's user: the browser runs as this user.
  }
  if ((stat.mode & SET_IDS) !== SET_IDS)
    throw new SandboxError(`browser sandbox: ${switchPath} must be set-user-ID and set-group-ID (chmod 6755)`);
  if (stat.uid === 0)
    throw new SandboxError(`browser sandbox: ${switchPath} is owned by root; it must be the browser's user`);
  if (stat.uid === process.getuid?.())
    throw new SandboxError(
      `browser sandbox: ${switchPath} belongs to this service's own user; it must be the browser's`,
    );
  // no_new_privs (Kubernetes' allowPrivilegeEscalation: false, Docker's no-new-privileges) makes the
  // kernel ignore the set-user-ID bit: the browser would run as this user after all.
  if (/^NoNewPrivs:\s*1$/m.test(readFileSync('/proc/self/status', 'utf8')))
    throw new SandboxError(
      `browser sandbox: no_new_privs is set on this process (allowPrivilegeEscalation: false or no-new-privileges), so ${switchPath} cannot start the browser as its own user; allow privilege escalation for render containers (docs/browser.md)`,
    );
  return { path: switchPath, uid: stat.uid, gid: stat.gid };
}

// setpriv's switches to the browser's user: real and effective ids both, groups as they are (setting
// them needs a privilege the service does not have), and no way to gain any later.
function switchArgs({ uid, gid }: { uid: number; gid: number }): string[] {
  return [`--reuid=${uid}`, `--regid=${gid}`, '--keep-groups', '--no-new-privs', '--'];
}

// One wrapper per Chromium and user for the whole process, removed when the process exits.
const wrappers = new Map<string, string>();
let wrapperDir: string | null = null;

function wrapperFor(chromiumPath: string, uid: number, gid: number): string {
  return writeWrapper(`${uid}:${gid}:${chromiumPath}`, `chromium-as-${uid}`, () =>
    wrapperScript(chromiumPath, uid, gid),
  );
}

function switchWrapperFor(chromiumPath: string, userSwitch: NonNullable<LaunchPlan['userSwitch']>): string {
  return writeWrapper(`switch:${userSwitch.path}:${chromiumPath}`, `chromium-as-${userSwitch.uid}`, () =>
    switchWrapperScript(chromiumPath, userSwitch),
  );
}

function writeWrapper(key: string, name: string, script: () => string): string {
  const known = wrappers.get(key);
  if (known) return known;
  if (wrapperDir === null) {
    const dir = mkdtempSync(path.join(tmpdir(), 'shutterbus-browser-'));
    wrapperDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const executablePath = path.join(wrapperDir, `${name}-${wrappers.size}`);
  writeFileSync(executablePath, script(), { mode: 0o700 });
  wrappers.set(key, executablePath);
  return executablePath;
}

/**
 * The one line to stop on when Chromium itself refused to start for want of its sandbox, or null
 * when `error` is about something else.
 */
export function sandboxFailure(error: unknown): SandboxError | null {
  const text = String(error instanceof Error ? error.message : error);
  if (
    !/No usable sandbox|namespace sandbox|setuid sandbox|Running as root without --no-sandbox|Failed to move to new namespace/i.test(
      text,
    )
  )
    return null;
  return new SandboxError(
    `browser sandbox: Chromium could not start its sandbox (user namespaces refused?); see docs/browser.md, or ${NO_SANDBOX_HINT}`,
  );
}

// Debian's Chromium has no setuid helper: its sandbox needs unprivileged user namespaces.
function checkUserNamespaces(): void {
  const refusals: Array<[string, (value: string) => boolean]> = [
    ['/proc/sys/user/max_user_namespaces', (value) => value === '0'],
    ['/proc/sys/kernel/unprivileged_userns_clone', (value) => value === '0'],
    ['/proc/sys/kernel/apparmor_restrict_unprivileged_userns', (value) => value === '1'],
  ];
  for (const [file, refuses] of refusals) {
    let value: string;
    try {
      value = readFileSync(file, 'utf8').trim();
    } catch {
      continue; // This kernel has no such switch.
    }
    if (refuses(value)) {
      const setting = file.slice('/proc/sys/'.length).replaceAll('/', '.');
      throw new SandboxError(
        `browser sandbox: unprivileged user namespaces are off (${setting} = ${value}); allow them (docs/browser.md) or ${NO_SANDBOX_HINT}`,
      );
    }
  }
}

function lookUpUser(user: string): { uid: number; gid: number } {
  let uid: number;
  let gid: number;
  try {
    // One lookup through the system's user database (name:password:uid:gid:…), names or numbers alike.
    const entry = execFileSync('getent', ['passwd', '--', user], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    [uid, gid] = entry.split(':').slice(2, 4).map(Number);
    if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`no ids in "${entry.trim()}"`);
  } catch {
    throw new SandboxError(
      `browser sandbox: the service runs as root and the browser's user "${user}" does not exist; create it (infra/local.sh deps does: useradd --system ${user}) or name another in CHROMIUM_USER`,
    );
  }
  if (uid === 0) throw new SandboxError(`browser sandbox: CHROMIUM_USER "${user}" is root; name an unprivileged user`);
  return { uid, gid };
}

// Run as root by Playwright with Chromium's switches: gives Playwright's fresh profile directory
// to the user (Chromium writes nothing elsewhere; HOME points into it), then becomes that user,
// with no way back to privileges (no_new_privs), and execs Chromium on the same pipes.
function wrapperScript(chromiumPath: string, uid: number, gid: number): string {
  return `#!/bin/sh
# Written by Shutterbus (src/render/browser/sandbox.ts): starts Chromium as uid ${uid}, never as root.
set -eu
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}" ;; esac
done
if [ -n "$profile" ]; then
  chown -R ${uid}:${gid} -- "$profile"
  export HOME="$profile"
fi
exec ${SETPRIV} --reuid=${uid} --regid=${gid} --clear-groups --no-new-privs -- ${shellQuote(chromiumPath)} "$@"
`;
}

// Run by Playwright as the service's (non-root) user: opens Playwright's fresh profile directory to
// the browser's user (the service cannot give it away; the directory is in the service's own /tmp,
// HOME points into it), then execs Chromium on the same pipes as that user through the switch.
function switchWrapperScript(chromiumPath: string, userSwitch: NonNullable<LaunchPlan['userSwitch']>): string {
  return `#!/bin/sh
# Written by Shutterbus (src/render/browser/sandbox.ts): starts Chromium as uid ${userSwitch.uid}, not as this service's user.
set -eu
profile=
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}" ;; esac
done
if [ -n "$profile" ]; then
  chmod 0777 -- "$profile"
  export HOME="$profile"
fi
exec ${shellQuote(userSwitch.path)} ${switchArgs(userSwitch).join(' ')} ${shellQuote(chromiumPath)} "$@"
`;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
