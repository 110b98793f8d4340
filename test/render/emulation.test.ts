// Emulation options (docs/api.md) against real Chromium and the local fixture site, each shown by
// its visible effect: band colours of /em/probe, image sizes, what the fixture server received;
// and that nothing of them survives into the next render on the same warm page.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import type { CDPSession, Page } from 'playwright-core';
import { pageMetrics } from '../../src/domain/devices.ts';
import { applyEmulation } from '../../src/render/steps/emulation.ts';
import { presetOptions } from '../../src/domain/devices.ts';
import { renderDefaults, type PageObservation } from '../../src/domain/options.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { Progress } from '../../src/render/browser/progress.ts';

const test = suite('emulation');

let rig: RenderRig;
let site: RenderRig['site'];

// Bands of /em/probe, top to bottom, 80 CSS px each.
const BANDS = ['scheme', 'motion', 'print', 'zone', 'geo', 'touch', 'ua'] as const;
type Band = (typeof BANDS)[number];

const GREY = [128, 128, 128];
const GREEN = [0, 170, 0];
const YELLOW = [255, 255, 0];
const BLUE = [0, 0, 170];
const RED = [170, 0, 0];
const WHITE = [255, 255, 255];

const UA = 'Mozilla/5.0 ShutterbusTestAgent/1.0';
const TOKYO = { geolocation_latitude: 35.68, geolocation_longitude: 139.69 };

const render: RenderRig['render'] = (...args) => rig.render(...args);

interface Decoded {
  width: number;
  height: number;
  /** RGB at CSS px (x, y), given the image's scale. */
  at(x: number, y: number): number[];
}

async function decode(image: Buffer, scale = 1): Promise<Decoded> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    at(x, y) {
      const offset = (Math.floor(y * scale) * info.width + Math.floor(x * scale)) * info.channels;
      return [data[offset], data[offset + 1], data[offset + 2]];
    },
  };
}

// The colour of each band of /em/probe, sampled in its middle.
async function bands(observation: PageObservation, scale = 1): Promise<Record<Band, number[]>> {
  const image = await decode(observation.image, scale);
  return Object.fromEntries(BANDS.map((band, i) => [band, image.at(20, i * 80 + 40)])) as Record<Band, number[]>;
}

const userAgentOf = (path: string) => site.received.filter((r) => r.path === path).at(-1)?.headers['user-agent'];

test.before(async () => {
  // One page in the pool: consecutive renders of one workspace at one scale share the warm page.
  rig = await startRenderRig({ workspaceId: 'ws_emulation', defaults: { delay: 0.3 } });
  site = rig.site;
});

test.after(async () => {
  await rig.stop();
});

test('without options the probe shows the browser defaults', async () => {
  const seen = await bands(await render('/em/probe'));
  assert.equal(seen, { scheme: YELLOW, motion: GREY, print: GREY, zone: seen.zone, geo: GREY, touch: GREY, ua: GREY });
  assert.not.equal(seen.zone, GREEN);
});

test('dark_mode true paints the dark colours, false the light ones', async () => {
  assert.equal((await bands(await render('/em/probe', { dark_mode: true }))).scheme, BLUE);
  assert.equal((await bands(await render('/em/probe', { dark_mode: false }))).scheme, YELLOW);
});

test('reduced_motion and media_type=print', async () => {
  const seen = await bands(await render('/em/probe', { reduced_motion: true, media_type: 'print' }));
  assert.equal(seen.motion, GREEN);
  assert.equal(seen.print, RED);
  assert.equal(seen.scheme, YELLOW);
});

test('time_zone: the page sees the zone offset of Asia/Tokyo', async () => {
  assert.equal((await bands(await render('/em/probe', { time_zone: 'Asia/Tokyo' }))).zone, GREEN);
  assert.equal((await bands(await render('/em/probe', { time_zone: 'UTC' }))).zone, WHITE);
  // A fixed offset by its IANA name (an offset such as +09:00 is refused when parsed).
  assert.equal((await bands(await render('/em/probe', { time_zone: 'Etc/GMT-9' }))).zone, GREEN);
});

