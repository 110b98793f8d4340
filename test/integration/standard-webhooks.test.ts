// Real deliveries verified by the Standard Webhooks library as it is: real NATS, S3 store, Chromium and sender.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryIsGenuine as verifyWebhook } from '../../src/client/webhook.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const standard = suite('Standard Webhooks: real deliveries verify with the standardwebhooks package');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let receiver: http.Server;
let hookBase: string;

/** One POST the receiver got: its headers and its raw body bytes. */
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
const received: Received[] = [];

standard.before(async () => {
  stack = await startStack();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  service = await startService(stack, { ROLES: 'ingress,render,delivery' });
  workspace = await createWorkspace(stack);
});
standard.after(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

standard('a succeeded and a failed render: both deliveries verify, a tampered body is refused', async () => {
  for (const [name, target] of [
    ['ok', '/page/standard-ok'],
    ['failed', '/status/500'],
  ]) {
    const query = new URLSearchParams({
      url: `${stack.site.url}${target}`,
      async: 'true',
      webhook_url: `${hookBase}/hook/${name}`,
    });
    const answer = await call(`${service.base}/api/take?${query}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
    assert.is(answer.status, 202, JSON.stringify(answer.json));
  }
  await waitFor(() => received.length >= 2, 'both deliveries');

  const webhook = new Webhook(workspace.secret_key, { format: 'raw' });
  for (const delivery of received) {
    const headers = delivery.headers as Record<string, string>;
    const event = webhook.verify(delivery.body, headers) as { id: string; type: string; data: { render_id: string } };
    assert.is(event.id, headers['webhook-id'], delivery.path);
    assert.is(headers['webhook-id'], headers['x-webhook-id']);
    assert.is(headers['webhook-timestamp'], headers['x-webhook-timestamp']);
    assert.is(event.type, delivery.path === '/hook/ok' ? 'render.succeeded' : 'render.failed');

    const tampered = Buffer.from(
      delivery.body.toString('utf8').replace(event.data.render_id, '00000000-0000-0000-0000-000000000000'),
    );
    assert.not.equal(tampered, delivery.body);
    assert.throws(() => webhook.verify(tampered, headers), /No matching signature/, 'a tampered body is refused');
    assert.throws(
      () => new Webhook('sk_someone_else', { format: 'raw' }).verify(delivery.body, headers),
      /No matching signature/,
    );

    // Our client accepts the Standard Webhooks set alone, and refuses it on the tampered body.
    const only = {
      'webhook-id': headers['webhook-id'],
      'webhook-timestamp': headers['webhook-timestamp'],
      'webhook-signature': headers['webhook-signature'],
    };
    assert.ok(verifyWebhook(workspace.secret_key, only, delivery.body));
    assert.not.ok(verifyWebhook(workspace.secret_key, only, tampered));
  }
  assert.is(received.length, 2, 'one delivery each');
});

standard.run();
