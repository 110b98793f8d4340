// The customer client: signatures the service accepts, and webhook verification.

import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Shutterbus,
  ShutterbusError,
  signRequest,
  verifyWebhook,
  WebhookVerificationError,
} from '../../src/client/index.ts';
import { deliveryIsGenuine } from '../../src/client/webhook.ts';
import { webhookHeaders } from '../../src/delivery/send.ts';
import { signatureMatches, splitSignedQuery } from '../../src/signing.ts';

const test = suite('client: signed URLs and calls, webhook verification');
const keys = { accessKey: 'ak_test', secretKey: 'sk_test_secret' };

test('signUrl: every parameter and access_key in order, lists repeated, signature last and valid', () => {
  const client = new Shutterbus({ ...keys, baseUrl: 'https://shots.example/' });
  const url = new URL(
    client.signUrl({
      url: 'https://example.com/a b?x=1',
      format: 'png',
      fail_if_content_missing: ['Log in', 'Empty'],
      full_page: true,
    }),
  );
  assert.is(url.origin + url.pathname, 'https://shots.example/api/take');
  const raw = url.search.slice(1);
  const split = splitSignedQuery(raw);
  assert.ok(typeof split === 'object');
  if (typeof split !== 'object') return;
  assert.is(
    split.signed,
    'url=https%3A%2F%2Fexample.com%2Fa+b%3Fx%3D1&format=png&fail_if_content_missing=Log+in&fail_if_content_missing=Empty&full_page=true&access_key=ak_test',
  );
  assert.ok(signatureMatches(keys.secretKey, split.signed, split.signature));
  assert.not.ok(signatureMatches('sk_other', split.signed, split.signature));
  const animate = new URL(client.signAnimateUrl({ url: 'https://example.com', format: 'gif', duration: 2 }));
  assert.is(animate.pathname, '/api/animate');
  const unsigned = new Shutterbus({ accessKey: keys.accessKey, baseUrl: 'https://shots.example/api' });
  assert.is(
    unsigned.signUrl({ url: 'https://example.com' }),
    'https://shots.example/api/take?url=https%3A%2F%2Fexample.com&access_key=ak_test',
    'no secret key: no signature; a base URL ending in /api is taken as ScreenshotOne SDK users give it',
  );
});