test('geolocation: the page gets the position, granted for the render', async () => {
  assert.equal((await bands(await render('/em/probe', TOKYO))).geo, GREEN);
  assert.equal((await bands(await render('/em/probe', { ...TOKYO, geolocation_accuracy: 50 }))).geo, GREEN);
});

test('user_agent: sent to the server and seen by the page', async () => {
  const seen = await bands(await render('/em/probe', { user_agent: UA }));
  assert.equal(seen.ua, GREEN);
  assert.is(userAgentOf('/em/probe'), UA);
});

test('viewport_has_touch: touch points', async () => {
  assert.equal((await bands(await render('/em/probe', { viewport_has_touch: true }))).touch, GREEN);
});

test('viewport_mobile: the meta viewport is honoured; without it not', async () => {
  const mobile = await render('/em/mobile', { viewport_width: 400, viewport_height: 600, viewport_mobile: true });
  const image = await decode(mobile.image);
  assert.equal([image.width, image.height], [400, 600]);
  assert.equal(image.at(10, 10), GREEN);
  // Zoomed out as a phone shows it: the 800 px page fits the 400 px image, its right half too.
  assert.equal(image.at(300, 20), BLUE);
  const desktop = await decode((await render('/em/mobile', { viewport_width: 400, viewport_height: 600 })).image);
  assert.equal(desktop.at(10, 10), GREY);
});

test('viewport_device iphone_13: 390×664 CSS px at scale 3, mobile, touch and its user agent', async () => {
  const observation = await render('/em/probe', { viewport_device: 'iphone_13', ...presetOptions('iphone_13') });
  const image = await decode(observation.image, 3);
  assert.equal([image.width, image.height], [390 * 3, 664 * 3]);
  const seen = await bands(observation, 3);
  assert.equal(seen.touch, GREEN);
  assert.match(String(userAgentOf('/em/probe')), /iPhone/);
  const mobile = await decode(
    (await render('/em/mobile', { viewport_device: 'iPhone 13', ...presetOptions('iPhone 13') })).image,
    3,
  );
  assert.equal(mobile.at(10, 10), GREEN);
});

test('explicit options override the preset; landscape turns it on its side', async () => {
  const scaled = await decode(
    (
      await render('/em/probe', {
        viewport_device: 'iphone_13',
        ...presetOptions('iphone_13'),
        device_scale_factor: 2,
        user_agent: UA,
      })
    ).image,
  );
  assert.equal([scaled.width, scaled.height], [780, 1328]);
  assert.is(userAgentOf('/em/probe'), UA);
  const landscape = await decode(
    (
      await render('/em/probe', {
        viewport_device: 'iphone-13',
        ...presetOptions('iphone-13'),
        viewport_landscape: true,
      })
    ).image,
  );
  assert.equal([landscape.width, landscape.height], [664 * 3, 390 * 3]);
  const sized = await decode(
    (
      await render('/em/probe', {
        viewport_device: 'iphone_13',
        ...presetOptions('iphone_13'),
        viewport_width: 500,
        device_scale_factor: 2,
      })
    ).image,
  );
  assert.equal([sized.width, sized.height], [1000, 1328]);
});

test('viewport_landscape without a device swaps a portrait viewport', async () => {
  const image = await decode(
    (await render('/em/probe', { viewport_width: 600, viewport_height: 800, viewport_landscape: true })).image,
  );
  assert.equal([image.width, image.height], [800, 600]);
});

test('device_scale_factor up to 5', async () => {
  const observation = await render('/em/probe', { viewport_width: 400, viewport_height: 600, device_scale_factor: 5 });
  const image = await decode(observation.image, 5);
  assert.equal([image.width, image.height], [2000, 3000]);
  assert.equal(image.at(20, 40), YELLOW);
});

test('pageMetrics: landscape, idempotent, area limit', () => {
  const base = { viewport_width: 1280, viewport_height: 720, device_scale_factor: 1 };
  assert.equal(pageMetrics(base), { width: 1280, height: 720, scale: 1 });
  const phone = pageMetrics({ ...base, ...presetOptions('iphone_13'), viewport_landscape: true });
  assert.equal(phone, { width: 664, height: 390, scale: 3 });
  const again = {
    viewport_landscape: true,
    viewport_width: phone.width,
    viewport_height: phone.height,
    device_scale_factor: phone.scale,
  };
  assert.equal(pageMetrics(again), phone);
  const big = pageMetrics({ viewport_width: 3840, viewport_height: 2160, device_scale_factor: 3 });
  assert.ok(3840 * 2160 * big.scale ** 2 <= 3840 * 2160 * 4);
});

