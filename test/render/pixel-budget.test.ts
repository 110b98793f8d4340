// The bound on an output's pixels (width × height × device_scale_factor²): a request that alone
// exceeds it is refused before any browser work; a full page that would is cut where it ends.

import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_CAPTURE_PIXELS, type PageObservation } from '../../src/domain/options.ts';
import { parseTakeParams, type RawParams } from '../../src/http/params.ts';
import { listProcesses, processTree, pssMb } from '../helpers/processes.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('the pixel budget of a capture');

const query = (qs: string): RawParams => ({ kind: 'query', entries: [...new URLSearchParams(qs)] });
const refused = (qs: string) => {
  const parsed = parseTakeParams(query(qs));
  return 'problems' in parsed ? parsed.problems.map((problem) => problem.parameter) : [];
};

let rig: RenderRig;

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_pixels' });
});

test.after(async () => {
  await rig.stop();
});

test('a request whose image alone is too large is a 400 naming the parameter', () => {
  assert.equal(refused('url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=5'), [
    'device_scale_factor',
  ]);
  assert.equal(refused('url=https://a.example&clip_x=0&clip_y=0&clip_width=16384&clip_height=16384'), ['clip_height']);
  assert.equal(
    refused('url=https://a.example&clip_x=0&clip_y=0&clip_width=3840&clip_height=16384'),
    [],
    'the budget itself is allowed',
  );
  assert.equal(
    refused('url=https://a.example&clip_x=0&clip_y=0&clip_width=3840&clip_height=8192&device_scale_factor=1.5'),
    ['clip_height'],
  );
});

test('a giant full page at device_scale_factor 3 is cut where the budget ends, and the next render works', async () => {
  const browserPid = rig.host.pid!;
  let peakMb = 0;
  const sample = setInterval(() => {
    peakMb = Math.max(peakMb, pssMb(processTree([browserPid], listProcesses())));
  }, 100);
  let shot: PageObservation;
  try {
    shot = await rig.render('/very-tall', {
      full_page: true,
      device_scale_factor: 3,
      viewport_width: 1280,
      viewport_height: 720,
      timeout: 60,
    });
  } finally {
    clearInterval(sample);
  }
  const { width, height } = await sharp(shot.image, { limitInputPixels: false }).metadata();
  assert.is(width, 3840);
  assert.ok(width! * height! <= MAX_CAPTURE_PIXELS, `${width}×${height} is within the budget`);
  // Cut at the height where the budget ends (in CSS px, 16384 / 3), far short of the 30,000 px page.
  assert.is(height, Math.floor(MAX_CAPTURE_PIXELS / (1280 * 9)) * 3);
  // The cut bitmap is 240 MiB and Chromium holds a few copies of it at once (1.1–1.2 GB seen);
  // uncut, one copy alone would be 1.3 GiB.
  assert.ok(peakMb < 2000, `Chromium peaked at ${Math.round(peakMb)} MB`);
  console.log(`    giant full page: ${width}×${height}, Chromium peak ${Math.round(peakMb)} MB`);

  const next = await rig.render('/', {});
  const size = await sharp(next.image).metadata();
  assert.equal([size.width, size.height], [1280, 720], 'the next render works');
});

test("WebP's longest side (16383 px): a clip beyond it is a 400, a full page is cut to it", async () => {
  assert.equal(refused('url=https://a.example&format=webp&clip_x=0&clip_y=0&clip_width=200&clip_height=16384'), [
    'clip_height',
  ]);
  assert.equal(
    refused(
      'url=https://a.example&format=webp&clip_x=0&clip_y=0&clip_width=200&clip_height=8192&device_scale_factor=2',
    ),
    ['clip_height'],
  );
  assert.equal(refused('url=https://a.example&format=png&clip_x=0&clip_y=0&clip_width=200&clip_height=16384'), []);
  for (const scale of [1, 2]) {
    const shot = await rig.render('/very-tall', {
      format: 'webp',
      full_page: true,
      full_page_scroll: false,
      device_scale_factor: scale,
      viewport_width: 200,
      viewport_height: 200,
    });
    assert.ok(shot.image.length > 0, `an image at scale ${scale}`);
    const { format, width, height } = await sharp(shot.image, { limitInputPixels: false }).metadata();
    assert.equal([format, width, height], ['webp', 200 * scale, Math.floor(16383 / scale) * scale]);
  }
});

test('a full page within the budget is not cut by it', async () => {
  const shot = await rig.render('/tall', {
    full_page: true,
    device_scale_factor: 1,
    viewport_width: 1280,
    viewport_height: 720,
  });
  const { width, height } = await sharp(shot.image).metadata();
  assert.equal([width, height], [1280, 5000]);
});

test.run();
