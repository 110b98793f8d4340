// The dashboard's guards over plain HTTP against the real stack: CSRF and origin checks, sign-in
// limits, session tampering, the last-owner rule, verification kept in step, escaping.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashPassword, passwordMatches } from '../../src/accounts/password.ts';
import { html } from '../../src/http/dashboard/views/html.ts';
import { shutterbus } from '../helpers/cli.ts';
import { createWorkspace, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { mailedLink, signUp as signUpAt, Visitor } from '../helpers/visitor.ts';
import { waitFor } from '../helpers/wait.ts';

const forms = suite('dashboard forms: CSRF, limits, sessions, owners');
let stack: TestStack;
let service: TestService;

forms.before(async () => {
  stack = await startStack();
  service = await startService(stack, { ROLES: 'ingress' });
});
forms.after(async () => {
  await service?.close();
  await stack?.stop();
});

const signUp = (email: string) => signUpAt(service.base, email, { confirm: stack });

forms('html escapes every interpolation; passwords are stored as scrypt hashes', async () => {
  const name = '<script>alert("x")</script>&\'';
  assert.is(
    html`<p title="${name}">${name}</p>`.text,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
  );
  const hash = await hashPassword('a long enough password');
  assert.match(hash, /^scrypt\$16384\$8\$1\$/);
  assert.not.match(hash, /long enough/);
  assert.ok(await passwordMatches('a long enough password', hash));
  assert.not.ok(await passwordMatches('a long enough passworD', hash));
});

forms('a form POST to /api/take is still request_not_valid', async () => {
  const workspace = await createWorkspace(stack);
  // The body's 400 comes once the caller got through the key checks (docs/api.md, "Errors").
  const response = await fetch(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-access-key': workspace.access_key },
    body: 'url=x',
  });
  assert.is(response.status, 400);
  const body = await response.json();
  assert.is(body.error_code, 'request_not_valid');
  assert.is(body.error_details[0].parameter, 'Content-Type');
});

forms("every POST needs this session's CSRF token and our origin", async () => {
  const visitor = await signUp('csrf@example.com');
  const other = await signUp('other@example.com');
  const on = { require_signed_requests: 'on' };
  assert.is((await visitor.post('/dashboard/settings', { ...on, _csrf: '' })).status, 403, 'no token');
  assert.is(
    (await visitor.post('/dashboard/settings', { ...on, _csrf: other.csrf })).status,
    403,
    "another session's token",
  );
  assert.is(
    (await visitor.post('/dashboard/settings', on, { origin: 'http://evil.example' })).status,
    403,
    'foreign origin',
  );
  assert.is(
    (await visitor.post('/dashboard/settings', on, { referer: 'http://evil.example/page' })).status,
    403,
    'foreign referer',
  );
  assert.is((await visitor.post('/dashboard/settings', on, {})).status, 403, 'neither origin nor referer');
  assert.match((await visitor.get('/dashboard/keys')).text, /id="setting-state">Off/);
  assert.is(
    (await visitor.post('/dashboard/settings', on, { referer: `${service.base}/dashboard/keys` })).status,
    303,
    'same-origin referer',
  );
  assert.match((await visitor.get('/dashboard/keys')).text, /id="setting-state">On/);
});

forms('a tampered session cookie is no session', async () => {
  const visitor = await signUp('tamper@example.com');
  const [body, tag] = /sb_session=([^;]+)/.exec(visitor.cookie)![1].split('.');
  const forged = JSON.parse(Buffer.from(body, 'base64url').toString());
  forged.email = 'csrf@example.com';
  visitor.cookie = `sb_session=${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${tag}`;
  const answer = await visitor.get('/dashboard/keys');
  assert.is(answer.status, 303);
  assert.is(answer.location, '/dashboard/sign-in');
});

