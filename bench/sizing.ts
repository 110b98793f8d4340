// `make bench ARGS=sizing`: throughput and p95 of the 24-workspace round-robin (the light page at
// c=4) and of the production-like mix over 200 workspaces by Zipf (bench/mix.ts) at each
// RENDER_MEMORY_BUDGET, with the stack's peak memory beside each: one stack per budget, the
// budgets one after another (a budget is read at start). BENCH_SHOTS, BENCH_ROUNDS and
// BENCH_BUDGETS (MB, comma-separated) make a shorter run.

import os from 'node:os';
import type { Workspace } from '../src/workspaces/workspace.ts';
import { loop, medianLoop, type LoopResult } from './measure.ts';
import { measureMix, peakSampler, ZIPF } from './mix.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const budgets = (process.env.BENCH_BUDGETS ?? '512,1024,1536,2048').split(',').map(Number);
const shots = Number(process.env.BENCH_SHOTS) || 120;
const rounds = Number(process.env.BENCH_ROUNDS) || 3;
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Point {
  budgetMb: number;
  roundRobin: LoopResult & { peakMb: number; chromiumPeakMb: number; ownPeakMb: number };
  zipfMix: LoopResult & { peakMb: number; chromiumPeakMb: number; ownPeakMb: number };
}

const site = await startBenchSite();
const points: Point[] = [];
try {
  for (const budgetMb of budgets) {
    log(`sizing: RENDER_MEMORY_BUDGET=${budgetMb}`);
    const stack = await startBenchStack(site, { RENDER_MEMORY_BUDGET: String(budgetMb) });
    try {
      const many = await stack.createWorkspaces(200);
      const take = async (workspace: Workspace) => {
        const response = await fetch(`${stack.base}/api/take?url=${encodeURIComponent(site.light)}`, {
          headers: { 'x-access-key': workspace.access_key },
        });
        const bytes = await response.arrayBuffer();
        if (response.status !== 200 || bytes.byteLength < 1000) throw new Error(`take answered ${response.status}`);
      };
      // The round-robin loops alternate with the mix's rounds (each mix round is its two sides).
      const roundRobin: Point['roundRobin'][] = [];
      const zipfLoops: Point['zipfMix'][] = [];
      let next = 0;
      for (let round = 0; round < rounds; round++) {
        const peaks = peakSampler(stack);
        const result = await loop(() => take(many[next++ % 24]), {
          concurrency: 4,
          count: shots,
          maxSeconds: 30,
          warmup: 24,
        });
        roundRobin.push({ ...result, ...peaks.stop() });
        const mix = await measureMix(stack, site, { rounds: 1, shots, maxSeconds: 60, many });
        zipfLoops.push(mix.rounds[ZIPF][0]);
      }
      const peakOf = (loops: Point['zipfMix'][]) => ({
        peakMb: Math.max(...loops.map((l) => l.peakMb)),
        chromiumPeakMb: Math.max(...loops.map((l) => l.chromiumPeakMb)),
        ownPeakMb: Math.max(...loops.map((l) => l.ownPeakMb)),
      });
      points.push({
        budgetMb,
        roundRobin: { ...medianLoop(roundRobin), ...peakOf(roundRobin) },
        zipfMix: { ...medianLoop(zipfLoops), ...peakOf(zipfLoops) },
      });
    } finally {
      await stack.stop();
    }
  }
} finally {
  await site.close();
}

// The check: Chromium within the budget, and the whole stack within the budget plus the service's
// own share (service, nats-server and s3rver: their highest PSS in the same loops).
const line = (name: string, r: Point['zipfMix'], budgetMb: number) => {
  const within = r.chromiumPeakMb <= budgetMb && r.peakMb <= budgetMb + r.ownPeakMb;
  return `  ${name.padEnd(26)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}  ${r.peakMb.toFixed(0).padStart(10)} ${r.chromiumPeakMb.toFixed(0).padStart(9)} ${r.ownPeakMb.toFixed(0).padStart(6)}  ${within ? 'within' : 'OVER'}`;
};
process.stdout.write(
  `Sizing, ${os.cpus().length} CPUs, ${new Date().toISOString()} (${rounds} rounds of ${shots} a loop; the median round, the highest memory)\n\n${[
    `${'budget MB / loop'.padEnd(28)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  ${'peak: stack'.padStart(10)} ${'Chromium'.padStart(9)} ${'own'.padStart(6)}  budget + own`,
    ...points.flatMap((p) => [
      `${p.budgetMb}`,
      line('24 round-robin, light c=4', p.roundRobin, p.budgetMb),
      line(`mix, 200 Zipf, c=${2 * os.cpus().length}`, p.zipfMix, p.budgetMb),
    ]),
  ].join('\n')}\n`,
);
process.exit(0);
