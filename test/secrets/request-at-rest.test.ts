// A request's authorization, cookies and headers, and a mail's link token, are sealed in NATS's
// files (docs/security.md, "Secrets at rest"): a grep of JetStream's store directory after a render
// request entered the RENDERS stream and a mail entered the outbox finds none of them.
import { execFileSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { outboxOf, Visitor } from '../helpers/visitor.ts';

const atRest = suite('request credentials and mail tokens at rest');
let stack: TestStack;
let service: TestService;

atRest.before(async () => {
  stack = await startStack();
  // The ingress alone: the request stays in the RENDERS stream, as it is while it waits for a worker.
  service = await startService(stack, { ROLES: 'ingress' });
});
atRest.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** The files of NATS's store directory that contain `needle`. */
function filesContaining(needle: string): string[] {
  try {
    return execFileSync('grep', ['-rlF', '--', needle, stack.nats.dir!], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

atRest('authorization, cookies, headers and a mailed token are nowhere in NATS in plain text', async () => {
  const workspace = await createWorkspace(stack);
  const secrets = {
    authorization: 'Bearer authorization-canary-5d1e',
    cookie: 'cookie-canary-9a7f',
    header: 'header-canary-3c2b',
  };
  const answer = await call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify({
      url: `${stack.site.url}/`,
      async: true,
      authorization: secrets.authorization,
      cookies: [`session=${secrets.cookie}; Path=/`],
      headers: [`X-Api-Key: ${secrets.header}`],
    }),
  });
  assert.is(answer.status, 202, JSON.stringify(answer.json));
  const renderId = answer.json!.render_id as string;

  const visitor = new Visitor(service.base);
  await visitor.get('/dashboard/sign-up');
  await visitor.post('/dashboard/sign-up', { email: 'canary@example.com', password: 'a long enough password' });
  const mail = (await outboxOf(stack)).find((m) => m.to === 'canary@example.com');
  const token = /token=(\S+)/.exec(mail!.text)![1];

  assert.ok(filesContaining(renderId).length > 0, 'the grep does see what NATS stored');
  assert.ok(filesContaining('canary@example.com').length > 0, 'the grep does see the outbox');
  assert.equal(filesContaining(secrets.authorization.slice('Bearer '.length)), [], 'authorization');
  assert.equal(filesContaining(secrets.cookie), [], 'cookies');
  assert.equal(filesContaining(secrets.header), [], 'headers');
  // The token's signed body and tag: neither half is stored.
  for (const part of token.split('.')) assert.equal(filesContaining(part), [], 'the mail token');
});

atRest.run();
