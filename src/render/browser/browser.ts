// The page lender: hands each render a warm page of its workspace (or a context of its own) from the
// browser a BrowserSupervisor keeps running (supervisor.ts), ends the render at its deadline even
// when the page hangs its renderer, runs the render's undos and takes the page back, or discards it.

import type { Browser, CDPSession, Page } from 'playwright-core';
import { asOneApiCall } from './playwright.ts';
import { ServiceError } from '../../errors.ts';
import type { RenderOptions } from '../../domain/options.ts';
import { asChromeShows, type WarmPage } from './warm-page.ts';
import { pageMetrics, type MetricsOptions } from '../../domain/devices.ts';
import { Progress } from './progress.ts';
import { BrowserSupervisor, withTimeout, type BrowserHostOptions } from './supervisor.ts';
import { renderShare } from './memory-budget.ts';
import type { RenderLog } from '../../domain/render-log.ts';
import type { PageStates } from './pool.ts';

export type { BrowserHostOptions } from './supervisor.ts';

/**
 * The render options a page is prepared with. `workspaceId` picks the warm pages the render may
 * use: pages never pass between workspaces. Without it the render gets a context of its own.
 */
export type PageSetup = MetricsOptions &
  Pick<RenderOptions, 'timeout'> &
  Partial<Pick<RenderOptions, 'full_page'>> & {
    workspaceId?: string;
    /**
     * A proxy of its own for this render (an egress route chained to the customer's or a country's
     * proxy, src/net/egress-proxy.ts): the render gets a one-off context behind it, never a warm page.
     */
    proxyServer?: string;
    /** The render's log, which its Progress carries to the steps; a log of its own when none is given. */
    log?: RenderLog;
  };

/**
 * A render's steps on the page: gets the page, the render's Progress (its deadline, which aborts at
 * timeout or cancel, and its undo stack) and a CDP session on the page. What the steps set on the
 * page they `defer` the undo of to `progress`: the undos run once the task is done, and a page
 * whose undo failed is discarded, never reused (docs/architecture.md, "A render step").
 */
export type PageTask<T> = (page: Page, progress: Progress, session: CDPSession) => Promise<T>;

/** What renders need of a worker's browsers: one BrowserHost, or several behind a BrowserFleet. */
export interface RenderBrowser {
  withPage<T>(setup: PageSetup, signal: AbortSignal, task: PageTask<T>): Promise<T>;
  hasGpuRendering(): Promise<boolean>;
  start(): Promise<void>;
  close(): Promise<void>;
  isHealthy(): boolean;
  ping(timeoutMs?: number): Promise<boolean>;
}

/** One Chromium (its BrowserSupervisor); hands each render an isolated context and page. */
export class BrowserHost implements RenderBrowser {
  readonly #supervisor: BrowserSupervisor;

  constructor(options: BrowserHostOptions) {
    this.#supervisor = new BrowserSupervisor(options);
  }

  /** Launches the browser now, so the first render does not pay for it. */
  start(): Promise<void> {
    return this.#supervisor.start();
  }

  /** Closes the browser; renders in flight fail. */
  close(): Promise<void> {
    return this.#supervisor.close();
  }

  /** True while a browser is up and connected (readiness probe). */
  isHealthy(): boolean {
    return this.#supervisor.isHealthy();
  }

  /** True when the running browser composites and rasterises on a GPU (BrowserSupervisor.hasGpuRendering). */
  hasGpuRendering(): Promise<boolean> {
    return this.#supervisor.hasGpuRendering();
  }

  /** Whether the browser is up or being launched: start() or a render has asked for it, and close() has not. */
  get launched(): boolean {
    return this.#supervisor.launched;
  }

  /** Idle warm pages of the workspace at `deviceScaleFactor`: renders that would not wait for a page. */
  idleCount(workspaceId: string, deviceScaleFactor: number): number {
    return this.#supervisor.pool?.idleCount(workspaceId, deviceScaleFactor) ?? 0;
  }

  /** Pages of the workspace at `deviceScaleFactor`, idle, rendering or being wiped. */
  pageCount(workspaceId: string, deviceScaleFactor: number): number {
    return this.#supervisor.pool?.pageCount(workspaceId, deviceScaleFactor) ?? 0;
  }

  /** Pages open in this browser, every workspace's and the blank spares. */
  get pages(): number {
    return this.#supervisor.pool?.size ?? 0;
  }

  /** This browser's pages by what they do now. */
  get pageStates(): PageStates {
    return this.#supervisor.pool?.states ?? { rendering: 0, idle: 0, spare: 0 };
  }

