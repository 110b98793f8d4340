// Warm contexts and pages, each dedicated to one workspace: a render takes a page that is already
// open and gives it back wiped of every trace of the render before the next render gets it.
// Opening a page costs a renderer process (~200 ms here); wiping one costs a few CDP calls.
// Pages are kept by recent use within a memory budget read from Chromium's processes (where it
// runs short, idle pages are first made smaller, then closed), and once several workspaces render,
// blank pages that nobody has used wait for a workspace's first render.

import type { Browser } from 'playwright-core';
import { Demand, MemoryBudget, PAGE_MB, type BudgetedPool, type RenderShare } from './memory-budget.ts';
import { metrics } from '../../metrics.ts';
import { compactionStep, openWarmPage, wipe, withinLimit, type WarmPage } from './warm-page.ts';

// Pages opened on a render's path and ahead of one, counted where each is opened.
const openedForRender = metrics.pagesOpened.labels({ for: 'render' });
const openedAsSpare = metrics.pagesOpened.labels({ for: 'spare' });

/** Pages of a pool (or of every pool of a worker) by what they do now. */
export interface PageStates {
  rendering: number;
  idle: number;
  spare: number;
}

/** How the pool is sized. */
export interface PoolOptions {
  /** Warm pages kept at most (busy ones beyond it are closed when released). */
  maxPages: number;
  /** Renders on one context before it is closed and replaced. */
  maxRenders: number;
  /**
   * Memory Chromium may hold with its warm pages, in MB, read with `measureMb`: idle pages fill at
   * most 80 % of it, past which they are made smaller (PagePool.compact), then closed
   * (src/render/browser/memory-budget.ts, docs/performance.md). Unset: only `maxPages` counts.
   */
  memoryBudgetMb?: number;
  /** Chromium's memory now (the browser and every process below it, PSS), in MB; null when unknown. */
  measureMb?: () => Promise<number | null>;
  /** A budget shared with other browsers' pools, in place of `memoryBudgetMb` and `measureMb`. */
  budget?: MemoryBudget;
  /**
   * Blank pages kept ready once several workspaces render, at least (default 2); more while first
   * visits come faster than that many open (#spareTarget).
   */
  spares?: number;
}

// First visits (renders of a workspace with no page here) count half as much 10 s later: the
// spares kept follow their rate within seconds.
const FIRST_VISITS_HALF_LIFE_MS = 10_000;
// Spares kept at most, whatever the rate of first visits.
const MOST_SPARES = 8;

/** Warm pages of one browser, keyed by workspace and device scale factor. */
export class PagePool implements BudgetedPool<WarmPage> {
  readonly #browser: Browser;
  readonly #options: PoolOptions;
  readonly #pages = new Set<WarmPage>();
  #spare: Promise<void> | null = null;
  // Spare pages being opened by #topUp, and renders waiting for one of them.
  readonly #sparesOpening = new Set<Promise<unknown>>();
  #waitingForSpare = 0;
  // Seconds a spare took to open lately (moving average): how long first visits must be covered for.
  #spareOpenSeconds = 0.2;
  readonly #firstVisits = new Demand(FIRST_VISITS_HALF_LIFE_MS);
  // The last workspace that asked, and whether more than one has: only then are spares kept.
  #lastKey: string | null = null;
  #severalWorkspaces = false;
  readonly #budget: MemoryBudget | null;

