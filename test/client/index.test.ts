// The customer client: signatures the service accepts, and webhook verification.

import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { signBody, signUrl, verifyWebhook } from '../../src/client/index.ts';
import { webhookHeaders } from '../../src/delivery/send.ts';
import { signatureMatches, splitSignedQuery } from '../../src/signing.ts';

const test = suite('client: signUrl, signBody, verifyWebhook');
const keys = { accessKey: 'ak_test', secretKey: 'sk_test_secret' };

test('signUrl: every parameter and access_key in order, lists repeated, signature last and valid', () => {
  const url = new URL(
    signUrl(
      {
        url: 'https://example.com/a b?x=1',
        format: 'png',
        fail_if_content_missing: ['Log in', 'Empty'],
        full_page: true,
      },
      keys,
      'https://shots.example/',
    ),
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
});

test('signBody: the exact string is signed; a re-serialised body does not match', () => {
  const { body, signature, headers } = signBody(
    { url: 'https://example.com', fail_if_content_missing: ['a', 'b'] },
    keys,
  );
  assert.is(body, '{"url":"https://example.com","fail_if_content_missing":["a","b"]}');
  assert.is(headers['x-signature'], signature);
  assert.is(headers['x-access-key'], 'ak_test');
  assert.ok(signatureMatches(keys.secretKey, body, signature));
  assert.not.ok(signatureMatches(keys.secretKey, JSON.stringify(JSON.parse(body), null, 1), signature));
});

test('verifyWebhook accepts what the sender signs, within the tolerance either way', () => {
  const body = '{"id":"wh_1","type":"render.succeeded"}';
  const now = Date.now();
  const at = (offset: number) => webhookHeaders('wh_1', body, keys.secretKey, Math.floor(now / 1000) + offset);
  assert.ok(verifyWebhook(keys.secretKey, at(0), body, 300, now));
  assert.ok(verifyWebhook(keys.secretKey, new Headers(at(-299)), Buffer.from(body), 300, now));
  assert.not.ok(verifyWebhook(keys.secretKey, at(-301), body, 300, now), 'too old');
  assert.not.ok(verifyWebhook(keys.secretKey, at(301), body, 300, now), 'too far ahead');
  assert.ok(verifyWebhook(keys.secretKey, at(-1000), body, 3600, now), 'a wider tolerance');
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
  assert.not.ok(verifyWebhook(keys.secretKey, headers, '{"id": "wh_1"}'));
  assert.not.ok(verifyWebhook('sk_other', headers, body));
  assert.not.ok(verifyWebhook(keys.secretKey, { ...headers, 'x-signature': 'zz' }, body));
  assert.not.ok(
    verifyWebhook(keys.secretKey, { ...headers, 'x-signature': headers['x-signature'].toUpperCase() }, body),
  );
  const { 'x-signature': _dropped, ...unsigned } = headers;
  assert.not.ok(verifyWebhook(keys.secretKey, unsigned, body));
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
    assert.ok(verifyWebhook(keys.secretKey, headers, body, 300, now), name);
    assert.ok(
      verifyWebhook(keys.secretKey, new Headers(headers), Buffer.from(body), 300, now),
      `${name} as fetch Headers`,
    );
    assert.not.ok(verifyWebhook(keys.secretKey, headers, '{"id":"wh_3"}', 300, now), `${name}: changed body`);
    assert.not.ok(verifyWebhook('sk_other', headers, body, 300, now), `${name}: another key`);
    assert.not.ok(verifyWebhook(keys.secretKey, headers, body, 300, now + 301_000), `${name}: too old`);
  }
  // Standard Webhooks: several signatures, space-separated; one v1 that matches is enough.
  const rotated = {
    ...standard,
    'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} v2,abc ${standard['webhook-signature']}`,
  };
  assert.ok(verifyWebhook(keys.secretKey, rotated, body, 300, now));
  assert.not.ok(
    verifyWebhook(keys.secretKey, { ...standard, 'webhook-id': 'wh_other' }, body, 300, now),
    'the id is signed',
  );
  assert.not.ok(
    verifyWebhook(
      keys.secretKey,
      { ...standard, 'webhook-signature': standard['webhook-signature'].replace('v1,', 'v2,') },
      body,
      300,
      now,
    ),
  );
  assert.not.ok(verifyWebhook(keys.secretKey, { ...standard, 'webhook-signature': 'v1,' }, body, 300, now));
});

test.run();
