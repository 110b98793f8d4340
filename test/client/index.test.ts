// The customer client: signatures the service accepts, and webhook verification.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { signBody, signUrl, verifyWebhook } from '../../src/client/index.ts';
import { webhookHeaders } from '../../src/delivery/send.ts';
import { signatureMatches, splitSignedQuery } from '../../src/signing.ts';

const test = suite('client: signUrl, signBody, verifyWebhook');
const keys = { accessKey: 'ak_test', secretKey: 'sk_test_secret' };

test('signUrl: every parameter and access_key in order, lists repeated, signature last and valid', () => {
  const url = new URL(signUrl({ url: 'https://example.com/a b?x=1', format: 'png', fail_if_content_missing: ['Log in', 'Empty'], full_page: true }, keys, 'https://shots.example/'));
  assert.is(url.origin + url.pathname, 'https://shots.example/api/take');
  const raw = url.search.slice(1);
  const split = splitSignedQuery(raw);
  assert.ok(typeof split === 'object');
  if (typeof split !== 'object') return;
  assert.is(split.signed, 'url=https%3A%2F%2Fexample.com%2Fa+b%3Fx%3D1&format=png&fail_if_content_missing=Log+in&fail_if_content_missing=Empty&full_page=true&access_key=ak_test');
  assert.ok(signatureMatches(keys.secretKey, split.signed, split.signature));
  assert.not.ok(signatureMatches('sk_other', split.signed, split.signature));
});

test('signBody: the exact string is signed; a re-serialised body does not match', () => {
  const { body, signature, headers } = signBody({ url: 'https://example.com', fail_if_content_missing: ['a', 'b'] }, keys);
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
  const headers = webhookHeaders('wh_1', body, keys.secretKey, Math.floor(Date.now() / 1000));
  assert.not.ok(verifyWebhook(keys.secretKey, headers, '{"id": "wh_1"}'));
  assert.not.ok(verifyWebhook('sk_other', headers, body));
  assert.not.ok(verifyWebhook(keys.secretKey, { ...headers, 'x-signature': 'zz' }, body));
  assert.not.ok(verifyWebhook(keys.secretKey, { ...headers, 'x-signature': headers['x-signature'].toUpperCase() }, body));
  const { 'x-signature': _dropped, ...unsigned } = headers;
  assert.not.ok(verifyWebhook(keys.secretKey, unsigned, body));
});

test.run();
