// The memory budget warm pages are kept within (RENDER_MEMORY_BUDGET): Chromium's memory read from
// /proc at most every MEASURE_EVERY_MS while renders come and go, estimated in between, and idle
// pages made smaller, then closed, least recently used first, across every pool that shares it (one
// per browser of a worker: src/render/fleet.ts).

/** What the budget reads of a warm page (pool.ts's WarmPage). */
export interface BudgetedPage {
  lastUsed: number;
  /** Made smaller while idle since its last render. */
  compacted: boolean;
}

/** What the budget asks of a pool whose pages it bounds. */
export interface BudgetedPool<Page extends BudgetedPage = BudgetedPage> {
  /** Pages open now (idle, busy or being wiped). */
  readonly size: number;
  /** The pool's idle pages, in any order. */
  idlePages(): Page[];
  /** Makes an idle page smaller (a one-pixel viewport, its renderer's heap collected). */
  compact(warm: Page): void;
  /** Closes a page. */
  discard(warm: Page): Promise<void>;
}

// Chromium's memory is read at most this often, and only while renders come and go.
const MEASURE_EVERY_MS = 2000;

// What compacting an idle page frees until the next reading says (docs/performance.md: ≈ 9 MB of
// a warm page's ≈ 36).
const COMPACTED_MB = 8;

/**
 * What a warm page adds to Chromium's memory until the next reading says (docs/performance.md:
 * ≈ 36 MB idle, more while it renders).
 */
export const PAGE_MB = 40;

// The part of the memory budget idle pages may fill: the rest is room for the pages that are
// rendering, which grow as they do, between two readings.
const FILL = 0.85;

/** One budget, read from Chromium's processes, over the pages of every pool that joins it. */
export class MemoryBudget {
  readonly #limitMb: () => number;
  readonly #measureMb: () => Promise<number | null>;
  readonly #pools = new Set<BudgetedPool>();
  #measuring = false;
  #measuredAt = 0;
  #memoryMb: number | null = null;
  // Pages open at the last reading, and pages compacted since: both move the estimate (#estimateMb).
  #pagesAtReading = 0;
  #compactedSinceReading = 0;

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

  /** True when `moreMb` fits beside the estimate in the part of the budget idle pages fill (FILL). */
  fits(moreMb: number): boolean {
    return (this.#estimateMb() ?? 0) + moreMb <= this.#limitMb() * FILL;
  }

  /** A page was compacted: its memory counts less until the next reading. */
  compacted(): void {
    this.#compactedSinceReading += 1;
  }

  /**
   * Reads Chromium's memory (at most every MEASURE_EVERY_MS, without blocking) and compacts or
   * closes idle pages until the estimate is back within the budget's FILL (fit).
   */
  measure(): void {
    if (this.#measuring || Date.now() - this.#measuredAt < MEASURE_EVERY_MS) return;
    this.#measuring = true;
    const pages = this.#pages();
    const compacted = this.#compactedSinceReading;
    this.#measureMb()
      .then(
        (mb) => {
          this.#memoryMb = mb;
          this.#pagesAtReading = pages;
          // Compactions made while it was read are not in the reading.
          this.#compactedSinceReading -= compacted;
          this.fit(0);
        },
        () => {},
      )
      .finally(() => {
        this.#measuring = false;
        this.#measuredAt = Date.now();
      });
  }

  /**
   * Makes idle pages smaller, least recently used first whichever pool holds them, and closes
   * those already compacted, until the estimate plus `moreMb` is within the budget's FILL: a
   * compacted page costs its workspace a resize and a repaint, a closed one a new renderer.
   */
  fit(moreMb: number): void {
    const idle = [...this.#pools]
      .flatMap((pool) => pool.idlePages().map((warm) => ({ pool, warm })))
      .sort((a, b) => a.warm.lastUsed - b.warm.lastUsed);
    for (const { pool, warm } of idle) {
      if (this.fits(moreMb)) return;
      if (warm.compacted) void pool.discard(warm);
      else pool.compact(warm);
    }
  }

  // Chromium's memory now, estimated: the last reading, moved by PAGE_MB for each page opened or
  // closed since and by COMPACTED_MB for each page compacted since, so that a burst between two
  // readings counts at once.
  #estimateMb(): number | null {
    if (this.#memoryMb === null) return null;
    const opened = this.#pages() - this.#pagesAtReading;
    return this.#memoryMb + opened * PAGE_MB - this.#compactedSinceReading * COMPACTED_MB;
  }

  #pages(): number {
    let pages = 0;
    for (const pool of this.#pools) pages += pool.size;
    return pages;
  }
}
