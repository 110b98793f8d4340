// store=true end to end: a second local S3 store with its own key pair and bucket plays the
// customer's; real NATS, the service's own store, Chromium and the fixture site do the rest. The
// ingress (in this process) and the render worker (a process of its own) share only SECRETS_KEY:
// every upload here is sealed by one and opened by the other.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, mkdtempSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as S3Client } from 'minio';
import { Client, TakeOptions } from 'screenshotone-api-sdk';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startShutterbus } from '../../src/main.ts';
import { connect } from '@nats-io/transport-node';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { Sealer } from '../../src/secrets/sealer.ts';
import { WorkspaceStore, type Workspace } from '../../src/workspaces/workspace.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, createWorkspace, startStack, usedThisMonth, type TestStack } from '../helpers/service.ts';
import { freePort, startS3, type S3Server } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const storage = suite("store=true: uploads to the customer's own bucket");
const customerKeys = {
  accessKey: 'CUSTOMERKEY1',
  secretKey: `customer-secret-${randomBytes(12).toString('hex')}`,
  bucket: 'customer-shots',
};
const defaultKeys = { accessKey: 'CUSTOMERKEY1', secretKey: customerKeys.secretKey };
let stack: TestStack;
let customer: S3Server;
let service: { base: string; close(): Promise<void> };
let workspace: Workspace;
let bucket: S3Client;
let logFile: string;
let workerLog: string;
let worker: ChildProcess;
let receiver: http.Server;
let hookBase: string;
const hooks: { path: string; body: Record<string, any> }[] = [];

storage.before(async () => {
  stack = await startStack();
  customer = await startS3(customerKeys);
  // Both processes log at debug level into files of their own, which the last test reads through.
  const logs = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-storage-log-'));
  logFile = path.join(logs, 'ingress.log');
  workerLog = path.join(logs, 'worker.log');
  worker = await startWorker(workerLog);
  const port = await freePort();
  const config = loadConfig({ ...stack.env, PORT: String(port), LOG_LEVEL: 'debug', ROLES: 'ingress,delivery' });
  const running = await startShutterbus(config, createLogger(config, false, createWriteStream(logFile)));
  service = { base: config.baseUrl, close: running.close };
  workspace = await createWorkspace(stack, {
    members: [{ email: 'member@example.com', role: 'member', verified: true }],
  });
  const endpoint = new URL(customer.endpoint);
  bucket = new S3Client({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port),
    useSSL: false,
    accessKey: customer.accessKey,
    secretKey: customer.secretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hooks.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

/** A render-only Shutterbus process on the stack, its output in `log`; resolves once it started. */
async function startWorker(log: string): Promise<ChildProcess> {
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main.ts')], {
    env: { ...process.env, ...stack.env, ROLES: 'render', PORT: String(await freePort()), LOG_LEVEL: 'debug' },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  process.on('exit', () => child.kill('SIGKILL'));
  await waitFor(
    () => readFileSync(log, 'utf8').includes('Shutterbus started') || child.exitCode !== null,
    'the render worker to start',
    60_000,
    200,
  );
  assert.is(child.exitCode, null, readFileSync(log, 'utf8').slice(-2000));
  return child;
}

storage.after(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGTERM');
    await new Promise((resolve) => worker.once('exit', resolve));
  }
  await service?.close();
  receiver?.close();
  await customer?.stop();
  await stack?.stop();
});

const storageParams = (storagePath: string, secret = customer.secretKey) => ({
  store: 'true',
  storage_path: storagePath,
  storage_endpoint: customer.endpoint,
  storage_bucket: customerKeys.bucket,
  storage_access_key_id: customer.accessKey,
  storage_secret_access_key: secret,
});

/** The object in the customer's bucket: its bytes and content type, or null when absent. */
async function objectOf(key: string): Promise<{ bytes: Buffer; contentType: string } | null> {
  try {
    const stat = await bucket.statObject(customerKeys.bucket, key);
    const chunks: Buffer[] = [];
    for await (const chunk of await bucket.getObject(customerKeys.bucket, key)) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks), contentType: String(stat.metaData['content-type']) };
  } catch (err) {
    if ((err as { code?: string }).code === 'NotFound' || (err as { code?: string }).code === 'NoSuchKey') return null;
    throw err;
  }
}

