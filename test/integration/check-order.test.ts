// The order of the checks for a POST whose body cannot be read (not JSON, no JSON object, the wrong
// Content-Type, no body): access key (401), email (403), signature (403 not valid, then 403
// required) come first, as for every other bad parameter; only then the 400 about the body. A GET
// of /api/usage or /api/animate is checked in the same order.
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { createSealer } from '../../src/secrets/key.ts';
import { hmacHex } from '../../src/signing.ts';
import { WorkspaceStore, type Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const order = suite('check order of a POST with an unreadable body');
let stack: TestStack;
let service: TestService;
let verified: Workspace;
let unverified: Workspace;
let strict: Workspace;

order.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  verified = await createWorkspace(stack);
  unverified = await createWorkspace(stack, { plan: 'free', verified: false });
  const nc = await connect({ servers: stack.nats.url.split(',') });
  try {
    const config = loadConfig(stack.env);
    const topology = await ensureTopology(nc, config);
    const store = new WorkspaceStore(topology.workspaces, topology.accessKeys, createSealer(config));
    const created = await createWorkspace(stack);
    strict = await store.update(created.workspace_id, (current) => ({ ...current, require_signed_requests: true }));
  } finally {
    await nc.close();
  }
  // The setting reaches the service through its workspace watch.
  await waitFor(
    async () =>
      (await send('/api/take', 'application/json', '{}', { 'x-access-key': strict.access_key })).json?.error_code ===
      'signature_is_required',
    'the strict workspace',
  );
});
order.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** A POST of `body` as `contentType` (none when undefined) with `headers`. */
function send(path: string, contentType: string | undefined, body: string, headers: Record<string, string> = {}) {
  return call(`${service.base}${path}`, {
    method: 'POST',
    headers: { ...(contentType ? { 'content-type': contentType } : {}), ...headers },
    // Bytes, not a string: fetch would label a string text/plain.
    ...(body === '' && contentType === undefined ? {} : { body: new Uint8Array(Buffer.from(body)) }),
  });
}

/** Bodies that can never be a request: each is a 400 once the caller got through. */
const unreadable: { what: string; contentType?: string; body: string; parameter: string }[] = [
  { what: 'JSON that does not parse', contentType: 'application/json', body: '{"url": ', parameter: 'body' },
  { what: 'an empty JSON body', contentType: 'application/json', body: '', parameter: 'body' },
  { what: 'a JSON array', contentType: 'application/json', body: '[]', parameter: 'body' },
  { what: 'a text/plain body', contentType: 'text/plain', body: 'url=https://example.com', parameter: 'Content-Type' },
  { what: 'a form body', contentType: 'application/x-www-form-urlencoded', body: 'url=x', parameter: 'Content-Type' },
  { what: 'no Content-Type and no body', body: '', parameter: 'Content-Type' },
  { what: 'JSON bytes without a Content-Type', body: '{"url": "https://example.com"}', parameter: 'Content-Type' },
];

for (const path of ['/api/take', '/api/bulk', '/api/animate']) {
  for (const { what, contentType, body, parameter } of unreadable) {
    order(`${path}, ${what}: 401, 403 email, 403 not valid, 403 required, then 400`, async () => {
      const codeOf = async (headers: Record<string, string>) => {
        const answer = await send(path, contentType, body, headers);
        return `${answer.status} ${answer.json?.error_code}`;
      };
      assert.is(await codeOf({}), '401 access_key_invalid', 'no key');
      assert.is(await codeOf({ 'x-access-key': 'not-a-key' }), '401 access_key_invalid', 'a wrong key');
      assert.is(
        await codeOf({ 'x-access-key': unverified.access_key, 'x-signature': '0'.repeat(64) }),
        '403 email_not_verified',
        'an unverified free workspace',
      );
      assert.is(
        await codeOf({ 'x-access-key': verified.access_key, 'x-signature': '0'.repeat(64) }),
        '403 signature_is_not_valid',
        'a wrong signature',
      );
      assert.is(
        await codeOf({ 'x-access-key': strict.access_key }),
        '403 signature_is_required',
        'no signature where one is required',
      );
      // A signature over the body bytes as sent matches: the caller got through, and the body is the problem.
      const answer = await send(path, contentType, body, {
        'x-access-key': strict.access_key,
        // Bulk binds its method and path into what is signed (docs/api.md, "Signatures").
        'x-signature': hmacHex(strict.secret_key, path === '/api/bulk' ? `POST ${path}\n${body}` : body),
      });
      assert.is(answer.status, 400, JSON.stringify(answer.json));
      assert.is(answer.json?.error_code, 'request_not_valid');
      assert.equal(
        answer.json?.error_details?.map((d: { parameter: string }) => d.parameter),
        [parameter],
        JSON.stringify(answer.json),
      );
    });
  }
}

order('GET /api/usage and /api/animate: 401, 403 email, 403 not valid, 403 required, then the answer', async () => {
  const get = async (path: string, query: string) => {
    const answer = await call(`${service.base}${path}?${query}`);
    return `${answer.status} ${answer.json?.error_code ?? ''}`.trim();
  };
  // /api/usage binds its method and path into what is signed; /api/animate signs the query alone.
  const signed = (workspace: Workspace, query: string, path: string) =>
    `${query}&signature=${hmacHex(workspace.secret_key, path === '/api/usage' ? `GET ${path}\n${query}` : query)}`;
  for (const [path, params] of [
    ['/api/usage', ''],
    // No url: past the caller's checks it is the parameters' 400.
    ['/api/animate', 'duration=1&'],
  ] as const) {
    assert.is(await get(path, `${params}access_key=not-a-key`), '401 access_key_invalid', path);
    assert.is(
      await get(path, `${params}access_key=${unverified.access_key}&signature=${'0'.repeat(64)}`),
      '403 email_not_verified',
      path,
    );
    assert.is(
      await get(path, `${params}access_key=${verified.access_key}&signature=${'0'.repeat(64)}`),
      '403 signature_is_not_valid',
      path,
    );
    assert.is(await get(path, `${params}access_key=${strict.access_key}`), '403 signature_is_required', path);
    const through = await get(path, signed(strict, `${params}access_key=${strict.access_key}`, path));
    assert.is(through, path === '/api/usage' ? '200' : '400 request_not_valid', path);
  }
});

order("a POST's parameters in its query string are refused, each named, with the body's problems", async () => {
  const parametersOf = async (path: string, body: Record<string, unknown>) => {
    const answer = await call(`${service.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': verified.access_key },
      body: JSON.stringify(body),
    });
    assert.is(answer.status, 400, JSON.stringify(answer.json));
    assert.is(answer.json?.error_code, 'request_not_valid');
    return answer.json?.error_details.map((detail: { parameter: string }) => detail.parameter).sort();
  };
  // Unsigned by X-Signature and never read: a format there would be silently a PNG.
  assert.equal(await parametersOf('/api/take?format=jpeg&full_page=true', { url: 'https://example.com/' }), [
    'format',
    'full_page',
  ]);
  assert.equal(await parametersOf('/api/take?format=jpeg', { url: 'https://example.com/', probe: 1 }), [
    'format',
    'probe',
  ]);
  // The access key may come in the query of a POST: only the body's unknown parameter is named.
  const keyInQuery = await call(`${service.base}/api/take?access_key=${verified.access_key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://example.com/', probe: 1 }),
  });
  assert.equal(
    keyInQuery.json?.error_details.map((detail: { parameter: string }) => detail.parameter),
    ['probe'],
  );
});

order.run();
