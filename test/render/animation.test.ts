// Animations recorded from real Chromium into Debian's ffmpeg, read back with ffprobe and frames
// pulled with ffmpeg: the container, codec, size, duration and frame rate, and which band of the
// bands page each frame shows as the page scrolls down and back.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { animateParameters, scrollEasings, type AnimationOptions } from '../../src/domain/animation.ts';
import { renderDefaults, type RenderOptions } from '../../src/domain/options.ts';
import { captureAnimation, discardRecording, RecordingTurns } from '../../src/render/animation.ts';
import { runFfmpeg } from '../../src/render/outputs/ffmpeg.ts';
import { easingCurves } from '../../src/render/in-page/scroll.ts';
import { animationPages, bandOf, bandsHtml } from '../fixtures/animation-pages.ts';
import type { FixtureRoute } from '../fixtures/site.ts';
import { listProcesses, processTree } from '../helpers/processes.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { pixelAt, probe } from '../helpers/video.ts';

const test = suite('animated captures');
const WIDTH = 640;
const HEIGHT = 360;
let rig: RenderRig;

const animationDefaults = Object.fromEntries(
  animateParameters.filter((p) => p.group === 'animation' && p.default !== undefined).map((p) => [p.name, p.default]),
) as unknown as AnimationOptions;

/**
 * Records the bands page with `animation` laid over the defaults; the video comes as a file on disk
 * (the observation holds no bytes of it), read here and then discarded as the worker does.
 */
async function record(animation: Partial<AnimationOptions>, options: Partial<RenderOptions> = {}) {
  const observation = await recordToFile(animation, options);
  assert.is(observation.image.length, 0, 'no video in memory');
  assert.ok(observation.file, 'the video is a file on disk');
  const image = await readFile(observation.file!.path);
  assert.is(image.length, observation.file!.size);
  await discardRecording(observation.file);
  assert.not.ok(existsSync(dirname(observation.file!.path)), "the recording's folder is gone once discarded");
  return { ...observation, image };
}

function recordToFile(animation: Partial<AnimationOptions>, options: Partial<RenderOptions> = {}) {
  const page: RenderOptions = {
    ...renderDefaults,
    url: `${rig.site.url}/bands`,
    viewport_width: WIDTH,
    viewport_height: HEIGHT,
    timeout: 40,
    format: 'mp4',
    ...options,
  };
  return captureAnimation(
    rig.host,
    page,
    { ...animationDefaults, ...animation },
    new AbortController().signal,
    'ws_animation',
  );
}

const centre = (bytes: Buffer, at: number | 'last') => pixelAt(bytes, at, WIDTH / 2, HEIGHT / 2).then(bandOf);

// A page all blue, and a bands page whose first band holds a link named Pricing to it.
const solid = (colour: string) =>
  `<!doctype html><html><body style="margin:0;background:${colour};height:${HEIGHT * 3}px"></body></html>`;
const routes: Record<string, FixtureRoute> = {
  ...animationPages(HEIGHT),
  '/blue': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(solid('#0000ff')),
  '/linked': (_req, res) =>
    void res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        bandsHtml(HEIGHT)
          .replace('<div id="band0" style="', '<div id="band0" style="font-size:8px;')
          .replace('></div>', '><a href="/blue">Pricing</a></div>'),
      ),
};

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_animation', routes });
});

test.after(async () => {
  await rig.stop();
});

test('mp4: H.264 in yuv420p, the viewport size, the duration asked for, 25 fps', async () => {
  const { image } = await record({ duration: 2 });
  const video = await probe(image);
  assert.match(video.container, /mp4/);
  assert.is(video.codec, 'h264');
  assert.is(video.pixelFormat, 'yuv420p');
  assert.equal([video.width, video.height], [WIDTH, HEIGHT]);
  assert.ok(Math.abs(video.duration - 2) <= 0.2, `duration ${video.duration}`);
  assert.ok(video.fps >= 25, `fps ${video.fps}`);
  assert.is(await centre(image, 0), 0);
  // +faststart: the index (moov) comes before the media (mdat).
  assert.ok(image.indexOf('moov') < image.indexOf('mdat'), 'moov before mdat');
});

test('scroll: down through the bands and back to the first', async () => {
  const { image } = await record({
    scenario: 'scroll',
    duration: 4,
    scroll_by: HEIGHT * 2,
    scroll_duration: 500,
    scroll_delay: 800,
    scroll_easing: 'linear',
  });
  const video = await probe(image);
  assert.ok(Math.abs(video.duration - 4) <= 0.2, `duration ${video.duration}`);
  assert.is(await centre(image, 0), 0, 'the first frame shows the first band');
  // Down 2 viewports in 0.5 s, 0.8 s of rest, the last 2 by 1.8 s, 0.8 s at the bottom, back by 3.1 s.
  assert.is(await centre(image, 0.9), 2, 'a later frame shows a later band');
  assert.is(await centre(image, 2.2), 4, 'then the last band');
  assert.is(await centre(image, 'last'), 0, 'the last frame shows the first band again');
});

