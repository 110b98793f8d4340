// The production-like mix of `make bench`: light and heavy pngs, 5,000 px full pages, PDFs, webp
// and jpeg in the shares a real deployment sees, at c = 2 × CPUs, for one workspace and for 200
// drawn by Zipf (s=1), interleaved in rounds on one stack; throughput, p50 and p95 by kind, and the
// stack's memory during each loop. `make bench ARGS=sizing` runs it at several memory budgets
// (bench/sizing.ts).

import os from 'node:os';
import type { Workspace } from '../src/workspaces/workspace.ts';
import { machineShares, machineTicks, median, percentile, pssMb, turned, type LoopResult } from './measure.ts';
import type { BenchSite } from './site.ts';
import type { BenchStack } from './stack.ts';
import { mulberry32, zipf } from './tenants.ts';

/** One kind of render of the mix: its share of the draws and its query. */
interface Kind {
  name: string;
  share: number;
  url: (site: BenchSite) => string;
  params: Record<string, string>;
}

/** The mix: about 60 % light png, 20 % heavy png, 10 % full page, 5 % PDF, 5 % webp and jpeg. */
export const MIX: Kind[] = [
  { name: 'light png', share: 0.6, url: (site) => site.light, params: {} },
  { name: 'heavy png', share: 0.2, url: (site) => site.heavy, params: {} },
  { name: 'full page 5,000 px', share: 0.1, url: (site) => site.tall, params: { full_page: 'true' } },
  { name: 'pdf', share: 0.05, url: (site) => site.light, params: { format: 'pdf' } },
  { name: 'webp', share: 0.025, url: (site) => site.light, params: { format: 'webp' } },
  { name: 'jpeg', share: 0.025, url: (site) => site.light, params: { format: 'jpeg' } },
];

/** One mix loop: all its renders, and each kind's. */
export interface MixLoop extends LoopResult {
  kinds: Record<string, { shots: number; p50: number; p95: number }>;
  /** Highest stack PSS sampled during the loop, MB. */
  peakMb: number;
  /** Highest PSS of the service's Chromium sampled during the loop, MB: what RENDER_MEMORY_BUDGET bounds. */
  chromiumPeakMb: number;
  /** Highest PSS of the rest of the stack (service, nats-server, s3rver) sampled during the loop, MB. */
  ownPeakMb: number;
  workspaces: number;
  /** Pages the service opened during the loop (shutterbus_render_pages_opened_total): on a render's path, and as spares. */
  opened: { render: number; spare: number };
}

/** The rows: each side's loops over the rounds, its median round, and the Zipf side ÷ one workspace. */
export interface MixRows {
  concurrency: number;
  rounds: Record<string, MixLoop[]>;
  median: Record<string, MixLoop>;
  /** The Zipf loop ÷ one workspace's in the same round, the median of the rounds. */
  zipfVsOne: { perSecond: number; p50: number; p95: number };
}

export const ONE = 'mix, one workspace';
export const ZIPF = 'mix, 200 workspaces Zipf (s=1)';

/**
 * Runs the mix `rounds` times for one workspace and for 200 by Zipf, interleaved (the order
 * turned each round), `shots` renders a loop at c = 2 × CPUs. Kinds are drawn from one seeded
 * sequence per side, so both sides render the same work in the same order. Each loop is warmed
 * with `warmup` renders through the same picks (a stack serving those tenants is not cold).
 */
