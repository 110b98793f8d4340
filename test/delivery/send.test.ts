// One webhook attempt against a real receiver on 127.0.0.1: a receiver that never answers is given
// up after ATTEMPT_TIMEOUT_MS, a redirect is not followed, and Retry-After is read in both its forms.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ATTEMPT_TIMEOUT_MS, retryAfterSeconds, sendWebhook } from '../../src/delivery/send.ts';

const test = suite('webhook attempt');

const paths: string[] = [];
let server: http.Server;
let base: string;

test.before(async () => {
  server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    if (req.url === '/silent') return; // Never answers.
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/ok' }).end();
      return;
    }
    if (req.url === '/later') {
      res.writeHead(503, { 'retry-after': new Date(Date.now() + 90_000).toUTCString() }).end();
      return;
    }
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const attempt = (path: string) =>
  sendWebhook(
    { id: 'msg_test', webhookUrl: `${base}${path}`, body: '{}', secretKey: 'sk_test' },
    { allowPrivate: true, param: 'webhook_url' },
  );

test('Retry-After is read as seconds or as an HTTP date; anything else is not read', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  assert.is(retryAfterSeconds('120', now), 120);
  assert.is(retryAfterSeconds('Sun, 29 Nov 2026 12:01:30 GMT', now), 90);
  assert.is(retryAfterSeconds('Sun, 29 Nov 2026 11:00:00 GMT', now), 0);
  assert.is(retryAfterSeconds('soon', now), undefined);
  assert.is(retryAfterSeconds(undefined, now), undefined);
});

test('a 503 with an HTTP-date Retry-After fails the attempt with the delay it asks for', async () => {
  const result = await attempt('/later');
  assert.is(result.outcome, 'failed');
  assert.is(result.outcome === 'failed' && result.status, 503);
  const delay = result.outcome === 'failed' ? (result.retryAfterSeconds ?? 0) : 0;
  assert.ok(delay >= 88 && delay <= 90, `retry after ${delay} s`);
});

test('a redirect is not followed: the attempt failed with its status', async () => {
  const before = paths.length;
  const result = await attempt('/moved');
  assert.equal(result, { outcome: 'failed', status: 302, error: 'HTTP 302' });
  assert.equal(paths.slice(before), ['/moved']);
});

test('a receiver that never answers is given up after the attempt limit', async () => {
  const started = Date.now();
  const result = await attempt('/silent');
  const took = Date.now() - started;
  assert.is(result.outcome, 'failed');
  assert.match(result.outcome === 'failed' ? result.error : '', `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`);
  assert.ok(took >= ATTEMPT_TIMEOUT_MS - 100, `gave up after ${took} ms`);
});

test.run();
