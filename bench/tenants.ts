// The many-workspace rows of `make bench`: the light page at c=4 for one workspace, for 24
// workspaces round-robin and for a Zipf-like mix over 200, interleaved in rounds on one stack, with
// the stack's memory (PSS) during each loop; and a plain png with tracing on beside tracing off.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Workspace } from '../src/workspaces/workspace.ts';
import { loop, median, medianLoop, pssMb, turned, type LoopResult } from './measure.ts';
import type { BenchStack } from './stack.ts';

/** One many-workspace loop: throughput and latency, and the stack's memory while it ran. */
export interface TenantLoop extends LoopResult {
  /** Highest stack PSS sampled during the loop, MB. */
  peakMb: number;
  /** Highest PSS of the service's Chromium (browser and every process below it) sampled during the loop, MB: what RENDER_MEMORY_BUDGET bounds. */
  chromiumPeakMb: number;
  /** Distinct workspaces the measured shots went to. */
  workspaces: number;
}

/** The rows: each mix's loops over the rounds, the medians by mix, and each mix ÷ one workspace. */
export interface TenantRows {
  rounds: Record<string, TenantLoop[]>;
  median: Record<string, TenantLoop>;
  /** Each round's ratio to one workspace's loop of the same round, the median of the rounds. */
  vsOne: Record<string, { perSecond: number; p50: number }>;
}

// A small seeded generator, so every run draws the same Zipf sequence.
export function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks index k of `n` with probability ∝ 1 / (k + 1)^s. */
export function zipf(n: number, s: number, seed: number): () => number {
  const random = mulberry32(seed);
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const cumulative: number[] = [];
  let running = 0;
  for (const w of weights) cumulative.push((running += w / total));
  return () => {
    const r = random();
    const index = cumulative.findIndex((c) => r <= c);
    return index === -1 ? n - 1 : index;
  };
}

/**
 * Runs the three mixes `rounds` times, interleaved (the order turned each round), on `stack`:
 * the same light page, c=4, `shots` shots each. Each mix is warmed before each of its rounds (a
 * round-robin pass, or as many Zipf draws), as a stack serving those tenants would be: the mix
 * before it has filled the pool with its own workspaces' pages, which a round would otherwise
 * measure giving way.
 */
export async function measureTenants(
  stack: BenchStack,
  url: string,
  options: { rounds: number; shots: number; maxSeconds: number },
): Promise<TenantRows> {
  const many = await stack.createWorkspaces(200);
  const one = stack.workspace;
  const take = async (workspace: Workspace) => {
    const response = await fetch(`${stack.base}/api/take?url=${encodeURIComponent(url)}`, {
      headers: { 'x-access-key': workspace.access_key },
    });
    const bytes = await response.arrayBuffer();
    if (response.status !== 200 || bytes.byteLength < 1000) {
      throw new Error(`take answered ${response.status}: ${Buffer.from(bytes).toString('utf8', 0, 500)}`);
    }
  };
  let next = 0;
  const draw = zipf(200, 1, 26);
  const mixes: Record<string, { pick: () => Workspace; warmup: number }> = {
    'one workspace': { pick: () => one, warmup: 4 },
    '24 workspaces round-robin': { pick: () => many[next++ % 24], warmup: 24 },
    '200 workspaces, Zipf (s=1)': { pick: () => many[draw()], warmup: 48 },
  };
  const rounds: Record<string, TenantLoop[]> = Object.fromEntries(Object.keys(mixes).map((name) => [name, []]));
  const names = Object.keys(mixes);
  for (let round = 0; round < options.rounds; round++) {
    for (const name of turned(names, round)) {
      const mix = mixes[name];
      // The warm-up shots go through the same pick: the loop then sees tenants coming back.
      const seen = new Set<string>();
      let peakMb = 0;
      let chromiumPeakMb = 0;
      // Every 2 s, each process read once: the kernel walks a process's page tables to answer, and
      // with ≈ 35 processes up, sampled every 500 ms, the reading slowed the loops it measured.
      const sample = () => {
        const pss = new Map(stack.pids().map((pid) => [pid, pssMb([pid])]));
        const sum = (pids: number[]) => pids.reduce((mb, pid) => mb + (pss.get(pid) ?? 0), 0);
        peakMb = Math.max(peakMb, sum([...pss.keys()]));
        chromiumPeakMb = Math.max(chromiumPeakMb, sum(stack.chromiumPids()));
      };
      const sampler = setInterval(sample, 2000);
      const result = await loop(
        async () => {
          const workspace = mix.pick();
          seen.add(workspace.workspace_id);
          await take(workspace);
        },
        { concurrency: 4, count: options.shots, maxSeconds: options.maxSeconds, warmup: mix.warmup },
      );
      clearInterval(sampler);
      sample();
      rounds[name].push({ ...result, peakMb, chromiumPeakMb, workspaces: seen.size });
    }
  }
  // Each mix over one workspace in the same round (at most one other loop between them), the
  // median of the rounds.
  const vsOne = (loops: TenantLoop[], of: (l: LoopResult) => number) =>
    median(loops.map((l, round) => of(l) / of(rounds['one workspace'][round])));
  return {
    rounds,
    median: Object.fromEntries(
      Object.entries(rounds).map(([name, loops]) => [
        name,
        {
          ...medianLoop(loops),
          peakMb: Math.max(...loops.map((l) => l.peakMb)),
          chromiumPeakMb: Math.max(...loops.map((l) => l.chromiumPeakMb)),
        },
      ]),
    ),
    vsOne: Object.fromEntries(
      Object.entries(rounds).map(([name, loops]) => [
        name,
        { perSecond: vsOne(loops, (l) => l.perSecond), p50: vsOne(loops, (l) => l.p50) },
      ]),
    ),
  };
}

