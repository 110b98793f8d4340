// Warm contexts and pages, each dedicated to one workspace: a render takes a page that is already
// open and gives it back wiped of every trace of the render before the next render gets it.
// Opening a page costs a renderer process (~200 ms here); wiping one costs a few CDP calls.

import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

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
}

// Permissions held at "ask" for every origin of a warm context: a page's request (auto-denied in
// headless) cannot leave a decision behind for the next render. Names Chromium does not know are skipped.
const PERMISSIONS = [
  'notifications', 'geolocation', 'camera', 'microphone', 'midi', 'clipboard-read', 'clipboard-write',
  'background-sync', 'persistent-storage', 'storage-access', 'idle-detection', 'window-management', 'local-fonts',
];

// A wipe is a few CDP calls; one that takes longer faces a page keeping its renderer busy, whose
// calls may never be answered: the page is closed instead of waited for.
const WIPE_LIMIT_MS = 5000;

// Served in place of each touched origin while wiping, so session storage can be cleared in it.
const BLANK = '<!doctype html><title>wipe</title>';

/** Warm pages of one browser, keyed by workspace and device scale factor. */
export class PagePool {
  readonly #browser: Browser;
  readonly #options: PoolOptions;
  readonly #pages = new Set<WarmPage>();
  #spare: Promise<void> | null = null;

  constructor(browser: Browser, options: PoolOptions) {
    this.#browser = browser;
    this.#options = options;
  }

  /** Opens one unclaimed page at scale 1, so the first render (of a new workspace) does not pay for it. */
  async prewarm(): Promise<void> {
    if ([...this.#pages].some((warm) => warm.key === null) || this.#pages.size >= this.#options.maxPages) return;
    this.#spare ??= this.#open(null, 1).then(() => undefined, () => undefined).finally(() => (this.#spare = null));
    await this.#spare;
  }

  /** A page for `key`: an idle one of that key, one being wiped, the unclaimed spare, or a new one. */
  async acquire(key: string, deviceScaleFactor: number): Promise<WarmPage> {
    const fits = (warm: WarmPage) => warm.deviceScaleFactor === deviceScaleFactor;
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
        // A new spare only where several workspaces render: a worker serving one keeps no unclaimed
        // page (a renderer, ≈ 20 MB) at idle, and a second workspace's first render opens it again.
        if ([...this.#pages].some((warm) => warm.key !== null && warm.key !== key)) void this.prewarm();
        return this.#claim(spare, key);
      }
      this.#evictIdle();
      return this.#claim(await this.#open(key, deviceScaleFactor), key);
    }
  }

  /** Gives a page back after a render that ended normally: wiped in the background, then idle. */
  release(warm: WarmPage): void {
    if (warm.renders >= this.#options.maxRenders || this.#pages.size > this.#options.maxPages) {
      this.discard(warm);
      return;
    }
    warm.state = 'wiping';
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('wipe took too long')), WIPE_LIMIT_MS)));
    warm.wiped = Promise.race([wipe(warm), limit]).finally(() => clearTimeout(timer)).then(
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

  #claim(warm: WarmPage, key: string): WarmPage {
    warm.key = key;
    warm.state = 'busy';
    warm.renders += 1;
    return warm;
  }

  // Makes room for one more page by closing the least recently used idle one.
  #evictIdle(): void {
    if (this.#pages.size < this.#options.maxPages) return;
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
        key, deviceScaleFactor, context, page, session,
        state: 'idle', wiped: Promise.resolve(), renders: 0, lastUsed: Date.now(),
        origins: new Set(), documentOrigins: new Set(),
      };
      context.on('request', (request) => addOrigin(warm.origins, request.url()));
      context.on('framenavigated', (frame) => addOrigin(warm.documentOrigins, frame.url()));
      page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
      this.#pages.add(warm);
      return warm;
    } catch (error) {
      await context.close().catch(() => {});
      throw error;
    }
  }
}

async function holdPermissionsAtPrompt(session: CDPSession): Promise<void> {
  const { targetInfo } = await session.send('Target.getTargetInfo');
  const browserContextId = targetInfo.browserContextId;
  await Promise.all(PERMISSIONS.map((name) =>
    session.send('Browser.setPermission', { permission: { name }, setting: 'prompt', browserContextId }).catch(() => {})));
}

type FrameTree = { frame: { id: string; securityOrigin: string }; childFrames?: FrameTree[] };

/**
 * Clears session storage from inside every frame the page still shows, in an isolated world so
 * the page's own scripts cannot intercept the call; returns the origins it cleared. This spares
 * a stand-in navigation (about 90 ms of browser time) for every origin still on screen.
 */
async function clearLiveSessionStorage(session: CDPSession): Promise<Set<string>> {
  const cleared = new Set<string>();
  const { frameTree } = (await session.send('Page.getFrameTree')) as { frameTree: FrameTree };
  const frames: FrameTree[] = [frameTree];
  for (const tree of frames) {
    frames.push(...(tree.childFrames ?? []));
    const origin = tree.frame.securityOrigin;
    if (!origin.startsWith('http://') && !origin.startsWith('https://')) continue;
    try {
      const { executionContextId } = await session.send('Page.createIsolatedWorld', { frameId: tree.frame.id, worldName: 'shutterbus-wipe' });
      const result = await session.send('Runtime.evaluate', { expression: 'sessionStorage.clear(); sessionStorage.length', contextId: executionContextId, returnByValue: true });
      if (result.result.value === 0) cleared.add(origin);
    } catch {
      // A frame that went away or refuses: its origin gets the stand-in visit instead.
    }
  }
  return cleared;
}

function addOrigin(origins: Set<string>, url: string): void {
  if (url.startsWith('http://') || url.startsWith('https://')) origins.add(new URL(url).origin);
}

/**
 * Removes every trace of the last render from a warm page and its context: extra pages, the
 * document, the navigation history, session storage (per tab, so cleared from inside each origin), local storage,
 * IndexedDB, Cache Storage, service workers, cookies and the HTTP cache. Permissions never change
 * (see PERMISSIONS).
 */
export async function wipe(warm: WarmPage): Promise<void> {
  const { context, page, session } = warm;
  await Promise.all(context.pages().filter((other) => other !== page).map((other) => other.close()));
  const documentOrigins = [...warm.documentOrigins];
  const cleared = await clearLiveSessionStorage(session);
  const gone = documentOrigins.filter((origin) => !cleared.has(origin));
  if (gone.length > 0) {
    // Visiting each origin on a blank stand-in (no network) lets its session storage be cleared.
    await page.route('**/*', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: BLANK }));
    try {
      for (const origin of gone) {
        await page.goto(`${origin}/`);
        await page.evaluate('sessionStorage.clear()');
      }
    } finally {
      await page.unrouteAll();
    }
  }
  await page.goto('about:blank');
  // The back/forward list would let the next render's scripts go back to this one's pages.
  await session.send('Page.resetNavigationHistory');
  await page.evaluate("window.name = ''");
  const origins = new Set([...warm.origins, ...documentOrigins]);
  for (const origin of origins) await session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  await session.send('Network.clearBrowserCache');
  await session.send('Network.clearBrowserCookies');
  await context.clearCookies();
  warm.origins.clear();
  warm.documentOrigins.clear();
}
