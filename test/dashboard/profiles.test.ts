// The dashboard's profiles page against the real stack: owners and admins add and remove
// profiles, whose state is never shown; members only look; the API sees the same profiles.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { mailedLink, signUp as signUpAt } from '../helpers/visitor.ts';

const page = suite('dashboard profiles page');
let stack: TestStack;
let service: TestService;

page.before(async () => {
  stack = await startStack();
  service = await startService(stack, { ROLES: 'ingress' });
});
page.after(async () => {
  await service?.close();
  await stack?.stop();
});

const signUp = (email: string) => signUpAt(service.base, email, { confirm: stack });
const SECRET = 'session-value-never-shown-4f2';
const state = JSON.stringify({
  cookies: [{ name: 'session', value: SECRET, domain: 'app.example.com', path: '/', secure: true }],
  origins: [{ origin: 'https://app.example.com', localStorage: [{ name: 'token', value: SECRET }] }],
});

page('an owner adds and removes a profile; its state is never shown; the API lists it', async () => {
  const owner = await signUp('profiles-owner@example.com');
  const keysPage = (await owner.get('/dashboard/keys')).text;
  assert.is(
    (await owner.post('/dashboard/profiles', { name: 'app', storage_state: state, _csrf: 'forged' })).status,
    403,
  );
  const bad = await owner.post('/dashboard/profiles', { name: 'app', storage_state: '{"cookies": 1}' });
  assert.is(bad.status, 400);
  const saved = await owner.post('/dashboard/profiles', { name: 'app', storage_state: state });
  assert.is(saved.status, 303, saved.text);
  const shown = await owner.get(saved.location!);
  assert.match(shown.text, 'Profile saved');
  assert.match(shown.text, 'https://app.example.com');
  assert.not.match(shown.text, SECRET);
  const accessKey = /<code id="access-key">([^<]+)<\/code>/.exec(keysPage)![1];
  const listed = await call(`${service.base}/api/profiles`, { headers: { 'x-access-key': accessKey } });
  assert.is(listed.status, 200, listed.bytes.toString());
  assert.equal(
    listed.json!.profiles.map((profile: { name: string }) => profile.name),
    ['app'],
  );
  assert.not.match(listed.bytes.toString(), SECRET);
  assert.is((await owner.post('/dashboard/profiles/app/delete', {})).status, 303);
  assert.match((await owner.get('/dashboard/profiles')).text, 'None yet');
});

page('a member sees the page but cannot change the profiles', async () => {
  const owner = await signUp('profiles-boss@example.com');
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec((await owner.get('/dashboard/keys')).text)![1];
  assert.is((await owner.post('/dashboard/profiles', { name: 'kept', storage_state: state })).status, 303);
  const member = await signUp('profiles-member@example.com');
  const added = await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspaceId,
    '--email',
    'profiles-member@example.com',
    '--role',
    'member',
  );
  assert.is(added.code, 0, added.stderr);
  // The invitation is claimed through its mailed link, opened where the member is signed in.
  assert.is(
    (await member.get(await mailedLink(stack, 'profiles-member@example.com', '/dashboard/accept'))).status,
    303,
  );
  await member.get('/dashboard/keys');
  assert.is((await member.post('/dashboard/switch', { workspace_id: workspaceId })).status, 303);
  const seen = await member.get('/dashboard/profiles');
  assert.is(seen.status, 200);
  assert.match(seen.text, 'Only owners and admins can change profiles');
  assert.match(seen.text, 'kept');
  assert.is((await member.post('/dashboard/profiles', { name: 'x', storage_state: state })).status, 403);
  assert.is((await member.post('/dashboard/profiles/kept/delete', {})).status, 403);
});

page.run();
