// Still captures and the page kept beside them, end to end: a monitor of a moving page kept quiet by
// disable_animations; format=mhtml and save_formats through /api/take, the status, the webhook, the
// files route and the customer's bucket; real NATS, S3 stores, Chromium.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client as S3Client } from 'minio';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { stillPages } from '../fixtures/still-pages.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { startS3, type S3Server } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const saved = suite('still captures and the page kept beside them');
const customerKeys = { accessKey: 'SAVEDKEY1', secretKey: `saved-${randomBytes(8).toString('hex')}`, bucket: 'kept' };
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let pages: Awaited<ReturnType<typeof stillPages>>;
let customer: S3Server;
let workspace: Workspace;
let receiver: http.Server;
let hookBase: string;
const hooks: Record<string, any>[] = [];

saved.before(async () => {
  stack = await startStack();
  customer = await startS3(customerKeys);
  pages = await stillPages();
  site = await startFixtureSite(pages.routes);
  service = await startService(stack, { MONITOR_MIN_INTERVAL: '2' });
  workspace = await createWorkspace(stack, { quota: 500 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hooks.push({ ...JSON.parse(body), path: req.url });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

saved.after(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await site?.close();
  await pages?.close();
  await customer?.stop();
  await stack?.stop();
});

const take = (body: Record<string, unknown>) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${site.url}/still/archive`, ...body }),
  });

saved('format=mhtml answers the archive as multipart/related', async () => {
  const answer = await take({ format: 'mhtml' });
  assert.is(answer.status, 200, answer.bytes.toString());
  assert.is(answer.contentType, 'multipart/related');
  assert.match(answer.bytes.toString(), /Content-Location: http:\/\/127\.0\.0\.1:\d+\/still\/archive\.css/);
});

saved(
  'save_formats: files of the same render in the answer, the status and the webhook; served sandboxed; one charge',
  async () => {
    const before = await usedThisMonth(stack, workspace.workspace_id);
    const answer = await take({
      save_formats: ['html', 'markdown', 'mhtml'],
      response_type: 'json',
      webhook_url: `${hookBase}/hook`,
    });
    assert.is(answer.status, 200, answer.bytes.toString());
    const urls = answer.json!.saved as Record<string, string>;
    assert.equal(Object.keys(urls).sort(), ['html', 'markdown', 'mhtml']);
    const expected: Record<string, [RegExp, RegExp]> = {
      html: [/^text\/html/, /<h1 id="title">Archived page<\/h1>/],
      markdown: [/^text\/markdown/, /Archived page/],
      mhtml: [/^multipart\/related/, /Content-Type: multipart\/related/],
    };
    for (const [format, [type, content]] of Object.entries(expected)) {
      const file = await call(urls[format]);
      assert.is(file.status, 200);
      assert.match(file.contentType, type);
      assert.match(file.bytes.toString(), content);
      assert.is(file.headers.get('content-security-policy'), 'sandbox');
      assert.is(file.headers.get('x-content-type-options'), 'nosniff');
      assert.ok(urls[format].startsWith(new URL(answer.json!.file_url).origin), 'on the files origin');
    }
    // The image is there as ever.
    assert.is((await sharp((await call(answer.json!.file_url)).bytes).metadata()).format, 'png');
    const status = await call(`${service.base}/api/renders/${answer.json!.render_id}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
    assert.equal(status.json!.saved, urls);
    await waitFor(() => hooks.length >= 1, 'the webhook', 30_000);
    assert.equal(hooks[0].data.saved, urls);
    assert.is((await usedThisMonth(stack, workspace.workspace_id)) - before, 1);
  },
);

saved(
  "store=true: each saved file goes to the customer's bucket under the output's key with its extension",
  async () => {
    const answer = await take({
      format: 'pdf',
      save_formats: ['html', 'mhtml'],
      response_type: 'json',
      store: true,
      storage_path: 'archive/home',
      storage_endpoint: customer.endpoint,
      storage_bucket: customerKeys.bucket,
      storage_access_key_id: customer.accessKey,
      storage_secret_access_key: customer.secretKey,
    });
    assert.is(answer.status, 200, answer.bytes.toString());
    assert.is(answer.json!.store.key, 'archive/home.pdf');
    const endpoint = new URL(customer.endpoint);
    const bucket = new S3Client({
      endPoint: endpoint.hostname,
      port: Number(endpoint.port),
      useSSL: false,
      accessKey: customer.accessKey,
      secretKey: customer.secretKey,
      region: 'us-east-1',
      pathStyle: true,
    });
    const read = async (key: string) => {
      const chunks: Buffer[] = [];
      for await (const chunk of await bucket.getObject(customerKeys.bucket, key)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    assert.is((await read('archive/home.pdf')).subarray(0, 5).toString(), '%PDF-');
    assert.equal(await read('archive/home.html'), (await call(answer.json!.saved.html)).bytes);
    assert.equal(await read('archive/home.mhtml'), (await call(answer.json!.saved.mhtml)).bytes);
  },
);

saved('a monitor of a page with a running animation is quiet with disable_animations', async () => {
  const monitor = async (still: boolean) => {
    const answer = await call(`${service.base}/api/monitors`, {
      method: 'POST',
      headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `${site.url}/still/motion?part=animation&still=${still}`,
        interval: 2,
        webhook_url: `${hookBase}/monitor-${still}`,
        ...(still ? { disable_animations: true } : {}),
      }),
    });
    assert.is(answer.status, 201, answer.bytes.toString());
    return answer.json!.monitor_id as string;
  };
  const stillId = await monitor(true);
  const movingId = await monitor(false);
  await waitFor(
    () => hooks.some((hook) => hook.path === '/monitor-false' && hook.type === 'monitor.changed'),
    'the moving page announced as changed',
    60_000,
  );
  // By now the still monitor ticked as often: four ticks at least, none of them a change.
  const ticks = () => site.hits.get('/still/motion') ?? 0;
  await waitFor(() => ticks() >= 8, 'four ticks of each', 60_000);
  assert.not.ok(
    hooks.some((hook) => hook.path === '/monitor-true'),
    'the still page announced a change (or a failure)',
  );
  for (const id of [stillId, movingId]) {
    await call(`${service.base}/api/monitors/${id}`, {
      method: 'DELETE',
      headers: { 'x-access-key': workspace.access_key },
    });
  }
});

saved.run();