  constructor(browser: Browser, options: PoolOptions) {
    this.#browser = browser;
    this.#options = options;
    const { measureMb } = options;
    this.#budget =
      options.budget ??
      (measureMb && options.memoryBudgetMb !== undefined
        ? new MemoryBudget(() => this.#options.memoryBudgetMb ?? Number.POSITIVE_INFINITY, measureMb)
        : null);
    this.#budget?.join(this);
  }

  /** The browser is gone: this pool's pages no longer count in a budget it shares. */
  leaveBudget(): void {
    this.#budget?.leave(this);
  }

  /** Opens one unclaimed page at scale 1, so the first render (of a new workspace) does not pay for it. */
  async prewarm(): Promise<void> {
    if ([...this.#pages].some((warm) => warm.key === null) || this.#pages.size >= this.#options.maxPages) return;
    this.#spare ??= this.#open(null, 1)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.#spare = null));
    await this.#spare;
  }

  /**
   * A page for `key`: an idle one of that key, one being wiped, an unclaimed spare (one being
   * opened, when it is not already awaited), or a new one.
   */
  async acquire(key: string, deviceScaleFactor: number): Promise<WarmPage> {
    const fits = (warm: WarmPage) => warm.deviceScaleFactor === deviceScaleFactor;
    if (this.#lastKey !== null && this.#lastKey !== key) this.#severalWorkspaces = true;
    this.#lastKey = key;
    // A spare being opened is waited for once: the budget may close it before this render takes it.
    let waitedForSpare = false;
    for (;;) {
      const pages = [...this.#pages].filter(fits);
      // The most recently used: the least likely to have been compacted, and it leaves the others
      // least recently used, first to be compacted and closed.
      const idle = pages
        .filter((warm) => warm.key === key && warm.state === 'idle')
        .reduce<WarmPage | undefined>(
          (latest, warm) => (latest && latest.lastUsed >= warm.lastUsed ? latest : warm),
          undefined,
        );
      if (idle) return this.#claim(idle, key);
      const wiping = pages.find((warm) => warm.key === key && warm.state === 'wiping');
      if (wiping) {
        await wiping.wiped;
        continue;
      }
      const spare = pages.find((warm) => warm.key === null && warm.state === 'idle');
      if (spare) {
        // Spares only where several workspaces render: a worker serving one keeps no unclaimed
        // page (a renderer, ≈ 20 MB) at idle, and a second workspace's first render opens them.
        const claimed = this.#claim(spare, key);
        this.#firstVisits.add('');
        this.#topUp();
        return claimed;
      }
      // A spare started opening before this render came: it is ready sooner than a page opened now.
      if (!waitedForSpare && deviceScaleFactor === 1 && this.#waitingForSpare < this.#sparesOpening.size) {
        waitedForSpare = true;
        this.#waitingForSpare += 1;
        await Promise.race(this.#sparesOpening).finally(() => (this.#waitingForSpare -= 1));
        continue;
      }
      this.#firstVisits.add('');
      this.#evictIdle();
      const opened = this.#claim(await this.#open(key, deviceScaleFactor), key);
      this.#topUp();
      return opened;
    }
  }

  /**
   * Holds a render's share of the memory budget until the returned function is called: at once,
   * or once idle pages or renders ending make room (MemoryBudget.admit); at once without a budget.
   */
  admit(share: RenderShare, signal: AbortSignal, workspace?: string): Promise<() => void> {
    return this.#budget?.admit(share, signal, workspace) ?? Promise.resolve(() => {});
  }

  /** Gives a page back after a render that ended normally: wiped in the background, then idle. */
  release(warm: WarmPage): void {
    this.#budget?.measure();
    if (warm.renders >= this.#options.maxRenders || this.#pages.size > this.#options.maxPages) {
      this.discard(warm);
      return;
    }
    warm.state = 'wiping';
    warm.wiped = withinLimit(wipe(warm), 'wipe').then(
      () => {
        warm.state = 'idle';
        warm.lastUsed = Date.now();
      },
      () => this.discard(warm),
    );
  }

  /**
   * Makes an idle page smaller by one step: its renderer's garbage collected, or once it has been,
   * its viewport shrunk to one pixel (the next render sizes it again: browser.ts, withPage).
   * Meanwhile it counts as being wiped (acquire waits for it).
   */
  compact(warm: WarmPage): void {
    warm.state = 'wiping';
    warm.compaction = warm.compaction === 'none' ? 'collected' : 'shrunk';
    warm.wiped = withinLimit(compactionStep(warm), 'compaction').then(
      () => void (warm.state = 'idle'),
      () => this.discard(warm),
    );
  }

  /** Forgets a page and closes its context (after an error, a timeout, or when the pool shrinks). */
  discard(warm: WarmPage): Promise<void> {
    this.#pages.delete(warm);
    return warm.context.close().catch(() => {});
  }

  /** Idle pages of `key` at `deviceScaleFactor`: renders of that key that would start on one at once. */
  idleCount(key: string, deviceScaleFactor: number): number {
    return this.pageCount(key, deviceScaleFactor, 'idle');
  }

  /** Pages of `key` at `deviceScaleFactor`, in `state` or in any. */
  pageCount(key: string, deviceScaleFactor: number, state?: WarmPage['state']): number {
    let count = 0;
    for (const warm of this.#pages)
      if (
        warm.key === key &&
        warm.deviceScaleFactor === deviceScaleFactor &&
        (state === undefined || warm.state === state)
      )
        count += 1;
    return count;
  }

  /** Pages currently open (idle, busy or being wiped). */
  get size(): number {
    return this.#pages.size;
  }

  /** Pages open now by what they do: rendering, idle (being wiped or made smaller too), and blank spares. */
  get states(): PageStates {
    const states = { rendering: 0, idle: 0, spare: 0 };
    for (const warm of this.#pages) {
      if (warm.state === 'busy') states.rendering += 1;
      else if (warm.key === null) states.spare += 1;
      else states.idle += 1;
    }
    return states;
  }

  /** Blank pages (never used by anyone) open and waiting for a workspace's first render. */
  get spares(): number {
    return this.states.spare;
  }

  /** Chromium's memory at the budget's last reading, MB (null when not read yet or not readable). */
  get memoryMb(): number | null {
    return this.#budget?.memoryMb ?? null;
  }

  /** Idle pages, in any order (the budget's choice of which to compact or close). */
  idlePages(): WarmPage[] {
    return [...this.#pages].filter((warm) => warm.state === 'idle');
  }

  /**
   * Blank pages kept ready now: `spares`, or more where more first visits are expected while one
   * opens (twice their mean, as they come unevenly); none where `spares` is 0.
   */
  get spareTarget(): number {
    const spares = this.#options.spares ?? 2;
    const expected = this.#firstVisits.perSecond('') * this.#spareOpenSeconds;
    return spares === 0 ? 0 : Math.max(spares, Math.min(MOST_SPARES, Math.ceil(2 * expected)));
  }

  // Keeps spareTarget blank pages (never used by anyone) ready once several workspaces render,
  // opened in the background, so that a workspace without a warm page need not wait for a new
  // context and renderer. Called once a render has taken a spare or opened a page, and as each
  // spare opens: where the budget is full, idle pages make room for the spares first, least
  // recently used first, as they would for the next new workspace's render (on its path); none while
  // busy pages fill the budget.
  #topUp(): void {
    if (!this.#severalWorkspaces) return;
    const opening = this.#sparesOpening.size;
    const wanted = Math.min(
      this.spareTarget - this.spares - opening,
      this.#options.maxPages - this.#pages.size - opening,
    );
    if (wanted <= 0) return;
    let room = wanted;
    if (this.#budget) {
      // Spares being opened are not in the estimate yet: they count as pages here.
      const mb = (count: number) => (opening + count) * PAGE_MB;
      if (!this.#budget.fits(mb(wanted))) this.#budget.fit(mb(wanted));
      while (room > 0 && !this.#budget.fits(mb(room))) room -= 1;
    }
    for (let i = 0; i < room; i++) {
      const started = performance.now();
      const spare: Promise<unknown> = this.#open(null, 1).then(
        () => {
          const seconds = (performance.now() - started) / 1000;
          this.#spareOpenSeconds = 0.8 * this.#spareOpenSeconds + 0.2 * seconds;
          this.#sparesOpening.delete(spare);
          this.#topUp();
        },
        // Not retried here: the next render that takes a spare or opens a page tries again.
        () => void this.#sparesOpening.delete(spare),
      );
      this.#sparesOpening.add(spare);
    }
  }

  #claim(warm: WarmPage, key: string): WarmPage {
    warm.compaction = 'none';
    warm.key = key;
    warm.state = 'busy';
    warm.renders += 1;
    return warm;
  }

  // Makes room for one more page: closes the least recently used idle page at the page count's
  // bound, then as many as it takes for one more page to fit in the budget.
  #evictIdle(): void {
    if (this.#pages.size >= this.#options.maxPages) {
      const [oldest] = this.idlePages().sort((a, b) => a.lastUsed - b.lastUsed);
      if (oldest) void this.discard(oldest);
    }
    this.#budget?.fit(PAGE_MB);
  }

  async #open(key: string | null, deviceScaleFactor: number): Promise<WarmPage> {
    (key === null ? openedAsSpare : openedForRender).inc();
    const warm = await openWarmPage(this.#browser, key, deviceScaleFactor);
    this.#pages.add(warm);
    return warm;
  }
}
