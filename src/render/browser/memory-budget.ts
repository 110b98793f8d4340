// The memory budget warm pages are kept within (RENDER_MEMORY_BUDGET): Chromium's memory read from
// /proc at most every MEASURE_EVERY_MS while renders come and go, estimated in between, and idle
// pages made smaller, then closed, least recently used first, across every pool that shares it (one
// per browser of a worker: src/render/browser/fleet.ts), but one page of each render's workspace
// while it runs. Each render holds a share of the budget while it runs (admit); where idle pages
// cannot make room for it, it waits for renders to end.

/**
 * How far an idle page has been made smaller since its last render: its renderer's garbage
 * collected (what the render left in its heap), then its viewport shrunk to one pixel as well.
 */
export type Compaction = 'none' | 'collected' | 'shrunk';

/** What the budget reads of a warm page (pool.ts's WarmPage). */
export interface BudgetedPage {
  lastUsed: number;
  compaction: Compaction;
  /** The workspace whose page it is (null: a spare nobody has used). */
  key: string | null;
}

/** What the budget asks of a pool whose pages it bounds. */
export interface BudgetedPool<Page extends BudgetedPage = BudgetedPage> {
  /** Pages open now (idle, busy or being wiped). */
  readonly size: number;
  /** The pool's idle pages, in any order. */
  idlePages(): Page[];
  /** Makes an idle page smaller by the next step: its renderer's garbage collected, else its viewport shrunk. */
  compact(warm: Page): void;
  /** Closes a page. */
  discard(warm: Page): Promise<void>;
}

// Chromium's memory is read at most this often, and only while renders come and go; while a
// render waits for room (admit), as often as ADMIT_EVERY_MS.
const MEASURE_EVERY_MS = 2000;
const ADMIT_EVERY_MS = 100;

// What each step of compaction frees until the next reading says (docs/performance.md, "Many workspaces": collecting
// the garbage a light render left ≈ 10 MB, a one-pixel viewport ≈ 3.5 MB more; counted low, as
// a render may leave less).
const COLLECTED_MB = 6;
const SHRUNK_MB = 3;

/**
 * What a warm page adds to Chromium's memory until the next reading says (docs/performance.md:
 * ≈ 36 MB idle, more while it renders).
 */
export const PAGE_MB = 40;

// The part of the memory budget idle pages may fill at most: the rest, or more where renders hold
// more (admit), is room for the pages that are rendering, which grow as they do, between two readings.
const FILL = 0.8;

/** What a render holds of the budget (admit): while it runs, and after it until the next reading. */
export interface RenderShare {
  mb: number;
  keptMb: number;
}

/**
 * A render's share: what its page grows by, at most, above the page's idle size, and what the page
 * keeps of it once the render ends. A light or heavy page grew by 12–25 MB at its peak here and
 * kept 4–16 MB, that a reading counts before it matters; a 1280 × 5,000 px full page grew by ≈ 80 MB
 * and kept ≈ 30 MB (docs/performance.md, "Many workspaces"). A full page's share is for each 1280
 * CSS px of width at scale 1, times the scale's square.
 */
export function renderShare(fullPage: boolean, width: number, scale: number): RenderShare {
  const pages = (width / 1280) * scale * scale;
  return fullPage ? { mb: FULL_PAGE_MB * pages, keptMb: FULL_PAGE_KEPT_MB * pages } : { mb: RENDER_MB, keptMb: 0 };
}

const RENDER_MB = 25;
const FULL_PAGE_MB = 100;
const FULL_PAGE_KEPT_MB = 30;

/** One budget, read from Chromium's processes, over the pages of every pool that joins it. */
export class MemoryBudget {
  readonly #limitMb: () => number;
  readonly #measureMb: () => Promise<number | null>;
  readonly #pools = new Set<BudgetedPool>();
  #measuring = false;
  #measuredAt = 0;
  #memoryMb: number | null = null;
  // Pages open at the last reading, and what compaction freed since: both move the estimate (#estimateMb).
  #pagesAtReading = 0;
  #compactedMbSinceReading = 0;
  // Renders running and the budget they hold (admit); what the pages of those ended since the last reading keep.
  #running = 0;
  #runningMb = 0;
  #keptMbSinceReading = 0;
  // Renders waiting to be admitted, in the order they came, and what wakes them (#change).
  readonly #waiting: object[] = [];
  readonly #changed = new Set<() => void>();
  // Renders of each workspace from their admission to their end: #idle leaves as many of its idle pages out.
  readonly #rendering = new Map<string, number>();

  /** `limitMb`: the budget in MB (read each time); `measureMb`: Chromium's memory now, PSS, MB (null: unknown). */
  constructor(limitMb: () => number, measureMb: () => Promise<number | null>) {
    this.#limitMb = limitMb;
    this.#measureMb = measureMb;
  }

