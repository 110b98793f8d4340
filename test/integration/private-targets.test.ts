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

const targets = suite('private targets are refused at the ingress');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
const take = (query: string) =>
  call(`${service.base}/api/take?${query}`, { headers: { 'x-access-key': workspace.access_key } });

targets.before(async () => {
  stack = await startStack();
  // Ingress only: a refused URL must never reach a worker.
  service = await startService(stack, { ALLOW_PRIVATE_TARGETS: 'false', ROLES: 'ingress' });
  workspace = await createWorkspace(stack);
});
targets.after(async () => {
  await service?.close();
  await stack?.stop();
});

const spellings = [
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[2002:7f00:1::]/',
  'HTTP://LOCALHOST/',
  'http://foo.localhost:8080/',
  'http://169.254.169.254/latest/meta-data',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
];

targets('every spelling of a private address is url_not_allowed', async () => {
  for (const url of spellings) {
    const answer = await take(`url=${encodeURIComponent(url)}`);
    assert.is(answer.status, 400, url);
    assert.is(answer.json!.error_code, 'url_not_allowed', url);
  }
});

targets('the fixture site itself is refused without ALLOW_PRIVATE_TARGETS', async () => {
  const answer = await take(`url=${encodeURIComponent(stack.site.url)}`);
  assert.is(answer.json!.error_code, 'url_not_allowed');
});

targets('webhook_url obeys the same rules', async () => {
  const answer = await take(
    `url=${encodeURIComponent('http://93.184.215.14/')}&webhook_url=${encodeURIComponent('http://10.1.2.3/hook')}`,
  );
  assert.is(answer.status, 400);
  assert.is(answer.json!.error_code, 'url_not_allowed');
  assert.match(JSON.stringify(answer.json!.error_details), /webhook_url/);
});

targets('a name that does not resolve is name_not_resolved', async () => {
  const answer = await take(`url=${encodeURIComponent('http://no-such-host.invalid/')}`);
  assert.is(answer.status, 400);
  assert.is(answer.json!.error_code, 'name_not_resolved');
});

targets("an html document's sub-resources obey the same rules: a private address is never fetched", async () => {
  const renderer = await startService(stack, { ALLOW_PRIVATE_TARGETS: 'false', ROLES: 'ingress,render' });
  try {
    const image = `${stack.site.url}/page/from-html-document`;
    const html = `<!doctype html><p>A document</p><img src="${image}">`;
    const query = new URLSearchParams({ html, fail_if_request_failed: '*from-html-document*' });
    const answer = await call(`${renderer.base}/api/take?${query}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
    assert.is(answer.status, 422, JSON.stringify(answer.json));
    assert.is(answer.json!.error_code, 'matched_failed_request');
    assert.is(stack.site.hits.get('/page/from-html-document') ?? 0, 0, 'the fixture site was never asked');
  } finally {
    await renderer.close();
  }
});

targets.run();
