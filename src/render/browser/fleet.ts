// Several Chromiums for one worker (RENDER_BROWSERS): each render goes to one of them. One
// browser passes every render's navigations, commits and captures through its one main thread and
// its GPU process's compositor thread; with renders overlapping on two CPUs those threads, not the
// CPUs, set the pace (docs/performance.md, "Browsers per worker").

import { BrowserHost, type BrowserHostOptions, type PageSetup, type PageTask, type RenderBrowser } from './browser.ts';
import { pageMetrics } from '../../domain/devices.ts';
import { MemoryBudget } from './memory-budget.ts';
import type { GaugeCollector } from '../../metrics.ts';
import type { PageStates } from './pool.ts';

// The states shutterbus_render_pages counts pages in (PagePool.states).
const PAGE_STATES: (keyof PageStates)[] = ['rendering', 'idle', 'spare'];

/** BrowserHosts behind one RenderBrowser; the first is launched at start, the others once renders overlap. */
export class BrowserFleet implements RenderBrowser {
  readonly #hosts: BrowserHost[];
  // Renders running on each host, by the host's index.
  readonly #running: number[];
  // Renders sent to each host that have not yet started on a page, by workspace.
  readonly #claims: Map<string, number>[];
  readonly #budget: MemoryBudget | undefined;
  #closed = false;