/**
 * Chromium's own cost of many pages, without Shutterbus: a raw Playwright loop (goto, screenshot)
 * at c=1 on one page, and round-robin over 24 pages of their own contexts, in `rounds` alternated
 * rounds of `shots` each; the median round of each. Each renderer of the 24 is revisited only
 * every 24 shots, as a workspace's warm page is in the round-robin mix.
 */
export async function measureRawRoundRobin(
  browser: Browser,
  url: string,
  options: { rounds: number; shots: number },
): Promise<{ one: LoopResult; roundRobin: LoopResult }> {
  const contexts = await Promise.all(
    Array.from({ length: 24 }, () => browser.newContext({ viewport: { width: 1280, height: 720 } })),
  );
  try {
    const pages: Page[] = [];
    for (const context of contexts) pages.push(await context.newPage());
    const shot = async (page: Page) => {
      await page.goto(url, { waitUntil: 'load' });
      await page.screenshot({ type: 'png' });
    };
    for (const page of pages) await shot(page);
    let next = 0;
    const sides = {
      one: () => shot(pages[0]),
      roundRobin: () => shot(pages[next++ % pages.length]),
    };
    const result = await alternate(sides, options.rounds, { concurrency: 1, count: options.shots, maxSeconds: 30 });
    return { one: result.one, roundRobin: result.roundRobin };
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
  }
}

/** A local OTLP/HTTP sink: accepts every POST and discards it. */
export async function startTraceSink(): Promise<{ url: string; posts(): number; close(): Promise<void> }> {
  let posts = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      posts++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts: () => posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Plain png loops on two stacks, alternated round by round; the median of each side's rounds. */
export async function alternate(
  sides: Record<string, () => Promise<void>>,
  rounds: number,
  shape: { concurrency: number; count: number; maxSeconds: number },
): Promise<Record<string, LoopResult>> {
  const runs: Record<string, LoopResult[]> = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
  const names = Object.keys(sides);
  for (let round = 0; round < rounds; round++) {
    for (const name of turned(names, round)) {
      runs[name].push(await loop(sides[name], shape));
    }
  }
  return Object.fromEntries(Object.entries(runs).map(([name, loops]) => [name, medianLoop(loops)]));
}

/** The rows as printed: each mix beside one workspace (the median of the rounds' ratios), with its rounds. */
export function tenantLines(tenants: TenantRows, row: (name: string, r: LoopResult) => string): string[] {
  const ratio = (value: number) => (Math.round(value * 100) / 100).toFixed(2);
  return [
    `${'light page, c=4 (rounds interleaved)'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  ÷ one: shots/s  p50  peak PSS MB: stack Chromium  rounds (shots/s)`,
    ...Object.entries(tenants.median).map(
      ([name, r]) =>
        `${row(name, r)}  ${ratio(tenants.vsOne[name].perSecond).padStart(13)} ${ratio(tenants.vsOne[name].p50).padStart(5)} ${r.peakMb.toFixed(0).padStart(18)} ${r.chromiumPeakMb.toFixed(0).padStart(8)}  ${tenants.rounds[name].map((l) => l.perSecond.toFixed(2)).join(' ')}`,
    ),
  ];
}

/** The raw loop's line: Chromium's own round-robin ÷ one page, beside the service's rows. */
export function rawRoundRobinLine(raw: { one: LoopResult; roundRobin: LoopResult }): string {
  const ratio = raw.roundRobin.perSecond / raw.one.perSecond;
  return `raw Chromium, c=1: one page ${raw.one.perSecond.toFixed(2)} shots/s, 24 pages round-robin ${raw.roundRobin.perSecond.toFixed(2)} (÷ one ${ratio.toFixed(2)})`;
}
