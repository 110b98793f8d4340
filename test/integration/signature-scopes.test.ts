// A signature signs one request (docs/api.md, "Signatures"): a take URL's signature, or a webhook's
// X-Signature, replayed on another endpoint is 403 signature_is_not_valid; a signature over the
// endpoint's method, path and query or body is accepted. Real NATS and the ingress role.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { signRequest } from '../../src/client/index.ts';
import { webhookHeaders } from '../../src/delivery/send.ts';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const scopes = suite('signature scopes: a signature is valid for one endpoint and method');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;

scopes.before(async () => {
  stack = await startStack();
  service = await startService(stack, { ROLES: 'ingress' });
  workspace = await createWorkspace(stack, { quota: 50 });
});

scopes.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** Creates a monitor with a correctly scoped signature; its id. */
async function createMonitor(): Promise<string> {
  const body = JSON.stringify({
    url: `${stack.site.url}/`,
    interval: 3600,
    webhook_url: `${stack.site.url}/hook`,
  });
  const created = await call(`${service.base}/api/monitors`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-access-key': workspace.access_key,
      'x-signature': signRequest('POST', '/api/monitors', body, workspace.secret_key),
    },
    body,
  });
  assert.is(created.status, 201, JSON.stringify(created.json));
  return created.json!.monitor_id;
}

/** A take URL's query (the playground's or an embed's), with its signature: ScreenshotOne's scheme. */
function takeQuery(): string {
  const query = `url=${encodeURIComponent(`${stack.site.url}/`)}&access_key=${workspace.access_key}`;
  return `${query}&signature=${hmacHex(workspace.secret_key, query)}`;
}

const refused = (answer: { status: number; json?: Record<string, any> }, what: string) => {
  assert.is(answer.status, 403, `${what}: ${JSON.stringify(answer.json)}`);
  assert.is(answer.json?.error_code, 'signature_is_not_valid', what);
};

scopes("a take URL's signature replayed on four other endpoints is 403 and changes nothing", async () => {
  const id = await createMonitor();
  const query = takeQuery();
  // The take URL itself is valid where it was made for (a 400 would mean past the signature check).
  const take = await call(`${service.base}/api/take?${query}&cache=false`);
  assert.is(take.json?.error_code, 'signature_is_not_valid', 'a parameter appended after the signature');
  refused(await call(`${service.base}/api/monitors?${query}`), 'GET /api/monitors');
  refused(await call(`${service.base}/api/usage?${query}`), 'GET /api/usage');
  refused(await call(`${service.base}/api/monitors/${id}?${query}`, { method: 'DELETE' }), 'DELETE /api/monitors/{id}');
  refused(await call(`${service.base}/api/monitors/${id}?${query}`), 'GET /api/monitors/{id}');
  refused(
    await call(`${service.base}/api/renders/00000000-0000-4000-8000-000000000000?${query}`),
    'GET /api/renders/{id}',
  );
  // The monitor is still there.
  const listed = await call(`${service.base}/api/monitors`, { headers: { 'x-access-key': workspace.access_key } });
  assert.ok(
    listed.json!.monitors.some((monitor: { monitor_id: string }) => monitor.monitor_id === id),
    JSON.stringify(listed.json),
  );
});

scopes("a take POST's X-Signature over the same body is refused on bulk, monitors and merge", async () => {
  const body = JSON.stringify({ url: `${stack.site.url}/`, interval: 3600, webhook_url: `${stack.site.url}/hook` });
  const headers = {
    'content-type': 'application/json',
    'x-access-key': workspace.access_key,
    'x-signature': hmacHex(workspace.secret_key, body),
  };
  refused(await call(`${service.base}/api/monitors`, { method: 'POST', headers, body }), 'POST /api/monitors');
  const bulk = JSON.stringify({ requests: [{ url: `${stack.site.url}/` }] });
  refused(
    await call(`${service.base}/api/bulk`, {
      method: 'POST',
      headers: { ...headers, 'x-signature': hmacHex(workspace.secret_key, bulk) },
      body: bulk,
    }),
    'POST /api/bulk',
  );
  const merge = JSON.stringify({ sources: [{ html: '<p>one</p>' }, { html: '<p>two</p>' }] });
  refused(
    await call(`${service.base}/api/pdf/merge`, {
      method: 'POST',
      headers: { ...headers, 'x-signature': hmacHex(workspace.secret_key, merge) },
      body: merge,
    }),
    'POST /api/pdf/merge',
  );
});

scopes("a webhook's X-Signature is never a request signature", async () => {
  const id = await createMonitor();
  // A delivery as the service signs one: X-Signature over "{timestamp}.{raw body}".
  const payload = JSON.stringify({ id: 'd1', type: 'render.succeeded', data: { render_id: 'r' } });
  const timestamp = Math.floor(Date.now() / 1000);
  const { 'x-signature': signature } = webhookHeaders('d1', payload, workspace.secret_key, timestamp);
  const signedText = `${timestamp}.${payload}`;
  // Sent back as a query whose raw text is what the webhook signed.
  const headers = { 'x-access-key': workspace.access_key };
  refused(await call(`${service.base}/api/monitors?${signedText}&signature=${signature}`, { headers }), 'GET list');
  refused(
    await call(`${service.base}/api/monitors/${id}?${signedText}&signature=${signature}`, {
      method: 'DELETE',
      headers,
    }),
    'DELETE',
  );
  refused(await call(`${service.base}/api/usage?${signedText}&signature=${signature}`, { headers }), 'GET usage');
  // And as the X-Signature of a POST whose body is that text.
  refused(
    await call(`${service.base}/api/bulk`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-signature': signature },
      body: signedText,
    }),
    'POST /api/bulk',
  );
});

scopes('a signature over the method, path and query or body is accepted; another method or path is not', async () => {
  const id = await createMonitor();
  const query = `access_key=${workspace.access_key}`;
  const signedGet = (method: string, path: string) =>
    `${service.base}${path}?${query}&signature=${signRequest(method, path, query, workspace.secret_key)}`;
  assert.is((await call(signedGet('GET', '/api/monitors'))).status, 200);
  assert.is((await call(signedGet('GET', '/api/usage'))).status, 200);
  assert.is((await call(signedGet('GET', `/api/monitors/${id}`))).status, 200);
  // A GET's signature is not a DELETE's, nor another path's.
  refused(await call(signedGet('GET', `/api/monitors/${id}`), { method: 'DELETE' }), 'a GET signature on DELETE');
  refused(await call(signedGet('GET', '/api/monitors').replace('/api/monitors?', '/api/usage?')), 'another path');

  const body = JSON.stringify({ status: 'paused' });
  const patch = await call(`${service.base}/api/monitors/${id}`, {
    method: 'PATCH',
    headers: {
      'content-type': 'application/json',
      'x-access-key': workspace.access_key,
      'x-signature': signRequest('PATCH', `/api/monitors/${id}`, body, workspace.secret_key),
    },
    body,
  });
  assert.is(patch.status, 200, JSON.stringify(patch.json));
  assert.is(patch.json!.status, 'paused');

  const removed = await call(signedGet('DELETE', `/api/monitors/${id}`), { method: 'DELETE' });
  assert.is(removed.status, 204, JSON.stringify(removed.json));
  assert.is((await call(signedGet('GET', `/api/monitors/${id}`))).status, 404);
});

scopes.run();
