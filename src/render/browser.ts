// Browser lifecycle: one Chromium (a worker runs one or more, src/render/fleet.ts), relaunched
// after a crash, and a watchdog that ends each render at its deadline even when the page hangs its
// renderer.

import { randomUUID } from 'node:crypto';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { chromiumArgs, findProcessWithArg } from './chromium.ts';
import { fontconfigFile } from './fonts.ts';
import { asOneApiCall, batchPipeWrites, chromium } from './playwright.ts';
import { ServiceError } from '../errors.ts';
import type { RenderOptions } from '../domain/options.ts';
import { asChromeShows, PagePool, type WarmPage } from './pool.ts';
import { pageMetrics, type MetricsOptions } from './emulation.ts';
import { askBrowserOnce, cdp } from './cdp.ts';
import { Progress } from './progress.ts';
import { metrics } from '../metrics.ts';
import { DEFAULT_BROWSER_USER, killBrowserProcess, planLaunch, sandboxFailure, type LaunchPlan } from './sandbox.ts';
import { RendererMemoryWatch } from './renderer-memory.ts';
import { RendererKinds, TreeMemory } from './processes.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { recordMappedFiles } from '../read-ahead.ts';
import type { RenderLog } from '../domain/render-log.ts';

/**
 * How a BrowserHost is set up. `proxyServer`: Chromium's `--proxy-server` (a proxy's URL, or rules by
 * scheme such as the egress proxy's `browserProxy`), which every page request goes through.
 */
export interface BrowserHostOptions {
  executablePath: string;
  proxyServer?: string;
  log?: (entry: object) => void;
  /**
   * Warm pages kept open at most; each holds one renderer process. Default: 256 with a memory
   * budget (the budget is then what bounds them), 6 without one.
   */
  poolSize?: number;
  /**
   * Memory this browser (its processes' PSS, read from /proc) may hold with warm pages, in MB
   * (RENDER_MEMORY_BUDGET): above it, idle warm pages are closed, least recently used first.
   */
  memoryBudgetMb?: number;
  /** Renders one context serves before it is replaced (default 100). */
  rendersPerContext?: number;
  /** The fontconfig file Chromium renders with; by default fonts.ts's (the machine's plus language preferences). */
  fontconfigFile?: string;
  /** Chromium without its sandbox (CHROMIUM_NO_SANDBOX); by default the launch fails when the sandbox cannot be had. */
  noSandbox?: boolean;
  /** The unprivileged user Chromium runs as when this process is root (CHROMIUM_USER; default shutterbus-chromium). */
  browserUser?: string;
  /** Chromium's whole environment (default: PATH alone): the service's own credentials stay out of it. */
  env?: Readonly<Record<string, string>>;
  /**
   * Most memory one renderer may hold, in MB (RENDERER_MEMORY_LIMIT_MB; default 1024): its V8 heap
   * limit, and the resident size above which the watchdog kills it (the render: page_memory_exceeded).
   */
  rendererMemoryMb?: number;
  /**
   * A budget shared with the worker's other browsers (BrowserFleet), in place of `memoryBudgetMb`:
   * it reads each browser's memory through readMemoryMb.
   */
  budget?: MemoryBudget;
  /**
   * Blank pages the pool keeps ready once several workspaces render (default 2); a fleet's
   * browsers share that number.
   */
  spares?: number;
  /**
   * DATA_DIR: after this host's first render, what its Chromium's processes have mapped is recorded
   * there for the next start to read ahead (src/read-ahead.ts, recordMappedFiles). Unset: nothing is.
   */
  dataDir?: string;
}

/**
 * The render options a page is prepared with. `workspaceId` picks the warm pages the render may
 * use: pages never pass between workspaces. Without it the render gets a context of its own.
 */
