// Debian's ffmpeg, spawned per step of an animation: bounded by the render's deadline (killed with
// it) and by a time limit of its own, its stdin the stream of frames. Encoder settings per format.
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { ServiceError } from '../../errors.ts';
import { RECORDING_FRAME_RATE, type AnimationFormat } from '../../domain/animation.ts';

/** The ffmpeg binary: Debian's, installed by infra/local.sh and the production image. */
export const FFMPEG = '/usr/bin/ffmpeg';

/** Frames per second of every recording (docs/animate.md). */
export const FRAME_RATE = RECORDING_FRAME_RATE;

/** A running ffmpeg: its stdin, and its end (rejects on a non-zero exit, the limit or the deadline). */
export interface FfmpegRun {
  stdin: Writable;
  done: Promise<void>;
}

/** The last lines ffmpeg wrote to stderr: for the log only, never for a caller. */
const STDERR_KEPT = 4096;

/**
 * Runs ffmpeg with `args`; it is killed (SIGKILL) when `deadline` aborts or after `limitMs`.
 * `done` rejects with the deadline's reason, with timeout_error when its own limit passed (the
 * cost of a recording is bounded: docs/animate.md), or with an internal error naming the exit.
 */
export function runFfmpeg(args: string[], deadline: AbortSignal, limitMs: number): FfmpegRun {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
  });
  // A closed pipe (ffmpeg gone) surfaces as the exit below, not as an unhandled stream error.
  child.stdin.on('error', () => {});
  const kill = () => child.kill('SIGKILL');
  let overLimit = false;
  const limit = setTimeout(() => {
    overLimit = true;
    kill();
  }, limitMs);
  deadline.addEventListener('abort', kill, { once: true });
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new ServiceError('internal_application_error', {}, { cause: error })));
    child.once('close', (code, signal) => {
      clearTimeout(limit);
      deadline.removeEventListener('abort', kill);
      if (code === 0) return resolve();
      if (deadline.aborted) return reject(deadline.reason);
      if (overLimit)
        return reject(
          new ServiceError(
            'timeout_error',
            {},
            { cause: new Error(`ffmpeg over its ${limitMs} ms limit: ${stderr.trim()}`) },
          ),
        );
      reject(
        new ServiceError(
          'internal_application_error',
          {},
          { cause: new Error(`ffmpeg ${signal ?? `exit ${code}`}: ${stderr.trim()}`) },
        ),
      );
    });
  });
  return { stdin: child.stdin, done };
}

/** The frames' crop (a gif's clip, in frame pixels) and the output's size. */
export interface FrameGeometry {
  crop?: { x: number; y: number; width: number; height: number };
  width: number;
  height: number;
}

/**
 * The video filter from recorded frames to the output: the clip cut out, then scaled to cover
 * the output size and cut to it from the top (a scrolling page's reader starts at the top).
 */
export function frameFilter({ crop, width, height }: FrameGeometry): string {
  const steps: string[] = [];
  if (crop) steps.push(`crop=${crop.width}:${crop.height}:${crop.x}:${crop.y}`);
  steps.push(
    `scale=${width}:${height}:force_original_aspect_ratio=increase:flags=bicubic`,
    `crop=${width}:${height}:(iw-${width})/2:0`,
    'setsar=1',
  );
  return steps.join(',');
}

/** The encoder of each format, after the filter; `alpha`: keep transparency (mov with omit_background). */
export function encoderArgs(format: Exclude<AnimationFormat, 'gif'>, alpha: boolean): string[] {
  switch (format) {
    case 'mp4':
      // +faststart: the index first, so a browser plays it while it downloads.
      return [
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '23',
        '-pix_fmt',
        'yuv420p',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ];
    case 'webm':
      return [
        '-c:v',
        'libvpx-vp9',
        '-deadline',
        'realtime',
        '-cpu-used',
        '8',
        '-row-mt',
        '1',
        '-b:v',
        '0',
        '-crf',
        '36',
        '-pix_fmt',
        'yuv420p',
        '-f',
        'webm',
      ];
    case 'mov':
      return [
        '-c:v',
        'prores_ks',
        '-profile:v',
        '4444',
        '-pix_fmt',
        alpha ? 'yuva444p10le' : 'yuv444p10le',
        '-vendor',
        'apl0',
        '-f',
        'mov',
      ];
    case 'avi':
      return ['-c:v', 'mpeg4', '-q:v', '4', '-pix_fmt', 'yuv420p', '-f', 'avi'];
  }
}
