// Bad values of the header-like parameters and an encoded signature name, against the real stack:
// each is refused at once with the contract's error naming the parameter, before any browser work.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const badInput = suite('bad header values and an encoded signature name');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;

badInput.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  workspace = await createWorkspace(stack);
});
badInput.after(async () => {
  await service?.close();
  await stack?.stop();
});

const target = () => `${stack.site.url}/`;
const post = (body: Record<string, unknown>) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify({ url: target(), ...body }),
  });
const get = (query: string) =>
  call(`${service.base}/api/take?url=${encodeURIComponent(target())}&${query}`, {
    headers: { 'x-access-key': workspace.access_key },
  });

/** A 400 request_not_valid naming `parameter`, answered well before any render could have run. */
async function refused(
  answer: Promise<Awaited<ReturnType<typeof call>>>,
  parameter: string,
  what: string,
): Promise<void> {
  const started = Date.now();
  const { status, json } = await answer;
  assert.is(status, 400, `${what}: ${JSON.stringify(json)}`);
  assert.is(json?.error_code, 'request_not_valid', what);
  assert.ok(
    json?.error_details?.some((detail: { parameter: string }) => detail.parameter === parameter),
    `${what} names ${parameter}: ${JSON.stringify(json)}`,
  );
  assert.ok(Date.now() - started < 2000, `${what}: refused at once`);
}

badInput(
  'control characters in user_agent, headers, authorization and cookies are a 400 naming the parameter',
  async () => {
    const controls: Record<string, string> = {
      CR: '\r',
      LF: '\n',
      CRLF: '\r\n',
      NUL: '\0',
      BEL: '\x07',
      ESC: '\x1b',
      DEL: '\x7f',
    };
    for (const [name, control] of Object.entries(controls)) {
      await refused(
        post({ user_agent: `Mozilla/5.0${control}X-Injected: yes` }),
        'user_agent',
        `${name} in user_agent (POST)`,
      );
      await refused(post({ headers: [`X-Trace: a${control}b`] }), 'headers', `${name} in headers (POST)`);
      await refused(post({ authorization: `Bearer a${control}b` }), 'authorization', `${name} in authorization (POST)`);
      await refused(post({ cookies: [`session=a${control}b`] }), 'cookies', `${name} in cookies (POST)`);
    }
    await refused(get(`user_agent=${encodeURIComponent('a\r\nb')}`), 'user_agent', 'CR LF in user_agent (GET)');
    await refused(get(`headers=${encodeURIComponent('X-A: 1\0')}`), 'headers', 'NUL in headers (GET)');
    await refused(
      get(`authorization=${encodeURIComponent('Basic \x01')}`),
      'authorization',
      'SOH in authorization (GET)',
    );
    await refused(get(`cookies=${encodeURIComponent('a=b\nc')}`), 'cookies', 'LF in cookies (GET)');
    assert.is(await usedThisMonth(stack, workspace.workspace_id), 0, 'nothing was charged');

    // Ordinary values still render.
    const fine = await post({
      user_agent: 'Mozilla/5.0 (Test) Shutterbus',
      headers: ['X-Trace: a b'],
      authorization: 'Bearer token',
      cookies: ['session=ab'],
      viewport_width: 400,
      viewport_height: 300,
    });
    assert.is(fine.status, 200, JSON.stringify(fine.json));
  },
);

badInput('a percent-encoded signature name is 403 signature_is_not_valid, never an unsigned request', async () => {
  const query = `url=${encodeURIComponent(target())}&access_key=${workspace.access_key}&viewport_width=400&viewport_height=300`;
  const signature = hmacHex(workspace.secret_key, query);
  for (const name of ['signatur%65', '%73ignature', 'sig%6Eature', '%73%69%67%6e%61%74%75%72%65']) {
    const answer = await call(`${service.base}/api/take?${query}&${name}=${signature}`);
    assert.is(answer.status, 403, `${name}: ${JSON.stringify(answer.json)}`);
    assert.is(answer.json?.error_code, 'signature_is_not_valid', name);
  }
  // Even a wrong value under an encoded name, anywhere in the query.
  const elsewhere = await call(`${service.base}/api/take?signatur%65=0&${query}`);
  assert.is(elsewhere.json?.error_code, 'signature_is_not_valid');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), 1, 'only the ordinary render above was charged');
  // The name sent as is still signs.
  assert.is((await call(`${service.base}/api/take?${query}&signature=${signature}`)).status, 200);
});

badInput.run();
