import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, usedThisMonth, type TestService, type TestStack } from '../helpers/service.ts';

const auth = suite('workspaces: keys, email rule, signatures, setting, quota');
let stack: TestStack;
let service: TestService;

auth.before(async () => {
  stack = await startStack();
  service = await startService(stack);
});
auth.after(async () => {
  await service?.close();
  await stack?.stop();
});

const create = async (...flags: string[]) => {
  const result = await shutterbus(stack, 'workspace', 'create', ...flags);
  assert.is(result.code, 0, result.stderr);
  return result.json;
};
const ready = async (...flags: string[]) => {
  const workspace = await create('--owner', 'owner@example.com', ...flags);
  assert.is(
    (await shutterbus(stack, 'member', 'verify', '--workspace', workspace.workspace_id, '--email', 'owner@example.com'))
      .code,
    0,
  );
  return workspace;
};
const get = (query: string, headers: Record<string, string> = {}) =>
  call(`${service.base}/api/take?${query}`, { headers });
const post = (body: string, headers: Record<string, string> = {}) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
const codeOf = (answer: { json?: Record<string, any> }) => answer.json?.error_code;
const page = (path: string) => encodeURIComponent(`${stack.site.url}${path}`);
// An unknown parameter is checked after authentication: a 400 proves the caller got through.
const probe = (workspace: Record<string, any>) => `url=${page('/')}&access_key=${workspace.access_key}&probe=1`;
const sign = (secret: string, query: string) => `${query}&signature=${hmacHex(secret, query)}`;

auth('the CLI creates workspaces as the contract shows', async () => {
  const workspace = await create('--plan', 'pro', '--owner', 'Boss@Example.com');
  assert.match(workspace.workspace_id, /^ws_/);
  assert.is(workspace.plan, 'pro');
  assert.is(workspace.quota, 10000);
  assert.match(workspace.access_key, /^ak_[A-Za-z0-9_-]{32,}$/);
  assert.match(workspace.secret_key, /^sk_[A-Za-z0-9_-]{32,}$/);
  assert.is(workspace.require_signed_requests, false);
  assert.equal(workspace.members, [{ email: 'boss@example.com', role: 'owner', verified: false }]);
  assert.is((await create()).quota, 100);
  assert.is((await create('--quota', '7')).quota, 7);
  const shown = await shutterbus(stack, 'workspace', 'show', '--workspace', workspace.workspace_id);
  assert.equal(shown.json, workspace);
  assert.is(
    (await shutterbus(stack, 'workspace', 'show', '--workspace', 'ws_0000000000000000')).json.error_code,
    'not_found',
  );
  assert.is((await shutterbus(stack, 'workspace', 'create', '--plan', 'gold')).code, 2);
  assert.is((await shutterbus(stack, 'nonsense')).code, 2);
});

auth('concurrent changes to one workspace are compare-and-set: none is lost', async () => {
  const workspace = await create('--plan', 'pro');
  const emails = Array.from({ length: 6 }, (_, i) => `member${i}@example.com`);
  const results = await Promise.all(
    emails.map((email) =>
      shutterbus(stack, 'member', 'add', '--workspace', workspace.workspace_id, '--email', email, '--role', 'member'),
    ),
  );
  assert.ok(
    results.every((result) => result.code === 0),
    results.map((r) => r.stderr).join('\n'),
  );
  const shown = await shutterbus(stack, 'workspace', 'show', '--workspace', workspace.workspace_id);
  assert.equal(shown.json.members.map((m: { email: string }) => m.email).sort(), emails);
});

auth('a missing or wrong key is 401; the key works from header, query and body', async () => {
  const workspace = await ready();
  assert.is(codeOf(await get(`url=${page('/')}`)), 'access_key_invalid');
  assert.is((await get(`url=${page('/')}&access_key=ak_wrongwrongwrongwrongwrongwrong`)).status, 401);
  assert.is(codeOf(await get(`url=${page('/')}`, { 'x-access-key': 'sk_nope' })), 'access_key_invalid');
  assert.is(
    codeOf(await get(`url=${page('/')}&probe=1`, { 'x-access-key': workspace.access_key })),
    'request_not_valid',
  );
  assert.is(codeOf(await get(probe(workspace))), 'request_not_valid');
  assert.is(
    codeOf(await post(JSON.stringify({ url: `${stack.site.url}/`, access_key: workspace.access_key, probe: 1 }))),
    'request_not_valid',
  );
});

auth('free plan: email_not_verified until a member verifies', async () => {
  const workspace = await create('--owner', 'new@example.com');
  const before = await get(probe(workspace));
  assert.is(before.status, 403);
  assert.is(codeOf(before), 'email_not_verified');
  const added = await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspace.workspace_id,
    '--email',
    'helper@example.com',
    '--role',
    'member',
  );
  assert.equal(added.json, { email: 'helper@example.com', role: 'member', verified: false });
  const verified = await shutterbus(
    stack,
    'member',
    'verify',
    '--workspace',
    workspace.workspace_id,
    '--email',
    'helper@example.com',
  );
  assert.is(verified.json.verified, true);
  assert.is(codeOf(await get(probe(workspace))), 'request_not_valid');
  // A pro workspace needs no verified member.
  assert.is(codeOf(await get(probe(await create('--plan', 'pro')))), 'request_not_valid');
});

