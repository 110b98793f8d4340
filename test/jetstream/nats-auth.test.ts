// NATS with the production authorization (infra/production/nats-auth.conf): nobody connects
// without a user, a role's user can run the whole service but not delete a stream, and the
// operator's CLI works with its own user.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixtureSite } from '../fixtures/site.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, type TestService, type TestStack } from '../helpers/service.ts';
import { freePort, natsServerBinary, own, startS3, type Owned } from '../helpers/stack.ts';

const authConf = fileURLToPath(new URL('../../infra/production/nats-auth.conf', import.meta.url));
const passwords = {
  NATS_PASSWORD_INGRESS: 'ingress-password-for-tests',
  NATS_PASSWORD_RENDER: 'render-password-for-tests',
  NATS_PASSWORD_DELIVERY: 'delivery-password-for-tests',
  NATS_PASSWORD_OPERATOR: 'operator-password-for-tests',
};

const auth = suite<{ nats: Owned; url: string; stack: TestStack; service: TestService }>('NATS authentication');

auth.before(async (context) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-nats-auth-'));
  const port = await freePort();
  copyFileSync(authConf, path.join(dir, 'nats-auth.conf'));
  writeFileSync(
    path.join(dir, 'nats.conf'),
    `listen: 127.0.0.1:${port}\njetstream { store_dir: "${dir}/js" }\ninclude ./nats-auth.conf\n`,
  );
  // nats-server reads the passwords from its environment, as in production.
  Object.assign(process.env, passwords);
  context.nats = own(natsServerBinary(), ['-c', path.join(dir, 'nats.conf')], dir);
  context.url = `nats://127.0.0.1:${port}`;
  const operator = { user: 'operator', pass: passwords.NATS_PASSWORD_OPERATOR };
  for (let tries = 0; ; tries++) {
    try {
      await (await connect({ servers: context.url, ...operator })).close();
      break;
    } catch (err) {
      if (tries > 100) throw new Error(`nats-server did not start: ${context.nats.output()}`, { cause: err });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const [s3, site] = await Promise.all([startS3(), startFixtureSite()]);
  const env = {
    NATS_URL: context.url,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: 'shutterbus-test',
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'shutterbus-test-')),
  };
  context.stack = {
    nats: { url: context.url, port, stop: context.nats.stop },
    s3,
    site,
    env,
    stop: async () => void (await Promise.allSettled([site.close(), s3.stop()])),
  };
  // Every role in one process, logged in as a service user: the service's permissions must be enough for all of it.
  context.service = await startService(context.stack, {
    NATS_USER: 'render',
    NATS_PASSWORD: passwords.NATS_PASSWORD_RENDER,
  });
});

auth.after(async ({ nats, stack, service }) => {
  await service?.close();
  await stack?.stop();
  await nats?.stop();
});

auth('a connection without a user, or with a wrong password, is refused', async ({ url }) => {
  await connect({ servers: url, reconnect: false }).then(
    (nc) => nc.close().then(() => assert.unreachable('connected without a user')),
    (err) => assert.match(String(err), /Authorization/i),
  );
  await connect({ servers: url, reconnect: false, user: 'render', pass: 'wrong' }).then(
    (nc) => nc.close().then(() => assert.unreachable('connected with a wrong password')),
    (err) => assert.match(String(err), /Authorization/i),
  );
});

auth('a service user runs every role, and the operator user runs the CLI', async ({ stack, service }) => {
  const cli = { env: { ...stack.env, NATS_USER: 'operator', NATS_PASSWORD: passwords.NATS_PASSWORD_OPERATOR } };
  const created = await shutterbus(cli, 'workspace', 'create', '--plan', 'pro');
  assert.is(created.code, 0, created.stderr);
  // The ingress's workspace cache learns of the new workspace through its watch.
  const answer = await call(`${service.base}/api/take?url=${encodeURIComponent(`${stack.site.url}/`)}`, {
    headers: { 'x-access-key': created.json.access_key },
  });
  assert.is(answer.status, 200, answer.bytes.toString());
  assert.is(answer.contentType, 'image/png');
  const usage = await shutterbus(cli, 'usage', '--workspace', created.json.workspace_id);
  assert.is(usage.json.used, 1);
  const noUser = await shutterbus({ env: stack.env }, 'usage', '--workspace', created.json.workspace_id);
  assert.is(noUser.code, 1, 'the CLI without a user is refused');
});

auth('a service user may not delete a stream', async ({ url }) => {
  const nc = await connect({ servers: url, user: 'render', pass: passwords.NATS_PASSWORD_RENDER });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete('RENDERS').then(
      () => assert.unreachable('deleted RENDERS'),
      (err) => assert.ok(err, 'refused'),
    );
    assert.ok(await jsm.streams.info('RENDERS'), 'RENDERS is still there');
  } finally {
    await nc.close();
  }
});

auth.run();
