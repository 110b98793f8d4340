// Measuring helpers of the benchmark: bounded loops, latency percentiles, PSS memory, autocannon.

import autocannon from 'autocannon';

export { findProcess, processTree, pssMb } from '../src/render/processes.ts';

/** Throughput and latency of one measured loop. */
export interface LoopResult {
  shots: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p95: number;
}

/**
 * Runs `shot` with `concurrency` workers until `count` shots are done or `maxSeconds` pass
 * (whichever first), after `warmup` unmeasured shots.
 */
export async function loop(shot: () => Promise<void>, options: { concurrency: number; count: number; maxSeconds: number; warmup?: number }): Promise<LoopResult> {
  for (let i = 0; i < (options.warmup ?? 2); i++) await shot();
  const latencies: number[] = [];
  const started = performance.now();
  const stopAt = started + options.maxSeconds * 1000;
  let issued = 0;
  const worker = async () => {
    while (issued < options.count && performance.now() < stopAt) {
      issued++;
      const t = performance.now();
      await shot();
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { shots: latencies.length, seconds, perSecond: latencies.length / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95) };
}

/** The `p`th percentile of `values` (nearest rank), in the values' unit. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** Requests per second autocannon got from `url` in `seconds` (and the status codes it saw). */
export async function hammer(url: string, seconds: number, headers: Record<string, string> = {}): Promise<{ perSecond: number; statuses: Record<string, number> }> {
  const result = await autocannon({ url, connections: 10, duration: seconds, headers });
  const statuses: Record<string, number> = {};
  for (const [code, count] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (count as { count: number }).count;
  return { perSecond: result.requests.average, statuses };
}