export async function measureMix(
  stack: BenchStack,
  site: BenchSite,
  options: { rounds: number; shots: number; maxSeconds: number; warmup?: number; many?: Workspace[] },
): Promise<MixRows> {
  const concurrency = 2 * os.cpus().length;
  const many = options.many ?? (await stack.createWorkspaces(200));
  const render = async (workspace: Workspace, kind: Kind) => {
    const search = new URLSearchParams({ url: kind.url(site), ...kind.params });
    const response = await fetch(`${stack.base}/api/take?${search}`, {
      headers: { 'x-access-key': workspace.access_key },
    }).catch((error: Error) => {
      const { exitCode, signalCode } = stack.service;
      throw new Error(
        `take (${kind.name}) failed: ${error.message} (service exit ${exitCode ?? '-'} ${signalCode ?? ''})`,
        {
          cause: error,
        },
      );
    });
    const bytes = await response.arrayBuffer();
    if (response.status !== 200 || bytes.byteLength < 500)
      throw new Error(
        `take (${kind.name}) answered ${response.status}: ${Buffer.from(bytes).toString('utf8', 0, 300)}`,
      );
  };
  const kindOf = (random: () => number) => {
    let r = random();
    for (const kind of MIX) if ((r -= kind.share) < 0) return kind;
    return MIX[0];
  };
  const sides: Record<string, (round: number) => { workspace: () => Workspace; kind: () => Kind }> = {
    [ONE]: (round) => {
      const random = mulberry32(1000 + round);
      return { workspace: () => stack.workspace, kind: () => kindOf(random) };
    },
    [ZIPF]: (round) => {
      const random = mulberry32(1000 + round);
      const draw = zipf(200, 1, 2000 + round);
      return { workspace: () => many[draw()], kind: () => kindOf(random) };
    },
  };
  const rounds: Record<string, MixLoop[]> = { [ONE]: [], [ZIPF]: [] };
  for (let round = 0; round < options.rounds; round++) {
    for (const name of turned(Object.keys(sides), round)) {
      const picks = sides[name](round);
      rounds[name].push(await mixLoop(stack, picks, render, { ...options, concurrency }));
    }
  }
  const ratio = (of: (l: MixLoop) => number) => median(rounds[ZIPF].map((l, round) => of(l) / of(rounds[ONE][round])));
  return {
    concurrency,
    rounds,
    median: Object.fromEntries(Object.entries(rounds).map(([name, loops]) => [name, medianMixLoop(loops)])),
    zipfVsOne: { perSecond: ratio((l) => l.perSecond), p50: ratio((l) => l.p50), p95: ratio((l) => l.p95) },
  };
}

/**
 * The stack's peak memory while a loop runs: its PSS every 2 s (each process read once: reading
 * more often slows the loop, bench/tenants.ts), in all, of the service's Chromium, and of the rest.
 */
export function peakSampler(stack: BenchStack): {
  stop(): { peakMb: number; chromiumPeakMb: number; ownPeakMb: number };
} {
  const peaks = { peakMb: 0, chromiumPeakMb: 0, ownPeakMb: 0 };
  const sample = () => {
    const chromium = new Set(stack.chromiumPids());
    let all = 0;
    let browser = 0;
    for (const pid of stack.pids()) {
      const mb = pssMb([pid]);
      all += mb;
      if (chromium.has(pid)) browser += mb;
    }
    peaks.peakMb = Math.max(peaks.peakMb, all);
    peaks.chromiumPeakMb = Math.max(peaks.chromiumPeakMb, browser);
    peaks.ownPeakMb = Math.max(peaks.ownPeakMb, all - browser);
  };
  const timer = setInterval(sample, 2000);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

// One loop of the mix: `warmup` renders, then up to `shots` at `concurrency` or `maxSeconds`.
async function mixLoop(
  stack: BenchStack,
  picks: { workspace: () => Workspace; kind: () => Kind },
  render: (workspace: Workspace, kind: Kind) => Promise<void>,
  options: { shots: number; maxSeconds: number; warmup?: number; concurrency: number },
): Promise<MixLoop> {
  const seen = new Set<string>();
  const next = () => {
    const workspace = picks.workspace();
    seen.add(workspace.workspace_id);
    return { workspace, kind: picks.kind() };
  };
  let warmed = 0;
  const warmup = options.warmup ?? 2 * options.concurrency;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (warmed < warmup) {
        warmed++;
        const { workspace, kind } = next();
        await render(workspace, kind);
      }
    }),
  );
  seen.clear();
  const openedBefore = await pagesOpened(stack);
  const peaks = peakSampler(stack);
  const latencies: { kind: string; ms: number }[] = [];
  const ticks = machineTicks();
  const started = performance.now();
  const stopAt = started + options.maxSeconds * 1000;
  let issued = 0;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (issued < options.shots && performance.now() < stopAt) {
        issued++;
        const { workspace, kind } = next();
        const t = performance.now();
        await render(workspace, kind);
        latencies.push({ kind: kind.name, ms: performance.now() - t });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const { peakMb, chromiumPeakMb, ownPeakMb } = peaks.stop();
  const openedAfter = await pagesOpened(stack);
  const all = latencies.map((l) => l.ms);
  const kinds: MixLoop['kinds'] = {};
  for (const kind of MIX) {
    const of = latencies.filter((l) => l.kind === kind.name).map((l) => l.ms);
    if (of.length > 0) kinds[kind.name] = { shots: of.length, p50: percentile(of, 50), p95: percentile(of, 95) };
  }
  return {
    shots: all.length,
    seconds,
    perSecond: all.length / seconds,
    p50: percentile(all, 50),
    p95: percentile(all, 95),
    machine: machineShares(ticks, machineTicks()),
    kinds,
    peakMb,
    chromiumPeakMb,
    ownPeakMb,
    workspaces: seen.size,
    opened: { render: openedAfter.render - openedBefore.render, spare: openedAfter.spare - openedBefore.spare },
  };
}

