// An animation's recording: Chromium's screencast sampled at a steady frame rate into ffmpeg (the
// frames copied as they come into a file on disk, never held in memory), then encoded to the
// format asked for. A scroll scenario runs meanwhile (choreography.ts). See docs/animate.md.
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import {
  MAX_ANIMATION_SECONDS,
  outputSize,
  RECORDING_PIXEL_FRAME_BUDGET,
  type AnimationFormat,
  type AnimationOptions,
} from '../../domain/animation.ts';
import { ServiceError } from '../../errors.ts';
import { transparentOn } from '../../domain/formats.ts';
import type { RenderOptions } from '../../domain/options.ts';
import { cdp, type CdpEvent } from '../browser/cdp.ts';
import { startChoreography, pause, type TargetCheck } from '../steps/choreography.ts';
import { encoderArgs, FRAME_RATE, frameFilter, runFfmpeg, type FrameGeometry } from './ffmpeg.ts';
import { inPage } from '../browser/in-page.ts';
import { paintedTwice } from '../in-page/steps.ts';
import type { Output } from './output.ts';
import type { Progress } from '../browser/progress.ts';
import type { PageStep } from '../steps/page-step.ts';

/** How long the first screencast frame may take before one is captured instead. */
const FIRST_FRAME_WAIT_MS = 2000;

/** Share of the time left that the encoding after the recording is given; the rest is recording. */
const ENCODE_RESERVE = { minMs: 3000, perRecordedSecondMs: 400 };

/**
 * The wall time of one recording's ffmpegs, tied to what it records (docs/animate.md, "Cost"): the
 * frames' copy may take the recording's own length and `copySlackMs` more; the encoding
 * `encodeBaseMs`, plus `encodeAtBudgetMs` for a recording of the whole budget, in proportion.
 */
export const RECORDING_TIME = { copySlackMs: 15_000, encodeBaseMs: 30_000, encodeAtBudgetMs: 240_000 };

/** The most one recording may write to disk, its frames and its output together. */
export const RECORDING_DISK_LIMIT_BYTES = 1024 * 1024 * 1024;

/** A recording that outgrew RECORDING_DISK_LIMIT_BYTES: the render ends, as a page that outgrows its memory does. */
function overDisk(): ServiceError {
  return new ServiceError('page_memory_exceeded', {
    error_details: [
      {
        parameter: 'duration',
        message: `the recording outgrew its ${RECORDING_DISK_LIMIT_BYTES / 1024 / 1024} MB on disk: record fewer seconds or a smaller size`,
      },
    ],
  });
}

/**
 * Records `animation` of the page as it stands (navigated, its actions done) and returns the
 * output file on disk, in a directory of its own that discardRecording removes once it is stored:
 * a video never passes through memory whole. Everything it sets on the page (screencast,
 * transparent background) is undone before it returns, so the warm page serves the next render
 * as after any other.
 */
export async function recordAnimation(
  { page, options, progress, session }: PageStep,
  animation: AnimationOptions,
  checkTarget?: TargetCheck,
): Promise<Output> {
  const deadline = progress.signal;
  const format = options.format as AnimationFormat;
  const alpha = transparentOn('animate', format) && options.omit_background;
  const dir = await mkdtemp(join(tmpdir(), RECORDING_DIR_PREFIX));
  let recorded = false;
  try {
    const frames = join(dir, 'frames.nut');
    const output = join(dir, `animation.${format}`);
    const scale = options.viewport_mobile ? 1 : options.device_scale_factor;
    const frame = {
      width: Math.round(options.viewport_width * scale),
      height: Math.round(options.viewport_height * scale),
    };
    const crop =
      options.clip_x !== undefined &&
      options.clip_y !== undefined &&
      options.clip_width !== undefined &&
      options.clip_height !== undefined
        ? {
            x: Math.round(options.clip_x * scale),
            y: Math.round(options.clip_y * scale),
            width: Math.round(options.clip_width * scale),
            height: Math.round(options.clip_height * scale),
          }
        : undefined;
    const geometry: FrameGeometry = { ...(crop ? { crop } : {}), ...outputSize(animation, crop ?? frame, format) };
    // What each frame costs: the larger of the frame and the output (the ingress's recordingCost).
    const pixelsPerFrame = Math.max(frame.width * frame.height, geometry.width * geometry.height);
    const { count, bytes } = await recordFrames(
      page,
      options,
      animation,
      progress,
      session,
      frames,
      alpha,
      pixelsPerFrame,
      checkTarget,
    );
    const encodeLimitMs =
      RECORDING_TIME.encodeBaseMs +
      Math.ceil((RECORDING_TIME.encodeAtBudgetMs * pixelsPerFrame * count) / RECORDING_PIXEL_FRAME_BUDGET);
    await encode(
      frames,
      output,
      format,
      geometry,
      alpha,
      dir,
      deadline,
      encodeLimitMs,
      RECORDING_DISK_LIMIT_BYTES - bytes,
    );
    if ((await stat(output)).size >= RECORDING_DISK_LIMIT_BYTES - bytes) throw overDisk();
    // Only the output stays: the frames are as large as the video or larger.
    await rm(frames, { force: true });
    const file = { path: output, size: (await stat(output)).size };
    recorded = true;
    return { bytes: Buffer.alloc(0), file, selectorFound: true, warnings: [] };
  } finally {
    if (!recorded) await rm(dir, { recursive: true, force: true });
  }
}

