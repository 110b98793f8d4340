// Measuring helpers of the benchmark: bounded loops, latency percentiles, PSS memory, autocannon.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { listProcesses, processTree, type ProcessEntry } from '../test/helpers/processes.ts';

export { findProcess, listProcesses, processTree, pssMb } from '../test/helpers/processes.ts';

/** Throughput and latency of one measured loop. */
export interface LoopResult {
  shots: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p95: number;
  /** Shares of the machine's CPU time during the loop (machineShares): idle, and stolen by its host. */
  machine: { idle: number; stolen: number };
}

/** The machine's CPU time so far, in clock ticks, from /proc/stat's first line: all of it, idle (with I/O wait), stolen. */
export function machineTicks(): { total: number; idle: number; stolen: number } {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal (guest time is counted in user already).
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
    return { total: user + nice + system + idle + iowait + irq + softirq + steal, idle: idle + iowait, stolen: steal };
  } catch {
    return { total: 0, idle: 0, stolen: 0 };
  }
}

/**
 * What share of the machine's CPU time between two machineTicks() readings went idle, and what
 * share its host took for others (a virtual machine's steal): on a shared host, what a figure
 * could not have used.
 */
export function machineShares(
  before: ReturnType<typeof machineTicks>,
  after: ReturnType<typeof machineTicks>,
): { idle: number; stolen: number } {
  const total = after.total - before.total;
  if (total <= 0) return { idle: 0, stolen: 0 };
  return { idle: (after.idle - before.idle) / total, stolen: (after.stolen - before.stolen) / total };
}

/**
 * Runs `shot` with `concurrency` workers until `count` shots are done or `maxSeconds` pass
 * (whichever first), after `warmup` unmeasured shots.
 */
export async function loop(
  shot: () => Promise<void>,
  options: { concurrency: number; count: number; maxSeconds: number; warmup?: number },
): Promise<LoopResult> {
  for (let i = 0; i < (options.warmup ?? 2); i++) await shot();
  const latencies: number[] = [];
  const ticks = machineTicks();
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
  return {
    shots: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    machine: machineShares(ticks, machineTicks()),
  };
}

/** The `p`th percentile of `values` (nearest rank), in the values' unit. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** Requests per second autocannon got from `url` in `seconds` (and the status codes it saw). */
export async function hammer(
  url: string,
  seconds: number,
  headers: Record<string, string> = {},
): Promise<{ perSecond: number; statuses: Record<string, number> }> {
  const result = await autocannon({ url, connections: 10, duration: seconds, headers });
  const statuses: Record<string, number> = {};
  for (const [code, count] of Object.entries(result.statusCodeStats ?? {}))
    statuses[code] = (count as { count: number }).count;
  return { perSecond: result.requests.average, statuses };
}

/** What `hammerRounds` measured of one URL: the median rate of its rounds, each round's, all statuses. */
export interface HammerResult {
  perSecond: number;
  rounds: number[];
  statuses: Record<string, number>;
}

/** `names` in the order of round `round`: turned by one each round, so that none always runs first. */
export const turned = <T>(names: T[], round: number): T[] => [
  ...names.slice(round % names.length),
  ...names.slice(0, round % names.length),
];

/** The median of `values` (of an even count, the upper of the two in the middle). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The median round of `loops` by rate, with the medians of the rounds' p50 and p95. */
export function medianLoop<T extends LoopResult>(loops: T[]): T {
  const byRate = [...loops].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(loops.length / 2)];
  return { ...byRate, p50: median(loops.map((l) => l.p50)), p95: median(loops.map((l) => l.p95)) };
}

/**
 * Hammers each URL for `seconds`, round after round, the order turned each round: the machine's
 * drift over the run (it is shared) falls on every URL alike instead of on whichever came last.
 */
