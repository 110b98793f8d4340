import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

test("an error thrown in a suite's before hook is printed, and the file fails", () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', './test/helpers/uvu-hook-errors.ts', 'test/fixtures/failing-before.ts'],
    { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } },
  );
  assert.is(run.status, 1);
  assert.match(run.stdout, /FAIL\s+failing set-up\s+"before hook"/);
  assert.match(run.stdout, /the fixture could not bind its port/);
  assert.match(run.stdout, /Passed:\s+0/);
});

test.run();