forms("sign-in: a stranger's wrong passwords refuse the stranger, never the owner's own browser", async () => {
  const owner = await signUp('limited@example.com');
  const stranger = new Visitor(service.base);
  await stranger.get('/dashboard/sign-in');
  for (let attempt = 0; attempt < 5; attempt++) {
    assert.is(
      (await stranger.post('/dashboard/sign-in', { email: 'limited@example.com', password: `wrong ${attempt}` }))
        .status,
      401,
    );
  }
  const limited = await stranger.post('/dashboard/sign-in', {
    email: 'Limited@Example.com',
    password: 'a long enough password',
  });
  assert.is(limited.status, 429);
  assert.match(limited.text, /Too many sign-in attempts/);
  // The owner's browser, which signed in before, signs in again at once with the right password.
  await owner.post('/dashboard/sign-out', {});
  await owner.get('/dashboard/sign-in');
  assert.is(
    (await owner.post('/dashboard/sign-in', { email: 'limited@example.com', password: 'a long enough password' }))
      .status,
    303,
  );
  const fresh = new Visitor(service.base);
  await fresh.get('/dashboard/sign-in');
  assert.is(
    (await fresh.post('/dashboard/sign-in', { email: 'csrf@example.com', password: 'a long enough password' })).status,
    303,
    'other emails still sign in',
  );
});

forms('the last owner cannot be demoted or removed; verification marks the member verified', async () => {
  const boss = await signUp('boss@example.com');
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec((await boss.get('/dashboard/keys')).text)![1];
  assert.is((await boss.post('/dashboard/members/role', { email: 'boss@example.com', role: 'admin' })).status, 403);
  assert.match(
    (await boss.post('/dashboard/members/remove', { email: 'boss@example.com' })).text,
    /keep at least one owner/,
  );

  await boss.post('/dashboard/members/invite', { email: 'deputy@example.com', role: 'owner' });
  const outbox = (await shutterbus(stack, 'mail', 'outbox')).json.messages as { to: string; text: string }[];
  const verifyLink = outbox
    .find((m) => m.to === 'boss@example.com')!
    .text.match(/http\S+\/dashboard\/verify\?token=\S+/)![0];
  assert.ok(
    outbox.some((m) => m.to === 'deputy@example.com' && /\/dashboard\/accept\?token=/.test(m.text)),
    'the invitation was mailed',
  );
  assert.is((await fetch(verifyLink)).status, 200);
  const first = (await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId)).json;
  assert.equal(first.members, [
    { email: 'boss@example.com', role: 'owner', verified: true },
    { email: 'deputy@example.com', role: 'owner', verified: false },
  ]);
  assert.is((await fetch(verifyLink.replace(/token=.*/, 'token=forged.token'))).status, 400);

  // Signing up proves nothing about the mailbox: a pending invitation is not claimed that way.
  const impostor = new Visitor(service.base);
  await impostor.get('/dashboard/sign-up');
  const claim = await impostor.post('/dashboard/sign-up', {
    email: 'deputy@example.com',
    password: 'a long enough password',
  });
  assert.is(claim.status, 200);
  assert.match(claim.text, /Check your mail/);
  assert.not.match(
    (await impostor.get('/dashboard/keys')).text,
    new RegExp(workspaceId),
    'the invited workspace stays out of reach',
  );
  await impostor.get('/dashboard/sign-in');
  assert.is(
    (await impostor.post('/dashboard/sign-in', { email: 'deputy@example.com', password: 'a long enough password' }))
      .status,
    401,
    'the typed password was not set',
  );

  // With a second owner, the first may step down.
  assert.is((await boss.post('/dashboard/members/role', { email: 'boss@example.com', role: 'admin' })).status, 303);
  assert.is(
    (await boss.post('/dashboard/members/remove', { email: 'deputy@example.com' })).status,
    403,
    'an admin does not remove',
  );
});