const post = (body: Record<string, unknown>, accessKey = workspace.access_key) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': accessKey },
    body: JSON.stringify(body),
  });

storage('a POST with response_type=json uploads the png and says where, in the JSON and the headers', async () => {
  const answer = await post({
    url: `${stack.site.url}/`,
    response_type: 'json',
    storage_return_location: true,
    ...storageParams('shots/home'),
  });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.equal(answer.json!.store, {
    bucket: customerKeys.bucket,
    key: 'shots/home.png',
    location: `${customer.endpoint}/${customerKeys.bucket}/shots/home.png`,
  });
  assert.is(answer.headers.get('x-store-bucket'), customerKeys.bucket);
  assert.is(answer.headers.get('x-store-key'), 'shots/home.png');
  assert.is(answer.headers.get('x-screenshotone-store-bucket'), customerKeys.bucket);
  assert.is(answer.headers.get('x-screenshotone-store-key'), 'shots/home.png');
  const uploaded = (await objectOf('shots/home.png'))!;
  assert.is(uploaded.contentType, 'image/png');
  // The same bytes as the service's own copy.
  const own = await call(answer.json!.file_url);
  assert.ok(uploaded.bytes.equals(own.bytes), 'the uploaded object is the rendered file');
  assert.equal((await sharp(uploaded.bytes).metadata()).width, 1280);
});

storage('every format gets its extension and content type, a path that has it keeps it', async () => {
  for (const [format, key, type] of [
    ['jpeg', 'f/a.jpg', 'image/jpeg'],
    ['pdf', 'f/b.pdf', 'application/pdf'],
    ['markdown', 'f/c.md', 'text/markdown; charset=utf-8'],
  ]) {
    const given = key.startsWith('f/a') ? 'f/a.jpg' : key.replace(/\.\w+$/, '');
    const answer = await post({ url: `${stack.site.url}/`, format, response_type: 'empty', ...storageParams(given) });
    assert.is(answer.status, 200, `${format}: ${answer.bytes.toString()}`);
    assert.is(answer.headers.get('x-store-key'), key);
    assert.is((await objectOf(key))?.contentType, type, format);
  }
});

storage('a cached signed GET uploads on its first view only; its answer is the image with the headers', async () => {
  const query = new URLSearchParams({
    url: `${stack.site.url}/`,
    format: 'webp',
    access_key: workspace.access_key,
    ...storageParams('cached/once'),
  }).toString();
  const signed = `${service.base}/api/take?${query}&signature=${createHmac('sha256', workspace.secret_key).update(query).digest('hex')}`;
  const first = await call(signed);
  assert.is(first.status, 200, first.bytes.toString().slice(0, 300));
  assert.is(first.contentType, 'image/webp');
  assert.is(first.headers.get('x-store-key'), 'cached/once.webp');
  assert.ok((await objectOf('cached/once.webp'))!.bytes.equals(first.bytes));
  await bucket.removeObject(customerKeys.bucket, 'cached/once.webp');
  // Repeat views (through the full checks, or from the ingress's memory once it holds the entry).
  for (let view = 2; view <= 3; view++) {
    const again = await call(signed);
    assert.is(again.status, 302);
    assert.is(again.headers.get('x-store-key'), 'cached/once.webp', 'a redirect says where the first view uploaded');
    assert.is(again.headers.get('x-screenshotone-store-bucket'), customerKeys.bucket);
  }
  assert.is(await objectOf('cached/once.webp'), null, 'a repeat view uploads nothing');
});

