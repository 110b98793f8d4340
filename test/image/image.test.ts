// The production image as an operator runs it: an ingress container and a render + delivery
// container of localhost/shutterbus:local (built before this file by the runner's set-up, `make
// image`), read-only, not root, with the seccomp profile, against a real NATS, the S3 store and a
// fixture site on the host's loopback. A screenshot, an async render with its webhook, who runs
// what inside, and a SIGTERM during renders that loses none.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyWebhook } from '../../src/client/webhook.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  type Container,
  GRACE_SECONDS,
  IMAGE,
  imageExists,
  podman,
  processFacts,
  startContainer,
  waitUntilReady,
} from '../helpers/containers.ts';
import { freePort } from '../helpers/stack.ts';
import { call, createWorkspace, startStack, type TestStack } from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const image = suite('the production image');
const SERVICE_UID = 10001;
const BROWSER_UID = 10002;
let stack: TestStack;
let workspace: Workspace;
let receiver: http.Server;
let hookBase: string;
const hooks: { path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
let ingress: Container;
let render: Container | undefined;
let ingressBase: string;
const containers: Container[] = [];
const suffix = `${process.pid}`;

/** The environment every container gets: the stack's, less the host's data directory. */
const containerEnv = (extra: Record<string, string>): Record<string, string> => {
  const { DATA_DIR: _hostDir, ...env } = stack.env;
  return { ...env, LOG_LEVEL: 'info', ...extra };
};

const startRender = async (name: string): Promise<Container> => {
  const port = await freePort();
  const container = await startContainer(
    `shutterbus-test-render-${name}-${suffix}`,
    containerEnv({ ROLES: 'render,delivery', HOST: '127.0.0.1', PORT: String(port), RENDER_CONCURRENCY: '2' }),
  );
  containers.push(container);
  await waitUntilReady(container, `http://127.0.0.1:${port}/readyz`);
  return container;
};

const take = (params: Record<string, string>) =>
  call(`${ingressBase}/api/take?${new URLSearchParams(params)}`, { headers: { 'x-access-key': workspace.access_key } });

const statusOf = async (id: string) =>
  (await call(`${ingressBase}/api/renders/${id}`, { headers: { 'x-access-key': workspace.access_key } })).json?.status;

image.before(async () => {
  assert.ok(await imageExists(), `${IMAGE} is not built: make image (the runner builds it before this file)`);
  stack = await startStack();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hooks.push({ path: req.url ?? '/', headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  workspace = await createWorkspace(stack);
  const port = await freePort();
  ingressBase = `http://127.0.0.1:${port}`;
  ingress = await startContainer(
    `shutterbus-test-ingress-${suffix}`,
    containerEnv({ ROLES: 'ingress', HOST: '127.0.0.1', PORT: String(port), BASE_URL: ingressBase }),
  );
  containers.push(ingress);
  render = await startRender('a');
  await waitUntilReady(ingress, `${ingressBase}/readyz`);
});

image.after(async () => {
  for (const container of containers) {
    if (process.env.KEEP_CONTAINER_LOGS) console.log(`--- ${container.name}\n${await container.logs()}`);
    await container.remove().catch(() => undefined);
  }
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

image('labels say its version, revision and source; it holds production packages only', async () => {
  const labels = JSON.parse(await podman(['image', 'inspect', '--format', '{{json .Labels}}', IMAGE]));
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.is(labels['org.opencontainers.image.version'], pkg.version);
  assert.match(labels['org.opencontainers.image.revision'], /^[0-9a-f]{40}$/);
  assert.match(labels['org.opencontainers.image.source'], /^https:\/\//);
  assert.is(await podman(['image', 'inspect', '--format', '{{.Config.User}}', IMAGE]), `${SERVICE_UID}:${SERVICE_UID}`);
  // The development dependencies no production package needs too (package-lock.json marks them dev).
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));
  const devPackages = Object.keys(pkg.devDependencies).filter((name) => lock.packages[`node_modules/${name}`]?.dev);
  for (const named of ['tsx', 'esbuild', '@20minutes/s3rver', '@types/node', 'typescript'])
    assert.ok(devPackages.includes(named), `${named} is a development dependency`);
  const listing = await podman([
    'run',
    '--rm',
    '--network',
    'none',
    '--read-only',
    '--entrypoint',
    '/bin/sh',
    IMAGE,
    '-c',
    'ls -A /app; echo ---; for p in "$@"; do [ ! -e "/app/node_modules/$p" ] || echo "$p"; done; echo ---; node --version',
    'sh',
    ...devPackages,
    ...Object.keys(pkg.dependencies),
  ]);
  const [app, present, node] = listing.split('---\n');
  assert.equal(app.split('\n').filter(Boolean).sort(), ['dist', 'node_modules', 'package.json']);
  const installed = present.split('\n').filter(Boolean);
  assert.equal(
    installed.filter((name) => devPackages.includes(name)),
    [],
    'no development package',
  );
  assert.equal(
    Object.keys(pkg.dependencies).filter((name) => !installed.includes(name)),
    [],
    'every production package',
  );
  assert.is(node.trim(), `v${readFileSync(new URL('../../.node-version', import.meta.url), 'utf8').trim()}`);
});

image('a screenshot through the ingress container and the render container', async () => {
  const shot = await take({ url: `${stack.site.url}/` });
  assert.is(shot.status, 200, shot.bytes.toString().slice(0, 500));
  assert.is(shot.contentType, 'image/png');
  assert.is(shot.bytes.subarray(1, 4).toString(), 'PNG');
});

image('an async render delivers its signed webhook from the container', async () => {
  const answer = await take({
    url: `${stack.site.url}/page/from-the-image`,
    async: 'true',
    webhook_url: `${hookBase}/hook/image`,
  });
  assert.is(answer.status, 202, JSON.stringify(answer.json));
  const id = answer.json!.render_id as string;
  await waitFor(() => hooks.some((hook) => hook.path === '/hook/image'), 'the webhook', 60_000);
  const hook = hooks.find((h) => h.path === '/hook/image')!;
  // Throws unless the signature verifies.
  const payload = verifyWebhook({ secret: workspace.secret_key, headers: hook.headers, body: hook.body });
  assert.is(payload.type, 'render.succeeded');
  assert.is(payload.data.render_id, id);
  assert.is(await statusOf(id), 'succeeded');
});

image(
  'no process runs as root, the browser not as the service, renderers in seccomp; the root is read-only',
  async () => {
    // A render first, so that renderers are running.
    assert.is((await take({ url: `${stack.site.url}/` })).status, 200);
    const facts = [...ingress.processes(), ...render!.processes()].map(processFacts).filter((f) => f !== null);
    assert.ok(facts.length > 4, `the containers' processes: ${facts.length}`);
    for (const process of facts) {
      assert.ok(
        process.uids.every((uid) => uid !== 0),
        `not root: ${process.argv.slice(0, 2).join(' ')} ${process.uids}`,
      );
      assert.ok(
        process.gids.every((gid) => gid !== 0),
        `no root group: ${process.argv[0]} ${process.gids}`,
      );
    }
    const service = facts.filter((p) => p.argv[0] === 'node');
    assert.is(service.length, 2, 'one service process in each container');
    for (const p of service) assert.equal(p.uids, [SERVICE_UID, SERVICE_UID, SERVICE_UID, SERVICE_UID]);
    const browser = facts.filter((p) => p.argv.some((arg) => arg.includes('chromium')));
    assert.ok(browser.length >= 3, `the browser and its helpers: ${browser.length}`);
    for (const p of browser) {
      assert.equal(p.uids, [BROWSER_UID, BROWSER_UID, BROWSER_UID, BROWSER_UID], `${p.argv[0]} as the browser's user`);
      assert.equal(p.gids, [BROWSER_UID, BROWSER_UID, BROWSER_UID, BROWSER_UID], `${p.argv[0]} in the browser's group`);
      assert.ok(p.noNewPrivs, `${p.argv[0]} can gain no privilege`);
    }
    const renderers = browser.filter((p) => p.argv.includes('--type=renderer'));
    assert.ok(renderers.length >= 1, 'renderers run');
    for (const p of renderers) assert.is(p.seccomp, 2, `renderer ${p.pid} in seccomp filter mode`);
    for (const container of [ingress, render!]) {
      const rootMount = readFileSync(`/proc/${container.pid}/mountinfo`, 'utf8')
        .split('\n')
        .find((line) => line.split(' ')[4] === '/');
      assert.ok(rootMount, 'the root mount');
      assert.ok(rootMount!.split(' ')[5].split(',').includes('ro'), `a read-only root: ${rootMount}`);
    }
  },
);

image('a SIGTERM to the render container during renders loses none, and it exits within its grace period', async () => {
  // Four renders of 4 s pages on a worker that runs two at once: two are in flight at the SIGTERM.
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const answer = await take({
      url: `${stack.site.url}/slow?ms=4000&n=${i}`,
      async: 'true',
      webhook_url: `${hookBase}/hook/drain-${i}`,
    });
    assert.is(answer.status, 202, JSON.stringify(answer.json));
    ids.push(answer.json!.render_id);
  }
  await waitFor(
    async () => (await Promise.all(ids.map(statusOf))).filter((s) => s === 'rendering').length >= 1,
    'a render in flight',
    30_000,
    100,
  );
  const stopping = render!;
  const signalled = Date.now();
  await podman(['kill', '--signal', 'TERM', stopping.name]);
  const code = await stopping.exited();
  const seconds = (Date.now() - signalled) / 1000;
  assert.ok(seconds < GRACE_SECONDS, `exited ${seconds.toFixed(1)} s after SIGTERM (grace ${GRACE_SECONDS} s)`);
  assert.is(code, 0, `a graceful exit:\n${(await stopping.logs()).slice(-3000)}`);
  // A new worker takes what was left; every render ends succeeded, each with its webhook.
  render = await startRender('b');
  await waitFor(
    async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'succeeded' || s === 'failed'),
    'every render ended',
    120_000,
    500,
  );
  assert.equal(await Promise.all(ids.map(statusOf)), ['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  await waitFor(
    () => ids.every((_, i) => hooks.some((hook) => hook.path === `/hook/drain-${i}`)),
    'every webhook',
    60_000,
  );
});

image.run();
