// Still captures and the page kept beside them, against real Chromium and the fixture site:
// disable_animations, mask_selectors / mask_color, remove_selectors, format=mhtml, save_formats.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { chromium } from '../../src/render/browser/playwright.ts';
import { ServiceError } from '../../src/errors.ts';
import { stillPages } from '../fixtures/still-pages.ts';
import { CHROMIUM, near, startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('still captures');

let rig: RenderRig;
let pages: Awaited<ReturnType<typeof stillPages>>;
const render: RenderRig['render'] = (...args) => rig.render(...args);

const RED = [204, 0, 0, 255];
const GREEN = [0, 170, 0, 255];
const MAGENTA = [255, 0, 255, 255];

/** An image's pixels, decoded (RGBA), with its size. */
async function pixels(image: Buffer) {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)];
  return { data, width: info.width, height: info.height, at };
}

/** Every pixel of the rectangle, as colours. */
async function region(image: Buffer, x: number, y: number, width: number, height: number): Promise<number[][]> {
  const { at } = await pixels(image);
  const colours: number[][] = [];
  for (let j = y; j < y + height; j++) for (let i = x; i < x + width; i++) colours.push(at(i, j));
  return colours;
}

const samePixels = async (a: Buffer, b: Buffer) => (await pixels(a)).data.equals((await pixels(b)).data);

test.before(async () => {
  pages = await stillPages();
  rig = await startRenderRig({ workspaceId: 'ws_still', routes: pages.routes });
});

test.after(async () => {
  await rig.stop();
  await pages.close();
});

for (const part of ['animation', 'transition', 'video']) {
  test(`disable_animations: two captures of a page with a ${part} are identical; without it they differ`, async () => {
    const path = `/still/motion?part=${part}`;
    const still = [
      await render(path, { disable_animations: true }),
      await render(path, { disable_animations: true, delay: 1 }),
    ];
    assert.ok(await samePixels(still[0].image, still[1].image), `${part}: the still captures differ`);
    const moving = [await render(path), await render(path, { delay: 1 })];
    assert.not.ok(await samePixels(moving[0].image, moving[1].image), `${part}: the page did not move`);
  });
}

test('disable_animations: the infinite animation is held at its start, the transition at its end', async () => {
  const animation = await pixels((await render('/still/motion?part=animation', { disable_animations: true })).image);
  assert.ok(near(animation.at(50, 100), RED), 'the box at left: 0');
  const transition = await pixels(
    (await render('/still/motion?part=transition', { disable_animations: true, delay: 0.3 })).image,
  );
  assert.ok(near(transition.at(990, 100), [0, 0, 204, 255]), 'the box at its full width');
});

test('disable_animations: the caret is hidden; without it, it shows', async () => {
  // The caret blinks: of captures half a blink apart, one at least shows it.
  const caretShown = async (options: { disable_animations?: boolean }) => {
    for (const delay of [0, 0.3, 0.6, 0.9]) {
      const field = await region(
        (await render('/still/motion?part=caret', { ...options, delay })).image,
        50,
        50,
        40,
        60,
      );
      if (field.some((colour) => !near(colour, [255, 255, 255, 255], 40))) return true;
    }
    return false;
  };
  assert.ok(await caretShown({}), 'no caret without disable_animations');
  assert.not.ok(await caretShown({ disable_animations: true }), 'a caret with disable_animations');
});

test('disable_animations: the video shows its first frame', async () => {
  const still = (await render('/still/motion?part=video', { disable_animations: true, delay: 1.5 })).image;
  const first = (await render('/still/motion?part=video', { disable_animations: true })).image;
  assert.ok(await samePixels(still, first));
  // It is a frame of the video, not an empty box.
  const colours = await region(first, 0, 0, 320, 240);
  assert.ok(new Set(colours.map((c) => c.join())).size > 8, 'the video shows nothing');
});

