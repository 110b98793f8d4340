// POST /api/monitors admits exactly what /api/take admits, and no more monitors than the plan allows
// however many creates race (docs/monitors.md). Real NATS, the ingress alone, private targets refused
// as in production.
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

const admission = suite('monitor admission: the checks of /api/take, the plan counted atomically');
let stack: TestStack;
let service: TestService;

admission.before(async () => {
  stack = await startStack();
  service = await startService(stack, { ALLOW_PRIVATE_TARGETS: 'false', ROLES: 'ingress' });
});
admission.after(async () => {
  await service?.close();
  await stack?.stop();
});

// A public address written as an IP, so no name has to resolve here.
const webhook = 'https://93.184.216.34/hook';

const post = (path: string, workspace: Workspace, body: Record<string, unknown>) =>
  call(`${service.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify(body),
  });

admission('a private proxy and an unknown ip_country_code are the same 400 as on /api/take', async () => {
  const workspace = await createWorkspace(stack);
  for (const refused of [
    { proxy: 'http://user:pass@127.0.0.1:3128' },
    { proxy: 'http://10.0.0.7:8080' },
    { ip_country_code: 'zz' },
  ]) {
    const page = { html: '<p>watched</p>', webhook_url: webhook, ...refused };
    const take = await post('/api/take', workspace, { ...page, async: true });
    const monitor = await post('/api/monitors', workspace, { ...page, interval: 3600 });
    assert.is(take.status, 400, JSON.stringify(take.json));
    assert.is(monitor.status, take.status, `${JSON.stringify(refused)}: ${JSON.stringify(monitor.json)}`);
    assert.is(monitor.json!.error_code, take.json!.error_code);
    assert.equal(monitor.json!.error_details, take.json!.error_details);
  }
  const listed = await call(`${service.base}/api/monitors`, { headers: { 'x-access-key': workspace.access_key } });
  assert.equal(listed.json!.monitors, [], 'nothing was kept');
});

admission('12 concurrent creates on a free workspace (3 monitors) make exactly 3', async () => {
  const workspace = await createWorkspace(stack, { plan: 'free' });
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      post('/api/monitors', workspace, { html: `<p>${n}</p>`, webhook_url: webhook, interval: 3600 }),
    ),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  assert.equal(statuses, [201, 201, 201, ...Array(9).fill(400)], JSON.stringify(answers.map((a) => a.json)));
  for (const refused of answers.filter((answer) => answer.status === 400))
    assert.equal(
      refused.json!.error_details.map((d: { parameter: string }) => d.parameter),
      ['monitors'],
    );
  const listed = await call(`${service.base}/api/monitors`, { headers: { 'x-access-key': workspace.access_key } });
  assert.is(listed.json!.monitors.length, 3);

  // A removed monitor gives its place back.
  const id = listed.json!.monitors[0].monitor_id;
  const removed = await call(`${service.base}/api/monitors/${id}`, {
    method: 'DELETE',
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(removed.status, 204);
  assert.is(
    (await post('/api/monitors', workspace, { html: '<p>again</p>', webhook_url: webhook, interval: 3600 })).status,
    201,
  );
  assert.is(
    (await post('/api/monitors', workspace, { html: '<p>over</p>', webhook_url: webhook, interval: 3600 })).status,
    400,
  );
});

admission.run();