auth('GET signatures: over the raw query as sent, last, hex, constant length', async () => {
  const workspace = await ready();
  const query = probe(workspace);
  assert.is(codeOf(await get(sign(workspace.secret_key, query))), 'request_not_valid', 'a good signature passes');
  const tampered = sign(workspace.secret_key, query).replace('probe=1', 'probe=2');
  assert.is(codeOf(await get(tampered)), 'signature_is_not_valid');
  const signature = hmacHex(workspace.secret_key, query);
  assert.is(codeOf(await get(`signature=${signature}&${query}`)), 'signature_is_not_valid', 'not last');
  assert.is(codeOf(await get(`${query}&signature=${'z'.repeat(64)}`)), 'signature_is_not_valid', 'not hex');
  assert.is(codeOf(await get(`${query}&signature=abc`)), 'signature_is_not_valid', 'wrong length');
  assert.is(codeOf(await get(`${query}&signature=${signature.toUpperCase()}`)), 'signature_is_not_valid', 'upper case');
  const other = await ready();
  assert.is(
    codeOf(await get(`${query}&signature=${hmacHex(other.secret_key, query)}`)),
    'signature_is_not_valid',
    'another key',
  );
});

auth('a + for a space is signed as sent; the %20 re-encoding is refused', async () => {
  const workspace = await ready();
  const query = `url=${page('/')}&access_key=${workspace.access_key}&external_identifier=order+one&probe=1`;
  const signature = hmacHex(workspace.secret_key, query);
  assert.is(codeOf(await get(`${query}&signature=${signature}`)), 'request_not_valid');
  assert.is(
    codeOf(await get(`${query.replace('order+one', 'order%20one')}&signature=${signature}`)),
    'signature_is_not_valid',
  );
});

auth('POST signatures: over the raw body; re-serialised JSON fails', async () => {
  const workspace = await ready();
  const body = JSON.stringify({ url: `${stack.site.url}/`, access_key: workspace.access_key, probe: 1 });
  assert.is(codeOf(await post(body, { 'x-signature': hmacHex(workspace.secret_key, body) })), 'request_not_valid');
  const reserialised = JSON.stringify(JSON.parse(body), null, 2);
  assert.is(
    codeOf(await post(reserialised, { 'x-signature': hmacHex(workspace.secret_key, body) })),
    'signature_is_not_valid',
  );
  assert.is(codeOf(await post(body, { 'x-signature': 'not-hex' })), 'signature_is_not_valid');
});

auth('a signed GET renders', async () => {
  const workspace = await ready();
  const answer = await get(
    sign(
      workspace.secret_key,
      `url=${page('/')}&access_key=${workspace.access_key}&viewport_width=400&viewport_height=300`,
    ),
  );
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.is(answer.contentType, 'image/png');
});

