// The browser in its sandbox: /proc of a running render shows every renderer in seccomp-bpf and
// namespaces of its own, the browser under an unprivileged user with none of the service's
// credentials in its environment; a sandbox that cannot be had stops the start with one line.

import { readFileSync, readlinkSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BrowserHost } from '../../src/render/browser/browser.ts';
import { listProcesses, processTree } from '../helpers/processes.ts';
import { chromium } from '../../src/render/browser/playwright.ts';
import { sandboxFailure, SandboxError } from '../../src/render/browser/sandbox.ts';
import { CHROMIUM, startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('the browser in its sandbox');

const SECRET = 'sentinel-credential-4d1f';
let rig: RenderRig;

test.before(async () => {
  // A credential in the service's environment, as S3_SECRET_KEY would be.
  process.env.SHUTTERBUS_TEST_SECRET = SECRET;
  rig = await startRenderRig({ workspaceId: 'ws_sandbox' });
});

test.after(async () => {
  delete process.env.SHUTTERBUS_TEST_SECRET;
  await rig.stop();
});

const statusField = (pid: number, name: string) =>
  new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
const namespace = (pid: number, kind: string) => readlinkSync(`/proc/${pid}/ns/${kind}`);

test('every renderer of a running render is in seccomp mode 2 with namespaces of its own; the browser is not root', async () => {
  const browserPid = rig.host.pid!;
  assert.ok(browserPid, 'the host knows its browser');
  // A cross-site frame gets a renderer of its own (site isolation): both must be boxed.
  const frame = `http://localhost:${new URL(rig.site.url).port}/`;
  let renderers: number[] = [];
  await rig.host.withPage(
    { timeout: 15, viewport_width: 800, viewport_height: 600, device_scale_factor: 1, workspaceId: 'ws_sandbox' },
    new AbortController().signal,
    async (page) => {
      await page.goto(`${rig.site.url}/`);
      await page.evaluate(
        (src) =>
          new Promise((resolve) => {
            const iframe = document.createElement('iframe');
            iframe.onload = resolve;
            iframe.src = src;
            document.body.append(iframe);
          }),
        frame,
      );
      const all = listProcesses();
      const tree = new Set(processTree([browserPid], all));
      renderers = all
        .filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'))
        .map((proc) => proc.pid);
      assert.ok(renderers.length >= 2, `the page and its cross-site frame have renderers (found ${renderers.length})`);
      for (const pid of renderers) {
        assert.is(statusField(pid, 'Seccomp'), '2', `renderer ${pid} runs under seccomp-bpf`);
        for (const kind of ['user', 'pid', 'net']) {
          assert.is.not(
            namespace(pid, kind),
            namespace(browserPid, kind),
            `renderer ${pid} has a ${kind} namespace of its own`,
          );
        }
      }
    },
  );

  const [realUid] = statusField(browserPid, 'Uid').split(/\s+/);
  assert.is.not(realUid, '0', 'the browser does not run as root');
  const environ = readFileSync(`/proc/${browserPid}/environ`, 'utf8');
  assert.not.ok(environ.includes(SECRET), "the service's credentials are not in the browser's environment");
});

test('a render still works in the sandbox', async () => {
  const shot = await rig.render('/');
  assert.ok(shot.image.length > 1000, 'an image came back');
});

test('a browser user that does not exist stops the start with one line', async () => {
  if (process.getuid?.() !== 0) return; // Only a root service drops to a user.
  const host = new BrowserHost({ executablePath: CHROMIUM, browserUser: 'shutterbus-no-such-user' });
  try {
    const error = await host.start().then(
      () => null,
      (err: unknown) => err,
    );
    assert.instance(error, SandboxError);
    const message = (error as Error).message;
    assert.not.ok(message.includes('\n'), 'one line');
    assert.match(message, /shutterbus-no-such-user/);
    assert.match(message, /CHROMIUM_USER/);
  } finally {
    await host.close();
  }
});

test("Chromium's own refusal of its sandbox becomes the same one line", async () => {
  if (process.getuid?.() !== 0) return; // Chromium refuses its sandbox to root: the refusal at hand.
  const error = await chromium.launch({ executablePath: CHROMIUM, chromiumSandbox: true, timeout: 20_000 }).then(
    async (browser) => (await browser.close(), null),
    (err: unknown) => err,
  );
  assert.ok(error, 'Chromium refused to start as root with its sandbox');
  const refused = sandboxFailure(error);
  assert.instance(refused, SandboxError);
  assert.not.ok(refused!.message.includes('\n'), 'one line');
  assert.match(refused!.message, /CHROMIUM_NO_SANDBOX/);
  assert.is(sandboxFailure(new Error('net::ERR_CONNECTION_REFUSED')), null, 'other failures are not the sandbox');
});

test('CHROMIUM_NO_SANDBOX runs the renderers unconfined and says so loudly', async () => {
  const logged: Array<{ level?: string; msg?: string }> = [];
  const host = new BrowserHost({ executablePath: CHROMIUM, noSandbox: true, log: (entry) => logged.push(entry) });
  await host.start();
  try {
    const warning = logged.find((entry) => entry.level === 'warn' && /WITHOUT its sandbox/.test(entry.msg ?? ''));
    assert.ok(warning, 'a warning in the log');
    const all = listProcesses();
    const tree = new Set(processTree([host.pid!], all));
    const renderers = all.filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
    assert.ok(renderers.length > 0);
    assert.ok(
      renderers.every((proc) => statusField(proc.pid, 'Seccomp') === '0'),
      'no seccomp without the sandbox',
    );
    assert.is.not(statusField(host.pid!, 'Uid').split(/\s+/)[0], '0', 'still not root');
  } finally {
    await host.close();
  }
});

test.run();