test('scroll without scroll_back ends on the last band; scroll_by steps pass the bands between', async () => {
  const { image } = await record({
    scenario: 'scroll',
    // 2.5 s past the scroll's end: room for a renderer that falls behind on a loaded machine.
    duration: 5.5,
    scroll_by: HEIGHT,
    scroll_duration: 300,
    scroll_delay: 600,
    scroll_easing: 'ease_in_out_cubic',
    scroll_back: false,
    scroll_complete: false,
  });
  assert.is(await centre(image, 0), 0);
  // Each step: 0.3 s of scroll, 0.6 s of rest; the fourth reaches the end at 3 s.
  assert.is(await centre(image, 0.6), 1, 'after one step: the second band');
  assert.is(await centre(image, 1.5), 2, 'after two: the third');
  assert.is(await centre(image, 'last'), 4);
});

test('gif: a palette from the frames, the clip of the viewport, its size', async () => {
  const { image } = await record(
    { duration: 1 },
    { format: 'gif', clip_x: 0, clip_y: 0, clip_width: 320, clip_height: 200 },
  );
  assert.is(image.subarray(0, 6).toString('latin1'), 'GIF89a');
  const gif = await probe(image);
  assert.is(gif.codec, 'gif');
  assert.equal([gif.width, gif.height], [320, 200]);
  assert.ok(Math.abs(gif.duration - 1) <= 0.2, `duration ${gif.duration}`);
  assert.is(bandOf(await pixelAt(image, 0, 160, 100)), 0);
});

test('webm VP9, avi MPEG-4, and a size from width and aspect_ratio', async () => {
  const webm = await probe((await record({ duration: 1, width: 320, aspect_ratio: '16:9' }, { format: 'webm' })).image);
  assert.match(webm.container, /webm|matroska/);
  assert.is(webm.codec, 'vp9');
  assert.equal([webm.width, webm.height], [320, 180]);
  const avi = await probe((await record({ duration: 1 }, { format: 'avi' })).image);
  assert.match(avi.container, /avi/);
  assert.is(avi.codec, 'mpeg4');
  assert.ok(Math.abs(avi.duration - 1) <= 0.2, `duration ${avi.duration}`);
});

test('mov: ProRes 4444, with alpha where the page paints nothing under omit_background', async () => {
  const html =
    '<!doctype html><html><head><style>html,body{margin:0;background:transparent}</style></head><body><div style="width:50%;height:100px;background:#f00"></div></body></html>';
  const { image } = await record({ duration: 1 }, { format: 'mov', omit_background: true, url: undefined, html });
  const mov = await probe(image);
  assert.is(mov.codec, 'prores');
  assert.match(mov.pixelFormat, /^yuva444p/, 'with an alpha plane');
  const clear = await pixelAt(image, 0, WIDTH - 10, HEIGHT - 10);
  assert.ok(clear[3] < 10, `transparent corner ${clear}`);
  const painted = await pixelAt(image, 0, 10, 10);
  assert.ok(painted[3] > 245 && painted[0] > 200, `painted corner ${painted}`);
  // The warm page is clean afterwards: a plain screenshot of the same page is opaque white there.
  const after = await rig.render('/bands', { html, url: undefined, viewport_width: WIDTH, viewport_height: HEIGHT });
  const { pixel } = await import('../helpers/render.ts');
  assert.equal(await pixel(after.image, WIDTH - 10, HEIGHT - 10), [255, 255, 255, 255]);
});

test('scroll_till_selector stops at its element (with the adjustment), not at the end', async () => {
  const { image } = await record({
    scenario: 'scroll',
    duration: 2,
    scroll_by: HEIGHT * 4,
    scroll_duration: 400,
    scroll_back: false,
    scroll_till_selector: '#band2',
    scroll_till_selector_adjust_top: 0,
    scroll_easing: 'linear',
  });
  assert.is(await centre(image, 'last'), 2);
});

test('scroll_try_navigate: to scroll_navigate_to_url, or to the link the hints name, then on scrolling there', async () => {
  const direct = await record({
    scenario: 'scroll',
    duration: 3,
    scroll_by: HEIGHT,
    scroll_duration: 300,
    scroll_delay: 100,
    scroll_back: false,
    scroll_try_navigate: true,
    scroll_navigate_after: 800,
    scroll_navigate_to_url: `${rig.site.url}/blue`,
  });
  assert.is(await centre(direct.image, 0), 0);
  assert.is(bandOf(await pixelAt(direct.image, 'last', WIDTH / 2, HEIGHT / 2)), 2, 'the blue page at the end');
  const hinted = await record(
    {
      scenario: 'scroll',
      duration: 3,
      scroll_by: HEIGHT,
      scroll_duration: 300,
      scroll_delay: 100,
      scroll_back: false,
      scroll_try_navigate: true,
      scroll_navigate_after: 800,
    },
    { url: `${rig.site.url}/linked` },
  );
  assert.is(bandOf(await pixelAt(hinted.image, 'last', WIDTH / 2, HEIGHT / 2)), 2, 'the hinted link was followed');
  assert.ok(
    rig.site.received.some((request) => request.path === '/blue'),
    'the blue page was fetched',
  );
});

