// The memory bound of a renderer: while renders run, the resident memory of every renderer below
// the browser is read from /proc a few times a second, and one above the limit is killed. Its page
// crashes, and the render on it ends with page_memory_exceeded (src/render/browser/browser.ts).

import { pidsIn, ProcFile, RendererKinds } from './processes.ts';

/** How often the renderers' memory is read while a render runs. */
const SAMPLE_MS = 100;
/**
 * How often the whole tree below the browser is walked while renders run (at the first sample of a
 * busy spell too, once the last walk is this old). In between only the threads that had children
 * at the last walk are read: while a render runs its renderer is one of them, so the zygote thread
 * that starts every renderer (a page's, and an iframe's of another site) is too. Renders one after
 * another each start a busy spell of their own: a walk for each (≈ 35 files opened and read for
 * one workspace's pages) cost more than the rest of their sampling, and a walk a second on each of
 * two busy browsers read ≈ 8 files a light shot (≈ 0.1 ms of CPU) for nothing new.
 */
const WALK_EVERY_MS = 5000;
/** How long after a kill a page's crash is put down to it. */
const KILL_ATTRIBUTION_MS = 5000;
const PAGE_BYTES = 4096;

/** Watches the renderers of one browser process; idle (no timer) while no render runs. */
export class RendererMemoryWatch {
  readonly #browserPid: number;
  readonly #limitBytes: number;
  readonly #onKill: (pid: number, mb: number) => void;
  readonly #kill: (pid: number) => boolean;
  readonly #kinds = new RendererKinds();
  // The children files that listed a process at the last walk, kept open until the next.
  #parents: ProcFile[] = [];
  // Each renderer's statm, kept open while it is seen below the browser.
  readonly #statm = new Map<number, ProcFile>();
  #walkedAt = Number.NEGATIVE_INFINITY;
  /** How many times it has walked the whole tree (for tests). */
  walks = 0;
  #renders = 0;
  #timer: NodeJS.Timeout | null = null;
  #lastKill = Number.NEGATIVE_INFINITY;

  readonly #walkEveryMs: number;

  /**
   * `walkEveryMs`: how often the whole tree is walked (WALK_EVERY_MS unless a test says otherwise);
   * `kill`: sends a renderer SIGKILL, false when it was gone (through the switch to the browser's user in the image).
   */
  constructor(
    browserPid: number,
    limitMb: number,
    onKill: (pid: number, mb: number) => void,
    walkEveryMs = WALK_EVERY_MS,
    kill: (pid: number) => boolean = killProcess,
  ) {
    this.#walkEveryMs = walkEveryMs;
    this.#kill = kill;
    this.#browserPid = browserPid;
    this.#limitBytes = limitMb * 1024 * 1024;
    this.#onKill = onKill;
  }

  /** A render started; the returned function says it ended. */
  begin(): () => void {
    this.#renders += 1;
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#sample(), SAMPLE_MS);
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#renders -= 1;
      if (this.#renders === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = null;
      }
    };
  }

  /** True when a renderer was killed for its memory in the last few seconds. */
  killedRecently(): boolean {
    return Date.now() - this.#lastKill < KILL_ATTRIBUTION_MS;
  }

  /** Stops watching (the browser is gone). */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    for (const file of [...this.#parents, ...this.#statm.values()]) file.close();
    this.#parents = [];
    this.#statm.clear();
  }

  /** The renderers it read at its last sample (for tests). */
  renderers(): number[] {
    return [...this.#statm.keys()];
  }

  /** Files this watch holds open (for tests: none once stopped). */
  openFiles(): number {
    return this.#parents.length + this.#statm.size;
  }

  #sample(): void {
    const seen = new Set<number>();
    for (const pid of this.#below()) {
      seen.add(pid);
      if (!this.#kinds.isRenderer(pid)) continue;
      let statm = this.#statm.get(pid);
      if (!statm) this.#statm.set(pid, (statm = new ProcFile(`/proc/${pid}/statm`)));
      const resident = Number((statm.read() ?? '0 0').split(' ')[1]) * PAGE_BYTES;
      if (resident <= this.#limitBytes) continue;
      this.#lastKill = Date.now();
      if (!this.#kill(pid)) continue; // Gone meanwhile.
      this.#onKill(pid, Math.round(resident / 1024 / 1024));
    }
    for (const [pid, statm] of this.#statm) {
      if (seen.has(pid)) continue;
      statm.close();
      this.#statm.delete(pid);
    }
  }

  // The processes below the browser: walked afresh every #walkEveryMs, else from the last walk's parents.
  #below(): number[] {
    const now = Date.now();
    if (now - this.#walkedAt < this.#walkEveryMs) return this.#parents.flatMap((file) => pidsIn(file.read() ?? ''));
    this.#walkedAt = now;
    this.walks += 1;
    for (const file of this.#parents) file.close();
    const parents: string[] = [];
    const below = this.#kinds.below(this.#browserPid, parents).slice(1);
    this.#parents = parents.map((path) => new ProcFile(path));
    return below;
  }
}

function killProcess(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