/** An asynchronous upload to `storagePath` (with `secret`), told at /hook/`hookName`: its webhook body and status. */
async function asyncUpload(hookName: string, storagePath: string, secret?: string) {
  const query = new URLSearchParams({
    url: `${stack.site.url}/`,
    async: 'true',
    webhook_url: `${hookBase}/hook/${hookName}`,
    ...storageParams(storagePath, secret),
  });
  const auth = { headers: { 'x-access-key': workspace.access_key } };
  const accepted = await call(`${service.base}/api/take?${query}`, auth);
  assert.is(accepted.status, 202, JSON.stringify(accepted.json));
  await waitFor(() => hooks.some((hook) => hook.path === `/hook/${hookName}`), 'the webhook', 30_000);
  const hook = hooks.find((h) => h.path === `/hook/${hookName}`)!.body;
  const status = await call(`${service.base}/api/renders/${accepted.json!.render_id}`, auth);
  return { hook, status: status.json! };
}

storage('an asynchronous render uploads, and the status and the webhook say where', async () => {
  const { hook, status } = await asyncUpload('async', 'async/shot');
  assert.is(hook.type, 'render.succeeded');
  assert.equal(hook.data.store, { bucket: customerKeys.bucket, key: 'async/shot.png' });
  assert.equal(status.store, { bucket: customerKeys.bucket, key: 'async/shot.png' });
  assert.is((await objectOf('async/shot.png'))?.contentType, 'image/png');
});

storage("ScreenshotOne's SDK: client.store() as it is", async () => {
  const client = new Client(workspace.access_key, workspace.secret_key, `${service.base}/api`);
  const options = TakeOptions.url(`${stack.site.url}/`).format('jpg').storageEndpoint(customer.endpoint);
  const where = await client.store(
    options,
    'sdk/stored',
    customerKeys.bucket,
    undefined,
    'standard',
    customer.accessKey,
    customer.secretKey,
  );
  assert.equal(where, { key: 'sdk/stored.jpg', bucket: customerKeys.bucket });
  assert.is((await objectOf('sdk/stored.jpg'))?.contentType, 'image/jpeg');
  // The same call again is a repeat view of the same signed URL: nothing rendered, uploaded or
  // charged, and the SDK still reads where the object is (a redirect it followed would lose that).
  const used = await usedThisMonth(stack, workspace.workspace_id);
  for (let view = 2; view <= 3; view++) {
    const again = await client.store(
      TakeOptions.url(`${stack.site.url}/`).format('jpg').storageEndpoint(customer.endpoint),
      'sdk/stored',
      customerKeys.bucket,
      undefined,
      'standard',
      customer.accessKey,
      customer.secretKey,
    );
    assert.equal(again, { key: 'sdk/stored.jpg', bucket: customerKeys.bucket }, `view ${view}`);
  }
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used);
});

