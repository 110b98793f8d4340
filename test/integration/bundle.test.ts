// The bundle `make build` writes (what `make run` and the production image start) renders like the sources.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createWorkspace, spawnService, startStack, type TestStack } from '../helpers/service.ts';
import { freePort } from '../helpers/stack.ts';

const bundle = suite('dist/main.js and dist/service.js');
const root = fileURLToPath(new URL('../../', import.meta.url));
let stack: TestStack;

bundle.before(async () => {
  stack = await startStack();
});
bundle.after(async () => {
  await stack?.stop();
});

bundle(
  'builds, and primes the compile cache: a first start loads the bundle and its packages without compiling',
  () => {
    // Before any start of this build, which would leave compiled code of its own behind.
    const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8' });
    assert.is(built.status, 0, built.stderr);
    // As a start loads them: the entry, the V8 flags it sets, then the bundle.
    const entry = JSON.stringify(`${root}dist/main.js`);
    const service = JSON.stringify(`${root}dist/service.js`);
    const loaded = spawnSync(
      process.execPath,
      ['--input-type=module', '--eval', `(await import(${entry})).tuneHeap(); await import(${service});`],
      {
        env: { ...process.env, NODE_COMPILE_CACHE: `${root}dist/compile-cache`, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
        encoding: 'utf8',
      },
    );
    assert.is(loaded.status, 0, loaded.stderr);
    // Node says, for each module it loads, whether V8 took the cached code or compiled it afresh.
    const lines = loaded.stderr.split('\n');
    const compiled = lines.filter((line) => /was not initialized|was rejected/.test(line) && !line.includes('[eval'));
    assert.equal(compiled, [], 'every module found in the cache and its code taken');
    const taken = lines.filter((line) =>
      /code cache for (ESM|CommonJS) .*(dist\/service\.js|playwright-core).* was accepted/.test(line),
    );
    assert.ok(taken.length >= 2, loaded.stderr.slice(0, 2000));
  },
);

bundle('starts, renders a screenshot and stops on SIGTERM', async () => {
  // Run after the test above, whose build wrote dist/ (uvu runs a suite's tests in order).
  const workspace = await createWorkspace(stack);
  const port = await freePort();
  const service = await spawnService(stack, { PORT: String(port) }, 'dist');
  const exited = new Promise<number | null>((resolve) => service.once('exit', resolve));
  try {
    const shot = await call(`http://127.0.0.1:${port}/api/take?url=${encodeURIComponent(`${stack.site.url}/`)}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
    assert.is(shot.status, 200);
    assert.is(shot.contentType, 'image/png');
    assert.ok(shot.bytes.subarray(1, 4).toString() === 'PNG');
  } finally {
    service.kill('SIGTERM');
  }
  assert.is(await exited, 0, 'a graceful stop');
});

bundle("the entry loads no package before it reads ahead the start's files", () => {
  // The entry (src/boot.ts) runs before the service's bundle loads, or its reading ahead would come too late.
  const entry = readFileSync(`${root}dist/main.js`, 'utf8');
  const imported = [...entry.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
  assert.ok(imported.length > 0, 'the entry imports Node modules');
  assert.equal(
    imported.filter((name) => !name.startsWith('node:')),
    [],
    'only Node modules, statically',
  );
  // What the build listed for it to read: the service's bundle, its packages and their compiled code.
  const listed = readFileSync(`${root}dist/start-files.txt`, 'utf8').split('\n');
  assert.is(listed[0], 'dist/service.js');
  assert.ok(listed.some((file) => file.startsWith('node_modules/playwright-core/')));
  assert.ok(listed.some((file) => file.startsWith('dist/compile-cache/')));
});

bundle.run();
