// One key for every process (docs/security.md): a service process or a CLI run whose key cannot
// open what is sealed in NATS refuses to start in one line naming SECRETS_KEY and the key id it
// lacks; /readyz of a process left behind by a rotation says the same.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Sealer } from '../../src/secrets/sealer.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, spawnService, startStack, type TestStack } from '../helpers/service.ts';
import { freePort } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const keyA = 'one-key-first-secrets-key-'.repeat(2);
const keyB = 'one-key-second-secrets-key-'.repeat(2);
const idA = new Sealer(keyA).keyId;
const idB = new Sealer(keyB).keyId;
const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

const oneKey = suite<{ stack: TestStack; workspaceId: string }>('one key for every process');
oneKey.before(async (context) => {
  context.stack = await startStack();
  context.stack.env.SECRETS_KEY = keyA;
  const created = await shutterbus(context.stack, 'workspace', 'create', '--plan', 'pro');
  assert.is(created.code, 0, created.stderr);
  context.workspaceId = created.json.workspace_id;
});
oneKey.after(async ({ stack }) => {
  await stack?.stop();
});

/** Starts the service with `env` on top of the stack's and waits for it to end; its exit code and output. */
function startToEnd(stack: TestStack, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return freePort().then(
    (port) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', main], {
          env: { ...process.env, ...stack.env, LOG_LEVEL: 'warn', PORT: String(port), ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`the service did not stop within 60 s:\n${output}`));
        }, 60_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      }),
  );
}

oneKey('a service with another SECRETS_KEY refuses to start in one line naming the key it lacks', async ({ stack }) => {
  for (const roles of ['delivery', 'ingress']) {
    const { code, output } = await startToEnd(stack, { ROLES: roles, SECRETS_KEY: keyB });
    assert.is.not(code, 0, `${roles}: exits non-zero`);
    const lines = output.trim().split('\n');
    assert.is(lines.length, 1, `${roles}: one line:\n${output}`);
    assert.match(lines[0], /SECRETS_KEY/);
    assert.ok(lines[0].includes(idA), `${roles}: names the key id it lacks (${idA}): ${lines[0]}`);
    assert.ok(lines[0].includes(idB), `${roles}: and the key it has (${idB}): ${lines[0]}`);
  }
});

oneKey('a service on another DATA_DIR without SECRETS_KEY refuses, naming its development key', async ({ stack }) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-other-'));
  const { code, output } = await startToEnd(stack, { ROLES: 'delivery', SECRETS_KEY: '', DATA_DIR: dataDir });
  assert.is.not(code, 0);
  assert.is(output.trim().split('\n').length, 1, output);
  assert.match(output, /SECRETS_KEY/);
  assert.ok(output.includes(idA), output);
  assert.ok(output.includes(path.join(dataDir, 'secrets.key')), `names the development key's file: ${output}`);
});

oneKey('the CLI with another key refuses in one line; with the same key it says which key it uses', async (context) => {
  const { stack, workspaceId } = context;
  const refused = await shutterbus(
    { env: { ...stack.env, SECRETS_KEY: keyB } },
    'workspace',
    'show',
    '--workspace',
    workspaceId,
  );
  assert.is(refused.code, 1);
  assert.is(refused.json.error_code, 'configuration_not_valid');
  assert.match(refused.json.error_message, /SECRETS_KEY/);
  assert.ok(refused.json.error_message.includes(idA), refused.json.error_message);
  assert.is(refused.stdout, '', 'nothing printed as a result');

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-cli-'));
  const devKey = await shutterbus(
    { env: { ...stack.env, SECRETS_KEY: '', DATA_DIR: dataDir } },
    'usage',
    '--workspace',
    workspaceId,
  );
  assert.is(devKey.code, 1);
  assert.ok(devKey.json.error_message.includes(idA), devKey.json.error_message);
  assert.ok(devKey.json.error_message.includes(path.join(dataDir, 'secrets.key')), devKey.json.error_message);

  const shown = await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId);
  assert.is(shown.code, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stderr.trim()), { sealing_key: idA, from: 'SECRETS_KEY' });
});

oneKey('a process left with the old key after a rotation says so on /readyz', async ({ stack }) => {
  const port = String(await freePort());
  const child = await spawnService(stack, { ROLES: 'ingress', PORT: port });
  try {
    const base = `http://127.0.0.1:${port}`;
    const ready = await call(`${base}/readyz`);
    assert.is(ready.status, 200, JSON.stringify(ready.json));
    // The rotation: the new key with the old one as previous re-seals everything, the witness too.
    const resealed = await shutterbus(
      { env: { ...stack.env, SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA } },
      'secrets',
      'reseal',
    );
    assert.is(resealed.code, 0, resealed.stderr);
    assert.is(resealed.json.witness, true);
    await waitFor(async () => (await call(`${base}/readyz`)).status === 503, '/readyz notices the rotation');
    const answer = (await call(`${base}/readyz`)).json!;
    assert.is(answer.dependencies.secrets_key, 'unavailable');
    assert.match(answer.reasons.secrets_key, /^SECRETS_KEY: /);
    assert.ok(answer.reasons.secrets_key.includes(idB), answer.reasons.secrets_key);
  } finally {
    child.kill('SIGKILL');
  }
});

oneKey.run();