  join(pool: BudgetedPool): void {
    this.#pools.add(pool);
  }

  /** A pool whose browser is gone: its pages no longer count. */
  leave(pool: BudgetedPool): void {
    this.#pools.delete(pool);
  }

  /** Chromium's memory at the last reading, MB (null when not read yet or not readable). */
  get memoryMb(): number | null {
    return this.#memoryMb;
  }

  /**
   * True when `moreMb` fits beside the estimate in the part of the budget idle pages fill: what
   * renders hold (admit) is kept free, and at least the budget's 1 − FILL.
   */
  fits(moreMb: number): boolean {
    const limit = this.#limitMb();
    return (this.#estimateMb() ?? 0) + Math.max(this.#heldMb(), limit * (1 - FILL)) + moreMb <= limit;
  }

  /**
   * Reads Chromium's memory (at most every MEASURE_EVERY_MS, without blocking) and compacts or
   * closes idle pages until the estimate is back within the budget's FILL (fit).
   */
  measure(everyMs = MEASURE_EVERY_MS): void {
    if (this.#measuring || Date.now() - this.#measuredAt < everyMs) return;
    this.#measuring = true;
    const pages = this.#pages();
    const compactedMb = this.#compactedMbSinceReading;
    const keptMb = this.#keptMbSinceReading;
    this.#measureMb()
      .then(
        (mb) => {
          this.#memoryMb = mb;
          this.#pagesAtReading = pages;
          // Compactions made while it was read are not in the reading.
          this.#compactedMbSinceReading -= compactedMb;
          this.#keptMbSinceReading -= keptMb;
          this.fit(0);
          this.#wakeWaiting();
        },
        () => {},
      )
      .finally(() => {
        this.#measuring = false;
        this.#measuredAt = Date.now();
      });
  }

  /**
   * Holds a render's share of the budget until the returned function is called (then what its
   * page keeps, until the next reading), once it fits: Chromium's memory (estimated) and what
   * renders hold within the whole budget. Idle pages make room first (fit); where they cannot, the
   * render waits in line for others to end, Chromium's memory read again every ADMIT_EVERY_MS.
   * With no render running it starts whatever the reading (there is nothing to wait for), and an
   * aborted `signal` ends the wait without holding anything. While a render of `workspace` waits
   * or runs, one of that workspace's idle pages is left as it is (#idle): what its renders use next.
   */
  async admit({ mb, keptMb }: RenderShare, signal?: AbortSignal, workspace?: string): Promise<() => void> {
    if (workspace === undefined) return this.#admit(mb, keptMb, signal);
    this.#rendering.set(workspace, (this.#rendering.get(workspace) ?? 0) + 1);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const left = (this.#rendering.get(workspace) ?? 1) - 1;
      if (left > 0) this.#rendering.set(workspace, left);
      else this.#rendering.delete(workspace);
    };
    try {
      const release = await this.#admit(mb, keptMb, signal);
      return () => {
        end();
        release();
      };
    } catch (error) {
      end();
      throw error;
    }
  }

  async #admit(mb: number, keptMb: number, signal?: AbortSignal): Promise<() => void> {
    // Renders wait their turn: one that comes while others wait queues behind them.
    if (this.#waiting.length === 0 && this.#fitsRender(mb)) return this.#hold(mb, keptMb);
    const turn = {};
    this.#waiting.push(turn);
    try {
      for (;;) {
        if (signal?.aborted) return () => {};
        if (this.#waiting[0] === turn) {
          if (this.#fitsRender(mb)) break;
          this.fit(mb);
          if (this.#running === 0 || this.#fitsRender(mb)) break;
          this.measure(ADMIT_EVERY_MS);
        }
        await this.#change();
      }
    } finally {
      this.#waiting.splice(this.#waiting.indexOf(turn), 1);
    }
    return this.#hold(mb, keptMb);
  }

  // Settles at the next change that may make room (a render ends, a reading comes), or after ADMIT_EVERY_MS.
  #change(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(wake, ADMIT_EVERY_MS);
      const changed = this.#changed;
      function wake() {
        clearTimeout(timer);
        changed.delete(wake);
        resolve();
      }
      changed.add(wake);
    });
  }

