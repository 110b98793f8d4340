// Capture options against real Chromium and the fixture site: clip, full-page scrolling and its
// height limit, capture_beyond_viewport, omit_background and image_width / image_height.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { finishImage } from '../../src/render/outputs/image.ts';
import { MAX_CAPTURE_PIXELS, renderDefaults } from '../../src/domain/options.ts';
import type { RenderWarning } from '../../src/domain/warnings.ts';
import { pixel, startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('capture options');

let rig: RenderRig;
const render: RenderRig['render'] = (...args) => rig.render(...args);

async function size(image: Buffer) {
  const { width, height, format } = await sharp(image).metadata();
  return { width, height, format };
}

// Colours as pixel() reads them (RGBA).
const RED = [204, 0, 0, 255];
const GREEN = [0, 170, 0, 255];
const WHITE = [255, 255, 255, 255];

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_capture_options' });
});

test.after(async () => {
  await rig.stop();
});

test('clip captures that rectangle of the page, scaled by device_scale_factor', async () => {
  const clip = { clip_x: 40, clip_y: 60, clip_width: 200, clip_height: 100 };
  const image = (await render('/element', clip)).image;
  assert.equal(await size(image), { width: 200, height: 100, format: 'png' });
  assert.equal(await pixel(image, 0, 0), RED);
  assert.equal(await pixel(image, 199, 99), RED);
  assert.equal(await size((await render('/element', { ...clip, device_scale_factor: 2 })).image), {
    width: 400,
    height: 200,
    format: 'png',
  });
});

test('a clip below the viewport holds the page there; capture_beyond_viewport=false leaves it blank', async () => {
  // /scroll: a green block from 4000 px to 4200 px.
  const clip = { clip_x: 0, clip_y: 4050, clip_width: 300, clip_height: 100 };
  const image = (await render('/scroll', clip)).image;
  assert.equal(await size(image), { width: 300, height: 100, format: 'png' });
  assert.equal(await pixel(image, 150, 50), GREEN);
  assert.equal(
    await pixel((await render('/scroll', { ...clip, capture_beyond_viewport: false })).image, 150, 50),
    WHITE,
  );
});

test('capture_beyond_viewport=false: the element is scrolled into view, the full page laid out in a viewport as tall', async () => {
  const element = (await render('/scroll', { selector: '#far', capture_beyond_viewport: false })).image;
  assert.equal(await size(element), { width: 1280, height: 200, format: 'png' });
  assert.equal(await pixel(element, 640, 100), GREEN);
  const full = (
    await render('/scroll', {
      full_page: true,
      full_page_scroll: false,
      capture_beyond_viewport: false,
      viewport_width: 400,
    })
  ).image;
  assert.equal(await size(full), { width: 400, height: 4200, format: 'png' });
  assert.equal(await pixel(full, 200, 4100), GREEN);
  // The viewport got its size back: the next render on the warm page sees 400×720 again.
  const next = await render('/', { viewport_width: 400, fail_if_content_missing: ['Hello'] });
  assert.equal(await size(next.image), { width: 400, height: 720, format: 'png' });
});

test('full_page_max_height cuts the full-page capture', async () => {
  assert.equal(
    await size((await render('/tall', { full_page: true, full_page_scroll: false, full_page_max_height: 1000 })).image),
    { width: 1280, height: 1000, format: 'png' },
  );
  assert.equal(
    await size(
      (await render('/tall', { full_page: true, full_page_max_height: 100, full_page_scroll_delay: 100 })).image,
    ),
    { width: 1280, height: 100, format: 'png' },
  );
});

test('full_page_scroll (on by default with full_page) loads the lazy block; without it the block is missing', async () => {
  const viewport = { viewport_width: 800, viewport_height: 600 };
  const started = performance.now();
  const scrolled = (await render('/lazy', { ...viewport, full_page: true })).image;
  const ms = Math.round(performance.now() - started);
  assert.equal(await size(scrolled), { width: 800, height: 3300, format: 'png' });
  assert.equal(await pixel(scrolled, 400, 3150), GREEN);
  assert.equal(await pixel(scrolled, 400, 1500), WHITE);
  console.log(`    full page of 3300 px with the default scroll (600 px steps, 400 ms) took ${ms} ms`);

  const unscrolled = (await render('/lazy', { ...viewport, full_page: true, full_page_scroll: false })).image;
  assert.equal(await size(unscrolled), { width: 800, height: 3300, format: 'png' });
  assert.equal(await pixel(unscrolled, 400, 3150), WHITE);

  const smallSteps = (
    await render('/lazy', { ...viewport, full_page: true, full_page_scroll_by: 1000, full_page_scroll_delay: 100 })
  ).image;
  assert.equal(await pixel(smallSteps, 400, 3150), GREEN);
});

