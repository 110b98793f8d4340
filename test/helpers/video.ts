// Reading animations back as a viewer would: ffprobe's description of a file, and one frame's pixel
// pulled out with ffmpeg.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What ffprobe says of a video or gif. */
export interface Probe {
  container: string;
  codec: string;
  pixelFormat: string;
  width: number;
  height: number;
  /** Seconds. */
  duration: number;
  /** Frames per second (the stream's average rate). */
  fps: number;
  frames: number;
}

async function withFile<T>(bytes: Buffer, use: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'shutterbus-video-test-'));
  try {
    const path = join(dir, 'input');
    await writeFile(path, bytes);
    return await use(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rate = (text: string) => {
  const [n, d] = text.split('/').map(Number);
  return d ? n / d : n;
};

/** ffprobe's view of the first video stream and the container. */
export function probe(bytes: Buffer): Promise<Probe> {
  return withFile(bytes, async (path) => {
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=codec_name,pix_fmt,width,height,avg_frame_rate,nb_read_frames,duration:format=format_name,duration',
      '-of',
      'json',
      path,
    ]);
    const json = JSON.parse(stdout) as { streams: Record<string, string | number>[]; format: Record<string, string> };
    const stream = json.streams[0];
    return {
      container: json.format.format_name,
      codec: String(stream.codec_name),
      pixelFormat: String(stream.pix_fmt),
      width: Number(stream.width),
      height: Number(stream.height),
      duration: Number(json.format.duration ?? stream.duration),
      fps: rate(String(stream.avg_frame_rate)),
      frames: Number(stream.nb_read_frames),
    };
  });
}

/** The RGBA of the pixel (x, y) of the frame shown at `seconds` (`last`: the final frame). */
export function pixelAt(bytes: Buffer, seconds: number | 'last', x: number, y: number): Promise<number[]> {
  return withFile(bytes, async (path) => {
    const seek = seconds === 'last' ? ['-sseof', '-0.2'] : ['-ss', String(seconds)];
    const one = seconds === 'last' ? [] : ['-frames:v', '1'];
    const { stdout } = await run(
      'ffmpeg',
      [
        '-v',
        'error',
        ...seek,
        '-i',
        path,
        '-vf',
        `format=rgba,crop=1:1:${x}:${y}`,
        ...one,
        '-pix_fmt',
        'rgba',
        '-f',
        'rawvideo',
        'pipe:1',
      ],
      { encoding: 'buffer', maxBuffer: 1 << 20 },
    );
    // With -sseof every frame of the last 0.2 s comes out: the final one is the last four bytes.
    return [...(stdout as Buffer).subarray(stdout.length - 4)];
  });
}