auth('require signed requests: only owners and admins switch it; it applies through the watch', async () => {
  const workspace = await ready();
  const id = workspace.workspace_id;
  await shutterbus(stack, 'member', 'add', '--workspace', id, '--email', 'admin@example.com', '--role', 'admin');
  await shutterbus(stack, 'member', 'add', '--workspace', id, '--email', 'pleb@example.com', '--role', 'member');
  const refused = await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    id,
    '--as',
    'pleb@example.com',
    '--require-signed-requests',
    'on',
  );
  assert.is(refused.code, 1);
  assert.is(refused.json.error_code, 'forbidden');
  const stranger = await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    id,
    '--as',
    'who@example.com',
    '--require-signed-requests',
    'on',
  );
  assert.is(stranger.json.error_code, 'forbidden');

  // Warm the ingress cache, whose TTL alone (30 s) would hide the change for far longer than we wait.
  assert.is(codeOf(await get(probe(workspace))), 'request_not_valid');
  const on = await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    id,
    '--as',
    'admin@example.com',
    '--require-signed-requests',
    'on',
  );
  assert.is(on.json.require_signed_requests, true);
  const started = Date.now();
  while (codeOf(await get(probe(workspace))) !== 'signature_is_required') {
    assert.ok(Date.now() - started < 10_000, 'the setting reached the ingress through the watch');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const unsigned = await get(probe(workspace));
  assert.is(unsigned.status, 403);
  assert.is(codeOf(await get(sign(workspace.secret_key, probe(workspace)))), 'request_not_valid', 'signed still works');

  await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    id,
    '--as',
    'owner@example.com',
    '--require-signed-requests',
    'off',
  );
  while (codeOf(await get(probe(workspace))) !== 'request_not_valid') {
    assert.ok(Date.now() - started < 20_000, 'switched off again');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

auth('render status: the email rule and signatures hold on GET /api/renders/{id} as on every request', async () => {
  const unknown = '00000000-0000-4000-8000-000000000000';
  const status = (workspace: Record<string, any>, query = '') =>
    call(`${service.base}/api/renders/${unknown}${query ? `?${query}` : ''}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
  const unverified = await create('--owner', 'later@example.com');
  const refused = await status(unverified);
  assert.is(refused.status, 403);
  assert.is(codeOf(refused), 'email_not_verified');

  const workspace = await ready();
  assert.is(codeOf(await status(workspace)), 'not_found', 'unsigned is fine while the setting is off');
  assert.is(codeOf(await status(workspace, `signature=${'0'.repeat(64)}`)), 'signature_is_not_valid');
  await shutterbus(
    stack,
    'settings',
    'set',
    '--workspace',
    workspace.workspace_id,
    '--as',
    'owner@example.com',
    '--require-signed-requests',
    'on',
  );
  const started = Date.now();
  while (codeOf(await status(workspace)) !== 'signature_is_required') {
    assert.ok(
      Date.now() - started < 10_000,
      'a status read without a signature is refused once signatures are required',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Signed over its method, path and the empty query (docs/api.md, "Signatures"); a take-style
  // signature over the empty string alone is not valid here.
  const scoped = hmacHex(workspace.secret_key, `GET /api/renders/${unknown}\n`);
  assert.is(codeOf(await status(workspace, `signature=${scoped}`)), 'not_found');
  assert.is(
    codeOf(await status(workspace, `signature=${hmacHex(workspace.secret_key, '')}`)),
    'signature_is_not_valid',
  );
});

auth('rotated keys stop working; only owners and admins rotate', async () => {
  const workspace = await ready();
  assert.is(codeOf(await get(probe(workspace))), 'request_not_valid');
  const forbidden = await shutterbus(
    stack,
    'keys',
    'rotate',
    '--workspace',
    workspace.workspace_id,
    '--as',
    'nobody@example.com',
  );
  assert.is(forbidden.json.error_code, 'forbidden');
  const rotated = await shutterbus(
    stack,
    'keys',
    'rotate',
    '--workspace',
    workspace.workspace_id,
    '--as',
    'owner@example.com',
  );
  assert.is(rotated.code, 0);
  assert.not.equal(rotated.json.access_key, workspace.access_key);
  assert.not.equal(rotated.json.secret_key, workspace.secret_key);
  const started = Date.now();
  while (codeOf(await get(probe(workspace))) !== 'access_key_invalid') {
    assert.ok(Date.now() - started < 10_000, 'the old key stopped working');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(codeOf(await get(probe(rotated.json))), 'request_not_valid');
  const oldSecret = sign(workspace.secret_key, probe(rotated.json));
  assert.is(codeOf(await get(oldSecret)), 'signature_is_not_valid', 'the old secret no longer signs');
});

auth('quota of 3: three successes then 402; failures in between do not count', async () => {
  const workspace = await ready('--quota', '3');
  const shot = (path: string) =>
    get(`url=${page(path)}&access_key=${workspace.access_key}&viewport_width=320&viewport_height=200`);
  assert.is((await shot('/')).status, 200);
  assert.is((await shot('/status/500')).status, 502);
  assert.is((await shot('/')).status, 200);
  assert.is((await shot('/status/404')).status, 502);
  assert.is((await shot('/')).status, 200);
  const refused = await shot('/');
  assert.is(refused.status, 402);
  assert.is(codeOf(refused), 'screenshots_limit_reached');
  const usage = await shutterbus(stack, 'usage', '--workspace', workspace.workspace_id);
  assert.equal({ used: usage.json.used, quota: usage.json.quota }, { used: 3, quota: 3 });
  assert.match(usage.json.month, /^\d{4}-\d{2}$/);
});

auth('quota of 1 and 20 parallel requests: exactly one succeeds', async () => {
  const workspace = await ready('--quota', '1');
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      get(`url=${page('/')}&access_key=${workspace.access_key}&viewport_width=320&viewport_height=200`),
    ),
  );
  const statuses = answers.map((answer) => answer.status);
  assert.is(statuses.filter((status) => status === 200).length, 1, statuses.join(','));
  assert.is(statuses.filter((status) => status === 402).length, 19, statuses.join(','));
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1);
});

auth('over the concurrency limit: 429 with Retry-After, other workspaces unaffected', async () => {
  const busy = await ready();
  const slow = () =>
    get(`url=${page('/slow?ms=2500')}&access_key=${busy.access_key}&viewport_width=320&viewport_height=200`);
  const answers = await Promise.all(Array.from({ length: 7 }, slow));
  const limited = answers.filter((answer) => answer.status === 429);
  assert.ok(limited.length >= 1, answers.map((a) => a.status).join(','));
  assert.is(codeOf(limited[0]), 'concurrency_limit_reached');
  assert.ok(Number(limited[0].headers.get('retry-after')) >= 1);
  const calm = await ready();
  assert.is(codeOf(await get(probe(calm))), 'request_not_valid');
});

auth.run();
