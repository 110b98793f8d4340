// Warm contexts and pages, each dedicated to one workspace: a render takes a page that is already
// open and gives it back wiped of every trace of the render before the next render gets it.
// Opening a page costs a renderer process (~200 ms here); wiping one costs a few CDP calls.
// Pages are kept by recent use within a memory budget read from Chromium's processes, and once
// several workspaces render, blank pages that nobody has used wait for a workspace's first render.

import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { cdp } from './cdp.ts';

/** One warm context with its one page, dedicated to `key` (null: never used, any workspace may claim it). */
export interface WarmPage {
  key: string | null;
  deviceScaleFactor: number;
  context: BrowserContext;
  page: Page;
  /** A CDP session on `page`, kept for the page's life so a capture need not open one. */
  session: CDPSession;
  state: 'idle' | 'busy' | 'wiping';
  /** Settles once a wipe in progress ends. */
  wiped: Promise<void>;
  renders: number;
  lastUsed: number;
  /** Origins of every request since the last wipe: where storage may have been written. */
  origins: Set<string>;
  /** Origins of documents (frames) since the last wipe: where session storage may have been written. */
  documentOrigins: Set<string>;
}

/** How the pool is sized. */
export interface PoolOptions {
  /** Warm pages kept at most (busy ones beyond it are closed when released). */
  maxPages: number;
  /** Renders on one context before it is closed and replaced. */
  maxRenders: number;
  /**
   * Memory Chromium may hold with its warm pages, in MB: once `measureMb` reads more, idle pages
   * are closed, least recently used first (docs/performance.md). Unset: only `maxPages` counts.
   */
  memoryBudgetMb?: number;
  /** Chromium's memory now (the browser and every process below it, PSS), in MB; null when unknown. */
  measureMb?: () => Promise<number | null>;
  /** Blank pages kept ready once several workspaces render (default 2). */
  spares?: number;
}

// Permissions held at "ask" for every origin of a warm context: a page's request (auto-denied in
// headless) cannot leave a decision behind for the next render. Names Chromium does not know are skipped.
const PERMISSIONS = [
  'notifications',
  'geolocation',
  'camera',
  'microphone',
  'midi',
  'clipboard-read',
  'clipboard-write',
  'background-sync',
  'persistent-storage',
  'storage-access',
  'idle-detection',
  'window-management',
  'local-fonts',
];

// A wipe is a few CDP calls; one that takes longer faces a page keeping its renderer busy, whose
// calls may never be answered: the page is closed instead of waited for.
const WIPE_LIMIT_MS = 5000;

// Served in place of each touched origin while wiping, so session storage can be cleared in it.
const BLANK = '<!doctype html><title>wipe</title>';

// Chromium's memory is read at most this often, and only while renders come and go.
const MEASURE_EVERY_MS = 2000;

// Each warm page keeps a listener on the network events a render watches (steps.ts) for its whole
// life, so a render's own listeners coming and going cost no message to Playwright's server (its
// client subscribes to an event on the first listener and unsubscribes on the last).
const ignore = () => {};

/** Warm pages of one browser, keyed by workspace and device scale factor. */
export class PagePool {
  readonly #browser: Browser;
  readonly #options: PoolOptions;
  readonly #pages = new Set<WarmPage>();
  #spare: Promise<void> | null = null;
  // Spare pages being opened by #topUp.
  #sparesOpening = 0;
  // The last workspace that asked, and whether more than one has: only then are spares kept.
  #lastKey: string | null = null;
  #severalWorkspaces = false;
  #measuring = false;
  #measuredAt = 0;
  /** Chromium's memory at the last reading, MB (null before the first or where it cannot be read). */
  #memoryMb: number | null = null;

