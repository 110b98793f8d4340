// `make bench`'s animation rows: a 5 s scrolling mp4 and gif of a bench page through /api/animate
// (wall time; CPU of the service, Chromium and ffmpeg; peak memory of the stack and of ffmpeg), the
// largest animation the budget allows (1280 × 720 for 30 s, as mp4), and what one recording
// running on the same worker does to the p50 of plain screenshots.

import { MAX_ANIMATION_SECONDS } from '../src/domain/animation.ts';
import { CpuMeter, listProcesses, loop, pssMb, type LoopResult } from './measure.ts';
import type { BenchStack } from './stack.ts';

/** One format's recording: its wall time, CPU ms per group, and peak memory. */
export interface RecordingCost {
  wallMs: number;
  bytes: number;
  cpuMs: Record<string, number>;
  /** Peak PSS of the whole stack (ffmpeg included) and of ffmpeg alone, MB. */
  peakStackMb: number;
  peakFfmpegMb: number;
}

/** The animation figures of one bench run. */
export interface AnimationCosts {
  recordings: Record<string, RecordingCost>;
  /** Plain screenshots of the light page alone, then while a recording runs beside them. */
  plainAlone: LoopResult;
  plainBeside: LoopResult;
}

const isFfmpeg = (argv: string[]) => /(^|\/)ffmpeg$/.test(argv[0] ?? '');

/** Measures recordings of `scrollUrl` and their effect on screenshots of `plainUrl`. */
export async function measureAnimations(
  stack: BenchStack,
  scrollUrl: string,
  plainUrl: string,
): Promise<AnimationCosts> {
  const { base, workspace } = stack;
  const headers = { 'x-access-key': workspace.access_key };
  const animate = async (format: string, seconds: number) => {
    const search = new URLSearchParams({
      url: scrollUrl,
      format,
      scenario: 'scroll',
      duration: String(seconds),
      // The largest allowed recording takes its 30 s and its encoding: within a synchronous render's longest timeout.
      timeout: '90',
      scroll_complete: 'false',
      scroll_by: '600',
      scroll_duration: '800',
      scroll_delay: '200',
    });
    const response = await fetch(`${base}/api/animate?${search}`, { headers });
    const bytes = await response.arrayBuffer();
    if (response.status !== 200)
      throw new Error(`animate answered ${response.status}: ${Buffer.from(bytes).toString().slice(0, 200)}`);
    return bytes.byteLength;
  };
  const take = async () => {
    const response = await fetch(`${base}/api/take?url=${encodeURIComponent(plainUrl)}`, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`take answered ${response.status}`);
  };
  // The stack's groups, with ffmpeg (a child of the service) counted apart from the service.
  const labels = () => {
    const labelled = stack.labels();
    const argv = new Map(listProcesses().map((proc) => [proc.pid, proc.argv]));
    for (const [pid, label] of labelled)
      if (label === 'service' && isFfmpeg(argv.get(pid) ?? [])) labelled.set(pid, 'ffmpeg');
    return labelled;
  };
  const ffmpegPids = () => [...labels()].filter(([, label]) => label === 'ffmpeg').map(([pid]) => pid);

  await animate('mp4', 1); // the first recording's page and ffmpeg start are not part of the figures
  const recordings: Record<string, RecordingCost> = {};
  // Each row: its format and seconds (`largest`: the whole budget, RECORDING_PIXEL_FRAME_BUDGET).
  const rows: Record<string, [format: string, seconds: number]> = {
    mp4: ['mp4', 5],
    gif: ['gif', 5],
    'largest (mp4, 30 s)': ['mp4', MAX_ANIMATION_SECONDS],
  };
  for (const [row, [format, seconds]] of Object.entries(rows)) {
    let peakStackMb = 0;
    let peakFfmpegMb = 0;
    const sampler = setInterval(() => {
      peakStackMb = Math.max(peakStackMb, pssMb(stack.pids()));
      peakFfmpegMb = Math.max(peakFfmpegMb, pssMb(ffmpegPids()));
    }, 250);
    const meter = new CpuMeter(labels).start();
    const started = performance.now();
    const bytes = await animate(format, seconds);
    const wallMs = Math.round(performance.now() - started);
    const used = meter.stop();
    clearInterval(sampler);
    const cpuMs = Object.fromEntries(Object.entries(used).map(([label, ms]) => [label, Math.round(ms)]));
    recordings[row] = {
      wallMs,
      bytes,
      cpuMs,
      peakStackMb: Math.round(peakStackMb),
      peakFfmpegMb: Math.round(peakFfmpegMb),
    };
  }

  const plainAlone = await loop(take, { concurrency: 1, count: 15, maxSeconds: 10 });
  const recording = animate('mp4', 10);
  const plainBeside = await loop(take, { concurrency: 1, count: 15, maxSeconds: 9, warmup: 0 });
  await recording;
  return { recordings, plainAlone, plainBeside };
}

/** The report's lines for `costs`. */
export function animationLines(costs: AnimationCosts): string[] {
  const groups = (cpu: Record<string, number>) => {
    const chromium = Object.entries(cpu)
      .filter(([label]) => label.startsWith('chromium'))
      .reduce((sum, [, ms]) => sum + ms, 0);
    return `service ${cpu.service ?? 0} ms, Chromium ${chromium} ms, ffmpeg ${cpu.ffmpeg ?? 0} ms`;
  };
  return [
    '/api/animate, 5 s scroll of the heavy page (1280×720, 25 fps)',
    ...Object.entries(costs.recordings).map(
      ([row, r]) =>
        `  ${row.padEnd(4)} wall ${(r.wallMs / 1000).toFixed(1)} s, ${Math.round(r.bytes / 1024)} KB; CPU: ${groups(r.cpuMs)}; peak PSS: stack ${r.peakStackMb} MB, ffmpeg ${r.peakFfmpegMb} MB`,
    ),
    `  plain png p50 alone ${costs.plainAlone.p50.toFixed(0)} ms, beside a recording ${costs.plainBeside.p50.toFixed(0)} ms (× ${(costs.plainBeside.p50 / costs.plainAlone.p50).toFixed(2)}; ${costs.plainBeside.shots} shots)`,
  ];
}