  /**
   * `browsers` Chromiums sharing one memory budget (`options.memoryBudgetMb`: their memory read
   * together, their idle pages compacted and closed in one order) and the pool's blank spares; the
   * first records the files its Chromium mapped (`options.dataDir`).
   */
  constructor(options: BrowserHostOptions, browsers: number) {
    const count = Math.max(1, browsers);
    const { memoryBudgetMb, ...shared } = options;
    this.#budget =
      memoryBudgetMb === undefined
        ? undefined
        : new MemoryBudget(
            () => memoryBudgetMb,
            () => this.#readMemoryMb(),
          );
    const budget = this.#budget;
    this.#hosts = Array.from(
      { length: count },
      (_, index) =>
        new BrowserHost({
          ...shared,
          ...(budget ? { budget } : {}),
          spares: Math.ceil(2 / count),
          ...(index > 0 ? { dataDir: undefined } : {}),
        }),
    );
    this.#running = this.#hosts.map(() => 0);
    this.#claims = this.#hosts.map(() => new Map());
  }

  /** Launches the first browser; the others wait until renders overlap. */
  async start(): Promise<void> {
    this.#closed = false;
    await this.#hosts[0].start();
  }

  /** Closes every browser; renders in flight fail, and none is launched after. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#hosts.map((host) => host.close()));
  }

  /**
   * A browser is up and connected: the worker can render (renders go to browsers that are up,
   * while one that crashed is relaunched or one is launched for overlapping renders).
   */
  isHealthy(): boolean {
    return this.#hosts.some((host) => host.isHealthy());
  }

  /** Every browser that is up answers over the wire, and one at least is up. */
  async ping(timeoutMs?: number): Promise<boolean> {
    const up = this.#hosts.filter((host) => host.isHealthy());
    const answers = await Promise.all(up.map((host) => host.ping(timeoutMs)));
    return up.length > 0 && answers.every(Boolean);
  }

  /** The browsers are launched alike: the first one answers for all. */
  hasGpuRendering(): Promise<boolean> {
    return this.#hosts[0].hasGpuRendering();
  }

  /**
   * The gauges of this worker's browsers, read at each scrape: pages by what they do, and
   * Chromium's memory (the budget's last reading where there is a budget, else read then).
   */
  gauges(): GaugeCollector[] {
    return [
      {
        name: 'shutterbus_render_pages',
        help: "Browser pages a worker holds open, by state: rendering, idle (a workspace's, kept warm), spare (blank).",
        read: async () => {
          const each = this.#hosts.map((host) => host.pageStates);
          return PAGE_STATES.map((state) => ({
            labels: { state },
            value: each.reduce((sum, states) => sum + states[state], 0),
          }));
        },
      },
      {
        name: 'shutterbus_render_chromium_memory_megabytes',
        help: "The PSS of a worker's Chromium processes, MB, as the memory budget last read it (RENDER_MEMORY_BUDGET).",
        read: async () => {
          const mb = this.#budget?.memoryMb ?? (await this.#readMemoryMb());
          return mb === null ? [] : [{ labels: {}, value: Math.round(mb) }];
        },
      },
    ];
  }

  /** The process ids of the browsers launched so far, null where one is not running. */
  get pids(): (number | null)[] {
    return this.#launched().map((host) => host.pid);
  }

  async withPage<T>(setup: PageSetup, signal: AbortSignal, task: PageTask<T>): Promise<T> {
    const index = this.#pick(setup);
    // Until its task starts, the render counts against its workspace's idle pages there (#pick).
    const claims = this.#claims[index];
    const key = setup.workspaceId;
    let claiming = key !== undefined;
    const claimed = () => {
      if (!claiming || key === undefined) return;
      claiming = false;
      const left = (claims.get(key) ?? 1) - 1;
      if (left > 0) claims.set(key, left);
      else claims.delete(key);
    };
    if (key !== undefined) claims.set(key, (claims.get(key) ?? 0) + 1);
    this.#running[index] += 1;
    try {
      return await this.#hosts[index].withPage(setup, signal, (page, progress, session) => {
        claimed();
        return task(page, progress, session);
      });
    } finally {
      claimed();
      this.#running[index] -= 1;
    }
  }

  // The browser a render goes to: one holding an idle warm page of its workspace that no render
  // sent there is yet to take (pages never pass between browsers, so a workspace stays where its
  // pages are), else the one running the fewest renders. On a tie, one holding a page of the
  // workspace (the render waits for it to be wiped rather than open one), else the one holding the
  // fewest pages: workspaces that first come one at a time (no render running anywhere) would
  // otherwise all open their pages in the first browser and keep rendering there once they come
  // together. When every launched browser is busy, the next one is launched for the renders that
  // follow.
  #pick(setup: PageSetup): number {
    const launched = this.#hosts.map((_, index) => index).filter((index) => this.#hosts[index].launched);
    const ready = launched.filter((index) => this.#hosts[index].isHealthy());
    const candidates = ready.length > 0 ? ready : [0];
    const { workspaceId } = setup;
    const warmPages = workspaceId !== undefined && setup.proxyServer === undefined;
    const scale = warmPages ? pageMetrics(setup).scale : 1;
    const rank = (index: number) => {
      const host = this.#hosts[index];
      const holds = warmPages && host.pageCount(workspaceId, scale) > 0;
      return [this.#running[index], holds ? 0 : 1, host.pages];
    };
    const fewest = (indexes: number[]) =>
      indexes.reduce((best, index) => (before(rank(index), rank(best)) ? index : best));
    const next = this.#hosts.findIndex((host) => !host.launched);
    if (next !== -1 && !this.#closed && candidates.every((index) => this.#running[index] > 0)) {
      this.#hosts[next].start().catch(() => {});
    }
    if (warmPages) {
      const warm = candidates.filter(
        (index) => this.#hosts[index].idleCount(workspaceId, scale) > (this.#claims[index].get(workspaceId) ?? 0),
      );
      if (warm.length > 0) return fewest(warm);
    }
    return fewest(candidates);
  }

  // Every running browser's memory, MB; null when none could be read.
  async #readMemoryMb(): Promise<number | null> {
    const readings = await Promise.all(this.#hosts.map((host) => host.readMemoryMb()));
    const read = readings.filter((mb): mb is number => mb !== null);
    return read.length > 0 ? read.reduce((sum, mb) => sum + mb, 0) : null;
  }

  #launched(): BrowserHost[] {
    return this.#hosts.filter((host, index) => index === 0 || host.launched);
  }
}

// Whether `a` comes before `b`, compared element by element.
function before(a: number[], b: number[]): boolean {
  const at = a.findIndex((value, index) => value !== b[index]);
  return at !== -1 && a[at] < b[at];
}