test('a navigation due after the recording ended never happens (the page may serve another render)', async () => {
  const from = rig.site.received.length;
  await record({
    scenario: 'scroll',
    duration: 1,
    scroll_complete: false,
    scroll_try_navigate: true,
    scroll_navigate_after: 1500,
    scroll_navigate_to_url: `${rig.site.url}/blue?late`,
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.not.ok(
    rig.site.received.slice(from).some((request) => request.path === '/blue'),
    'no late navigation',
  );
});

test('a render that outlives its timeout fails with timeout_error; its ffmpeg and its frames are gone', async () => {
  // This process's ffmpegs writing a recording; another test file may be recording at the same time.
  const ours = () => {
    const all = listProcesses();
    const tree = new Set(processTree([process.pid], all));
    return all.filter(
      ({ pid, argv }) =>
        tree.has(pid) && argv[0]?.endsWith('ffmpeg') && argv.some((arg) => arg.includes('shutterbus-animation-')),
    );
  };
  // The recording's folder, read from its ffmpeg's command line while it records.
  const folders = new Set<string>();
  const watch = setInterval(() => {
    for (const { argv } of ours()) {
      for (const arg of argv) if (arg.includes('shutterbus-animation-')) folders.add(dirname(arg));
    }
  }, 50);
  const error = await record({ duration: 10 }, { timeout: 3 })
    .then(
      () => null,
      (err: { code?: string }) => err,
    )
    .finally(() => clearInterval(watch));
  assert.is(error?.code, 'timeout_error');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.is(ours().length, 0, 'no ffmpeg of a recording left running');
  assert.ok(folders.size > 0, 'the recording was seen');
  for (const folder of folders) assert.not.ok(existsSync(folder), `the recording's folder ${folder} is removed`);
});

test('ffmpeg is killed with the render (its deadline) and at its own time limit', async () => {
  // ffmpeg waiting for frames on its stdin, its (null) output named by `marker` so it can be found.
  const waiting = (marker: string) => ['-f', 'mjpeg', '-i', 'pipe:0', '-f', 'null', marker];
  const alive = (marker: string) =>
    listProcesses().some(({ argv }) => argv[0]?.endsWith('ffmpeg') && argv.includes(marker));
  const render = new AbortController();
  const killed = runFfmpeg(waiting('deadline-test'), render.signal, 60_000);
  const killedEnd = killed.done.then(
    () => 'ended',
    (error: Error) => error.message,
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.ok(alive('deadline-test'), 'running while the render runs');
  render.abort(new Error('render over'));
  assert.is(await killedEnd, 'render over');
  assert.not.ok(alive('deadline-test'));
  const limited = runFfmpeg(waiting('limit-test'), new AbortController().signal, 500);
  const limitedEnd = limited.done.then(
    () => 'ended',
    (error: { code?: string }) => error.code,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.ok(alive('limit-test'), 'running until its limit');
  assert.is(await limitedEnd, 'timeout_error', 'over its own limit: a timeout, not retried');
  assert.not.ok(alive('limit-test'));
});

test('the 13 scroll curves go from 0 to 1 without turning back', () => {
  const curves = easingCurves();
  assert.equal(Object.keys(curves), [...scrollEasings]);
  for (const [name, curve] of Object.entries(curves)) {
    assert.ok(Math.abs(curve(0)) < 1e-9 && Math.abs(curve(1) - 1) < 1e-9, `${name} ends`);
    for (let t = 0; t < 1; t += 0.01) assert.ok(curve(t + 0.01) >= curve(t) - 1e-9, `${name} at ${t}`);
  }
  assert.ok(curves.ease_in_quint(0.5) < 0.1 && curves.ease_out_quint(0.5) > 0.9, 'in starts slow, out ends slow');
});

test('recording turns: one at a time in a turn of one; a wait ends with its signal', async () => {
  const turns = new RecordingTurns(1);
  let release!: () => void;
  const first = turns.run(new AbortController().signal, () => new Promise<void>((resolve) => (release = resolve)));
  let secondRan = false;
  const second = turns.run(new AbortController().signal, async () => void (secondRan = true));
  const cancelled = new AbortController();
  const third = turns.run(cancelled.signal, async () => 'ran');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is(turns.running, 1);
  assert.not.ok(secondRan, 'the second waits for the first');
  cancelled.abort(new Error('gone'));
  assert.is(await third.catch((error: Error) => error.message), 'gone');
  release();
  await first;
  await second;
  assert.ok(secondRan);
  assert.is(turns.running, 0);
});

test.run();