test('no emulation option: no CDP call at all, and the undo makes none either', async () => {
  const calls: string[] = [];
  const spy = new Proxy(
    {},
    {
      get:
        (_, name) =>
        (...args: unknown[]) => {
          calls.push(`${String(name)} ${JSON.stringify(args[0] ?? '')}`);
          return Promise.resolve({});
        },
    },
  );
  const options = {
    ...renderDefaults,
    url: 'http://example.test/',
    viewport_width: 640,
    viewport_height: 480,
    device_scale_factor: 2,
  };
  const progress = Progress.start(30_000);
  await applyEmulation({ page: spy as Page, session: spy as CDPSession, options, progress });
  await progress.undo();
  assert.equal(calls, []);
  assert.equal([options.viewport_width, options.viewport_height, options.device_scale_factor], [640, 480, 2]);
});

test("applyEmulation returns the page's metrics and leaves the options as they were", async () => {
  const untouchable = new Proxy(
    {},
    {
      get: (_, name) => {
        throw new Error(`used ${String(name)}`);
      },
    },
  );
  const options = {
    ...renderDefaults,
    url: 'http://example.test/',
    viewport_width: 400,
    viewport_height: 800,
    viewport_landscape: true,
  };
  const progress = Progress.start(30_000);
  const metrics = await applyEmulation({
    page: untouchable as Page,
    session: untouchable as CDPSession,
    options,
    progress,
  });
  assert.equal(metrics, { width: 800, height: 400, scale: 1 });
  assert.equal([options.viewport_width, options.viewport_height], [400, 800]);
});

test('isolation: after a render with every option, a plain render on the same warm page shows none', async () => {
  for (const workspace of ['ws_iso', 'ws_iso']) {
    const all = await render(
      '/em/probe',
      {
        viewport_width: 600,
        viewport_height: 800,
        viewport_landscape: true,
        viewport_mobile: true,
        viewport_has_touch: true,
        dark_mode: true,
        reduced_motion: true,
        media_type: 'print',
        time_zone: 'Asia/Tokyo',
        ...TOKYO,
        user_agent: UA,
      },
      workspace,
    );
    const image = await decode(all.image);
    assert.equal([image.width, image.height], [800, 600]);
    assert.equal(await bands(all), {
      scheme: BLUE,
      motion: GREEN,
      print: RED,
      zone: GREEN,
      geo: GREEN,
      touch: GREEN,
      ua: GREEN,
    });
    const mobile = await decode(
      (await render('/em/mobile', { viewport_width: 400, viewport_height: 600, viewport_mobile: true }, workspace))
        .image,
    );
    assert.equal(mobile.at(10, 10), GREEN);

    const plain = await render('/em/probe', {}, workspace);
    const plainImage = await decode(plain.image);
    assert.equal([plainImage.width, plainImage.height], [1280, 720]);
    const seen = await bands(plain);
    assert.equal(seen, {
      scheme: YELLOW,
      motion: GREY,
      print: GREY,
      zone: seen.zone,
      geo: GREY,
      touch: GREY,
      ua: GREY,
    });
    assert.not.equal(seen.zone, GREEN);
    assert.not.match(String(userAgentOf('/em/probe')), /ShutterbusTestAgent/);
    const desktop = await decode(
      (await render('/em/mobile', { viewport_width: 400, viewport_height: 600 }, workspace)).image,
    );
    assert.equal(desktop.at(10, 10), GREY);
  }
  // Another workspace then claims the page (pool of one): nothing of ws_iso either.
  const other = await bands(await render('/em/probe', {}, 'ws_other'));
  assert.equal(other, {
    scheme: YELLOW,
    motion: GREY,
    print: GREY,
    zone: other.zone,
    geo: GREY,
    touch: GREY,
    ua: GREY,
  });
  assert.not.equal(other.zone, GREEN);
});

test.run();