storage(
  "a wrong secret: 502 storage_upload_failed with the storage's code, not charged, no file handed out",
  async () => {
    const before = await usedThisMonth(stack, workspace.workspace_id);
    const answer = await post({ url: `${stack.site.url}/`, ...storageParams('wrong/secret', 'not-the-secret') });
    assert.is(answer.status, 502, answer.bytes.toString());
    assert.is(answer.json!.error_code, 'storage_upload_failed');
    assert.is(answer.json!.error_details[0].code, 'SignatureDoesNotMatch');
    assert.is(await objectOf('wrong/secret.png'), null);
    assert.is(answer.json!.file_url, undefined, 'no file of the render in the answer');
    assert.not.match(answer.bytes.toString(), /\/files\//, 'no file URL anywhere in the answer');
    assert.is(await usedThisMonth(stack, workspace.workspace_id), before, 'a refused upload is not charged');
    // Unreachable: nothing listens there.
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await post({
      url: `${stack.site.url}/`,
      ...storageParams('nowhere/shot'),
      storage_endpoint: closed,
    });
    assert.is(unreachable.status, 502);
    assert.is(unreachable.json!.error_details[0].code, 'ECONNREFUSED');
    assert.is(await usedThisMonth(stack, workspace.workspace_id), before);
  },
);

storage('a key beyond printable ASCII: the headers carry it percent-encoded, the JSON as it is', async () => {
  const answer = await post({
    url: `${stack.site.url}/`,
    response_type: 'json',
    ...storageParams('intl/日本-ünï ok'),
  });
  assert.is(answer.status, 200, answer.bytes.toString());
  assert.is(answer.json!.store.key, 'intl/日本-ünï ok.png');
  const encoded = 'intl/%E6%97%A5%E6%9C%AC-%C3%BCn%C3%AF%20ok.png';
  assert.is(answer.headers.get('x-store-key'), encoded);
  assert.is(answer.headers.get('x-screenshotone-store-key'), encoded);
  assert.is((await objectOf('intl/日本-ünï ok.png'))?.contentType, 'image/png');
});

/** A storage_path of `length` characters under `prefix`, in segments of at most 100. */
const pathOf = (prefix: string, length: number) => {
  let path = prefix;
  while (path.length < length) path += `/${'a'.repeat(Math.min(100, length - path.length - 1))}`;
  return path;
};

storage('a key S3 would refuse for its length is a 400 before anything is rendered or charged', async () => {
  const before = await usedThisMonth(stack, workspace.workspace_id);
  // 1021 characters and ".png": 1025 bytes.
  const long = await post({ url: `${stack.site.url}/`, ...storageParams(pathOf('long', 1021)) });
  assert.is(long.status, 400, long.bytes.toString());
  assert.is(long.json!.error_code, 'request_not_valid');
  assert.equal(
    long.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['storage_path'],
  );
  // Fewer characters, more bytes: 3 bytes each.
  const wide = await post({ url: `${stack.site.url}/`, ...storageParams(`wide/${'日'.repeat(340)}`) });
  assert.is(wide.status, 400, wide.bytes.toString());
  assert.is(await usedThisMonth(stack, workspace.workspace_id), before);
  // 1020 characters and ".png": exactly the limit (in segments: the local store keeps each as a file name).
  const fits = await post({
    url: `${stack.site.url}/`,
    response_type: 'json',
    ...storageParams(pathOf('fits', 1020)),
  });
  assert.is(fits.status, 200, fits.bytes.toString());
  assert.is(Buffer.byteLength(fits.json!.store.key), 1024);
});

storage("a refused asynchronous upload: the status and the webhook carry the storage's answer", async () => {
  const { hook, status } = await asyncUpload('refused', 'async/refused', 'not-the-secret');
  assert.is(hook.type, 'render.failed');
  assert.is(hook.data.error_details[0].code, 'SignatureDoesNotMatch');
  assert.is(status.error_code, 'storage_upload_failed');
  assert.equal(status.error_details, hook.data.error_details);
  assert.is(status.file_url, undefined, 'the status hands out no file');
  assert.is(hook.data.file_url, undefined, 'nor does the webhook');
});

storage('a bucket that answers 403 to everything: 502, no file of the render anywhere, not charged', async () => {
  const refusing = http.createServer((req, res) => {
    req.resume();
    res
      .writeHead(403, { 'content-type': 'application/xml' })
      .end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
      );
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  try {
    const before = await usedThisMonth(stack, workspace.workspace_id);
    const endpoint = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    for (const response_type of ['by_format', 'json']) {
      const answer = await post({
        url: `${stack.site.url}/`,
        response_type,
        ...storageParams(`refusing/${response_type}`),
        storage_endpoint: endpoint,
      });
      assert.is(answer.status, 502, answer.bytes.toString());
      assert.is(answer.json!.error_code, 'storage_upload_failed');
      assert.is(answer.json!.error_details[0].code, 'AccessDenied');
      assert.not.match(answer.bytes.toString(), /\/files\//, `${response_type}: no file URL in the answer`);
    }
    assert.is(await usedThisMonth(stack, workspace.workspace_id), before, 'a refused upload is not charged');
  } finally {
    refusing.close();
  }
});

storage('bad storage parameters are a 400 naming them', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ store: true }, 'storage_path'],
    [{ store: true, storage_path: '/abs' }, 'storage_path'],
    [{ store: true, storage_path: 'a/../b' }, 'storage_path'],
    [{ storage_path: 'x' }, 'storage_path'],
    [{ store: true, storage_path: 'x', storage_access_key_id: 'k' }, 'storage_secret_access_key'],
    [{ store: true, storage_path: 'x', storage_class: 'cold' }, 'storage_class'],
  ];
  for (const [params, named] of cases) {
    const answer = await post({ url: `${stack.site.url}/`, ...params });
    assert.is(answer.status, 400, JSON.stringify(params));
    assert.ok(
      answer.json!.error_details.some((d: { parameter: string }) => d.parameter === named),
      `${JSON.stringify(params)} names ${named}: ${JSON.stringify(answer.json)}`,
    );
  }
  // Nothing given and no default: each missing part named.
  const bare = await post({ url: `${stack.site.url}/`, store: true, storage_path: 'x' });
  assert.is(bare.status, 400);
  assert.equal(
    bare.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['storage_endpoint', 'storage_bucket', 'storage_access_key_id', 'storage_secret_access_key'],
  );
});