/** The name every recording's directory starts with, in the system's temporary directory. */
const RECORDING_DIR_PREFIX = 'shutterbus-animation-';

/** Removes a recording's file and its directory (recordAnimation's); anything else is left alone. */
export async function discardRecording(file: { path: string } | undefined): Promise<void> {
  if (!file) return;
  const dir = dirname(file.path);
  if (dirname(dir) !== tmpdir() || !basename(dir).startsWith(RECORDING_DIR_PREFIX)) return;
  await rm(dir, { recursive: true, force: true });
}

// The screencast sampled every 1/FRAME_RATE s (the latest frame, again when the screen did not
// change) into `file` as the frames came: the duration is exact whatever rate Chromium paints at.
async function recordFrames(
  page: Page,
  options: RenderOptions,
  animation: AnimationOptions,
  progress: Progress,
  session: CDPSession,
  file: string,
  alpha: boolean,
  pixelsPerFrame: number,
  checkTarget?: TargetCheck,
): Promise<{ count: number; bytes: number }> {
  const deadline = progress.signal;
  const interval = 1000 / FRAME_RATE;
  const minFrames = Math.round(animation.duration * FRAME_RATE);
  // The encoding needs time after the recording: scroll_complete lengthens a recording only as far
  // as the deadline leaves time for it, and the budget pixels for it (the ingress checked `duration`).
  const recordable = (ms: number) =>
    Math.floor((ms - ENCODE_RESERVE.minMs - (ms / 1000) * ENCODE_RESERVE.perRecordedSecondMs) / interval);
  const budgeted = Math.max(minFrames, Math.floor(RECORDING_PIXEL_FRAME_BUDGET / pixelsPerFrame));
  const maxFrames = Math.max(
    1,
    Math.min(MAX_ANIMATION_SECONDS * FRAME_RATE, budgeted, recordable(progress.timeLeft())),
  );
  const codec = alpha ? 'png' : 'mjpeg';
  // The render's deadline kills ffmpeg; its own limit, the longest recording it may get and a slack, bounds it should that fail.
  const ffmpeg = runFfmpeg(
    [
      '-f',
      'image2pipe',
      '-framerate',
      String(FRAME_RATE),
      '-c:v',
      codec,
      '-i',
      'pipe:0',
      '-c:v',
      'copy',
      '-f',
      'nut',
      '-y',
      file,
    ],
    deadline,
    Math.max(minFrames, maxFrames) * interval + RECORDING_TIME.copySlackMs,
  );
  // Awaited below once the frames are written; a recording that fails first reports its own error.
  ffmpeg.done.catch(() => {});

  const devtools = cdp(session);
  const { Emulation, Page } = devtools;
  let latest: Buffer | undefined;
  let firstFrame: () => void = () => {};
  const first = new Promise<void>((resolve) => (firstFrame = resolve));
  const onFrame = (frame: CdpEvent<'Page.screencastFrame'>) => {
    latest = Buffer.from(frame.data, 'base64');
    firstFrame();
    Page.screencastFrameAck({ sessionId: frame.sessionId }).catch(() => {});
  };
  const screencast = { format: alpha ? 'png' : 'jpeg', quality: 90, everyNthFrame: 1 } as const;
  // What the recording sets on the page, undone once it ends under the render's one rule: a failed
  // undo discards the page (docs/architecture.md), the recording stands.
  const undo = progress.scope();
  // Frames written to ffmpeg, and their bytes (the frames' file is that large, give or take its container).
  let written = 0;
  let bytes = 0;
  try {
    if (alpha) {
      undo.defer(() => Emulation.setDefaultBackgroundColorOverride({}));
      await progress.race(Emulation.setDefaultBackgroundColorOverride({ color: { r: 0, g: 0, b: 0, a: 0 } }));
    }
    // Two animation frames: the page (and a transparent background) has been painted at least once,
    // so the screencast's first frame is the page, never what the compositor held before it.
    await progress.race(page.evaluate(inPage(paintedTwice)));
    devtools.on('Page.screencastFrame', onFrame);
    undo.defer(async () => devtools.off('Page.screencastFrame', onFrame));
    undo.defer(() => Page.stopScreencast());
    await progress.race(Page.startScreencast(screencast));
    // A page that paints nothing new sends no frame: its look now is the first one.
    const painted = await Promise.race([
      first.then(() => true),
      pause(FIRST_FRAME_WAIT_MS, deadline).then(() => false),
    ]);
    if (!painted && latest === undefined) {
      const shot = await progress.race(Page.captureScreenshot({ format: screencast.format, quality: 90 }));
      latest ??= Buffer.from(shot.data, 'base64');
    }
    const restartScreencast = async () => {
      await Page.stopScreencast().catch(() => {});
      await progress.race(Page.startScreencast(screencast));
    };
    const choreography = startChoreography(page, options, animation, deadline, restartScreencast, checkTarget);
    undo.defer(async () => choreography.stop());
    let finished = false;
    let failure: unknown;
    choreography.done.then(
      () => (finished = true),
      (error) => (failure = error ?? new Error('scroll failed')),
    );

    const startedAt = performance.now();
    // `duration` in full (a deadline that comes first fails the render); with scroll_complete, on
    // until the scroll is done, as long as the deadline leaves time to encode.
    const lengthens = () => animation.scenario === 'scroll' && animation.scroll_complete && !finished;
    const wanted = () => (written < minFrames ? minFrames : lengthens() ? Math.max(minFrames, maxFrames) : written);
    while (written < wanted()) {
      if (failure !== undefined) throw failure;
      if (deadline.aborted) throw deadline.reason;
      const due = Math.min(wanted(), Math.floor((performance.now() - startedAt) / interval) + 1);
      while (written < due) {
        // A late tick writes the frames it missed: the video keeps the page's own pace.
        bytes += latest!.length;
        if (bytes >= RECORDING_DISK_LIMIT_BYTES) throw overDisk();
        if (!ffmpeg.stdin.write(latest!)) await progress.race(once(ffmpeg.stdin, 'drain'));
        written += 1;
      }
      if (written < wanted()) await pause(Math.max(1, startedAt + written * interval - performance.now()), deadline);
    }
  } finally {
    await undo.run();
    ffmpeg.stdin.end();
  }
  await ffmpeg.done;
  return { count: written, bytes };
}

