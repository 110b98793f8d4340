// The configuration: defaults, every kind of bad value stopping the start with one line naming the
// variable, and the result frozen.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkChromiumPath, ConfigError, loadConfig, parseDurations } from '../src/config.ts';
import { defaultRenderBrowsers, defaultRenderConcurrency, defaultRenderMemoryBudgetMb } from '../src/machine.ts';
import { settings, settingsTable, type Setting } from '../src/settings.ts';

const refused = (env: Record<string, string>, variable: string) => {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `${variable}: a ConfigError`);
    assert.match((err as Error).message, new RegExp(`^${variable}: `), `${variable}: the message names it first`);
    assert.not.match((err as Error).message, /\n/, `${variable}: one line`);
    return;
  }
  assert.unreachable(`${JSON.stringify(env)} was accepted`);
};

test('an empty environment gives the documented defaults', () => {
  const config = loadConfig({});
  assert.is(config.port, 3000);
  assert.is(config.host, '127.0.0.1');
  assert.is(config.baseUrl, 'http://127.0.0.1:3000');
  assert.equal(config.natsServers, ['nats://127.0.0.1:4222']);
  assert.is(config.jetstreamReplicas, 1);
  assert.is(config.s3.endPoint, 'http://127.0.0.1:9000');
  assert.is(config.chromiumPath, '/usr/lib/chromium/chromium');
  assert.equal([...config.roles].sort(), ['delivery', 'ingress', 'render']);
  assert.is(config.allowPrivateTargets, false);
  assert.equal(config.webhookRetrySchedule, [10, 60, 300, 1800, 7200, 21600, 43200, 86400]);
  assert.is(config.production, false);
  assert.is(config.secretsKey, undefined);
  assert.is(config.natsAuth, undefined);
});

test('ports, BASE_URL and NATS_URL follow each other', () => {
  const config = loadConfig({
    PORT: '8080',
    LOCAL_NATS_PORT: '5222',
    LOCAL_S3_PORT: '9100',
    BASE_URL: 'https://shots.example.com/',
  });
  assert.is(config.baseUrl, 'https://shots.example.com', 'a trailing slash is dropped');
  assert.equal(config.natsServers, ['nats://127.0.0.1:5222']);
  assert.is(config.s3.endPoint, 'http://127.0.0.1:9100');
  assert.equal(loadConfig({ NATS_URL: 'nats://a:4222, tls://b:4222' }).natsServers, ['nats://a:4222', 'tls://b:4222']);
});

