// @shutterbus/client as a customer gets it: `make client`, `npm pack`, the tarball installed into a
// scratch project outside the checkout (os.tmpdir(), no path back to it), then its calls run there
// against a running service on each Node line the npm registry gives this machine (20, 22, 24, 26),
// its typings checked by `tsc --strict`, the package by publint and attw, and its CLI run.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { nodeBinary, nodeReleases } from '../helpers/node-versions.ts';
import { createWorkspace, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const built = path.join(root, 'dist/client');
const fixtures = path.join(root, 'test/fixtures/client-package');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
/**
 * Whether the service checks contract §5's signatures of the endpoints other than take and animate
 * (method and path bound in), which the client makes when it has the secret key: src/http/auth.ts
 * binds them, so those calls are signed here too.
 */
const boundSignaturesChecked = true;
const accountCalls: Record<string, string> = boundSignaturesChecked ? { ACCOUNT_CALLS_SIGNED: '1' } : {};
const statusKeys: Record<string, string> = boundSignaturesChecked ? {} : { SHUTTERBUS_SECRET_KEY: '' };

interface Context {
  scratch: string;
  project: string;
  tarball: string;
  files: string[];
  stack: TestStack;
  service: TestService;
  workspace: Workspace;
}
const pkg = suite<Context>('@shutterbus/client, packed and installed outside the checkout');

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 }).toString();

