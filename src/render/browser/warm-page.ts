// One warm page: a context of its own with its one page and CDP session, opened ready for a
// render (permissions held at "ask", the fonts and notifications the full Chrome shows), wiped of
// every trace of a render before the next, and made smaller while idle. The pool (pool.ts) keeps them.

import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { askBrowserOnce, cdp } from './cdp.ts';
import { SCRIPT_FONT_FAMILIES } from './fonts.ts';
import { inPageSource } from './in-page.ts';
import { notificationsAtPrompt } from '../in-page/permissions.ts';
import type { Compaction } from './memory-budget.ts';
import { gotoDocument, watchContextRequests } from './playwright.ts';

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
  /** Origins of documents (frames) since the last wipe, requested or not: their storage is cleared too. */
  documentOrigins: Set<string>;
  /** Made smaller while idle (PagePool.compact) since its last render. */
  compaction: Compaction;
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

/** A new context and page for `key` (null: a blank spare), ready for a render. */
export async function openWarmPage(browser: Browser, key: string | null, deviceScaleFactor: number): Promise<WarmPage> {
  const context = await browser.newContext({
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
    await Promise.all([holdPermissionsAtPrompt(session), asChromeShows(browser, context, session)]);
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
      // Nothing rendered yet, nothing to collect (a blank spare is shrunk, then closed, if need be).
      compaction: 'collected',
    };
    watchContextRequests(context, (url) => addOrigin(warm.origins, url));
    context.on('framenavigated', (frame) => addOrigin(warm.documentOrigins, frame.url()));
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
    return warm;
  } catch (error) {
    await context.close().catch(() => {});
    throw error;
  }
}

// Whether each browser is the headless shell (its product: HeadlessChrome/…), asked once.
const headlessShells = new WeakMap<Browser, Promise<boolean>>();

function isHeadlessShell(browser: Browser): Promise<boolean> {
  return askBrowserOnce(headlessShells, browser, async ({ Browser }) =>
    (await Browser.getVersion()).product.startsWith('HeadlessChrome/'),
  );
}

/**
 * Makes a new page of `context` show what the full Chrome shows it, in the headless shell too
 * (docs/browser.md): the CJK scripts' families as Chrome's defaults give them (fonts.ts; once per
 * page, they hold for its life, across navigations to other sites too) and, under the shell, which
 * has no notification service and answers "denied" whatever the permission, Notification.permission
 * as Chrome reads it (notificationsAtPrompt).
 */
export async function asChromeShows(browser: Browser, context: BrowserContext, session: CDPSession): Promise<void> {
  await Promise.all([
    cdp(session).Page.setFontFamilies({ fontFamilies: {}, forScripts: SCRIPT_FONT_FAMILIES }),
    isHeadlessShell(browser).then(async (shell) => {
      if (shell) await context.addInitScript(inPageSource(notificationsAtPrompt));
    }),
  ]);
}

// Settles as `work` does, or rejects once WIPE_LIMIT_MS pass: the page is then closed, not waited for.
export function withinLimit(work: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took too long`)), WIPE_LIMIT_MS)),
  );
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

// The step of compaction `warm.compaction` names: a full garbage collection of the page's renderer
// (what the last render left in its heap), or a one-pixel viewport, so that the compositor lets go
// of the page's frame buffers.
export async function compactionStep(warm: WarmPage): Promise<void> {
  if (warm.compaction === 'collected') await cdp(warm.session).HeapProfiler.collectGarbage();
  else await warm.page.setViewportSize({ width: 1, height: 1 });
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

function addOrigin(origins: Set<string>, url: string): void {
  if (url.startsWith('http://') || url.startsWith('https://')) origins.add(new URL(url).origin);
}

/**
 * Removes every trace of the last render from a warm page and its context: extra pages, the
 * document, the navigation history, session and local storage, IndexedDB, Cache Storage, service
 * workers, cookies and the HTTP cache. Permissions never change (see PERMISSIONS).
 */
export async function wipe(warm: WarmPage): Promise<void> {
  const { context, page, session } = warm;
  await Promise.all(
    context
      .pages()
      .filter((other) => other !== page)
      .map((other) => other.close()),
  );
  // Storage is cleared once the page has left: what its unload handlers write is cleared with the rest.
  await gotoDocument(page, 'about:blank', 'load', (url) => cdp(session).Page.navigate({ url }));
  // The rest is independent of each other: sent at once, answered in one round trip's time.
  // Storage.clearDataForOrigin ('all') clears the origin's session storage as well as its local storage.
  // Network.clearBrowserCookies clears the whole context's cookies (what context.clearCookies does).
  const origins = new Set([...warm.origins, ...warm.documentOrigins]);
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
