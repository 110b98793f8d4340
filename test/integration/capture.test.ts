// What a capture says about itself, end to end (docs/capture.md, "Warnings"): a cut full-page
// capture is reported in the X-Render-Warnings header, the JSON answer, GET /api/renders/{id} and
// the webhook; a capture that is whole says nothing. And a PDF template cannot reach an address
// the service refuses.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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

const capture = suite('capture warnings and PDF templates, end to end');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let receiver: http.Server;
let hookUrl: string;
const webhookBodies: Array<Record<string, any>> = [];

const shot = (params: Record<string, string>) =>
  call(`${service.base}/api/take?${new URLSearchParams(params)}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
// /tall is a 5,000 px page: cut at 1,000 px.
const cutShot = () => ({
  url: `${stack.site.url}/tall`,
  full_page: 'true',
  full_page_scroll: 'false',
  full_page_max_height: '1000',
});

capture.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  workspace = await createWorkspace(stack);
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      webhookBodies.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

capture.after(async () => {
  await service?.close();
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

capture('a cut full-page capture says so in a header of the image answer', async () => {
  const answer = await shot(cutShot());
  assert.is(answer.status, 200);
  assert.is(answer.contentType, 'image/png');
  assert.is(answer.headers.get('x-render-warnings'), 'full_page_cut');
});

capture('and in the JSON answer, with a message', async () => {
  const answer = await shot({ ...cutShot(), response_type: 'json' });
  assert.is(answer.status, 200);
  assert.is(answer.headers.get('x-render-warnings'), 'full_page_cut');
  assert.equal(
    answer.json!.warnings.map((w: { code: string }) => w.code),
    ['full_page_cut'],
  );
  assert.match(answer.json!.warnings[0].message, '5000 px');
});

capture('and in the render status and the webhook of an asynchronous render', async () => {
  const answer = await shot({ ...cutShot(), async: 'true', webhook_url: hookUrl });
  assert.is(answer.status, 202);
  const renderId = answer.json!.render_id as string;
  let status: Record<string, any> = {};
  await waitFor(async () => {
    status = (
      await call(`${service.base}/api/renders/${renderId}`, { headers: { 'x-access-key': workspace.access_key } })
    ).json!;
    return status.status === 'succeeded';
  }, 'the render succeeds');
  assert.equal(
    status.warnings.map((w: { code: string }) => w.code),
    ['full_page_cut'],
  );
  await waitFor(() => webhookBodies.some((body) => body.data.render_id === renderId), 'the webhook arrives');
  const hook = webhookBodies.find((body) => body.data.render_id === renderId)!;
  assert.is(hook.type, 'render.succeeded');
  assert.equal(hook.data.warnings, status.warnings);
});

capture('a whole capture says nothing', async () => {
  const answer = await shot({
    url: `${stack.site.url}/tall`,
    full_page: 'true',
    full_page_scroll: 'false',
    response_type: 'json',
  });
  assert.is(answer.status, 200);
  assert.is(answer.headers.get('x-render-warnings'), null);
  assert.not.ok('warnings' in answer.json!);
});

capture('a PDF template that refers to a loopback address is refused where private targets are', async () => {
  // An ingress of the production kind: private and loopback targets refused.
  const strict = await startService(stack, { ALLOW_PRIVATE_TARGETS: 'false', ROLES: 'ingress' });
  try {
    const before = stack.site.received.length;
    const body = JSON.stringify({
      html: '<h1>Report</h1>',
      format: 'pdf',
      pdf_header: `<img src="${stack.site.url}/logo.png"><span class="pageNumber"></span>`,
    });
    const answer = await call(`${strict.base}/api/take`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
      body,
    });
    assert.is(answer.status, 400);
    assert.is(answer.json!.error_code, 'request_not_valid');
    assert.equal(
      answer.json!.error_details.map((d: { parameter: string }) => d.parameter),
      ['pdf_header'],
    );
    assert.is(stack.site.received.length, before, 'the fixture site was never asked');
  } finally {
    await strict.close();
  }
});

capture.run();