export type PageSetup = MetricsOptions &
  Pick<RenderOptions, 'timeout'> & {
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

// Whether each launched browser renders on a GPU, asked once (hasGpuRendering).
const gpuRendering = new WeakMap<Browser, Promise<boolean>>();
// Chromium's environment when none is given: the service's own (its store and broker credentials) never.
const BROWSER_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** A renderer's memory bound when none is given, in MB. */
export const DEFAULT_RENDERER_MEMORY_MB = 1024;

// How long closing a context may take before the whole browser is presumed stuck.
const CONTEXT_CLOSE_GRACE_MS = 2000;

/** One Chromium; hands each render an isolated context and page. */
export class BrowserHost implements RenderBrowser {
  readonly #options: BrowserHostOptions;
  // Chromium ignores unknown switches; this one lets us find our own browser process to kill it.
  readonly #marker = `--shutterbus-browser=${randomUUID()}`;
  #browser: Browser | null = null;
  #pool: PagePool | null = null;
  #pid: number | null = null;
  #plan: LaunchPlan | null = null;
  #memoryWatch: RendererMemoryWatch | null = null;
  // Chromium's memory, read for the pool's budget.
  #treeMemory: TreeMemory | null = null;
  #launching: Promise<Browser> | null = null;
  #recovering: Promise<void> | null = null;
  #closed = false;
  #recorded = false;

  constructor(options: BrowserHostOptions) {
    this.#options = options;
  }

  /** Launches the browser now, so the first render does not pay for it. */
  async start(): Promise<void> {
    this.#closed = false;
    await this.#ready();
    await this.#pool?.prewarm();
  }

  /** Closes the browser; renders in flight fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const browser = this.#browser ?? (await this.#launching?.catch(() => null));
    this.#browser = null;
    this.#stopWatching();
    if (!browser) return;
    const closed = await withTimeout(
      browser.close().then(
        () => true,
        () => false,
      ),
      CONTEXT_CLOSE_GRACE_MS,
    );
    if (!closed) this.#kill();
  }

  /** True while a browser is up and connected (readiness probe). */
  isHealthy(): boolean {
    return this.#browser?.isConnected() === true && this.#recovering === null;
  }

  /**
   * True when the running browser composites and rasterises on a GPU (request_gpu_rendering); false
   * when it renders in software, as a worker without a GPU does. Asked once per browser launch.
   */
  async hasGpuRendering(): Promise<boolean> {
    return askBrowserOnce(gpuRendering, await this.#ready(), async ({ SystemInfo }) => {
      const { gpu } = await SystemInfo.getInfo();
      const status: Record<string, string | undefined> = gpu.featureStatus ?? {};
      return [status.gpu_compositing, status.rasterization].every((value) => value?.startsWith('enabled'));
    });
  }

  /** Whether the browser is up or being launched: start() or a render has asked for it, and close() has not. */
  get launched(): boolean {
    return !this.#closed && (this.#browser !== null || this.#launching !== null);
  }

  /** Idle warm pages of the workspace at `deviceScaleFactor`: renders that would not wait for a page. */
  idleCount(workspaceId: string, deviceScaleFactor: number): number {
    return this.#pool?.idleCount(workspaceId, deviceScaleFactor) ?? 0;
  }

  /** Pages of the workspace at `deviceScaleFactor`, idle, rendering or being wiped. */
  pageCount(workspaceId: string, deviceScaleFactor: number): number {
    return this.#pool?.pageCount(workspaceId, deviceScaleFactor) ?? 0;
  }

  /** Pages open in this browser, every workspace's and the blank spares. */
  get pages(): number {
    return this.#pool?.size ?? 0;
  }

  /** This browser's memory now (its processes' PSS, MB); null when it is not running or cannot be read. */
  readMemoryMb(): Promise<number | null> {
    return this.#treeMemory?.readMb() ?? Promise.resolve(null);
  }

  /** The Chromium process id (null when none is running or on a system without /proc). */
  get pid(): number | null {
    return this.#pid;
  }

  /** Asks the browser for its version over the wire: proves it answers, not only that it is connected. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    const browser = this.#browser;
    if (!browser?.isConnected()) return false;
    const session = browser.newBrowserCDPSession();
    const answered = await withTimeout(
      session
        .then((s) => cdp(s).Browser.getVersion())
        .then(
          () => true,
          () => false,
        ),
      timeoutMs,
    );
    session.then((s) => s.detach()).catch(() => {});
    return answered === true;
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
      if (!this.#recorded) this.#recordMappedFiles();
      return result;
    } finally {
      dispose();
    }
  }

  // Once, after the first render (its fonts and the renderer's libraries are mapped by then), and a
  // second later: ≈ 14 ms of reading /proc that the render's store, record and answer, still to
  // come when the render returns, do not wait for.
  #recordMappedFiles(): void {
    this.#recorded = true;
    const { dataDir, executablePath } = this.#options;
    const pid = this.#pid;
    if (dataDir === undefined || pid === null) return;
    setTimeout(() => recordMappedFiles(new RendererKinds().below(pid), { executablePath, dataDir }), 1000).unref();
  }

  async #renderOnPage<T>(setup: PageSetup, progress: Progress, aborted: Promise<never>, task: PageTask<T>): Promise<T> {
    const deadline = progress.signal;
    const browser = await Promise.race([this.#ready(), aborted]);
    // Some CDP calls never settle when the browser dies under them: a crash ends the wait too.
    const crash = disconnection(browser);
    const stopped = Promise.race([aborted, crash.gone]);
    stopped.catch(() => {});
    const pool = this.#pool!;
    const rendering = this.#memoryWatch?.begin();
    let crashed: PageCrash | null = null;
    let warm: WarmPage | null = null;
    // Emulation: a device preset or landscape changes the size and scale the page is
    // picked and sized by (src/render/emulation.ts, pageMetrics); without them, the options' own.
    const { width, height, scale } = pageMetrics(setup);
    const acquiring =
      setup.workspaceId === undefined || setup.proxyServer !== undefined
        ? oneOffPage(browser, scale, setup.proxyServer)
        : pool.acquire(setup.workspaceId, scale);
    try {
      warm = await Promise.race([acquiring, stopped]);
      const { page } = warm;
      // A renderer killed for its memory crashes the page: that ends the render at once.
      crashed = pageCrash(page, () => this.#memoryWatch?.killedRecently() === true);
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
        this.#log({ level: 'warn', msg: 'undo failed; page discarded', err: String(progress.undoFailures[0]) });
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
      if (warm) {
        this.#release(browser, pool.discard(warm), deadline.aborted);
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

  // Watches a failed render's context close; one that will not close within the grace period means
  // the browser itself is stuck, so it is killed and relaunched before the next render starts.
  #release(browser: Browser, closed: Promise<void>, timedOut: boolean): void {
    if (!timedOut) return;
    const closing = closed.then(() => true);
    const recovery = withTimeout(closing, CONTEXT_CLOSE_GRACE_MS).then(async (closed) => {
      if (closed || this.#browser !== browser) return;
      this.#log({ level: 'warn', msg: 'browser stuck closing a timed-out render; killing it', pid: this.#pid });
      this.#kill();
      if (browser.isConnected()) {
        await withTimeout(new Promise((resolve) => browser.once('disconnected', resolve)), CONTEXT_CLOSE_GRACE_MS);
      }
      this.#forget(browser);
    });
    const tracked: Promise<void> = recovery
      .catch(() => {})
      .finally(() => {
        if (this.#recovering === tracked) this.#recovering = null;
      });
    this.#recovering = tracked;
  }

  // The connected browser, launching one when there is none.
  async #ready(): Promise<Browser> {
    if (this.#closed) throw new ServiceError('temporary_unavailable', {}, { cause: new Error('browser host closed') });
    while (this.#recovering) await this.#recovering;
    if (this.#browser?.isConnected()) return this.#browser;
    this.#launching ??= this.#launch().finally(() => {
      this.#launching = null;
    });
    return this.#launching;
  }

  async #launch(): Promise<Browser> {
    const startedAt = Date.now();
    const {
      executablePath,
      proxyServer,
      noSandbox = false,
      browserUser = DEFAULT_BROWSER_USER,
      env = BROWSER_ENV,
    } = this.#options;
    const memoryMb = this.#options.rendererMemoryMb ?? DEFAULT_RENDERER_MEMORY_MB;
    // A sandbox that cannot be had is the operator's to fix: a SandboxError, not a retry.
    this.#plan ??= planLaunch(executablePath, { noSandbox, user: browserUser });
    const plan = this.#plan;
    let browser: Browser;
    try {
      // The browser's own environment, plus the fontconfig file of fonts.ts.
      const fonts = this.#options.fontconfigFile ?? fontconfigFile();
      browser = await chromium.launch({
        executablePath: plan.executablePath,
        chromiumSandbox: plan.chromiumSandbox,
        env: { ...env, ...(fonts ? { FONTCONFIG_FILE: fonts } : {}) },
        args: [...chromiumArgs(proxyServer, memoryMb), this.#marker],
        // The service closes its browsers itself, after its renders have drained: Playwright's own
        // handlers would close them at the signal, under the renders in flight.
        handleSIGTERM: false,
        handleSIGINT: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      this.#log({ level: 'error', msg: 'browser launch failed', err: String(error) });
      const refused = plan.chromiumSandbox ? sandboxFailure(error) : null;
      if (refused) throw refused;
      throw new ServiceError('temporary_unavailable', {}, { cause: error });
    }
    batchPipeWrites(browser);
    this.#browser = browser;
    this.#pid = findProcessWithArg(this.#marker);
    const pid = this.#pid;
    const { memoryBudgetMb, budget, spares } = this.#options;
    this.#stopWatching();
    const budgeted = memoryBudgetMb !== undefined || budget !== undefined;
    const treeMemory = budgeted && pid !== null ? new TreeMemory(pid) : null;
    this.#treeMemory = treeMemory;
    this.#pool = new PagePool(browser, {
      maxPages: this.#options.poolSize ?? (budgeted ? 256 : 6),
      maxRenders: this.#options.rendersPerContext ?? 100,
      ...(spares !== undefined ? { spares } : {}),
      ...(budget ? { budget } : treeMemory ? { memoryBudgetMb, measureMb: () => treeMemory.readMb() } : {}),
    });
    this.#memoryWatch =
      this.#pid === null
        ? null
        : new RendererMemoryWatch(
            this.#pid,
            memoryMb,
            (pid, mb) => {
              this.#log({ level: 'warn', msg: 'renderer over its memory limit; killed', pid, mb, limitMb: memoryMb });
            },
            undefined,
            (pid) => killBrowserProcess(plan, pid),
          );
    browser.on('disconnected', () => this.#onDisconnected(browser));
    this.#log({
      level: 'info',
      msg: 'browser launched',
      pid: this.#pid,
      version: browser.version(),
      sandbox: plan.chromiumSandbox,
      user: plan.user,
      ms: Date.now() - startedAt,
    });
    if (!plan.chromiumSandbox) {
      this.#log({
        level: 'warn',
        msg: "CHROMIUM_NO_SANDBOX=true: the browser runs WITHOUT its sandbox; one renderer exploit has this process's privileges (docs/browser.md)",
      });
    }
    return browser;
  }

  // A crash or kill: forget the browser and launch the next one in the background, so the next
  // render does not wait for it (it still would, through #ready, if the launch is slow).
  #onDisconnected(browser: Browser): void {
    if (this.#browser !== browser) return;
    this.#forget(browser);
    if (this.#closed) return;
    this.#log({ level: 'warn', msg: 'browser disconnected; relaunching' });
    metrics.browserRestarts.inc();
    this.#ready().catch(() => {});
  }

  #forget(browser: Browser): void {
    if (this.#browser !== browser) return;
    this.#browser = null;
    this.#pid = null;
    this.#stopWatching();
  }

  // Closes the /proc files the memory watch and the budget's readings keep open.
  #stopWatching(): void {
    this.#pool?.leaveBudget();
    this.#memoryWatch?.stop();
    this.#memoryWatch = null;
    this.#treeMemory?.close();
    this.#treeMemory = null;
  }

  #kill(): void {
    const pid = this.#pid;
    if (pid === null) return;
    // Playwright starts Chromium as a process-group leader; the group holds its renderers.
    // The group may already be gone; then the single process.
    for (const target of [-pid, pid]) if (killBrowserProcess(this.#plan, target)) return;
  }

  #log(entry: object): void {
    this.#options.log?.({ component: 'browser', ...entry });
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

// Resolves with the promise's value, or `undefined` when it has not settled after `ms`.
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