test('every kind of bad value is refused with one line naming the variable', () => {
  refused({ PORT: 'eighty' }, 'PORT');
  refused({ PORT: '70000' }, 'PORT');
  refused({ BASE_URL: 'shots.example.com' }, 'BASE_URL');
  refused({ BASE_URL: 'ftp://shots.example.com' }, 'BASE_URL');
  refused({ NATS_URL: 'http://nats:4222' }, 'NATS_URL');
  refused({ NATS_URL: ' , ' }, 'NATS_URL');
  refused({ JETSTREAM_REPLICAS: '2' }, 'JETSTREAM_REPLICAS');
  refused({ ROLES: 'ingress,printer' }, 'ROLES');
  refused({ ROLES: ',' }, 'ROLES');
  refused({ ALLOW_PRIVATE_TARGETS: 'yes' }, 'ALLOW_PRIVATE_TARGETS');
  refused({ WEBHOOK_RETRY_SCHEDULE: '10s,soon' }, 'WEBHOOK_RETRY_SCHEDULE');
  refused({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
  refused({ SESSION_SECRET: 'short' }, 'SESSION_SECRET');
  refused({ SECRETS_KEY: 'short' }, 'SECRETS_KEY');
  refused({ SECRETS_KEY_PREVIOUS: `${'a'.repeat(32)},short` }, 'SECRETS_KEY_PREVIOUS');
  refused({ NATS_USER: 'render' }, 'NATS_PASSWORD');
  refused({ NATS_PASSWORD: 'secret' }, 'NATS_USER');
  refused({ SMTP_URL: 'mail.example.com' }, 'SMTP_URL');
  refused({ RENDER_CONCURRENCY: '0' }, 'RENDER_CONCURRENCY');
  refused({ HOST: 'http://0.0.0.0' }, 'HOST');
  refused({ HOST: '127.0.0.1:3000' }, 'HOST');
  refused({ HOST: 'not..valid' }, 'HOST');
  for (const host of ['0.0.0.0', '::', 'localhost', 'render-1.internal'])
    assert.is(loadConfig({ HOST: host }).host, host);
});

test('CHROMIUM_PATH must name an executable file', () => {
  const refusedPath = (chromiumPath: string, why: RegExp) => {
    try {
      checkChromiumPath(chromiumPath);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.match((err as Error).message, why);
      return;
    }
    assert.unreachable(`${chromiumPath} was accepted`);
  };
  refusedPath('/nonexistent/chromium', /^CHROMIUM_PATH: "\/nonexistent\/chromium" does not exist$/);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-config-'));
  const plainFile = path.join(dir, 'chromium');
  writeFileSync(plainFile, '#!/bin/sh\n', { mode: 0o644 });
  refusedPath(plainFile, /^CHROMIUM_PATH: .* is not an executable file$/);
  rmSync(dir, { recursive: true });
  refusedPath('/usr/bin', /^CHROMIUM_PATH: .* is not an executable file$/);
  checkChromiumPath(loadConfig({}).chromiumPath);
});

test('a render worker with a bad CHROMIUM_PATH stops at once with one line naming it', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-config-'));
  try {
    const main = path.join(import.meta.dirname, '../src/main.ts');
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', main],
        {
          timeout: 30_000,
          env: {
            PATH: process.env.PATH,
            DATA_DIR: dataDir,
            ROLES: 'render',
            PORT: '0',
            LOG_LEVEL: 'silent',
            CHROMIUM_PATH: '/nonexistent/chromium',
            // Nothing answers there: the start must not wait for NATS to say what is wrong.
            NATS_URL: 'nats://127.0.0.1:1',
          },
        },
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    assert.is(code, 1);
    assert.is(stderr.trim(), 'shutterbus: configuration: CHROMIUM_PATH: "/nonexistent/chromium" does not exist');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("RENDER_MEMORY_BUDGET: MB, by default a quarter of the machine's memory, at most 512 MB per CPU", () => {
  const budget = defaultRenderMemoryBudgetMb();
  assert.is(loadConfig({}).renderMemoryBudgetMb, budget);
  const expected = Math.max(
    512,
    Math.min(Math.floor(os.totalmem() / 4 / 1024 / 1024), 512 * os.availableParallelism()),
  );
  assert.ok(budget === expected || budget < expected, `default ${budget} MB (a container's limit may lower it)`);
  assert.ok(budget >= 512, `default ${budget} MB`);
  assert.is(loadConfig({ RENDER_MEMORY_BUDGET: '1536' }).renderMemoryBudgetMb, 1536);
  refused({ RENDER_MEMORY_BUDGET: '1.5G' }, 'RENDER_MEMORY_BUDGET');
  refused({ RENDER_MEMORY_BUDGET: '64' }, 'RENDER_MEMORY_BUDGET');
});

test('RENDER_CONCURRENCY: by default one render more than the CPUs, at most one per GB, at least 2', () => {
  const concurrency = defaultRenderConcurrency();
  assert.is(loadConfig({}).renderConcurrency, concurrency);
  const expected = Math.max(2, Math.min(os.availableParallelism() + 1, Math.floor(os.totalmem() / 1024 ** 3)));
  assert.ok(concurrency <= expected, `default ${concurrency} (a container's limit may lower it)`);
  assert.ok(concurrency >= 2, `default ${concurrency}`);
  assert.is(loadConfig({ RENDER_CONCURRENCY: '1' }).renderConcurrency, 1);
});

test('RENDER_BROWSERS: by default one per CPU, at most one per 512 MB of the budget, at least 1', () => {
  const cpus = os.availableParallelism();
  assert.is(defaultRenderBrowsers(4096), Math.min(cpus, 8));
  assert.is(defaultRenderBrowsers(1024), Math.min(cpus, 2));
  assert.is(defaultRenderBrowsers(512), 1);
  assert.is(defaultRenderBrowsers(128), 1);
  const config = loadConfig({ RENDER_MEMORY_BUDGET: '1024' });
  assert.is(config.renderBrowsers, Math.min(cpus, 2));
  assert.is(loadConfig({ RENDER_BROWSERS: '1' }).renderBrowsers, 1);
  refused({ RENDER_BROWSERS: '0' }, 'RENDER_BROWSERS');
  refused({ RENDER_BROWSERS: 'two' }, 'RENDER_BROWSERS');
});

test('durations take ms, s, m, h and d', () => {
  assert.equal(parseDurations('X', '500ms, 2s,1.5m,2h,1d'), [0.5, 2, 90, 7200, 86400]);
});

test('the configuration is frozen, nested parts included', () => {
  const config = loadConfig({
    NODE_ENV: 'production',
    SECRETS_KEY: 'k'.repeat(32),
    NATS_USER: 'render',
    NATS_PASSWORD: 'p',
  });
  assert.is(config.production, true);
  assert.equal(config.natsAuth, { user: 'render', pass: 'p' });
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.s3) && Object.isFrozen(config.roles));
  assert.throws(() => {
    (config as { port: number }).port = 1;
  });
});

test('make run checks the configuration before it starts NATS or the store', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-config-'));
  try {
    const launcher = path.join(import.meta.dirname, '../infra/local-stack.ts');
    // Whatever is not under test points elsewhere, so that nothing could start on a shared port.
    const elsewhere = { NATS_URL: 'nats://127.0.0.1:1', S3_ENDPOINT: 'http://127.0.0.1:2' };
    for (const [variable, value, others] of [
      ['LOCAL_NATS_PORT', 'abc', {}],
      ['LOCAL_S3_PORT', '70000', { NATS_URL: elsewhere.NATS_URL }],
      ['PORT', 'eighty', elsewhere],
    ] as const) {
      const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          ['--import', 'tsx', launcher, 'up'],
          {
            timeout: 30_000,
            env: { PATH: process.env.PATH, DATA_DIR: dataDir, READY_TIMEOUT: '3', ...others, [variable]: value },
          },
          (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
        );
      });
      assert.is(code, 1, variable);
      assert.match(stderr.trim(), new RegExp(`^shutterbus: configuration: ${variable}: [^\\n]+$`));
      assert.not.ok(existsSync(path.join(dataDir, 'nats.pid')), `${variable}: no NATS started`);
      assert.not.ok(existsSync(path.join(dataDir, 's3.pid')), `${variable}: no store started`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the README and docs/operations.md show the settings table as it is', () => {
  const between = (page: string, from: number) => {
    const start = page.indexOf('| variable | default | meaning |', from);
    return page.slice(start, page.indexOf('\n\n', start));
  };
  const readme = readFileSync('README.md', 'utf8');
  assert.is(between(readme, 0), settingsTable('newcomer'), 'README.md: paste settingsTable("newcomer")');
  const operations = readFileSync('docs/operations.md', 'utf8');
  assert.is(
    between(operations, operations.indexOf('## Settings for operators')),
    settingsTable('operator', 'docs'),
    'docs/operations.md: paste settingsTable("operator", "docs")',
  );
});

test('every variable of the settings table is one the loader reads, and names are not repeated', () => {
  const loader = readFileSync('src/config.ts', 'utf8');
  const names = settings.flatMap((setting: Setting) => setting.names);
  assert.is(new Set(names).size, names.length);
  for (const setting of settings as readonly Setting[]) {
    for (const name of setting.names) {
      const read = loader.includes(`'${name}'`) || loader.includes(`env.${name}`);
      if (setting.readBy === 'node') assert.not.ok(read, `${name} is Node's or glibc's, not the loader's`);
      else assert.ok(read, `${name} is in the table but src/config.ts never reads it`);
    }
  }
});

test.run();