  constructor(browser: Browser, options: PoolOptions) {
    this.#browser = browser;
    this.#options = options;
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

  /** A page for `key`: an idle one of that key, one being wiped, the unclaimed spare, or a new one. */
  async acquire(key: string, deviceScaleFactor: number): Promise<WarmPage> {
    const fits = (warm: WarmPage) => warm.deviceScaleFactor === deviceScaleFactor;
    if (this.#lastKey !== null && this.#lastKey !== key) this.#severalWorkspaces = true;
    this.#lastKey = key;
    for (;;) {
      const pages = [...this.#pages].filter(fits);
      const idle = pages.find((warm) => warm.key === key && warm.state === 'idle');
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
        this.#topUp();
        return claimed;
      }
      this.#evictIdle();
      const opened = this.#claim(await this.#open(key, deviceScaleFactor), key);
      this.#topUp();
      return opened;
    }
  }

  /** Gives a page back after a render that ended normally: wiped in the background, then idle. */
  release(warm: WarmPage): void {
    this.#measure();
    if (warm.renders >= this.#options.maxRenders || this.#pages.size > this.#options.maxPages) {
      this.discard(warm);
      return;
    }
    warm.state = 'wiping';
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error('wipe took too long')), WIPE_LIMIT_MS)),
    );
    warm.wiped = Promise.race([wipe(warm), limit])
      .finally(() => clearTimeout(timer))
      .then(
        () => {
          warm.state = 'idle';
          warm.lastUsed = Date.now();
        },
        () => this.discard(warm),
      );
  }

  /** Forgets a page and closes its context (after an error, a timeout, or when the pool shrinks). */
  discard(warm: WarmPage): Promise<void> {
    this.#pages.delete(warm);
    return warm.context.close().catch(() => {});
  }

  /** Pages currently open (idle, busy or being wiped). */
  get size(): number {
    return this.#pages.size;
  }

  /** Blank pages (never used by anyone) open and waiting for a workspace's first render. */
  get spares(): number {
    return [...this.#pages].filter((warm) => warm.key === null).length;
  }

  /** Chromium's memory at the last reading, MB (null when not read yet or not readable). */
  get memoryMb(): number | null {
    return this.#memoryMb;
  }

  #overBudget(): boolean {
    const budget = this.#options.memoryBudgetMb;
    return budget !== undefined && this.#memoryMb !== null && this.#memoryMb > budget;
  }

  // Keeps `spares` blank pages (never used by anyone) ready once several workspaces render, opened
  // one at a time in the background, so that a workspace without a warm page need not wait for a
  // new context and renderer. None while Chromium is over its memory budget.
  #topUp(): void {
    if (!this.#severalWorkspaces || this.#sparesOpening > 0 || this.#overBudget()) return;
    const ready = [...this.#pages].filter((warm) => warm.key === null).length;
    if (ready >= (this.#options.spares ?? 2) || this.#pages.size >= this.#options.maxPages) return;
    this.#sparesOpening += 1;
    void this.#open(null, 1).then(
      () => {
        this.#sparesOpening -= 1;
        this.#topUp();
      },
      () => void (this.#sparesOpening -= 1),
    );
  }

  // Reads Chromium's memory (at most every MEASURE_EVERY_MS, without blocking) and, over the budget,
  // closes as many idle pages, least recently used first, as the excess takes at the pages'
  // average share; the next reading closes more if that was not enough.
  #measure(): void {
    const { measureMb, memoryBudgetMb } = this.#options;
    if (
      !measureMb ||
      memoryBudgetMb === undefined ||
      this.#measuring ||
      Date.now() - this.#measuredAt < MEASURE_EVERY_MS
    )
      return;
    this.#measuring = true;
    measureMb()
      .then(
        (mb) => {
          this.#memoryMb = mb;
          if (mb === null || mb <= memoryBudgetMb) return;
          const idle = [...this.#pages].filter((warm) => warm.state === 'idle').sort((a, b) => a.lastUsed - b.lastUsed);
          const perPage = mb / Math.max(1, this.#pages.size);
          for (const warm of idle.slice(0, Math.max(1, Math.ceil((mb - memoryBudgetMb) / perPage))))
            void this.discard(warm);
        },
        () => {},
      )
      .finally(() => {
        this.#measuring = false;
        this.#measuredAt = Date.now();
      });
  }

  #claim(warm: WarmPage, key: string): WarmPage {
    warm.key = key;
    warm.state = 'busy';
    warm.renders += 1;
    return warm;
  }

  // Makes room for one more page by closing the least recently used idle one (at the page count's
  // bound, or over the memory budget).
  #evictIdle(): void {
    if (this.#pages.size < this.#options.maxPages && !this.#overBudget()) return;
    const idle = [...this.#pages].filter((warm) => warm.state === 'idle').sort((a, b) => a.lastUsed - b.lastUsed);
    if (idle[0]) void this.discard(idle[0]);
  }

  async #open(key: string | null, deviceScaleFactor: number): Promise<WarmPage> {
    const context = await this.#browser.newContext({
      viewport: { width: 1280, height: 720 },
      deviceScaleFactor,
      acceptDownloads: false,
      serviceWorkers: 'block',
      ignoreHTTPSErrors: false,
      javaScriptEnabled: true,
    });
    try {
      const page = await context.newPage();
      const session = await context.newCDPSession(page);
      await holdPermissionsAtPrompt(session);
      const warm: WarmPage = {
        key,
        deviceScaleFactor,
        context,
        page,
        session,
        state: 'idle',
        wiped: Promise.resolve(),
        renders: 0,
        lastUsed: Date.now(),
        origins: new Set(),
        documentOrigins: new Set(),
      };
      context.on('request', (request) => addOrigin(warm.origins, request.url()));
      context.on('framenavigated', (frame) => addOrigin(warm.documentOrigins, frame.url()));
      page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
      page.on('request', ignore).on('response', ignore).on('requestfinished', ignore).on('requestfailed', ignore);
      this.#pages.add(warm);
      return warm;
    } catch (error) {
      await context.close().catch(() => {});
      throw error;
    }
  }
}

