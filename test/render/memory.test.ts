// Renders must not outlive themselves: after many renders through the real render path
// (capturePage → BrowserHost.withPage) and a full garbage collection, the ArrayBuffer memory of
// the process must not have grown by anything like one image per render. (The soak found ~95 KB,
// one image, retained per render: withPage's abort listener on its AbortSignal.any deadline was
// never removed, and Node keeps such a composite signal, its listener and everything the listener
// reaches alive until the signal aborts, which it never does once its timeout signal is collected.)

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BrowserHost } from '../../src/render/browser/browser.ts';
import { capturePage } from '../../src/render/capture.ts';
import { renderDefaults, type RenderOptions } from '../../src/domain/options.ts';
import { CHROMIUM } from '../helpers/render.ts';

const test = suite('render memory');

// The test runner starts files without --expose-gc; this turns it on for this process.
v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Several full collections, with turns of the event loop between them (weak references, finalizers). */
async function arrayBuffersAfterGc(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().arrayBuffers;
}

// A page of random pixels: its PNG barely compresses, so each image is large (~1.5 MB) and one
// image retained per render stands far above the noise.
const noisePage = `<!doctype html><style>body{margin:0}</style><canvas id="c" width="800" height="600"></canvas><script>
const c = document.getElementById('c').getContext('2d');
const img = c.createImageData(800, 600);
const words = new Uint32Array(img.data.buffer);
for (let i = 0; i < words.length; i++) words[i] = (Math.random() * 0x1000000) | 0xff000000;
c.putImageData(img, 0, 0);
</script>`;

const options: RenderOptions = {
  ...renderDefaults,
  timeout: 15,
  html: noisePage,
  viewport_width: 800,
  viewport_height: 600,
};

let host: BrowserHost;

test.before(async () => {
  host = new BrowserHost({ executablePath: CHROMIUM, poolSize: 1 });
  await host.start();
});

test.after(async () => {
  await host.close();
});

test('renders through withPage do not retain their images', async () => {
  // One long-lived signal for every render, as the JetStream consume loop passes one.
  const loop = new AbortController();
  const renderOnce = async () =>
    (await capturePage(host, options, loop.signal, { workspaceId: 'ws_memory' })).image.length;
  // Warm-up: the pool's page, Chromium's connection buffers, lazily loaded modules.
  for (let i = 0; i < 3; i++) await renderOnce();
  const before = await arrayBuffersAfterGc();
  const renders = 25;
  let imageBytes = 0;
  for (let i = 0; i < renders; i++) imageBytes += await renderOnce();
  const after = await arrayBuffersAfterGc();
  const averageImage = imageBytes / renders;
  const grownPerRender = (after - before) / renders;
  assert.ok(
    averageImage > 500_000,
    `the noise page should make large images (average ${Math.round(averageImage)} bytes)`,
  );
  // Generous: a leak of one image per render grows by ~averageImage per render; allow a fifth of it.
  assert.ok(
    grownPerRender < averageImage / 5,
    `ArrayBuffer memory grew by ${Math.round(grownPerRender / 1024)} KB per render after a full GC ` +
      `(${Math.round(before / 1048576)} → ${Math.round(after / 1048576)} MB over ${renders} renders; images average ${Math.round(averageImage / 1024)} KB)`,
  );
});

test.run();
