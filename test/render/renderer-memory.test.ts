// A renderer's memory bound: a `scripts` memory bomb ends its render with page_memory_exceeded
// (the watchdog kills the renderer), and the next render on the same worker works.

import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { listProcesses, processTree } from '../helpers/processes.ts';
import type { FixtureRoute } from '../fixtures/site.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('the memory bound of a renderer');

// Low, to spare a machine shared with other work; the default is 1024 MB.
const LIMIT_MB = 300;
let rig: RenderRig;
const logged: Array<{ level?: string; msg?: string; mb?: number }> = [];

// Typed arrays live outside the V8 heap: only the watchdog stops these.
const ARRAY_BOMB = 'const kept = []; for (;;) kept.push(new Uint8Array(16 * 1024 * 1024).fill(7));';
// Strings and objects fill the V8 heap itself.
const HEAP_BOMB = 'const kept = []; for (let i = 0; ; i++) kept.push({ i, text: "x".repeat(4096) + i });';

// A page whose iframe is of another site (localhost beside 127.0.0.1): a renderer of its own,
// started while the render runs, holds the bomb.
const routes: Record<string, FixtureRoute> = {
  '/bomb-frame': (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<p>A frame</p><iframe src="http://localhost:${req.socket.localPort}/bomb"></iframe>`);
  },
  '/bomb': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<script>setTimeout(() => { ${ARRAY_BOMB} }, 200)</script>`);
  },
};

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_memory',
    routes,
    host: { rendererMemoryMb: LIMIT_MB, log: (entry) => logged.push(entry) },
    defaults: { viewport_width: 800, viewport_height: 600, timeout: 30 },
  });
});

test.after(async () => {
  await rig.stop();
});

const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => null,
    (error: unknown) => error,
  );

for (const [name, bomb] of [
  ['array buffers', ARRAY_BOMB],
  ['the JavaScript heap', HEAP_BOMB],
]) {
  test(`a memory bomb of ${name} ends with page_memory_exceeded, and the next render works`, async () => {
    const startedAt = Date.now();
    const error = await failureOf(rig.render('/', { scripts: bomb }));
    assert.instance(error, ServiceError, String(error));
    assert.is((error as ServiceError).code, 'page_memory_exceeded');
    assert.ok(Date.now() - startedAt < 25_000, 'ended by the bound, not by the timeout');
    const kill = logged.find((entry) => entry.msg?.includes('memory limit'));
    assert.ok(kill, 'the kill is logged');

    const next = await rig.render('/');
    const { width, height } = await sharp(next.image).metadata();
    assert.equal([width, height], [800, 600], 'the next render works');
    logged.length = 0;
  });
}

test("a bomb in another site's frame, a renderer started mid-render, is stopped too", async () => {
  const startedAt = Date.now();
  const error = await failureOf(rig.render('/bomb-frame', { delay: 10 }));
  assert.is(
    (error as ServiceError | null)?.code,
    'page_memory_exceeded',
    `${error}; logged: ${JSON.stringify(logged)}`,
  );
  assert.ok(Date.now() - startedAt < 9_000, `ended by the bound, not by the delay: ${String(error)}`);
  assert.ok(
    logged.some((entry) => entry.msg?.includes('memory limit')),
    'a renderer was killed for its memory',
  );
  logged.length = 0;
});

test('renderers run with the V8 heap limit', async () => {
  // The last test's page closed with its killed renderer: a render starts one again.
  await rig.render('/');
  const all = listProcesses();
  const tree = new Set(processTree([rig.host.pid!], all));
  const renderers = all.filter((proc) => tree.has(proc.pid) && proc.argv.includes('--type=renderer'));
  assert.ok(renderers.length > 0);
  // A sandboxed renderer's command line is cut short (its zygote's room); the browser's is whole.
  const browser = all.find((proc) => proc.pid === rig.host.pid)!;
  assert.ok(browser.argv.includes(`--js-flags=--max-old-space-size=${LIMIT_MB}`), browser.argv.join(' '));
});

test.run();