export async function hammerRounds<K extends string>(
  targets: Record<K, { url: string; headers?: Record<string, string> }>,
  rounds: number,
  seconds: number,
): Promise<Record<K, HammerResult>> {
  const names = Object.keys(targets) as K[];
  const runs = new Map(names.map((name) => [name, [] as Awaited<ReturnType<typeof hammer>>[]]));
  for (let round = 0; round < rounds; round++) {
    for (const name of turned(names, round)) {
      runs.get(name)!.push(await hammer(targets[name].url, seconds, targets[name].headers));
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const all = runs.get(name)!;
      const statuses: Record<string, number> = {};
      for (const run of all)
        for (const [code, count] of Object.entries(run.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
      return [
        name,
        {
          perSecond: median(all.map((run) => run.perSecond)),
          rounds: all.map((run) => Math.round(run.perSecond)),
          statuses,
        },
      ];
    }),
  ) as Record<K, HammerResult>;
}

/** The median of the rounds' ratios of `a` to `b` (rounds measured side by side by hammerRounds). */
export function roundsRatio(a: HammerResult, b: HammerResult): number {
  return median(a.rounds.map((rate, round) => rate / b.rounds[round]));
}

// Clock ticks per second of /proc/<pid>/stat's CPU times (100 on every Linux this runs on).
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU (user + system) `pid` (or one thread, `pid/task/tid`) has used so far, in ms, or null when it is gone. */
export function cpuMs(pid: number | string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5) (utime, stime); the slice starts at field 3.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Whether a process is a Chromium one (the browser, its zygotes, helpers and crash handler). */
export function isChromium(proc: ProcessEntry): boolean {
  return /chrom/i.test(path.basename(proc.argv[0] ?? ''));
}

/** What a Chromium process does, from its `--type` switch: browser, renderer, gpu, network, utility, zygote, crashpad. */
export function chromiumKind(proc: ProcessEntry): string {
  if (/crashpad/i.test(proc.argv[0] ?? '')) return 'crashpad';
  const type = proc.argv.find((arg) => arg.startsWith('--type='))?.slice(7);
  if (!type) return 'browser';
  if (type === 'gpu-process') return 'gpu';
  if (type === 'utility') return proc.argv.some((arg) => /NetworkService/i.test(arg)) ? 'network' : 'utility';
  return type;
}

/**
 * The processes below `roots`, each labelled `service` (any process that is not Chromium) or
 * `chromium <kind>`; `named` adds single processes under their own label (nats-server, s3rver).
 */
export function labelTree(roots: number[], named: Record<string, number | null> = {}): Map<number, string> {
  const processes = listProcesses();
  const byPid = new Map(processes.map((proc) => [proc.pid, proc]));
  const labels = new Map<number, string>();
  for (const pid of processTree(roots, processes)) {
    const proc = byPid.get(pid);
    if (proc) labels.set(pid, isChromium(proc) ? `chromium ${chromiumKind(proc)}` : 'service');
  }
  for (const [label, pid] of Object.entries(named)) if (pid !== null) labels.set(pid, label);
  return labels;
}

/**
 * CPU used by groups of processes since start(), from /proc. It samples every 250 ms, so a
 * process that ends meanwhile (a renderer of a replaced page) still counts up to its last sample;
 * a process first seen after start() counts from its birth.
 */
export class CpuMeter {
  readonly #label: () => Map<number, string>;
  readonly #seen = new Map<number, { label: string; base: number; last: number }>();
  #timer: NodeJS.Timeout | null = null;

  /** `label` lists the processes to watch now, each with its group's name. */
  constructor(label: () => Map<number, string>) {
    this.#label = label;
  }

  /** Takes the starting point and keeps sampling until stop(). */
  start(): this {
    this.#seen.clear();
    this.#sample(true);
    this.#timer = setInterval(() => this.#sample(false), 250);
    return this;
  }

  /** CPU ms per group since start(), sampling once more first. */
  read(): Record<string, number> {
    this.#sample(false);
    const totals: Record<string, number> = {};
    for (const { label, base, last } of this.#seen.values()) totals[label] = (totals[label] ?? 0) + last - base;
    return totals;
  }

  /** The final read; sampling stops. */
  stop(): Record<string, number> {
    const totals = this.read();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    return totals;
  }

  #sample(first: boolean): void {
    for (const [pid, label] of this.#label()) {
      const used = cpuMs(pid);
      if (used === null) continue;
      const known = this.#seen.get(pid);
      if (known) known.last = used;
      else this.#seen.set(pid, { label, base: first ? used : 0, last: used });
    }
  }
}

/** `after` − `before` per group, each ÷ `shots`, rounded to 0.1 ms; `total` sums the groups. */
export function perShot(
  before: Record<string, number>,
  after: Record<string, number>,
  shots: number,
): Record<string, number> {
  const result: Record<string, number> = {};
  let total = 0;
  for (const [label, ms] of Object.entries(after)) {
    const used = ms - (before[label] ?? 0);
    total += used;
    result[label] = Math.round((used / shots) * 10) / 10;
  }
  result.total = Math.round((total / shots) * 10) / 10;
  return result;
}