test('after a full-page scroll the page is back at the top', async () => {
  const viewport = { viewport_width: 800, viewport_height: 600 };
  const image = (await render('/lazy', { ...viewport, full_page: true, full_page_scroll_delay: 100 })).image;
  // The top of the page is at the top of the image: its text is dark pixels near (0..200, 0..20).
  const { data, info } = await sharp(image)
    .extract({ left: 0, top: 0, width: 200, height: 20 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  assert.ok(
    data.some((value, i) => i % info.channels < 3 && value < 128),
    'the text at the top of the page is in the image',
  );
});

test('omit_background: transparent where the page paints nothing, opaque again in the next render', async () => {
  const plain = (await render('/no-background')).image;
  assert.equal(await pixel(plain, 500, 500), WHITE);

  const transparent = (await render('/no-background', { omit_background: true })).image;
  assert.is((await pixel(transparent, 500, 500))[3], 0);
  assert.equal(await pixel(transparent, 50, 50), RED);

  const webp = (await render('/no-background', { omit_background: true, format: 'webp', image_quality: 90 })).image;
  assert.is((await pixel(webp, 500, 500))[3], 0);

  // The same warm page serves the next render: the background override did not survive.
  const after = (await render('/no-background')).image;
  assert.equal(await pixel(after, 500, 500), WHITE);
});

test('image_width or image_height alone scales the result, aspect kept; both give exactly that size', async () => {
  assert.equal(await size((await render('/', { image_width: 640 })).image), { width: 640, height: 360, format: 'png' });
  assert.equal(await size((await render('/', { image_height: 180 })).image), {
    width: 320,
    height: 180,
    format: 'png',
  });
  assert.equal(await size((await render('/', { image_width: 400, image_height: 400 })).image), {
    width: 400,
    height: 400,
    format: 'png',
  });
  assert.equal(await size((await render('/', { image_width: 1000, image_height: 100 })).image), {
    width: 1000,
    height: 100,
    format: 'png',
  });
  assert.equal(await size((await render('/', { image_width: 2560, format: 'jpeg' })).image), {
    width: 2560,
    height: 1440,
    format: 'jpeg',
  });
  assert.equal(await size((await render('/', { image_width: 300, format: 'webp' })).image), {
    width: 300,
    height: 169,
    format: 'webp',
  });
});

test('without image_width or image_height the image is not touched', async () => {
  const image = Buffer.from('not even an image');
  assert.is(await finishImage(image, { ...renderDefaults, url: 'https://a.example' }), image);
});

test('image_width on a tall full page is scaled down to what an image may be, and says so', async () => {
  // A full page as tall as a capture may be, 200 px wide.
  const tall = await sharp({ create: { width: 200, height: 16384, channels: 3, background: '#fff' } })
    .png()
    .toBuffer();
  const options = { ...renderDefaults, url: 'https://a.example' };
  const warnings: RenderWarning[] = [];
  const png = await finishImage(tall, { ...options, image_width: 1000 }, warnings);
  const made = await sharp(png, { limitInputPixels: false }).metadata();
  assert.ok(made.width! * made.height! <= MAX_CAPTURE_PIXELS, `${made.width}×${made.height} within the budget`);
  assert.ok(Math.abs((made.height! / made.width!) * 200 - 16384) < 40, `the aspect kept: ${made.width}×${made.height}`);
  assert.equal(
    warnings.map((w) => w.code),
    ['image_scaled_down'],
  );
  // WebP holds 16383 px a side at most: scaled to it rather than failing.
  const webpWarnings: RenderWarning[] = [];
  const webp = await finishImage(tall, { ...options, format: 'webp', image_width: 400 }, webpWarnings);
  const { format, height } = await sharp(webp, { limitInputPixels: false }).metadata();
  assert.equal([format, height! <= 16383], ['webp', true]);
  assert.equal(
    webpWarnings.map((w) => w.code),
    ['image_scaled_down'],
  );
  // Within the bounds: as asked, nothing said.
  const within: RenderWarning[] = [];
  const half = await finishImage(tall, { ...options, image_width: 100 }, within);
  assert.equal(await size(half), { width: 100, height: 8192, format: 'png' });
  assert.equal(within, []);
});

test.run();
