// The memory bound of a renderer: while renders run, the resident memory of every renderer below
// the browser is read from /proc a few times a second, and one above the limit is killed. Its page
// crashes, and the render on it ends with page_memory_exceeded (src/render/browser.ts).

import { readdirSync, readFileSync } from 'node:fs';

/** How often the renderers' memory is read while a render runs. */
const SAMPLE_MS = 100;
/** How long after a kill a page's crash is put down to it. */
const KILL_ATTRIBUTION_MS = 5000;
const PAGE_BYTES = 4096;

/** Watches the renderers of one browser process; idle (no timer) while no render runs. */
export class RendererMemoryWatch {
  readonly #browserPid: number;
  readonly #limitBytes: number;
  readonly #onKill: (pid: number, mb: number) => void;
  // Whether each process seen below the browser is a renderer (its command line never changes).
  readonly #isRenderer = new Map<number, boolean>();
  #renders = 0;
  #timer: NodeJS.Timeout | null = null;
  #lastKill = Number.NEGATIVE_INFINITY;

  constructor(browserPid: number, limitMb: number, onKill: (pid: number, mb: number) => void) {
    this.#browserPid = browserPid;
    this.#limitBytes = limitMb * 1024 * 1024;
    this.#onKill = onKill;
  }

  /** A render started; the returned function says it ended. */
  begin(): () => void {
    this.#renders += 1;
    this.#timer ??= setInterval(() => this.#sample(), SAMPLE_MS);
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
  }

  #sample(): void {
    const seen = new Set<number>();
    for (const pid of descendants(this.#browserPid, (pid) => this.#rendererOrNot(pid))) {
      seen.add(pid);
      if (!this.#isRenderer.get(pid)) continue;
      const resident = Number(readOr(`/proc/${pid}/statm`, '0 0').split(' ')[1]) * PAGE_BYTES;
      if (resident <= this.#limitBytes) continue;
      this.#lastKill = Date.now();
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        continue; // Gone meanwhile.
      }
      this.#onKill(pid, Math.round(resident / 1024 / 1024));
    }
    for (const pid of this.#isRenderer.keys()) if (!seen.has(pid)) this.#isRenderer.delete(pid);
  }

  #rendererOrNot(pid: number): boolean {
    let renderer = this.#isRenderer.get(pid);
    if (renderer === undefined) {
      renderer = readOr(`/proc/${pid}/cmdline`, '').includes('--type=renderer');
      this.#isRenderer.set(pid, renderer);
    }
    return renderer;
  }
}

// Every process below `root`, from the children lists of each of its threads (cheaper than a
// scan of the whole of /proc, which this runs ten times a second); below a `leaf` (a renderer
// starts no process) it does not look.
function descendants(root: number, leaf: (pid: number) => boolean): number[] {
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (pid !== root && leaf(pid)) continue;
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const thread of threads) {
      for (const child of readOr(`/proc/${pid}/task/${thread}/children`, '').split(' ')) {
        if (child === '') continue;
        found.push(Number(child));
        queue.push(Number(child));
      }
    }
  }
  return found;
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
