// The browser process: one Chromium launched under its sandbox plan, its pool of warm pages, its
// memory watched, relaunched after a crash and killed when it is stuck. The page lender
// (browser.ts) hands its pages to renders; this module never sees a render.

import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { chromiumArgs, findProcessWithArg } from './chromium.ts';
import { fontconfigFile } from './fonts.ts';
import { batchPipeWrites, chromium } from './playwright.ts';
import { ServiceError } from '../../errors.ts';
import { PagePool } from './pool.ts';
import { askBrowserOnce, cdp } from './cdp.ts';
import { metrics } from '../../metrics.ts';
import { DEFAULT_BROWSER_USER, killBrowserProcess, planLaunch, sandboxFailure, type LaunchPlan } from './sandbox.ts';
import { RendererMemoryWatch } from './renderer-memory.ts';
import { RendererKinds, TreeMemory } from './processes.ts';
import type { MemoryBudget } from './memory-budget.ts';
import { recordMappedFiles } from '../../read-ahead.ts';

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

// Whether each launched browser renders on a GPU, asked once (hasGpuRendering).
const gpuRendering = new WeakMap<Browser, Promise<boolean>>();
// Chromium's environment when none is given: the service's own (its store and broker credentials) never.
const BROWSER_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** A renderer's memory bound when none is given, in MB. */
export const DEFAULT_RENDERER_MEMORY_MB = 1024;

// How long closing a context may take before the whole browser is presumed stuck.
const CONTEXT_CLOSE_GRACE_MS = 2000;

/** One Chromium process and its pool: launched on demand, relaunched after a crash, killed when stuck. */
export class BrowserSupervisor {
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
    await this.ready();
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
    return askBrowserOnce(gpuRendering, await this.ready(), async ({ SystemInfo }) => {
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

  /** The pool of the running browser (null before the first launch). */
  get pool(): PagePool | null {
    return this.#pool;
  }

  /** The watch on the running browser's renderers' memory (null where /proc cannot be read). */
  get memoryWatch(): RendererMemoryWatch | null {
    return this.#memoryWatch;
  }

  /**
   * Called after each render: the first one (its fonts and the renderer's libraries are mapped by
   * then) records, a second later, what Chromium has mapped for the next start to read ahead: ≈ 14 ms
   * of reading /proc that the render's store, record and answer, still to come, do not wait for.
   */
  rendered(): void {
    if (this.#recorded) return;
    this.#recorded = true;
    const { dataDir, executablePath } = this.#options;
    const pid = this.#pid;
    if (dataDir === undefined || pid === null) return;
    setTimeout(() => recordMappedFiles(new RendererKinds().below(pid), { executablePath, dataDir }), 1000).unref();
  }

  /**
   * Watches a timed-out render's context close (`closed`); one that will not close within the grace
   * period means the browser itself is stuck, so it is killed and relaunched before the next render.
   */
  watchClosing(browser: Browser, closed: Promise<void>, timedOut: boolean): void {
    if (!timedOut) return;
    const closing = closed.then(() => true);
    const recovery = withTimeout(closing, CONTEXT_CLOSE_GRACE_MS).then(async (closed) => {
      if (closed || this.#browser !== browser) return;
      this.log({ level: 'warn', msg: 'browser stuck closing a timed-out render; killing it', pid: this.#pid });
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

  /** The connected browser, launching one when there is none. */
  async ready(): Promise<Browser> {
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
      this.log({ level: 'error', msg: 'browser launch failed', err: String(error) });
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
              this.log({ level: 'warn', msg: 'renderer over its memory limit; killed', pid, mb, limitMb: memoryMb });
            },
            undefined,
            (pid) => killBrowserProcess(plan, pid),
          );
    browser.on('disconnected', () => this.#onDisconnected(browser));
    this.log({
      level: 'info',
      msg: 'browser launched',
      pid: this.#pid,
      version: browser.version(),
      sandbox: plan.chromiumSandbox,
      user: plan.user,
      ms: Date.now() - startedAt,
    });
    if (!plan.chromiumSandbox) {
      this.log({
        level: 'warn',
        msg: "CHROMIUM_NO_SANDBOX=true: the browser runs WITHOUT its sandbox; one renderer exploit has this process's privileges (docs/browser.md)",
      });
    }
    return browser;
  }

  // A crash or kill: forget the browser and launch the next one in the background, so the next
  // render does not wait for it (it still would, through ready(), if the launch is slow).
  #onDisconnected(browser: Browser): void {
    if (this.#browser !== browser) return;
    this.#forget(browser);
    if (this.#closed) return;
    this.log({ level: 'warn', msg: 'browser disconnected; relaunching' });
    metrics.browserRestarts.inc();
    this.ready().catch(() => {});
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

  log(entry: object): void {
    this.#options.log?.({ component: 'browser', ...entry });
  }
}

// Resolves with the promise's value, or `undefined` when it has not settled after `ms`.
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