  /** This browser's memory now (its processes' PSS, MB); null when it is not running or cannot be read. */
  readMemoryMb(): Promise<number | null> {
    return this.#supervisor.readMemoryMb();
  }

  /** The Chromium process id (null when none is running or on a system without /proc). */
  get pid(): number | null {
    return this.#supervisor.pid;
  }

  /** Asks the browser for its version over the wire: proves it answers, not only that it is connected. */
  ping(timeoutMs?: number): Promise<boolean> {
    return this.#supervisor.ping(timeoutMs);
  }

  /**
   * Runs `task` on a warm page of the workspace (wiped of the previous render's state), or on a
   * fresh context when no workspace is named. A page whose render failed is closed, not reused.
   * At `setup.timeout` seconds (or when `signal` aborts) the render is ended: the timeout rejects
   * with ServiceError('timeout_error'), a cancel with the signal's reason.
   */
  async withPage<T>(setup: PageSetup, signal: AbortSignal, task: PageTask<T>): Promise<T> {
    const progress = Progress.start(setup.timeout * 1000, signal, setup.log);
    const deadline = progress.signal;
    const { aborted, dispose } = abortion(deadline, signal);
    // The deadline's abort listener must go when the render ends: Node keeps a composite signal
    // with a listener alive (and with it `aborted` and every race over it, which holds the
    // result, the image) until the signal aborts, and a deadline whose timeout signal has been
    // collected never does.
    try {
      const result = await asOneApiCall(() => this.#renderOnPage(setup, progress, aborted, task));
      this.#supervisor.rendered();
      return result;
    } finally {
      dispose();
    }
  }

  async #renderOnPage<T>(setup: PageSetup, progress: Progress, aborted: Promise<never>, task: PageTask<T>): Promise<T> {
    const deadline = progress.signal;
    const browser = await Promise.race([this.#supervisor.ready(), aborted]);
    // Some CDP calls never settle when the browser dies under them: a crash ends the wait too.
    const crash = disconnection(browser);
    const stopped = Promise.race([aborted, crash.gone]);
    stopped.catch(() => {});
    const pool = this.#supervisor.pool!;
    const rendering = this.#supervisor.memoryWatch?.begin();
    let crashed: PageCrash | null = null;
    let warm: WarmPage | null = null;
    // Emulation: a device preset or landscape changes the size and scale the page is
    // picked and sized by (src/domain/devices.ts, pageMetrics); without them, the options' own.
    const { width, height, scale } = pageMetrics(setup);
    // The render's share of the memory budget, held until it ends (given back in `finally`).
    const warmFor = setup.proxyServer === undefined ? setup.workspaceId : undefined;
    const admission = pool.admit(renderShare(setup.full_page === true, width, scale), deadline, warmFor);
    const acquiring = admission.then(() =>
      warmFor === undefined ? oneOffPage(browser, scale, setup.proxyServer) : pool.acquire(warmFor, scale),
    );
    try {
      warm = await Promise.race([acquiring, stopped]);
      const { page } = warm;
      // A renderer killed for its memory crashes the page: that ends the render at once.
      crashed = pageCrash(page, () => this.#supervisor.memoryWatch?.killedRecently() === true);
      const ended = Promise.race([stopped, crashed.overMemory]);
      ended.catch(() => {});
      const size = page.viewportSize();
      if (size?.width !== width || size?.height !== height) {
        await Promise.race([page.setViewportSize({ width, height }), ended]);
      }
      page.setDefaultTimeout(setup.timeout * 1000);
      let result: T;
      try {
        result = await Promise.race([task(page, progress, warm.session), ended]);
      } catch (error) {
        // Undone as far as it goes; the page is discarded below, and the render's error reported.
        await Promise.race([progress.undo(), ended]).catch(() => {});
        throw error;
      }
      await Promise.race([progress.undo(), ended]);
      if (progress.undoFailures.length > 0) {
        // The render stands; its page, not as the pool lent it, never serves again.
        this.#supervisor.log({
          level: 'warn',
          msg: 'undo failed; page discarded',
          err: String(progress.undoFailures[0]),
        });
        void pool.discard(warm).catch(() => {});
        warm = null;
        return result;
      }
      if (warm.key !== null) pool.release(warm);
      else void warm.context.close().catch(() => {});
      warm = null;
      return result;
    } catch (error) {
      if (deadline.aborted) throw await aborted.catch((reason: unknown) => reason);
      const overMemory = crashed?.explain(error);
      if (overMemory) throw overMemory;
      if (!browser.isConnected() || (await diesWithIt(error, crash.gone))) {
        throw new ServiceError('internal_application_error', {}, { cause: error });
      }
      throw error;
    } finally {
      crash.dispose();
      crashed?.dispose();
      rendering?.();
      void admission.then((release) => release());
      if (warm) {
        this.#supervisor.watchClosing(browser, pool.discard(warm), deadline.aborted);
      } else if (deadline.aborted) {
        // Aborted while the page was still being opened: close it once it exists.
        acquiring
          .then(
            (late) => pool.discard(late),
            () => {},
          )
          .catch(() => {});
      }
    }
  }
}
// A context of its own for a render with no workspace or with a proxy of its own: used once, then closed.
async function oneOffPage(browser: Browser, deviceScaleFactor: number, proxyServer?: string): Promise<WarmPage> {
  const context = await browser.newContext({
    deviceScaleFactor,
    acceptDownloads: false,
    serviceWorkers: 'block',
    ...(proxyServer ? { proxy: { server: proxyServer } } : {}),
  });
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => {}));
  const session = await context.newCDPSession(page);
  await asChromeShows(browser, context, session);
  return {
    key: null,
    deviceScaleFactor,
    context,
    page,
    session,
    state: 'busy',
    wiped: Promise.resolve(),
    renders: 1,
    lastUsed: Date.now(),
    origins: new Set(),
    documentOrigins: new Set(),
    compaction: 'none',
  };
}