storage(
  "a workspace's default storage: set by an owner through the CLI, used with only storage_path, never shown",
  async () => {
    const base = [
      '--workspace',
      workspace.workspace_id,
      '--endpoint',
      customer.endpoint,
      '--bucket',
      customerKeys.bucket,
      '--access-key-id',
      defaultKeys.accessKey,
      '--secret-access-key',
      defaultKeys.secretKey,
    ];
    const refused = await shutterbus(stack, 'storage', 'set', ...base, '--as', 'member@example.com');
    assert.is(refused.code, 1);
    assert.is(refused.json.error_code, 'forbidden');
    const set = await shutterbus(stack, 'storage', 'set', ...base, '--as', 'owner@example.com');
    assert.is(set.code, 0, set.stderr);
    assert.equal(
      { ...set.json.storage, updated_at: undefined },
      {
        endpoint: customer.endpoint,
        bucket: customerKeys.bucket,
        region: 'us-east-1',
        access_key_id: defaultKeys.accessKey,
        updated_at: undefined,
      },
    );
    assert.not.match(set.stdout, defaultKeys.secretKey);
    const shown = await shutterbus(stack, 'storage', 'show', '--workspace', workspace.workspace_id);
    assert.is(shown.json.storage.bucket, customerKeys.bucket);
    assert.not.match(shown.stdout, defaultKeys.secretKey);
    assert.not.match(
      (await shutterbus(stack, 'workspace', 'show', '--workspace', workspace.workspace_id)).stdout,
      defaultKeys.secretKey,
    );

    // The ingress reads workspaces through its watch of KV: the change arrives within a moment.
    let answer = await post({
      url: `${stack.site.url}/`,
      response_type: 'json',
      store: true,
      storage_path: 'default/shot',
    });
    await waitFor(
      async () => {
        if (answer.status === 200) return true;
        answer = await post({
          url: `${stack.site.url}/`,
          response_type: 'json',
          store: true,
          storage_path: 'default/shot',
        });
        return answer.status === 200;
      },
      'the default storage in use',
      10_000,
      500,
    );
    assert.equal(answer.json!.store, { bucket: customerKeys.bucket, key: 'default/shot.png' });
    assert.is((await objectOf('default/shot.png'))?.contentType, 'image/png');

    // A SECRETS_KEY rotation: reseal seals the default again with the new key, which alone opens it then.
    const newKey = randomBytes(32).toString('base64url');
    const rotated = { env: { ...stack.env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: stack.env.SECRETS_KEY } };
    const resealed = await shutterbus(rotated, 'secrets', 'reseal');
    assert.is(resealed.code, 0, resealed.stderr);
    assert.ok(resealed.json.workspaces >= 1, 'the workspace with a default storage was resealed');
    assert.is((await shutterbus(rotated, 'secrets', 'reseal')).json.workspaces, 0, 'nothing left to reseal');
    const nc = await connect({ servers: stack.nats.url });
    try {
      const topology = await ensureTopology(nc, loadConfig(stack.env));
      const record = await new WorkspaceStore(topology.workspaces, topology.accessKeys, new Sealer(newKey)).get(
        workspace.workspace_id,
      );
      assert.is(new Sealer(newKey).open(record!.storage!.secret_access_key), defaultKeys.secretKey);
    } finally {
      await nc.close();
    }
    // And back: the rest of the stack's processes hold the first key only.
    const back = await shutterbus({ env: { ...stack.env, SECRETS_KEY_PREVIOUS: newKey } }, 'secrets', 'reseal');
    assert.ok(back.json.workspaces >= 1, back.stderr);

    const cleared = await shutterbus(
      stack,
      'storage',
      'clear',
      '--workspace',
      workspace.workspace_id,
      '--as',
      'owner@example.com',
    );
    assert.is(cleared.code, 0, cleared.stderr);
    assert.is(cleared.json.storage, null);
  },
);