  #wakeWaiting(): void {
    for (const wake of [...this.#changed]) wake();
  }

  // Holds a render's share from its admission until it ends, then what its page keeps until read.
  #hold(mb: number, keptMb: number): () => void {
    this.#running += 1;
    this.#runningMb += mb;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#running -= 1;
      this.#runningMb -= mb;
      this.#keptMbSinceReading += keptMb;
      this.#wakeWaiting();
    };
  }

  /**
   * Makes idle pages smaller, then closes them, until the estimate plus `moreMb` is within the
   * budget's FILL: each idle page (#idle), least recently used first whichever pool holds it, takes one
   * step: its renders' garbage collected (its workspace's next render pays nothing for it), else
   * its viewport shrunk (the next render pays a resize and a repaint), else it is closed (the next
   * render pays a new renderer). Where one step each is not enough, those made smaller are closed too.
   */
  fit(moreMb: number): void {
    const idle = this.#idle();
    const compacted = new Map<BudgetedPage, number>();
    for (const { pool, warm } of idle) {
      if (this.fits(moreMb)) return;
      if (warm.compaction === 'shrunk') void pool.discard(warm);
      else compacted.set(warm, this.#compact(pool, warm));
    }
    for (const { pool, warm } of idle) {
      if (this.fits(moreMb)) return;
      const mb = compacted.get(warm);
      if (mb === undefined) continue;
      // What its step was counted to free no longer counts: the page does, as it closes.
      this.#compactedMbSinceReading -= mb;
      void pool.discard(warm);
    }
  }

  // Every pool's idle pages, least recently used first, but those a workspace's renders keep:
  // each of its renders between admission and their end keeps one of its idle pages out, its most
  // recently used, as closing it would only have its next render open another.
  #idle(): { pool: BudgetedPool; warm: BudgetedPage }[] {
    const rendering = new Map(this.#rendering);
    const idle = [...this.#pools]
      .flatMap((pool) => pool.idlePages().map((warm) => ({ pool, warm })))
      .sort((a, b) => b.warm.lastUsed - a.warm.lastUsed)
      .filter(({ warm }) => {
        const renders = warm.key === null ? 0 : (rendering.get(warm.key) ?? 0);
        if (renders > 0) rendering.set(warm.key!, renders - 1);
        return renders === 0;
      });
    return idle.reverse();
  }

  // Takes a page's next step of compaction; what it is counted to free.
  #compact(pool: BudgetedPool, warm: BudgetedPage): number {
    const mb = warm.compaction === 'none' ? COLLECTED_MB : SHRUNK_MB;
    this.#compactedMbSinceReading += mb;
    pool.compact(warm);
    return mb;
  }

  // Chromium's memory now, estimated: the last reading, moved by PAGE_MB for each page opened or
  // closed since and by what each step of compaction frees (COLLECTED_MB, SHRUNK_MB), so that a
  // burst between two readings counts at once.
  #estimateMb(): number | null {
    if (this.#memoryMb === null) return null;
    const opened = this.#pages() - this.#pagesAtReading;
    return this.#memoryMb + opened * PAGE_MB - this.#compactedMbSinceReading;
  }

  // Whether a render holding `mb` fits in the whole budget beside the estimate and what renders hold.
  #fitsRender(mb: number): boolean {
    const estimate = this.#estimateMb();
    return estimate === null || estimate + this.#heldMb() + mb <= this.#limitMb();
  }

  // What renders hold of the budget: those running, and the pages of those ended since the last reading.
  #heldMb(): number {
    return this.#runningMb + this.#keptMbSinceReading;
  }

  #pages(): number {
    let pages = 0;
    for (const pool of this.#pools) pages += pool.size;
    return pages;
  }
}

/**
 * Renders asked for, by key, each counting half as much once `halfLifeMs` pass: a rate that follows
 * the demand a pool sees (its first visits', which its spares follow).
 */
export class Demand {
  readonly #halfLifeMs: number;
  readonly #counts = new Map<string, { count: number; at: number }>();

  constructor(halfLifeMs: number) {
    this.#halfLifeMs = halfLifeMs;
  }

  /** One more render asked for by `key`. */
  add(key: string, now = Date.now()): void {
    this.#counts.set(key, { count: this.#count(key, now) + 1, at: now });
    if (this.#counts.size > FORGET_OVER) this.#forget(now);
  }

  /** `key`'s renders a second lately: steady at rate r, the decayed count is r × halfLife ÷ ln 2. */
  perSecond(key: string, now = Date.now()): number {
    return (this.#count(key, now) * Math.LN2 * 1000) / this.#halfLifeMs;
  }

  #count(key: string, now: number): number {
    const known = this.#counts.get(key);
    return known ? known.count * 0.5 ** ((now - known.at) / this.#halfLifeMs) : 0;
  }

  // Workspaces not seen for several half-lives count for nothing: they are forgotten.
  #forget(now: number): void {
    for (const key of [...this.#counts.keys()]) if (this.#count(key, now) < 0.05) this.#counts.delete(key);
  }
}

// Workspaces a Demand remembers before it forgets those that count for nothing.
const FORGET_OVER = 4096;
