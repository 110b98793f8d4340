// The bundle `make build` writes (what `make run` and the production image start) renders like the sources.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createWorkspace, spawnService, startStack, type TestStack } from '../helpers/service.ts';
import { freePort } from '../helpers/stack.ts';

const bundle = suite('dist/main.js');
let stack: TestStack;

bundle.before(async () => {
  stack = await startStack();
});
bundle.after(async () => {
  await stack?.stop();
});

bundle('builds, starts, renders a screenshot and stops on SIGTERM', async () => {
  const built = spawnSync('npm', ['run', '--silent', 'build'], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    encoding: 'utf8',
  });
  assert.is(built.status, 0, built.stderr);

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

bundle.run();