storage('an asynchronous render waits out a storage that is down for a moment', async () => {
  await customer.kill();
  const query = new URLSearchParams({
    url: `${stack.site.url}/`,
    async: 'true',
    webhook_url: `${hookBase}/hook/retry`,
    ...storageParams('retry/shot'),
  });
  const accepted = await call(`${service.base}/api/take?${query}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(accepted.status, 202);
  // The render ends quickly; its first upload attempts find nothing listening.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  await customer.restart();
  await waitFor(() => hooks.some((hook) => hook.path === '/hook/retry'), 'the webhook after the retry', 60_000);
  const hook = hooks.find((h) => h.path === '/hook/retry')!.body;
  assert.is(hook.type, 'render.succeeded', JSON.stringify(hook));
  assert.is((await objectOf('retry/shot.png'))?.contentType, 'image/png');
});

storage('with ALLOW_PRIVATE_TARGETS=false a private storage_endpoint is url_not_allowed naming it', async () => {
  const port = await freePort();
  const config = loadConfig({ ...stack.env, PORT: String(port), ROLES: 'ingress', ALLOW_PRIVATE_TARGETS: 'false' });
  const strict = await startShutterbus(config, createLogger(config, false, createWriteStream(logFile, { flags: 'a' })));
  try {
    // A public address literal as the page (nothing is rendered: the request stops at the check).
    const answer = await call(`${config.baseUrl}/api/take`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
      body: JSON.stringify({ url: 'http://93.184.215.14/', ...storageParams('private/shot') }),
    });
    assert.is(answer.status, 400, JSON.stringify(answer.json));
    assert.is(answer.json!.error_code, 'url_not_allowed');
    assert.equal(
      answer.json!.error_details.map((d: { parameter: string }) => d.parameter),
      ['storage_endpoint'],
    );
    // The CLI keeps the same rule for a workspace's default.
    const cli = await shutterbus(
      { env: { ...stack.env, ALLOW_PRIVATE_TARGETS: 'false' } },
      'storage',
      'set',
      '--workspace',
      workspace.workspace_id,
      '--as',
      'owner@example.com',
      '--endpoint',
      customer.endpoint,
      '--bucket',
      customerKeys.bucket,
      '--access-key-id',
      'K',
      '--secret-access-key',
      'S',
    );
    assert.is(cli.code, 1);
    assert.is(cli.json.error_code, 'url_not_allowed');
  } finally {
    await strict.close();
  }
});

storage("bulk's signed URLs carry the storage secret sealed for the workspace, and upload with it", async () => {
  const bulk = (body: Record<string, unknown>, owner = workspace) =>
    call(`${service.base}/api/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': owner.access_key },
      body: JSON.stringify(body),
    });
  const answer = await bulk({
    options: { url: `${stack.site.url}/`, ...storageParams('bulk/sealed') },
    requests: [{ format: 'png' }],
  });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  const url = answer.json!.responses[0].url as string;
  assert.not.ok(url.includes(customer.secretKey), 'the secret is not in the URL');
  assert.ok(new URL(url).searchParams.get('storage_secret_access_key')?.startsWith('sealed:'), url);

  const used = await usedThisMonth(stack, workspace.workspace_id);
  const fetched = await call(url);
  assert.is(fetched.status, 200, fetched.bytes.toString().slice(0, 200));
  assert.is(fetched.headers.get('x-store-key'), 'bulk/sealed.png');
  assert.ok((await objectOf('bulk/sealed.png'))?.bytes.equals(fetched.bytes), 'uploaded with the opened secret');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used + 1);

  // The sealed secret opens for its own workspace only: another's request naming it is refused.
  const other = await createWorkspace(stack);
  const sealed = new URL(url).searchParams.get('storage_secret_access_key')!;
  const query = new URLSearchParams({
    url: `${stack.site.url}/`,
    ...storageParams('bulk/stolen', sealed),
    access_key: other.access_key,
  });
  const stolen = await call(`${service.base}/api/take?${query}`);
  assert.is(stolen.status, 400, stolen.bytes.toString().slice(0, 200));
  assert.equal(
    stolen.json!.error_details.map((d: { parameter: string }) => d.parameter),
    ['storage_secret_access_key'],
  );
  assert.is(await objectOf('bulk/stolen.png'), null);
});