/** A recording HTTP server standing in for the wire: what the client sends, byte for byte. */
async function recorder(
  answer: (request: { method: string; url: string }) => [number, Record<string, string>, string],
) {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
    const [status, headers, body] = answer({ method: req.method!, url: req.url! });
    res.writeHead(status, headers).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { seen, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

test('calls: take signs its exact body; every other endpoint binds its method and path into the signature', async () => {
  const wire = await recorder(({ url }) =>
    url.startsWith('/api/take')
      ? [200, { 'content-type': 'image/png' }, 'PNG']
      : [200, { 'content-type': 'application/json' }, '{}'],
  );
  try {
    const client = new Shutterbus({ ...keys, baseUrl: wire.base });
    const bytes = await client.take({ url: 'https://example.com', hide_selectors: ['.a'], full_page: true });
    assert.is(new TextDecoder().decode(bytes), 'PNG');
    await client.usage();
    await client.monitors.update('mon_1', { status: 'paused' });
    await client.monitors.remove('mon_1');
    await client.status('2b3c');
    const [take, usage, patch, remove, status] = wire.seen;
    assert.is(take.method, 'POST');
    assert.is(take.body, '{"url":"https://example.com","hide_selectors":[".a"],"full_page":true}');
    assert.is(take.headers['x-access-key'], 'ak_test');
    assert.ok(signatureMatches(keys.secretKey, take.body, String(take.headers['x-signature'])), 'ScreenshotOne scheme');
    assert.is(usage.url, `/api/usage?signature=${signRequest('GET', '/api/usage', '', keys.secretKey)}`);
    assert.ok(signatureMatches(keys.secretKey, 'GET /api/usage\n', usage.url.split('signature=')[1]));
    assert.is(patch.body, '{"status":"paused"}');
    assert.ok(
      signatureMatches(
        keys.secretKey,
        'PATCH /api/monitors/mon_1\n{"status":"paused"}',
        String(patch.headers['x-signature']),
      ),
    );
    assert.ok(signatureMatches(keys.secretKey, 'DELETE /api/monitors/mon_1\n', remove.url.split('signature=')[1]));
    assert.ok(signatureMatches(keys.secretKey, 'GET /api/renders/2b3c\n', status.url.split('signature=')[1]));
    // Without the secret key nothing is signed, and the key never rides in the URL.
    await new Shutterbus({ accessKey: keys.accessKey, baseUrl: wire.base }).usage();
    assert.is(wire.seen.at(-1)!.url, '/api/usage');
    assert.is(wire.seen.at(-1)!.headers['x-access-key'], 'ak_test');
  } finally {
    wire.close();
  }
});

test('a refusal is a ShutterbusError with its code, status, details and render id', async () => {
  const body = {
    is_successful: false,
    error_code: 'request_not_valid',
    error_message: 'The request is not valid.',
    error_details: [{ parameter: 'viewport_width', message: 'must be from 100 to 3840' }],
  };
  const wire = await recorder(() => [
    400,
    { 'content-type': 'application/json', 'x-render-id': 'r_1' },
    JSON.stringify(body),
  ]);
  try {
    const client = new Shutterbus({ ...keys, baseUrl: wire.base });
    const err = await client.takeJson({ url: 'https://example.com', viewport_width: 1 }).catch((e: unknown) => e);
    assert.instance(err, ShutterbusError);
    const refusal = err as ShutterbusError;
    assert.is(refusal.errorCode, 'request_not_valid');
    assert.is(refusal.status, 400);
    assert.equal(refusal.errorDetails, body.error_details);
    assert.is(refusal.renderId, 'r_1');
    assert.is(JSON.parse(wire.seen[0].body).response_type, 'json');
  } finally {
    wire.close();
  }
  const down = await new Shutterbus({ ...keys, baseUrl: wire.base }).usage().catch((e: unknown) => e);
  assert.is((down as ShutterbusError).errorCode, 'network_error');
  assert.is((down as ShutterbusError).status, 0);
});

test('verifyWebhook answers the event of a genuine delivery and throws for anything else', () => {
  const body = '{"id":"wh_1","type":"render.succeeded","created_at":"2026-01-01T00:00:00Z","data":{"render_id":"r"}}';
  const headers = webhookHeaders('wh_1', body, keys.secretKey, Math.floor(Date.now() / 1000));
  const event = verifyWebhook({ secret: keys.secretKey, headers, body });
  assert.is(event.type, 'render.succeeded');
  assert.is(event.data.render_id, 'r');
  assert.is(
    verifyWebhook({ secret: keys.secretKey, headers: new Headers(headers), body: Buffer.from(body) }).id,
    'wh_1',
  );
  const refused = (input: Parameters<typeof verifyWebhook>[0]) => {
    try {
      verifyWebhook(input);
    } catch (err) {
      assert.instance(err, WebhookVerificationError);
      return (err as WebhookVerificationError).reason;
    }
    return 'accepted';
  };
  assert.is(refused({ secret: 'sk_other', headers, body }), 'signature');
  assert.is(refused({ secret: keys.secretKey, headers, body: body.replace('"r"', '"s"') }), 'signature');
  assert.is(refused({ secret: keys.secretKey, headers, body, now: Date.now() + 301_000 }), 'timestamp');
  assert.is(
    refused({ secret: keys.secretKey, headers, body, now: Date.now() + 301_000, toleranceSeconds: 600 }),
    'accepted',
  );
});

test('verifyWebhook accepts what the sender signs, within the tolerance either way', () => {
  const body = '{"id":"wh_1","type":"render.succeeded"}';
  const now = Date.now();
  const at = (offset: number) => webhookHeaders('wh_1', body, keys.secretKey, Math.floor(now / 1000) + offset);
  assert.ok(deliveryIsGenuine(keys.secretKey, at(0), body, 300, now));
  assert.ok(deliveryIsGenuine(keys.secretKey, new Headers(at(-299)), Buffer.from(body), 300, now));
  assert.not.ok(deliveryIsGenuine(keys.secretKey, at(-301), body, 300, now), 'too old');
  assert.not.ok(deliveryIsGenuine(keys.secretKey, at(301), body, 300, now), 'too far ahead');
  assert.ok(deliveryIsGenuine(keys.secretKey, at(-1000), body, 3600, now), 'a wider tolerance');
});

test('verifyWebhook rejects a changed body, another key, a bad or missing signature', () => {
  const body = '{"id":"wh_1"}';
  // Our header set alone: the Standard Webhooks set would verify the delivery by itself.
  const {
    'webhook-id': _id,
    'webhook-timestamp': _timestamp,
    'webhook-signature': _signature,
    ...headers
  } = webhookHeaders('wh_1', body, keys.secretKey, Math.floor(Date.now() / 1000));
  assert.not.ok(deliveryIsGenuine(keys.secretKey, headers, '{"id": "wh_1"}'));
  assert.not.ok(deliveryIsGenuine('sk_other', headers, body));
  assert.not.ok(deliveryIsGenuine(keys.secretKey, { ...headers, 'x-signature': 'zz' }, body));
  assert.not.ok(
    deliveryIsGenuine(keys.secretKey, { ...headers, 'x-signature': headers['x-signature'].toUpperCase() }, body),
  );
  const { 'x-signature': _dropped, ...unsigned } = headers;
  assert.not.ok(deliveryIsGenuine(keys.secretKey, unsigned, body));
});

test('a delivery carries the Standard Webhooks headers, which its own library verifies as it is', () => {
  const body = '{"id":"wh_1","type":"render.succeeded","data":{"url":"https://example.com/é"}}';
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = webhookHeaders('wh_1', body, keys.secretKey, timestamp);
  assert.is(headers['webhook-id'], 'wh_1');
  assert.is(headers['webhook-timestamp'], String(timestamp));
  assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  const webhook = new Webhook(keys.secretKey, { format: 'raw' });
  assert.equal(webhook.verify(body, headers), JSON.parse(body));
  assert.is(
    webhook.sign('wh_1', new Date(timestamp * 1000), body),
    headers['webhook-signature'],
    'the same signature the library makes',
  );
  assert.throws(() => webhook.verify(body.replace('succeeded', 'failed'), headers), 'a changed body is refused');
  assert.throws(() => new Webhook('sk_other', { format: 'raw' }).verify(body, headers), 'another key is refused');
});

test('verifyWebhook accepts either header set alone, and neither when the body changed', () => {
  const body = '{"id":"wh_2"}';
  const now = Date.now();
  const all = webhookHeaders('wh_2', body, keys.secretKey, Math.floor(now / 1000));
  const own = {
    'x-webhook-id': all['x-webhook-id'],
    'x-webhook-timestamp': all['x-webhook-timestamp'],
    'x-signature': all['x-signature'],
  };
  const standard = {
    'webhook-id': all['webhook-id'],
    'webhook-timestamp': all['webhook-timestamp'],
    'webhook-signature': all['webhook-signature'],
  };
  for (const [name, headers] of Object.entries({ all, own, standard })) {
    assert.ok(deliveryIsGenuine(keys.secretKey, headers, body, 300, now), name);
    assert.ok(
      deliveryIsGenuine(keys.secretKey, new Headers(headers), Buffer.from(body), 300, now),
      `${name} as fetch Headers`,
    );
    assert.not.ok(deliveryIsGenuine(keys.secretKey, headers, '{"id":"wh_3"}', 300, now), `${name}: changed body`);
    assert.not.ok(deliveryIsGenuine('sk_other', headers, body, 300, now), `${name}: another key`);
    assert.not.ok(deliveryIsGenuine(keys.secretKey, headers, body, 300, now + 301_000), `${name}: too old`);
  }
  // Standard Webhooks: several signatures, space-separated; one v1 that matches is enough.
  const rotated = {
    ...standard,
    'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} v2,abc ${standard['webhook-signature']}`,
  };
  assert.ok(deliveryIsGenuine(keys.secretKey, rotated, body, 300, now));
  assert.not.ok(
    deliveryIsGenuine(keys.secretKey, { ...standard, 'webhook-id': 'wh_other' }, body, 300, now),
    'the id is signed',
  );
  assert.not.ok(
    deliveryIsGenuine(
      keys.secretKey,
      { ...standard, 'webhook-signature': standard['webhook-signature'].replace('v1,', 'v2,') },
      body,
      300,
      now,
    ),
  );
  assert.not.ok(deliveryIsGenuine(keys.secretKey, { ...standard, 'webhook-signature': 'v1,' }, body, 300, now));
});

test.run();
