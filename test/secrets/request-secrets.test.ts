// The secret render options (proxy, openai_api_key, pdf_password, pdf_owner_password) cross the RENDERS stream sealed: sealed by the
// ingress, opened by the worker, refused rather than sent in plain text when no sealer is at hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Sealer } from '../../src/secrets/sealer.ts';
import { openRequestSecrets, sealRequestSecrets } from '../../src/secrets/request-secrets.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import type { RenderRequest } from '../../src/domain/render.ts';

const test = suite('secrets/request-secrets');
const sealer = new Sealer('k'.repeat(32));
const request = (options: Record<string, unknown>): RenderRequest => ({
  render_id: 'r1',
  workspace_id: 'w1',
  created_at: '2026-01-01T00:00:00Z',
  options: { ...renderDefaults, url: 'https://example.com/', ...options },
});

test('proxy and openai_api_key are sealed in the message and opened for the render', () => {
  const plain = request({
    proxy: 'http://user:secret-pass@proxy.example:8080',
    openai_api_key: 'sk-secret',
    vision_prompt: 'x',
  });
  const sealed = sealRequestSecrets(plain, sealer);
  const text = JSON.stringify(sealed);
  assert.not.match(text, 'secret-pass');
  assert.not.match(text, 'sk-secret');
  assert.ok(Sealer.isSealed(sealed.options.proxy) && Sealer.isSealed(sealed.options.openai_api_key));
  assert.is(plain.options.proxy, 'http://user:secret-pass@proxy.example:8080', 'the request itself is not changed');
  const opened = openRequestSecrets(JSON.parse(text), sealer);
  assert.equal(opened.options, plain.options);
});

test("a PDF's passwords are sealed in the message and opened for the render", () => {
  const plain = request({ format: 'pdf', pdf_password: 'open-secret', pdf_owner_password: 'owner-secret' });
  const sealed = sealRequestSecrets(plain, sealer);
  const text = JSON.stringify(sealed);
  assert.not.match(text, 'open-secret');
  assert.not.match(text, 'owner-secret');
  assert.equal(openRequestSecrets(JSON.parse(text), sealer).options, plain.options);
});

test('authorization, cookies and headers are sealed item by item and opened for the render', () => {
  const plain = request({
    authorization: 'Bearer secret-token',
    cookies: ['session=secret-cookie; Path=/', 'other=2'],
    headers: ['X-Api-Key: secret-header', 'sealed:v1:written by the customer'],
  });
  const sealed = sealRequestSecrets(plain, sealer);
  const text = JSON.stringify(sealed);
  for (const secret of ['secret-token', 'secret-cookie', 'secret-header', 'other=2', 'written by the customer'])
    assert.not.match(text, secret);
  assert.is(sealed.options.cookies.length, 2, 'a list keeps its shape');
  assert.ok(sealed.options.headers.every((item) => Sealer.isSealed(item)));
  assert.equal(openRequestSecrets(JSON.parse(text), sealer).options, plain.options);
  // A message written before they were sealed opens as it is.
  const legacy = request({ authorization: 'Bearer old', cookies: ['a=1'], headers: ['A: b'] });
  assert.equal(openRequestSecrets(legacy, sealer).options, legacy.options);
});

test("a merge's sources have their secret options sealed too", () => {
  const plain: RenderRequest = {
    ...request({ format: 'pdf', pdf_password: 'merge-secret' }),
    kind: 'merge',
    sources: [{}, { authorization: 'Bearer source-token', headers: ['X-Key: source-header'], url: null }],
  };
  const text = JSON.stringify(sealRequestSecrets(plain, sealer));
  for (const secret of ['merge-secret', 'source-token', 'source-header']) assert.not.match(text, secret);
  const opened = openRequestSecrets(JSON.parse(text), sealer);
  assert.equal(opened.sources, plain.sources);
  assert.equal(opened.options, plain.options);
});

test('a request without secrets is passed as it is, with or without a sealer', () => {
  const plain = request({});
  assert.is(sealRequestSecrets(plain, undefined), plain);
  assert.is(openRequestSecrets(plain, undefined), plain);
});

test('a secret and no sealer: refused, never sent in plain text', () => {
  assert.throws(() => sealRequestSecrets(request({ proxy: 'http://a:b@p.example:1' }), undefined), /no sealer/);
  assert.throws(
    () => openRequestSecrets(sealRequestSecrets(request({ openai_api_key: 'k' }), sealer), undefined),
    /no sealer/,
  );
});

test.run();
