// Style is checked, not hoped for: Biome (biome.json) finds the tree formatted and lint-clean.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('..', import.meta.url));

test('biome ci: every file formatted as biome.json says, no lint error', () => {
  const run = spawnSync(process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'ci', '--colors=off', '.'], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.is(run.status, 0, `${run.stdout}\n${run.stderr}`.slice(-4000));
});

test.run();
