// An address belongs to whoever proves it (docs/security.md, "Dashboard accounts"): a stranger who
// signed up first with an address that is later invited (by a member, or as the CLI's --owner) gets
// no workspace by the password they chose; the invitation is claimed through the mailed link, which
// replaces that password. Real NATS, the ingress and the real CLI.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { mailedLink, signUp, Visitor } from '../helpers/visitor.ts';

const identity = suite('identity: an address belongs to whoever proves it');
let stack: TestStack;
let service: TestService;

identity.before(async () => {
  stack = await startStack();
  service = await startService(stack, { ROLES: 'ingress' });
});
identity.after(async () => {
  await service?.close();
  await stack?.stop();
});

const strangersPassword = 'the stranger chose this';

/** A page's text with the address and the per-session CSRF token left out, to compare answers. */
const comparable = (text: string, email: string) =>
  text.replaceAll(email, 'EMAIL').replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf"');

/** What a signed-in visitor can reach of `workspace`: its id on the keys page, its secret key, a switch to it. */
async function reaches(visitor: Visitor, workspace: { workspace_id: string; secret_key: string }) {
  const keys = await visitor.get('/dashboard/keys');
  const revealed = await visitor.get('/dashboard/keys?reveal=secret');
  const switched = await visitor.post('/dashboard/switch', { workspace_id: workspace.workspace_id });
  const after = await visitor.get('/dashboard/keys?reveal=secret');
  return {
    sees: keys.text.includes(workspace.workspace_id) || after.text.includes(workspace.workspace_id),
    secret: [keys, revealed, after].some((page) => page.text.includes(workspace.secret_key)),
    switched: switched.status === 303,
  };
}

/** Signs `email` in on a fresh visitor; the sign-in answer's status. */
async function signIn(email: string, password: string): Promise<{ visitor: Visitor; status: number; text: string }> {
  const visitor = new Visitor(service.base);
  await visitor.get('/dashboard/sign-in');
  const answer = await visitor.post('/dashboard/sign-in', { email, password });
  return { visitor, status: answer.status, text: answer.text };
}

/** The mailbox's owner follows the invitation link with no session and chooses a password; their visitor. */
async function claimByLink(email: string, password: string): Promise<Visitor> {
  const owner = new Visitor(service.base);
  const page = await owner.get(await mailedLink(stack, email, '/dashboard/accept'));
  assert.is(page.status, 200, page.text);
  assert.match(page.text, /Choose a password/);
  const token = /name="token" value="([^"]+)"/.exec(page.text)![1];
  const chosen = await owner.post('/dashboard/accept', { token, password });
  assert.is(chosen.status, 303, chosen.text);
  return owner;
}

identity('a stranger registered first gets nothing of a dashboard invitation; the mailed link claims it', async () => {
  const stranger = await signUp(service.base, 'newhire@corp.test', { password: strangersPassword });
  const boss = await signUp(service.base, 'boss@corp.test', { confirm: stack });
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec((await boss.get('/dashboard/keys')).text)![1];
  const invited = await boss.post('/dashboard/members/invite', { email: 'newhire@corp.test', role: 'admin' });
  assert.is(invited.location, '/dashboard/members?notice=invited-to-outbox');
  const workspace = (await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId)).json as {
    workspace_id: string;
    secret_key: string;
  };

  // Signed in with the password they chose, the stranger reaches no workspace at all.
  const signedIn = await signIn('newhire@corp.test', strangersPassword);
  assert.is(signedIn.status, 303);
  const page = await signedIn.visitor.get('/dashboard/keys');
  assert.is(page.status, 403);
  assert.match(page.text, /Confirm your address/);
  assert.equal(await reaches(signedIn.visitor, workspace), { sees: false, secret: false, switched: false });
  assert.equal(await reaches(stranger, workspace), { sees: false, secret: false, switched: false });

  // Even once the address is confirmed with the sign-up's link (the mailbox's owner clicked it), the
  // invitation is not the account's: the stranger sees only the workspace the sign-up made.
  assert.is(
    (await new Visitor(service.base).get(await mailedLink(stack, 'newhire@corp.test', '/dashboard/verify'))).status,
    200,
  );
  const confirmed = await signIn('newhire@corp.test', strangersPassword);
  assert.is(confirmed.status, 303);
  assert.is((await confirmed.visitor.get('/dashboard/keys')).status, 200);
  assert.equal(await reaches(confirmed.visitor, workspace), { sees: false, secret: false, switched: false });

  // The mailbox's owner follows the invitation: a password of their own, and the workspace.
  const owner = await claimByLink('newhire@corp.test', 'the real new hire chose this');
  assert.equal(await reaches(owner, workspace), { sees: true, secret: true, switched: true });
  // The stranger's password and sessions are gone.
  assert.is((await signIn('newhire@corp.test', strangersPassword)).status, 401);
  assert.is((await confirmed.visitor.get('/dashboard/keys')).location, '/dashboard/sign-in');
  const shown = (await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId)).json;
  assert.equal(
    shown.members.find((m: { email: string }) => m.email === 'newhire@corp.test'),
    { email: 'newhire@corp.test', role: 'admin', verified: true },
  );
});