// The recorded frames encoded to `format`: one pass for a video; for a gif a palette made from the
// frames first, then the frames mapped onto it. Both within `limit` ms in all; the output is cut at
// `maxBytes` (ffmpeg's -fs), which the caller then refuses.
async function encode(
  frames: string,
  output: string,
  format: AnimationFormat,
  geometry: FrameGeometry,
  alpha: boolean,
  dir: string,
  deadline: AbortSignal,
  limit: number,
  maxBytes: number,
): Promise<void> {
  const filter = frameFilter(geometry);
  const until = Date.now() + limit;
  const left = () => Math.max(1, until - Date.now());
  const bounded = ['-fs', String(Math.max(1, maxBytes))];
  if (format !== 'gif') {
    await runFfmpeg(
      ['-i', frames, '-vf', filter, '-r', String(FRAME_RATE), ...encoderArgs(format, alpha), ...bounded, '-y', output],
      deadline,
      left(),
    ).done;
    return;
  }
  const palette = join(dir, 'palette.png');
  await runFfmpeg(['-i', frames, '-vf', `${filter},palettegen=stats_mode=diff`, '-y', palette], deadline, left()).done;
  await runFfmpeg(
    [
      '-i',
      frames,
      '-i',
      palette,
      '-lavfi',
      `[0:v]${filter}[v];[v][1:v]paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle`,
      '-r',
      String(FRAME_RATE),
      '-f',
      'gif',
      ...bounded,
      '-y',
      output,
    ],
    deadline,
    left(),
  ).done;
}
