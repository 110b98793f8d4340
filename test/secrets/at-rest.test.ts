// Secrets at rest (docs/security.md): workspace secret keys and the session secret are sealed in
// NATS, the CLI still shows and uses them, and a SECRETS_KEY rotation re-seals them under the new key.
import { execFileSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';

const keyA = 'first-secrets-key-'.repeat(3);
const keyB = 'second-secrets-key-'.repeat(3);

const atRest = suite<{ nats: NatsServer }>('secrets at rest');
atRest.before(async (context) => {
  context.nats = await startNats();
});
atRest.after(async ({ nats }) => {
  await nats?.stop();
});

/** The files of NATS's store directory that contain `needle` (JetStream writes its blocks as it goes). */
function filesContaining(dir: string, needle: string): string[] {
  try {
    return execFileSync('grep', ['-rlF', '--', needle, dir], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

atRest('a workspace secret key is never in NATS in plain text; a rotation re-seals it', async ({ nats }) => {
  const withKey = (SECRETS_KEY: string, SECRETS_KEY_PREVIOUS = '') => ({
    env: { NATS_URL: nats.url, SECRETS_KEY, SECRETS_KEY_PREVIOUS },
  });
  const created = await shutterbus(
    withKey(keyA),
    'workspace',
    'create',
    '--plan',
    'pro',
    '--owner',
    'owner@example.com',
  );
  assert.is(created.code, 0, created.stderr);
  const { workspace_id, secret_key } = created.json;
  assert.match(secret_key, /^sk_/);
  const rotated = await shutterbus(
    withKey(keyA),
    'keys',
    'rotate',
    '--workspace',
    workspace_id,
    '--as',
    'owner@example.com',
  );
  const rotatedSecret = rotated.json.secret_key;
  assert.is.not(rotatedSecret, secret_key);

  // The search key is the part after the prefix, so a base64 or JSON-escaped copy would not hide it either.
  assert.equal(filesContaining(nats.dir!, secret_key.slice(3)), [], 'the first secret key is nowhere in NATS');
  assert.equal(filesContaining(nats.dir!, rotatedSecret.slice(3)), [], 'the rotated secret key is nowhere in NATS');
  assert.ok(filesContaining(nats.dir!, workspace_id).length > 0, 'the grep does see what NATS stored');

  // Another key cannot open it: the CLI fails instead of printing garbage.
  const wrongKey = await shutterbus(withKey(keyB), 'workspace', 'show', '--workspace', workspace_id);
  assert.is(wrongKey.code, 1);

  // Rotation: the new key seals, the previous one still opens until `secrets reseal` has run.
  const resealed = await shutterbus(withKey(keyB, keyA), 'secrets', 'reseal');
  assert.is(resealed.code, 0, resealed.stderr);
  assert.ok(resealed.json.workspaces >= 1);
  const shown = await shutterbus(withKey(keyB), 'workspace', 'show', '--workspace', workspace_id);
  assert.is(shown.code, 0, shown.stderr);
  assert.is(shown.json.secret_key, rotatedSecret, 'the new key alone opens what was resealed');
  assert.is(
    (await shutterbus(withKey(keyB, keyA), 'secrets', 'reseal')).json.workspaces,
    0,
    'a second reseal changes nothing',
  );
  assert.is(
    (await shutterbus(withKey(keyA), 'workspace', 'show', '--workspace', workspace_id)).code,
    1,
    'the old key no longer opens it',
  );
});

atRest('production refuses to start the CLI without SECRETS_KEY', async ({ nats }) => {
  const refused = await shutterbus(
    { env: { NATS_URL: nats.url, NODE_ENV: 'production', SECRETS_KEY: '' } },
    'usage',
    '--workspace',
    'ws_0000000000000000',
  );
  assert.is(refused.code, 1);
  assert.is(refused.json.error_code, 'configuration_not_valid');
  assert.match(refused.json.error_message, /SECRETS_KEY/);
});

atRest.run();