// `aborted` rejects once `deadline` aborts: with timeout_error unless the caller's own `signal`
// aborted. `dispose` stops listening (the render ended); `aborted` then never settles.
function abortion(deadline: AbortSignal, signal: AbortSignal): { aborted: Promise<never>; dispose(): void } {
  const reason = () =>
    signal.aborted ? signal.reason : new ServiceError('timeout_error', {}, { cause: deadline.reason });
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(reason());
    if (deadline.aborted) onAbort();
    else deadline.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  return { aborted, dispose: () => deadline.removeEventListener('abort', onAbort) };
}

/** A page's crash, watched for one render. */
interface PageCrash {
  /** Rejects with page_memory_exceeded once the page crashes because its renderer was killed for its memory. */
  overMemory: Promise<never>;
  /** page_memory_exceeded when `error` (a step's failure) comes of that crash, reported before or after the page's event. */
  explain(error: unknown): ServiceError | null;
  dispose(): void;
}

// Any other crash is left to the calls it fails, as before.
function pageCrash(page: Page, killedForMemory: () => boolean): PageCrash {
  const overMemoryError = () =>
    new ServiceError('page_memory_exceeded', {}, { cause: new Error('renderer killed over its memory limit') });
  let onCrash = () => {};
  let crashed = false;
  const overMemory = new Promise<never>((_, reject) => {
    onCrash = () => {
      crashed = true;
      if (killedForMemory()) reject(overMemoryError());
    };
    page.on('crash', onCrash);
  });
  overMemory.catch(() => {});
  return {
    overMemory,
    explain: (error) => ((crashed || /crash/i.test(String(error))) && killedForMemory() ? overMemoryError() : null),
    dispose: () => void page.off('crash', onCrash),
  };
}

// `gone` rejects once `browser` disconnects (a crash or a kill); `dispose` stops listening.
function disconnection(browser: Browser): { gone: Promise<never>; dispose(): void } {
  let fail = () => {};
  const gone = new Promise<never>((_, reject) => {
    fail = () => reject(new Error('browser disconnected'));
    if (!browser.isConnected()) fail();
    else browser.once('disconnected', fail);
  });
  gone.catch(() => {});
  return { gone, dispose: () => void browser.off('disconnected', fail) };
}

// How long a render's session closing under it may come before its browser's disconnect.
const DISCONNECT_AFTER_CLOSE_MS = 300;
// A session closing under a command: when the browser dies, the command on its pipe session may
// fail with its page's target before the connection closes.
const SESSION_CLOSED = /session closed|Target closed|has been closed/i;

// True when `error` is a session closing and the browser disconnects (`gone`) right after it.
async function diesWithIt(error: unknown, gone: Promise<never>): Promise<boolean> {
  if (!SESSION_CLOSED.test(String(error))) return false;
  return (
    (await withTimeout(
      gone.catch(() => true),
      DISCONNECT_AFTER_CLOSE_MS,
    )) === true
  );
}
