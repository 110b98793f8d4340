// The machine's processes as Linux's /proc shows them: finding Chromium, the tree below a pid, and
// its memory. Where there is no /proc every scan finds nothing. The look-ups only tests and the
// bench make are in test/helpers/processes.ts.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

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

/**
 * `root` and every process below it, from the children lists of each thread (/proc/<pid>/task/*
 * /children: cheaper than a scan of the whole of /proc); empty where there is no /proc. Below a
 * `leaf` it does not look; the children files that listed a process are added to `parents`.
 */
function descendantsOf(root: number, leaf: (pid: number) => boolean, parents: string[]): number[] {
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (pid !== root && leaf(pid)) {
      found.push(pid);
      continue;
    }
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    found.push(pid);
    for (const thread of threads) {
      const file = `/proc/${pid}/task/${thread}/children`;
      const children = childrenIn(file);
      if (children.length > 0) parents.push(file);
      queue.push(...children);
    }
  }
  return found;
}

/** The processes a thread's children file lists (none once the thread has ended). */
function childrenIn(file: string): number[] {
  let listed = '';
  try {
    listed = readFileSync(file, 'utf8');
  } catch {
    // The thread ended meanwhile.
  }
  return pidsIn(listed);
}

/** The pids of a children file's text ("12 34 "). */
export function pidsIn(listed: string): number[] {
  return listed.split(' ').flatMap((child) => (child === '' ? [] : [Number(child)]));
}

/**
 * A /proc file kept open and read again from its start: one pread a read instead of the open,
 * stat, read and close of readFileSync (≈ 3 µs against ≈ 11 here), for files read many times a
 * second. Once its process is gone a read gives null (a thread's children file gives "" instead)
 * and the file is closed; a new process with the same pid is never read through an old one.
 */
export class ProcFile {
  #fd: number | null;
  #buffer = Buffer.allocUnsafe(256);

  constructor(path: string) {
    try {
      this.#fd = openSync(path, 'r');
    } catch {
      this.#fd = null;
    }
  }

  /** The file's text now, or null when its process is gone. */
  read(): string | null {
    if (this.#fd === null) return null;
    try {
      let length = readSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0);
      // A full buffer may be a cut text: read it again into one twice the size.
      while (length === this.#buffer.length) {
        this.#buffer = Buffer.allocUnsafe(this.#buffer.length * 2);
        length = readSync(this.#fd, this.#buffer, 0, this.#buffer.length, 0);
      }
      return this.#buffer.toString('latin1', 0, length);
    } catch {
      this.close();
      return null;
    }
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}

/**
 * The processes below a Chromium browser and which of them are renderers, from each one's command
 * line, read once. A renderer is forked from a zygote and keeps the zygote's command line until it
 * rewrites it: a process that still reads as a zygote is asked again, until a walk finds it has
 * children (renderers start none) and settles it.
 */
export class RendererKinds {
  readonly #renderer = new Map<number, boolean>();

  /**
   * `root` and every process below it, walked with renderers as leaves (their threads' children
   * files are not read: ≈ 2 ms against ≈ 10 for the walk with 24 pages); the children files that
   * listed a process are added to `parents`. Processes no longer below are forgotten.
   */
  below(root: number, parents: string[] = []): number[] {
    const first = parents.length;
    const pids = descendantsOf(root, (pid) => this.isRenderer(pid), parents);
    for (const file of parents.slice(first)) this.#renderer.set(Number(file.split('/')[2]), false);
    const seen = new Set(pids);
    for (const pid of this.#renderer.keys()) if (!seen.has(pid)) this.#renderer.delete(pid);
    return pids;
  }

  /** Whether `pid` is a renderer (false once it is gone). */
  isRenderer(pid: number): boolean {
    let renderer = this.#renderer.get(pid);
    if (renderer === undefined) {
      let commandLine = '';
      try {
        commandLine = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        // Gone meanwhile.
      }
      renderer = commandLine.includes('--type=renderer');
      if (renderer || !commandLine.includes('--type=zygote')) this.#renderer.set(pid, renderer);
    }
    return renderer;
  }
}

// A process whose resident size moved by less than this since its PSS was read keeps that PSS.
const RESIDENT_MOVED_KB = 512;
// PSS moves too when the processes sharing a page come and go: each is read afresh at least this often.
const PSS_KEPT_MS = 10_000;

interface ProcessMemory {
  statm: ProcFile;
  residentKb: number;
  pssKb: number;
  readAt: number;
}

/**
 * The memory `root` and its descendants hold, read again and again without blocking: their summed
 * PSS (/proc/<pid>/smaps_rollup), or their resident size (/proc/<pid>/statm) for a process whose
 * smaps this process may not read. smaps_rollup is dear (the kernel walks the process's page
 * tables: ≈ 1.5 ms of CPU for a Chromium process here), statm is not (≈ 3 µs, kept open), so a
 * process whose resident size has not moved since its PSS was read keeps that PSS, for at most
 * PSS_KEPT_MS: with renders going round 24 warm pages, most renderers sit idle between two readings.
 */
export class TreeMemory {
  readonly #root: number;
  readonly #processes = new Map<number, ProcessMemory>();
  readonly #kinds = new RendererKinds();
  #closed = false;
  /** How many processes' smaps the last reading read (the rest kept their PSS). */
  smapsRead = 0;

  constructor(root: number) {
    this.#root = root;
  }

  /** The tree's memory now, in MB; null when nothing could be read (or once closed). */
  async readMb(): Promise<number | null> {
    const pids = this.#closed ? [] : this.#kinds.below(this.#root);
    const seen = new Set(pids);
    for (const [pid, known] of this.#processes) {
      if (seen.has(pid)) continue;
      known.statm.close();
      this.#processes.delete(pid);
    }
    if (pids.length === 0) return null;
    this.smapsRead = 0;
    const now = Date.now();
    const kb = await Promise.all(pids.map((pid) => this.#kb(pid, now)));
    return kb.reduce((sum, value) => sum + value, 0) / 1024;
  }

  /** Closes the files it keeps open. */
  close(): void {
    this.#closed = true;
    for (const known of this.#processes.values()) known.statm.close();
    this.#processes.clear();
  }

  /** Files it holds open (for tests). */
  openFiles(): number {
    return this.#processes.size;
  }

  async #kb(pid: number, now: number): Promise<number> {
    let known = this.#processes.get(pid);
    if (!known) {
      known = { statm: new ProcFile(`/proc/${pid}/statm`), residentKb: Number.NaN, pssKb: 0, readAt: 0 };
      this.#processes.set(pid, known);
    }
    const statm = known.statm.read();
    if (statm === null) {
      // Gone (a process given its pid later is opened afresh), or not ours to read.
      this.#processes.delete(pid);
      return 0;
    }
    const residentKb = Number(statm.split(' ')[1]) * 4;
    if (Math.abs(residentKb - known.residentKb) < RESIDENT_MOVED_KB && now - known.readAt < PSS_KEPT_MS) {
      return known.pssKb;
    }
    this.smapsRead += 1;
    let pssKb = residentKb;
    try {
      const match = /^Pss:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (match) pssKb = Number(match[1]);
    } catch {
      // Not ours to read, or gone: its resident size.
    }
    Object.assign(known, { residentKb, pssKb, readAt: now });
    return pssKb;
  }
}

/** One reading of the memory `root` and its descendants hold, in MB (TreeMemory, read once). */
export async function treeMemoryMb(root: number): Promise<number | null> {
  const memory = new TreeMemory(root);
  try {
    return await memory.readMb();
  } finally {
    memory.close();
  }
}