test('mask_selectors: every pixel of a masked element is mask_color; its neighbours are untouched', async () => {
  const image = (await render('/still/mask', { mask_selectors: ['#secret', '.card'] })).image;
  for (const colour of await region(image, 100, 100, 200, 100)) assert.equal(colour, MAGENTA);
  // In an open shadow root too.
  for (const colour of await region(image, 100, 300, 200, 100)) assert.equal(colour, MAGENTA);
  for (const colour of await region(image, 0, 100, 100, 100)) assert.equal(colour, GREEN);
  for (const colour of await region(image, 300, 100, 100, 100)) assert.equal(colour, GREEN);
  for (const colour of await region(image, 100, 99, 200, 1)) assert.equal(colour, [255, 255, 255, 255]);
  const blue = (await render('/still/mask', { mask_selectors: ['#secret'], mask_color: '#0000FF' })).image;
  for (const colour of await region(blue, 100, 100, 200, 100)) assert.equal(colour, [0, 0, 255, 255]);
  // Full page and at scale 2 alike.
  const scaled = (await render('/still/mask', { mask_selectors: ['#secret'], full_page: true, device_scale_factor: 2 }))
    .image;
  for (const colour of await region(scaled, 200, 200, 400, 200)) assert.equal(colour, MAGENTA);
  for (const colour of await region(scaled, 600, 200, 200, 200)) assert.equal(colour, GREEN);
  // Taken off after the capture: the html saved beside it has no box.
  const saved = await render('/still/mask', { mask_selectors: ['#secret'], save_formats: ['html'] });
  assert.not.ok(saved.saved![0].bytes.toString().includes('data-shutterbus-mask'));
  assert.ok(saved.saved![0].bytes.toString().includes('1234 5678'));
});

test('mask_selectors: a selector the browser cannot parse is a 400 naming it', async () => {
  try {
    await render('/still/mask', { mask_selectors: ['#secret', 'div[['] });
    assert.unreachable('the render should have failed');
  } catch (error) {
    assert.instance(error, ServiceError);
    assert.is((error as ServiceError).code, 'request_not_valid');
  }
});

test('remove_selectors removes the elements from the layout: the page reflows', async () => {
  const before = await pixels((await render('/still/remove')).image);
  assert.ok(near(before.at(600, 10), RED));
  assert.ok(near(before.at(600, 250), GREEN));
  const after = await pixels((await render('/still/remove', { remove_selectors: ['#banner'] })).image);
  assert.ok(near(after.at(600, 10), GREEN), 'the content moved up to where the banner was');
  assert.ok(near(after.at(600, 150), [255, 255, 255, 255]));
  // hide_selectors and remove_selectors both leave it out; the next render on the warm page has it back.
  assert.ok(near((await pixels((await render('/still/remove')).image)).at(600, 10), RED));
});

test('format=mhtml: an archive that Chromium opens offline and renders like the page', async () => {
  const page = (await render('/still/archive')).image;
  const archive = await render('/still/archive', { format: 'mhtml' });
  const text = archive.image.toString();
  assert.match(text, /^From: <Saved by Blink>/m);
  assert.match(text, /Content-Type: multipart\/related/);
  const dir = await mkdtemp(join(tmpdir(), 'shutterbus-mhtml-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const file = join(dir, 'page.mhtml');
    await writeFile(file, archive.image);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, offline: true });
    const offline = await context.newPage();
    await offline.goto(`file://${file}`);
    const shown = await offline.screenshot();
    const a = await pixels(page);
    const b = await pixels(shown);
    assert.is(b.width, a.width);
    let differing = 0;
    for (let i = 0; i < a.data.length; i += 4)
      if (!near([...a.data.subarray(i, i + 4)], [...b.data.subarray(i, i + 4)], 24)) differing++;
    assert.ok(differing < (a.width * a.height) / 1000, `${differing} pixels differ`);
    // The stylesheet and the image came from the archive: the background is the stylesheet's green.
    assert.ok(near(b.at(640, 400), GREEN));
  } finally {
    await browser.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('save_formats: html, markdown and mhtml of the same render beside the image', async () => {
  const observed = await render('/still/archive', { save_formats: ['html', 'markdown', 'mhtml'] });
  assert.equal(
    observed.saved!.map((file) => file.format),
    ['html', 'markdown', 'mhtml'],
  );
  const [html, markdown, mhtml] = observed.saved!.map((file) => file.bytes.toString());
  assert.match(html, /<h1 id="title">Archived page<\/h1>/);
  assert.match(markdown, /Archived page/);
  assert.match(mhtml, /Content-Type: multipart\/related/);
  // They match what format= alone makes of the page.
  assert.is(html, (await render('/still/archive', { format: 'html' })).image.toString());
  assert.is(markdown, (await render('/still/archive', { format: 'markdown' })).image.toString());
  // The image is the capture it would be without them.
  assert.ok(await samePixels(observed.image, (await render('/still/archive')).image));
});

test('a render asking none of it makes none of its calls', async () => {
  const observed = await render('/still/archive');
  assert.is(observed.saved, undefined);
});

test.run();