/** The service's count of pages opened so far, from its /metrics: on a render's path, and as spares. */
export async function pagesOpened(stack: BenchStack): Promise<{ render: number; spare: number }> {
  const text = await (await fetch(`${stack.base}/metrics`)).text();
  const of = (kind: string) =>
    Number(new RegExp(`^shutterbus_render_pages_opened_total\\{for="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { render: of('render'), spare: of('spare') };
}

// The median round by rate, with the medians of the rounds' percentiles (overall and by kind) and
// the highest memory of any round.
function medianMixLoop(loops: MixLoop[]): MixLoop {
  const byRate = [...loops].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(loops.length / 2)];
  const kinds: MixLoop['kinds'] = {};
  for (const kind of MIX) {
    const of = loops.map((l) => l.kinds[kind.name]).filter((k) => k !== undefined);
    if (of.length > 0)
      kinds[kind.name] = {
        shots: of.reduce((sum, k) => sum + k.shots, 0),
        p50: median(of.map((k) => k.p50)),
        p95: median(of.map((k) => k.p95)),
      };
  }
  return {
    ...byRate,
    p50: median(loops.map((l) => l.p50)),
    p95: median(loops.map((l) => l.p95)),
    kinds,
    peakMb: Math.max(...loops.map((l) => l.peakMb)),
    chromiumPeakMb: Math.max(...loops.map((l) => l.chromiumPeakMb)),
    ownPeakMb: Math.max(...loops.map((l) => l.ownPeakMb)),
    opened: {
      render: loops.reduce((sum, l) => sum + l.opened.render, 0),
      spare: loops.reduce((sum, l) => sum + l.opened.spare, 0),
    },
  };
}

/** The rows as printed: each side's throughput, p50 and p95, then each kind's p50 and p95 on both sides. */
export function mixLines(mix: MixRows): string[] {
  const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0));
  const ratio = (value: number) => (Math.round(value * 100) / 100).toFixed(2);
  const one = mix.median[ONE];
  const zipfSide = mix.median[ZIPF];
  return [
    `${`the mix, c=${mix.concurrency} (rounds interleaved)`.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  peak PSS MB: stack Chromium  rounds (shots/s)`,
    ...[ONE, ZIPF].map((name) => {
      const r = mix.median[name];
      return `${name.padEnd(34)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}  ${r.peakMb.toFixed(0).padStart(18)} ${r.chromiumPeakMb.toFixed(0).padStart(8)}  ${mix.rounds[name].map((l) => l.perSecond.toFixed(2)).join(' ')}`;
    }),
    ...[ONE, ZIPF].map((name) => {
      const loops = mix.rounds[name];
      const renders = loops.reduce((sum, l) => sum + l.shots, 0);
      const { render, spare } = mix.median[name].opened;
      return `pages opened a 100 renders, ${name}: on the render's path ${((100 * render) / renders).toFixed(1)}, as spares ${((100 * spare) / renders).toFixed(1)}`;
    }),
    `Zipf ÷ one workspace (median of the rounds' ratios): shots/s ${ratio(mix.zipfVsOne.perSecond)}, p50 ${ratio(mix.zipfVsOne.p50)}, p95 ${ratio(mix.zipfVsOne.p95)}`,
    `${'by kind: p50 / p95 ms (shots)'.padEnd(34)} ${'one workspace'.padStart(22)} ${'200, Zipf'.padStart(22)}`,
    ...MIX.map(
      ({ name }) =>
        `${`  ${name}`.padEnd(34)} ${`${ms(one.kinds[name]?.p50)} / ${ms(one.kinds[name]?.p95)} (${one.kinds[name]?.shots ?? 0})`.padStart(22)} ${`${ms(zipfSide.kinds[name]?.p50)} / ${ms(zipfSide.kinds[name]?.p95)} (${zipfSide.kinds[name]?.shots ?? 0})`.padStart(22)}`,
    ),
  ];
}