async function holdPermissionsAtPrompt(session: CDPSession): Promise<void> {
  const { Browser, Target } = cdp(session);
  const { targetInfo } = await Target.getTargetInfo();
  const browserContextId = targetInfo.browserContextId;
  await Promise.all(
    PERMISSIONS.map((name) =>
      Browser.setPermission({ permission: { name }, setting: 'prompt', browserContextId }).catch(() => {}),
    ),
  );
}

/**
 * Clears the session storage of each of `origins` that a frame of the page still shows, with
 * the browser's own DOMStorage.clear (no script of the page runs or can intercept it); returns the
 * origins no frame shows any more, which it cannot reach. One call per origin, sent at once.
 */
async function clearShownSessionStorage(session: CDPSession, origins: string[]): Promise<string[]> {
  const { DOMStorage } = cdp(session);
  const cleared = await Promise.all(
    origins.map((origin) =>
      DOMStorage.clear({ storageId: { securityOrigin: origin, isLocalStorage: false } }).then(
        () => true,
        () => false,
      ),
    ),
  );
  return origins.filter((_, index) => !cleared[index]);
}

function addOrigin(origins: Set<string>, url: string): void {
  if (url.startsWith('http://') || url.startsWith('https://')) origins.add(new URL(url).origin);
}

/**
 * Removes every trace of the last render from a warm page and its context: extra pages, the
 * document, the navigation history, session storage (per tab, so cleared for each origin while a
 * frame still shows it, or on a blank stand-in of it), local storage,
 * IndexedDB, Cache Storage, service workers, cookies and the HTTP cache. Permissions never change
 * (see PERMISSIONS).
 */
export async function wipe(warm: WarmPage): Promise<void> {
  const { context, page, session } = warm;
  await Promise.all(
    context
      .pages()
      .filter((other) => other !== page)
      .map((other) => other.close()),
  );
  const documentOrigins = [...warm.documentOrigins];
  const gone = await clearShownSessionStorage(session, documentOrigins);
  if (gone.length > 0) {
    // Visiting each origin on a blank stand-in (no network) lets its session storage be cleared.
    await page.route('**/*', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: BLANK }));
    try {
      for (const origin of gone) {
        await page.goto(`${origin}/`);
        await cdp(session).DOMStorage.clear({ storageId: { securityOrigin: origin, isLocalStorage: false } });
      }
    } finally {
      await page.unrouteAll();
    }
  }
  await page.goto('about:blank');
  // The rest is independent of each other: sent at once, answered in one round trip's time.
  // Network.clearBrowserCookies clears the whole context's cookies (what context.clearCookies does).
  const origins = new Set([...warm.origins, ...documentOrigins]);
  const { Network, Page, Runtime, Storage } = cdp(session);
  await Promise.all([
    // The back/forward list would let the next render's scripts go back to this one's pages.
    Page.resetNavigationHistory(),
    // window.name outlives navigations; about:blank has no script of the page's to see this.
    Runtime.evaluate({ expression: 'window.name = ""' }),
    ...[...origins].map((origin) => Storage.clearDataForOrigin({ origin, storageTypes: 'all' })),
    Network.clearBrowserCache(),
    Network.clearBrowserCookies(),
  ]);
  warm.origins.clear();
  warm.documentOrigins.clear();
}
