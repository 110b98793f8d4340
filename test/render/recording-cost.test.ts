// A recording's cost is bounded before it starts and while it runs (docs/animate.md, "Cost"): a
// heavy allowed animation of canvas noise finishes within the wall time its size and duration give
// it and leaves no temporary file (an ffmpeg over its own limit: test/render/animation.test.ts).
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  animateParameters,
  RECORDING_FRAME_RATE,
  RECORDING_PIXEL_FRAME_BUDGET,
  recordingCost,
  type AnimationOptions,
} from '../../src/domain/animation.ts';
import { renderDefaults, type RenderOptions } from '../../src/domain/options.ts';
import { captureAnimation, discardRecording } from '../../src/render/animation.ts';
import { RECORDING_TIME } from '../../src/render/outputs/recorder.ts';
import { noisePages } from '../fixtures/noise-page.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { probe } from '../helpers/video.ts';

const test = suite("a recording's cost is bounded");
let rig: RenderRig;

const animationDefaults = Object.fromEntries(
  animateParameters.filter((p) => p.group === 'animation' && p.default !== undefined).map((p) => [p.name, p.default]),
) as unknown as AnimationOptions;

/** This machine's recordings' folders in the temporary directory. */
const recordingFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('shutterbus-animation-'));

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_cost', routes: noisePages });
});

test.after(async () => {
  await rig?.stop();
});

test('canvas noise, 960 × 540 mp4 for 3 s: within its wall-time bound, no temporary file left', async () => {
  const page: RenderOptions = {
    ...renderDefaults,
    url: `${rig.site.url}/noise`,
    viewport_width: 960,
    viewport_height: 540,
    timeout: 120,
    format: 'mp4',
  };
  const animation: AnimationOptions = { ...animationDefaults, duration: 3 };
  const cost = recordingCost({ viewport_width: 960, viewport_height: 540, format: 'mp4', duration: 3 });
  assert.ok(cost.pixelFrames <= RECORDING_PIXEL_FRAME_BUDGET, 'an allowed animation');
  // Its bound: the recording, the copy's slack, and the encoding's share of the budget.
  const boundMs =
    3000 +
    RECORDING_TIME.copySlackMs +
    RECORDING_TIME.encodeBaseMs +
    (RECORDING_TIME.encodeAtBudgetMs * cost.pixelFrames) / RECORDING_PIXEL_FRAME_BUDGET;
  const before = new Set(recordingFolders());
  const startedAt = Date.now();
  const observation = await captureAnimation(rig.host, page, animation, new AbortController().signal, 'ws_cost');
  const tookMs = Date.now() - startedAt;
  try {
    assert.ok(tookMs < boundMs, `took ${tookMs} ms, over its bound of ${Math.round(boundMs)} ms`);
    const { readFile } = await import('node:fs/promises');
    const video = await probe(await readFile(observation.file!.path));
    assert.is(video.codec, 'h264');
    assert.equal([video.width, video.height], [960, 540]);
    assert.ok(Math.abs(video.frames - 3 * RECORDING_FRAME_RATE) <= 2, `${video.frames} frames`);
  } finally {
    await discardRecording(observation.file);
  }
  const left = recordingFolders().filter((name) => !before.has(name));
  assert.equal(left, [], 'no recording folder left behind');
});

test.run();
