// The dashboard's storage page against the real stack and a local store playing the customer's:
// owners and admins set, test and clear the default storage; members only look; CSRF as elsewhere.
import { randomBytes } from 'node:crypto';
import { Client as S3Client } from 'minio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { startS3, type S3Server } from '../helpers/stack.ts';
import { mailedLink, signUp as signUpAt } from '../helpers/visitor.ts';

const page = suite('dashboard storage page');
const keys = {
  accessKey: 'DASHKEY',
  secretKey: `dash-secret-${randomBytes(10).toString('hex')}`,
  bucket: 'dash-bucket',
};
let stack: TestStack;
let service: TestService;
let customer: S3Server;

page.before(async () => {
  stack = await startStack();
  customer = await startS3(keys);
  service = await startService(stack, { ROLES: 'ingress' });
});
page.after(async () => {
  await service?.close();
  await customer?.stop();
  await stack?.stop();
});

const signUp = (email: string) => signUpAt(service.base, email, { confirm: stack });

const fields = (secret = keys.secretKey) => ({
  endpoint: customer.endpoint,
  bucket: keys.bucket,
  access_key_id: keys.accessKey,
  secret_access_key: secret,
});

page('an owner saves, tests and clears the default storage; the secret is never shown', async () => {
  const owner = await signUp('storage-owner@example.com');
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec(
    (await owner.get('/dashboard/storage')).text,
  )![1];
  assert.is(
    (await owner.post('/dashboard/storage', { ...fields(), _csrf: 'forged' })).status,
    403,
    "a form without the session's CSRF token is refused",
  );

  const saved = await owner.post('/dashboard/storage', fields());
  assert.is(saved.status, 303, saved.text);
  assert.is(saved.location, '/dashboard/storage?notice=storage-saved');
  const shown = await owner.get(saved.location!);
  assert.match(shown.text, keys.bucket);
  assert.match(shown.text, 'Saved: store=true');
  assert.not.match(shown.text, keys.secretKey);
  const cli = await shutterbus(stack, 'storage', 'show', '--workspace', workspaceId);
  assert.equal([cli.json.storage.bucket, cli.json.storage.access_key_id], [keys.bucket, keys.accessKey]);

  const tested = await owner.post('/dashboard/storage/test', {});
  assert.is(tested.status, 200, tested.text);
  assert.match(tested.text, 'The connection works');
  // The test object was deleted again: the bucket is empty.
  const reader = new S3Client({
    endPoint: '127.0.0.1',
    port: customer.port,
    useSSL: false,
    accessKey: keys.accessKey,
    secretKey: keys.secretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
  const names: string[] = [];
  for await (const item of reader.listObjectsV2(keys.bucket, '', true)) names.push((item as { name: string }).name);
  assert.equal(names, []);

  assert.is((await owner.post('/dashboard/storage', fields('a-wrong-secret'))).status, 303);
  const refused = await owner.post('/dashboard/storage/test', {});
  assert.is(refused.status, 502);
  assert.match(refused.text, 'SignatureDoesNotMatch');
  assert.not.match(refused.text, 'a-wrong-secret');

  assert.is((await owner.post('/dashboard/storage/clear', {})).status, 303);
  assert.match((await owner.get('/dashboard/storage')).text, 'None yet');
});

page('a member sees the page but cannot change the storage', async () => {
  const owner = await signUp('storage-boss@example.com');
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec((await owner.get('/dashboard/keys')).text)![1];
  const member = await signUp('storage-member@example.com');
  const added = await shutterbus(
    stack,
    'member',
    'add',
    '--workspace',
    workspaceId,
    '--email',
    'storage-member@example.com',
    '--role',
    'member',
  );
  assert.is(added.code, 0, added.stderr);
  // The invitation is claimed through its mailed link, opened where the member is signed in.
  assert.is((await member.get(await mailedLink(stack, 'storage-member@example.com', '/dashboard/accept'))).status, 303);
  await member.get('/dashboard/keys');
  assert.is((await member.post('/dashboard/switch', { workspace_id: workspaceId })).status, 303);
  const seen = await member.get('/dashboard/storage');
  assert.is(seen.status, 200);
  assert.match(seen.text, 'Only owners and admins can change this');
  assert.is((await member.post('/dashboard/storage', fields())).status, 403);
  assert.is((await shutterbus(stack, 'storage', 'show', '--workspace', workspaceId)).json.storage, null);
});

page.run();
