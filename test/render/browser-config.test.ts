// The browser's settings as the environment gives them: the sandbox switch, its user, the memory
// bound, and the environment Chromium is started with (never the service's credentials).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';

const test = suite('browser configuration');

test('the sandbox is on, as shutterbus-chromium, with a 1024 MB renderer bound, unless told otherwise', () => {
  const config = loadConfig({});
  assert.is(config.chromiumNoSandbox, false);
  assert.is(config.chromiumUser, 'shutterbus-chromium');
  assert.is(config.rendererMemoryMb, 1024);
  const told = loadConfig({ CHROMIUM_NO_SANDBOX: 'true', CHROMIUM_USER: 'chrome', RENDERER_MEMORY_LIMIT_MB: '2048' });
  assert.equal([told.chromiumNoSandbox, told.chromiumUser, told.rendererMemoryMb], [true, 'chrome', 2048]);
});

test('a sandbox switch or bound that does not parse stops the start naming it', () => {
  assert.throws(
    () => loadConfig({ CHROMIUM_NO_SANDBOX: 'yes' }),
    (err: unknown) => err instanceof ConfigError && /CHROMIUM_NO_SANDBOX/.test(err.message),
  );
  assert.throws(
    () => loadConfig({ RENDERER_MEMORY_LIMIT_MB: '64' }),
    (err: unknown) => err instanceof ConfigError && /RENDERER_MEMORY_LIMIT_MB/.test(err.message),
  );
});

test("Chromium's environment keeps locale, time zone and paths, never a credential", () => {
  const { browserEnv } = loadConfig({
    PATH: '/usr/bin',
    TZ: 'Europe/Paris',
    LANG: 'fr_FR.UTF-8',
    S3_SECRET_KEY: 'store-secret',
    SECRETS_KEY: 'k'.repeat(40),
    SESSION_SECRET: 's'.repeat(40),
    SMTP_URL: 'smtp://u:p@mail.example',
  });
  assert.equal(browserEnv, { PATH: '/usr/bin', TZ: 'Europe/Paris', LANG: 'fr_FR.UTF-8' });
});

test.run();