pkg.before(async (context) => {
  run('make', ['--no-print-directory', 'client'], root);
  context.scratch = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-client-'));
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', context.scratch], built));
  context.tarball = path.join(context.scratch, packed.filename);
  context.files = packed.files.map((file: { path: string }) => file.path).sort();
  context.project = path.join(context.scratch, 'project');
  mkdirSync(context.project);
  writeFileSync(
    path.join(context.project, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
  );
  // --offline: a package with no dependencies needs nothing from the registry.
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', context.tarball], context.project);
  for (const script of ['calls.mjs', 'smoke.mjs'])
    copyFileSync(path.join(fixtures, script), path.join(context.project, script));
  context.stack = await startStack();
  context.service = await startService(context.stack, { WEBHOOK_RETRY_SCHEDULE: '1s' });
  context.workspace = await createWorkspace(context.stack);
});

pkg.after(async ({ scratch, service, stack }) => {
  await service?.close();
  await stack?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** What the scratch project sees: its own folder, the keys and the service; nothing of the checkout. */
function environment({ workspace, service, stack }: Context, node: string): Record<string, string> {
  return {
    PATH: [path.dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: os.tmpdir(),
    SHUTTERBUS_URL: service.base,
    SHUTTERBUS_ACCESS_KEY: workspace.access_key,
    SHUTTERBUS_SECRET_KEY: workspace.secret_key,
    SITE_URL: stack.site.url,
  };
}

/** Runs `args` with `node` in the scratch project; its exit code and output. */
function inProject(
  context: Context,
  node: string,
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, {
      cwd: context.project,
      env: { ...environment(context, node), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

pkg('the tarball holds the client alone: no dependency, nothing of the service; publint and attw clean', (context) => {
  assert.equal(context.files, [
    'LICENSE',
    'README.md',
    'answers.d.ts',
    'answers.js',
    'cli.js',
    'client.d.ts',
    'client.js',
    'errors.d.ts',
    'errors.js',
    'index.d.ts',
    'index.js',
    'options.d.ts',
    'options.js',
    'package.json',
    'signing.d.ts',
    'signing.js',
    'webhook.d.ts',
    'webhook.js',
  ]);
  const manifest = JSON.parse(
    readFileSync(path.join(context.project, 'node_modules/@shutterbus/client/package.json'), 'utf8'),
  );
  assert.is(manifest.name, '@shutterbus/client');
  assert.is(manifest.license, 'MIT');
  assert.is(manifest.engines.node, '>=20');
  assert.equal(manifest.exports['.'], { types: './index.d.ts', default: './index.js' });
  assert.equal(manifest.bin, { 'shutterbus-client': './cli.js' });
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
    assert.is(manifest[field], undefined, field);
  assert.equal(
    readFileSync(path.join(context.project, 'package-lock.json'), 'utf8').match(/"node_modules\//g)?.length,
    1,
  );
  run(path.join(root, 'node_modules/.bin/publint'), ['--strict', built], root);
  // ESM only, as engines says Node 20+ (whose require of ESM is not a given): attw's esm-only profile.
  run(path.join(root, 'node_modules/.bin/attw'), [context.tarball, '--profile', 'esm-only', '--format', 'ascii'], root);
});

pkg('tsc --strict checks a typed use of the installed package; a wrong option type does not compile', (context) => {
  writeFileSync(
    path.join(context.project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        lib: ['ES2022'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: [],
      },
      files: ['usage.ts'],
    }),
  );
  writeFileSync(
    path.join(context.project, 'usage.ts'),
    `import { Shutterbus, ShutterbusError, verifyWebhook, type TakeOptions, type AnimateOptions } from '@shutterbus/client';

const client = new Shutterbus({ accessKey: 'ak', secretKey: 'sk', baseUrl: 'https://shots.example.com' });
const options: TakeOptions = { url: 'https://example.com', format: 'webp', viewport_width: 1280, full_page: true, hide_selectors: ['.ad'], wait_until: ['load', 'networkidle0'] };
const url: string = client.signUrl(options);
const animation: AnimateOptions = { url: 'https://example.com', format: 'mp4', duration: 5, scenario: 'scroll' };
const animationUrl: string = client.signAnimateUrl(animation);
export async function use(): Promise<void> {
  const bytes: Uint8Array = await client.take(options);
  const answer = await client.takeJson({ url: 'https://example.com' });
  const fileUrl: string = answer.file_url;
  const queued = await client.takeAsync({ url: 'https://example.com', webhook_url: 'https://hooks.example.com' });
  const status = await client.status(queued.render_id);
  const state: 'pending' | 'rendering' | 'succeeded' | 'failed' = status.status;
  const monitor = await client.monitors.create({ url: 'https://example.com', interval: 3600, webhook_url: 'https://hooks.example.com' });
  await client.monitors.update(monitor.monitor_id, { status: 'paused' });
  const used: number = (await client.usage()).used;
  const devices: string[] = (await client.devices()).devices.map((device) => device.id);
  await client.bulk({ requests: [{ url: 'https://example.com' }], execute: true });
  await client.profiles.list();
  try {
    await client.take({ url: 'https://example.com' });
  } catch (err) {
    if (err instanceof ShutterbusError) {
      const code: string = err.errorCode;
      const http: number = err.status;
      const renderId: string | undefined = err.renderId;
      console.log(code, http, renderId, err.errorDetails);
    }
  }
  const event = verifyWebhook({ secret: 'sk', headers: { 'x-signature': 'x' }, body: '{}' });
  const type: string = event.type;
  console.log(url, animationUrl, bytes, fileUrl, state, used, devices, type);
  // @ts-expect-error viewport_width is a number
  await client.take({ url: 'https://example.com', viewport_width: '1280' });
  // @ts-expect-error bmp is not a format
  client.signUrl({ url: 'https://example.com', format: 'bmp' });
  // @ts-expect-error full_page is a boolean
  client.signUrl({ url: 'https://example.com', full_page: 'yes' });
  // @ts-expect-error no such option
  client.signUrl({ url: 'https://example.com', viewport_wdth: 1280 });
  // @ts-expect-error a screenshot's format is not an animation's
  client.signAnimateUrl({ url: 'https://example.com', format: 'png' });
  // @ts-expect-error a monitor needs its interval
  await client.monitors.create({ url: 'https://example.com', webhook_url: 'https://hooks.example.com' });
}
declare const console: { log(...values: unknown[]): void };
`,
  );
  const checked = (() => {
    try {
      return { code: 0, output: run(process.execPath, [tsc, '-p', context.project], context.project) };
    } catch (err) {
      return { code: 1, output: String((err as { stdout?: Buffer }).stdout ?? err) };
    }
  })();
  assert.is(checked.output, '', 'tsc reports nothing: the typed use compiles and each wrong type is an error');
  assert.is(checked.code, 0);
});

pkg("the package's options are the checkout's: the same type for every row of the tables", () => {
  const check = path.join(root, 'dist/client-build/equal.ts');
  writeFileSync(
    check,
    `import type * as built from '../client/index.js';
import type * as source from '../../src/client/options.ts';
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const take: Equal<built.TakeOptions, source.TakeOptions> = true;
export const animate: Equal<built.AnimateOptions, source.AnimateOptions> = true;
`,
  );
  const args = [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
  run(process.execPath, [...args, '--allowImportingTsExtensions', '--types', 'node', check], root);
});

pkg('on Node 26 and 20 every call works against the running service', async (context) => {
  for (const major of [26, 20]) {
    const node = nodeBinary(major);
    const { code, stdout, stderr } = await inProject(context, node, ['calls.mjs'], accountCalls);
    assert.is(code, 0, `Node ${major}: ${stderr}`);
    const seen = JSON.parse(stdout);
    assert.is(seen.node, `v${nodeReleases[major]}`);
    assert.ok(
      seen.resolved.startsWith(`file://${context.project}/node_modules/@shutterbus/client/`),
      `the installed copy: ${seen.resolved}`,
    );
    assert.equal(seen.take, { png: true, width: 640, height: 480 }, `Node ${major}: take`);
    assert.equal(seen.takeJson, { format: 'webp', fileFetched: 200 });
    assert.equal(seen.signUrl, { status: 200, png: true, width: 320, height: 240 });
    assert.is(seen.refused.errorCode, 'request_not_valid');
    assert.is(seen.refused.status, 400);
    assert.is(seen.refused.errorDetails[0].parameter, 'viewport_width');
    assert.equal(seen.async, { queued: 'pending', status: 'succeeded', external_identifier: 'from-package' });
    assert.equal(seen.webhook, { type: 'render.succeeded', renderId: true, tampered: 'WebhookVerificationError' });
    assert.equal(seen.monitors, {
      created: 'active',
      listed: true,
      paused: 'paused',
      got: 'paused',
      afterRemove: { ...seen.monitors.afterRemove, errorCode: 'not_found', status: 404 },
    });
    assert.equal(seen.profiles, { created: 'package', listed: true, sealed: true, afterRemove: 0 });
    assert.is(seen.usage.total, context.workspace.quota);
    assert.ok(seen.usage.used >= 4, `used ${seen.usage.used}`);
    assert.ok(seen.devices.count > 100 && seen.devices.iphone, JSON.stringify(seen.devices));
    assert.equal(seen.bulk, { responses: 2, urls: true });
  }
});

pkg('on Node 22 and 24 the package imports, signs as the service checks and verifies a delivery', async (context) => {
  for (const major of [22, 24]) {
    const { code, stdout, stderr } = await inProject(context, nodeBinary(major), ['smoke.mjs']);
    assert.is(code, 0, `Node ${major}: ${stderr}`);
    const seen = JSON.parse(stdout);
    assert.is(seen.node, `v${nodeReleases[major]}`);
    assert.is(seen.path, '/api/take');
    assert.is(
      seen.signed,
      'url=https%3A%2F%2Fexample.com&full_page=true&hide_selectors=.a&hide_selectors=.b&access_key=ak_smoke',
    );
    assert.ok(seen.signatureValid);
    assert.is(seen.event, 'render.succeeded');
    assert.is(seen.refused, 'network_error', 'a closed port is a ShutterbusError too');
  }
});

pkg(
  'shutterbus-client: take, sign, status; a refusal or a missing key is one line and a non-zero exit',
  async (context) => {
    const node = nodeBinary(26);
    const bin = path.join(context.project, 'node_modules/.bin/shutterbus-client');
    const site = `${context.stack.site.url}/`;
    const shot = path.join(context.project, 'shot.png');
    const taken = await inProject(context, node, [
      bin,
      'take',
      site,
      '-o',
      shot,
      '--viewport_width',
      '400',
      '--viewport-height=300',
    ]);
    assert.is(taken.code, 0, taken.stderr);
    const bytes = readFileSync(shot);
    assert.equal([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [400, 300]);
    const renderId = /render ([0-9a-f-]{36})/.exec(taken.stdout)?.[1];
    assert.ok(renderId, taken.stdout);

    const status = await inProject(context, node, [bin, 'status', renderId!], statusKeys);
    assert.is(status.code, 0, status.stderr);
    assert.is(JSON.parse(status.stdout).status, 'succeeded');

    const signed = await inProject(context, node, [bin, 'sign', site, '--format', 'jpeg']);
    assert.is(signed.code, 0, signed.stderr);
    const answer = await fetch(signed.stdout.trim());
    assert.is(answer.status, 200);
    assert.is(answer.headers.get('content-type'), 'image/jpeg');

    const refused = await inProject(context, node, [bin, 'take', site, '-o', shot, '--viewport_width', '1']);
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /^shutterbus-client: request_not_valid \(400\): .*viewport_width.*\n$/);

    const keyless = await inProject(context, node, [bin, 'take', site, '-o', shot], { SHUTTERBUS_ACCESS_KEY: '' });
    assert.is(keyless.code, 2);
    assert.match(
      keyless.stderr,
      /^shutterbus-client: no access key: set SHUTTERBUS_ACCESS_KEY or pass --access-key.*\n$/,
    );

    const version = await inProject(context, node, [bin, '--version']);
    assert.is(version.stdout, `${JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version}\n`);
  },
);

pkg.run();