storage('an animation uploads too: the video under its extension, and the headers say where', async () => {
  const answer = await call(`${service.base}/api/animate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify({
      html: '<h1 style="animation: spin 1s infinite">Moving</h1>',
      duration: 1,
      viewport_width: 320,
      viewport_height: 240,
      ...storageParams('animations/clip'),
    }),
  });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.is(answer.contentType, 'video/mp4');
  assert.is(answer.headers.get('x-store-key'), 'animations/clip.mp4');
  const object = await objectOf('animations/clip.mp4');
  assert.is(object?.contentType, 'video/mp4');
  assert.ok(object!.bytes.equals(answer.bytes), 'the bucket holds the answered video');
});

storage("a monitor with store=true uploads its ticks' captures; it says where, never with the secret", async () => {
  const postMonitor = (body: Record<string, unknown>, owner: Workspace) =>
    call(`${service.base}/api/monitors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': owner.access_key },
      body: JSON.stringify({
        html: '<h1>Watched</h1>',
        interval: 600,
        webhook_url: `${hookBase}/hook/monitor`,
        ...body,
      }),
    });
  // As on /api/take: store=true with nothing to store to is a 400 naming what is missing.
  const bare = await createWorkspace(stack);
  const missing = await postMonitor({ store: true, storage_path: 'monitor/none' }, bare);
  assert.is(missing.status, 400, JSON.stringify(missing.json));
  const named = (missing.json!.error_details as { parameter: string }[]).map((d) => d.parameter);
  assert.ok(named.includes('storage_endpoint'), named.join(', '));

  const created = await postMonitor(storageParams('monitor/latest'), workspace);
  assert.is(created.status, 201, JSON.stringify(created.json));
  assert.equal(created.json!.store, { bucket: customerKeys.bucket, key: 'monitor/latest.png' });
  const id = created.json!.monitor_id as string;
  const shown = await call(`${service.base}/api/monitors/${id}`, { headers: { 'x-access-key': workspace.access_key } });
  assert.not.ok(shown.bytes.toString().includes(customer.secretKey));
  // The first tick runs at once; its capture lands in the customer's bucket as well.
  await waitFor(async () => (await objectOf('monitor/latest.png')) !== null, "the first tick's upload", 30_000, 200);
  const object = (await objectOf('monitor/latest.png'))!;
  assert.is(object.contentType, 'image/png');
  assert.equal((await sharp(object.bytes).metadata()).format, 'png');
  const removed = await call(`${service.base}/api/monitors/${id}`, {
    method: 'DELETE',
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(removed.status, 204);
});

storage('no secret in plain text: not in the NATS store directory, not in the logs', async () => {
  const secrets = [customer.secretKey, 'not-the-secret'];
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? files(full) : [full];
    });
  const natsFiles = files(stack.nats.dir!);
  assert.ok(natsFiles.length > 0);
  for (const file of [...natsFiles, logFile, workerLog, ...files(stack.env.DATA_DIR)]) {
    const text = readFileSync(file).toString('latin1');
    for (const secret of secrets) assert.not.ok(text.includes(secret), `${secret} in ${file}`);
  }
  assert.ok(readFileSync(logFile, 'utf8').includes('"request"'), 'the ingress log has its lines');
  assert.ok(readFileSync(workerLog, 'utf8').includes('"render ended"'), 'the worker log has its lines');
});

storage.run();
