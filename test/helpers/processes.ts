// Process look-ups the tests and the bench make: a process by its command line, the tree below a
// pid, and the memory of a set of pids. The product's own (listProcesses, treeMemoryMb) stay in
// src/render/browser/processes.ts; they are re-exported here so a test imports them from one place.
import { readFileSync } from 'node:fs';
import { listProcesses } from '../../src/render/browser/processes.ts';

export { listProcesses, type ProcessEntry } from '../../src/render/browser/processes.ts';

/** The pid of the first process whose command line holds every one of `args`, or null. */
export function findProcess(args: string[], processes = listProcesses()): number | null {
  return processes.find((proc) => args.every((arg) => proc.argv.includes(arg)))?.pid ?? null;
}

/** `roots` and every process below them. */
export function processTree(roots: number[], processes = listProcesses()): number[] {
  const tree = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const proc of processes) {
      if (tree.has(proc.ppid) && !tree.has(proc.pid)) {
        tree.add(proc.pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

/** Summed proportional set size of `pids` in MB (from /proc/<pid>/smaps_rollup); a pid gone counts 0. */
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