forms(
  'a member added at the CLI who signs up gets a link to choose a password (no invitation), and sees the workspace after',
  async () => {
    const created = (await shutterbus(stack, 'workspace', 'create', '--plan', 'pro', '--owner', 'operator@example.com'))
      .json;
    const added = await shutterbus(
      stack,
      'member',
      'add',
      '--workspace',
      created.workspace_id,
      '--email',
      'Cli.Added@example.com',
      '--role',
      'admin',
    );
    assert.equal(added.json, { email: 'cli.added@example.com', role: 'admin', verified: false });

    const visitor = new Visitor(service.base);
    await visitor.get('/dashboard/sign-up');
    const signUp = await visitor.post('/dashboard/sign-up', {
      email: 'cli.added@example.com',
      password: 'typed into the sign-up form',
    });
    assert.is(signUp.status, 200);
    assert.match(signUp.text, /Check your mail/);
    assert.not.match(
      (await visitor.get('/dashboard/keys')).text,
      new RegExp(created.workspace_id),
      'not by the sign-up form alone',
    );

    const outbox = (await shutterbus(stack, 'mail', 'outbox')).json.messages as { to: string; text: string }[];
    const mail = outbox.filter((m) => m.to === 'cli.added@example.com').at(-1)!.text;
    assert.not.match(mail, /\/dashboard\/accept\?token=/, 'no invitation is re-sent');
    assert.not.match(mail, new RegExp(created.workspace_id), 'the mail names no workspace');
    const link = mail.match(/http\S+\/dashboard\/password\?token=\S+/)![0];
    const member = new Visitor(service.base);
    const choose = await member.get(link.slice(service.base.length));
    assert.is(choose.status, 200);
    const token = /name="token" value="([^"]+)"/.exec(choose.text)![1];
    const chosen = await member.post('/dashboard/password', { token, password: 'chosen through the mailed link' });
    assert.is(chosen.status, 303, chosen.text);
    assert.match((await member.get('/dashboard/keys')).text, new RegExp(created.workspace_id));
    const shown = (await shutterbus(stack, 'workspace', 'show', '--workspace', created.workspace_id)).json;
    assert.equal(
      shown.members.find((m: { email: string }) => m.email === 'cli.added@example.com'),
      { email: 'cli.added@example.com', role: 'admin', verified: true },
    );
    assert.is(
      (await member.post('/dashboard/password', { token, password: 'a second time with it' })).status,
      400,
      'the link works once',
    );
  },
);

forms(
  "playground and deliveries: choices escaped, posts need the token, other workspaces' renders and deliveries are not found",
  async () => {
    // Not confirmed yet: the account opens no page of its workspace, the playground included.
    const visitor = await signUpAt(service.base, 'playground@example.com');
    const unconfirmed = await visitor.get('/dashboard/playground?url=https://example.com');
    assert.is(unconfirmed.status, 403);
    assert.match(unconfirmed.text, /Confirm your address/);
    assert.is((await visitor.get(await mailedLink(stack, 'playground@example.com', '/dashboard/verify'))).status, 200);
    const hostile = '"><script>alert(1)</script>';
    const page = await visitor.get(
      `/dashboard/playground?url=${encodeURIComponent(hostile)}&hide_selectors=${encodeURIComponent('</textarea><b>')}`,
    );
    assert.is(page.status, 200);
    assert.not.match(page.text, /<script>alert/);
    assert.not.match(page.text, /<\/textarea><b>/);
    assert.match(page.text, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
    assert.is(
      (await visitor.post('/dashboard/playground', { url: 'https://example.com', _csrf: '' })).status,
      403,
      'no token',
    );
    assert.is(
      (await visitor.post('/dashboard/playground', { url: 'https://example.com' }, { origin: 'http://evil.example' }))
        .status,
      403,
      'foreign origin',
    );
    // Confirmed: the workspace's keys work, and another's render is not found.
    const unknownResult = '/dashboard/playground?result=00000000-0000-4000-8000-000000000000';
    await waitFor(
      async () => /id="error-code">not_found</.test((await visitor.get(unknownResult)).text),
      'an unknown render not found',
    );
    assert.is((await visitor.get(`/dashboard/deliveries/wh_${'0'.repeat(32)}`)).status, 404);
    assert.is((await visitor.post(`/dashboard/deliveries/wh_${'0'.repeat(32)}/resend`, {})).status, 404);
    assert.match((await visitor.get('/dashboard/deliveries')).text, /None of the latest renders asked for a webhook/);
  },
);

forms.run();
