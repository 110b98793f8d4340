// The machine's processes as Linux's /proc shows them: finding Chromium, the trees below a pid,
// and their memory. Where there is no /proc every scan finds nothing.
import { readdirSync, readFileSync } from 'node:fs';

/** One running process: its id, its parent's, and its command line. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  argv: string[];
}

/** Every process of the machine; one that ends while it is read is left out. */
export function listProcesses(): ProcessEntry[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: ProcessEntry[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name in parentheses may itself hold ") ", so the fields after it are found from the last one.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(entry), ppid, argv: commandLine(readFileSync(`/proc/${entry}/cmdline`, 'utf8')) });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

// Arguments are NUL-separated, but Chromium's child processes rewrite their command line into one
// space-separated string (its process title), so a lone argument with spaces is split on them.
function commandLine(raw: string): string[] {
  const argv = raw.split('\0').filter((arg) => arg !== '');
  return argv.length === 1 ? argv[0].split(' ').filter((arg) => arg !== '') : argv;
}

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
