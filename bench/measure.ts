// Measuring helpers of the benchmark: bounded loops, latency percentiles, PSS memory, autocannon.

import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

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

// Every process of the machine with its parent: the tree below a pid is found from this.
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      map.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  return map;
}

/** `roots` and all their descendants. */
export function processTree(roots: number[]): number[] {
  const parentOf = parents();
  const tree = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of parentOf) if (tree.has(parent) && !tree.has(pid)) { tree.add(pid); grew = true; }
  }
  return [...tree];
}

/** The pid of the process whose command line holds every one of `parts`, or null. */
export function findProcess(parts: string[]): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (parts.every((part) => argv.includes(part))) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}

/** Summed proportional set size of `pids`, in MB (from /proc/<pid>/smaps_rollup). */
export function pssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      kb += Number(match?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return kb / 1024;
}
