import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitFor } from './helpers/wait.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

test("an error thrown in a suite's before hook is printed, and the file fails", () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', './test/helpers/uvu-preload.ts', 'test/fixtures/failing-before.ts'],
    { cwd: root, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } },
  );
  assert.is(run.status, 1);
  assert.match(run.stdout, /FAIL\s+failing set-up\s+"before hook"/);
  assert.match(run.stdout, /the fixture could not bind its port/);
  assert.match(run.stdout, /Passed:\s+0/);
});

test('a test that hangs says where it is when asked, and what is still open', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/helpers/uvu-preload.ts', 'test/fixtures/hanging-test.ts'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } },
  );
  try {
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    await waitFor(() => output.includes('waiting'), 'the fixture reached its hanging test', 20_000);
    child.kill('SIGUSR2');
    await waitFor(() => /^hung in: .*$/m.test(output), 'the fixture said where it is', 5_000);
    assert.match(output, /^hung in: hanging › waits for an answer that never comes$/m);
    assert.match(output, /still open: .*Timeout/);
  } finally {
    child.kill('SIGKILL');
  }
});

test.run();