identity("a stranger registered first gets nothing of the CLI's --owner; the mailed link claims it", async () => {
  await signUp(service.base, 'ceo@corp.test', { password: strangersPassword });
  const created = await shutterbus(stack, 'workspace', 'create', '--plan', 'pro', '--owner', 'ceo@corp.test');
  assert.is(created.code, 0, created.stderr);
  const workspace = created.json as { workspace_id: string; secret_key: string };

  const stranger = await signIn('ceo@corp.test', strangersPassword);
  assert.is(stranger.status, 303);
  assert.equal(await reaches(stranger.visitor, workspace), { sees: false, secret: false, switched: false });
  // The operator's `member verify` claims the membership, and still hands nothing to a password
  // that no mailbox confirmed.
  assert.is(
    (await shutterbus(stack, 'member', 'verify', '--workspace', workspace.workspace_id, '--email', 'ceo@corp.test'))
      .code,
    0,
  );
  assert.equal(await reaches(stranger.visitor, workspace), { sees: false, secret: false, switched: false });

  const owner = await claimByLink('ceo@corp.test', 'the real ceo chose this one');
  assert.equal(await reaches(owner, workspace), { sees: true, secret: true, switched: true });
  assert.is((await signIn('ceo@corp.test', strangersPassword)).status, 401);
});

identity('a member already signed in claims an invitation with the link and keeps their password', async () => {
  const member = await signUp(service.base, 'regular@corp.test', { confirm: stack });
  const created = await shutterbus(stack, 'workspace', 'create', '--plan', 'pro', '--owner', 'lead@corp.test');
  const workspace = created.json as { workspace_id: string; secret_key: string };
  assert.is(
    (
      await shutterbus(
        stack,
        'member',
        'add',
        '--workspace',
        workspace.workspace_id,
        '--email',
        'regular@corp.test',
        '--role',
        'admin',
      )
    ).code,
    0,
  );
  // Added, not yet in: the invitation waits for its link.
  assert.equal(await reaches(member, workspace), { sees: false, secret: false, switched: false });
  const accepted = await member.get(await mailedLink(stack, 'regular@corp.test', '/dashboard/accept'));
  assert.is(accepted.location, '/dashboard/keys');
  assert.equal(await reaches(member, workspace), { sees: true, secret: true, switched: true });
  assert.is((await signIn('regular@corp.test', 'a long enough password')).status, 303);
});

identity('sign-up, sign-in and invitation answer the same whoever registered first', async () => {
  const boss = await signUp(service.base, 'chief@corp.test', { confirm: stack });
  await signUp(service.base, 'early@corp.test');
  await shutterbus(stack, 'workspace', 'create', '--owner', 'pending@corp.test');
  // Sign-up: the same page for a new address, an account, and an invitation.
  const pages = [];
  for (const email of ['fresh@corp.test', 'early@corp.test', 'pending@corp.test']) {
    const visitor = new Visitor(service.base);
    await visitor.get('/dashboard/sign-up');
    const answer = await visitor.post('/dashboard/sign-up', { email, password: 'any password at all' });
    pages.push([answer.status, comparable(answer.text, email)]);
  }
  assert.equal(pages[1], pages[0]);
  assert.equal(pages[2], pages[0]);
  // Sign-in with a wrong password: the same for no account, an account, and an invitation.
  const refusals = [];
  for (const email of ['nobody@corp.test', 'early@corp.test', 'pending@corp.test']) {
    const answer = await signIn(email, 'not the password');
    refusals.push([answer.status, comparable(answer.text, email)]);
  }
  assert.equal(refusals[1], refusals[0]);
  assert.equal(refusals[2], refusals[0]);
  // Invitation: the same answer for a new address, an account, and an invitation elsewhere (no
  // SMTP_URL here: the answer says the invitation is in the outbox).
  for (const email of ['unknown@corp.test', 'early@corp.test', 'pending@corp.test']) {
    await boss.get('/dashboard/members');
    const answer = await boss.post('/dashboard/members/invite', { email, role: 'member' });
    assert.is(answer.location, '/dashboard/members?notice=invited-to-outbox', email);
  }
});

identity('the CLI keeps the last owner: member add cannot demote it', async () => {
  const created = await shutterbus(stack, 'workspace', 'create', '--owner', 'only@corp.test');
  const workspaceId = created.json.workspace_id as string;
  const demoted = await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspaceId,
    '--email',
    'only@corp.test',
    '--role',
    'member',
  );
  assert.is(demoted.code, 1, demoted.stdout);
  assert.is(demoted.json.error_code, 'forbidden');
  await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspaceId,
    '--email',
    'second@corp.test',
    '--role',
    'owner',
  );
  const stepped = await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspaceId,
    '--email',
    'only@corp.test',
    '--role',
    'admin',
  );
  assert.is(stepped.code, 0, stepped.stderr);
  const shown = (await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId)).json;
  assert.equal(
    shown.members.map((m: { email: string; role: string }) => `${m.email} ${m.role}`),
    ['only@corp.test admin', 'second@corp.test owner'],
  );
});

identity.run();
