// Small named page steps a render is composed of: navigate, watch, settle, scroll, read, capture.

import type { CDPSession, Page, Request, Response } from 'playwright-core';
import { blockedHeader } from '../net/egress-proxy.ts';
import { errors } from './playwright.ts';
import { ServiceError, type ErrorCode } from '../errors.ts';
import { marked } from 'marked';
import { FULL_PAGE_MAX_HEIGHT, type RenderOptions, type SubRequestOutcome, type WaitUntil } from '../domain/options.ts';

/** Where navigation ended: the main document's final URL and status (null when no response). */
export interface Navigation {
  finalUrl: string;
  mainStatus: number | null;
}

/** A running record of the page's sub-requests; `outcomes()` is a snapshot in finishing order. */
export interface SubRequestWatch {
  outcomes(): SubRequestOutcome[];
  stop(): void;
}

/** The captured image and whether `selector` (when asked for) matched an element. */
export interface Capture {
  image: Buffer;
  selectorFound: boolean;
}

// Chromium net error → public code, first match wins. The proxy refusing an https CONNECT shows
// as a tunnel failure; any other net error is the target's doing, so not worth a retry.
const NET_ERROR_CODES: Array<[RegExp, ErrorCode]> = [
  [/net::ERR_NAME_NOT_RESOLVED/, 'name_not_resolved'],
  [/net::ERR_(TUNNEL_CONNECTION_FAILED|UNSAFE_PORT|UNSAFE_REDIRECT|DISALLOWED_URL_SCHEME)\b/, 'url_not_allowed'],
  [/net::ERR_\w+/, 'network_error'],
  [/Download is starting/, 'network_error'],
];

/**
 * Opens the page (`options.url`, or the `html` / `markdown` document), waits until every
 * condition of `wait_until` holds, and reports the main document's final status and URL (status
 * null for a document of our own). `navigation_timeout` bounds the whole of it: timeout_error.
 */
export async function navigate(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Navigation> {
  renderClocks.set(deadline, renderClocks.get(deadline) ?? Date.now());
  const limit = AbortSignal.any([deadline, AbortSignal.timeout(options.navigation_timeout * 1000)]);
  const startedAt = Date.now();
  const left = () => Math.max(1, options.navigation_timeout * 1000 - (Date.now() - startedAt));
  // Only a networkidle condition needs the page's requests counted, from before the first one.
  const requests = needsRequestCount(options.wait_until) ? countRequests(page) : undefined;
  let response: Response | null = null;
  try {
    const waitUntil = lifecycleOf(options.wait_until);
    if (options.url !== undefined) {
      response = await untilAborted(limit, page.goto(options.url, { waitUntil, timeout: left() }));
    } else {
      // A document of our own on the blank page: its sub-resources go through the browser's proxy like any page's.
      await untilAborted(limit, page.setContent(documentOf(options), { waitUntil, timeout: left() }));
    }
    if (requests) await untilAborted(limit, requests.idle(idleLimit(options.wait_until)));
  } catch (error) {
    // The navigation's own limit passing is a timeout; the render's deadline speaks for itself.
    if (limit.aborted && !deadline.aborted) throw new ServiceError('timeout_error', {}, { cause: error });
    throw navigationError(error);
  } finally {
    requests?.stop();
  }
  // The egress proxy answers a refused or unreachable plain-http target itself, marking the response.
  const blocked = response ? blockedBy(response) : undefined;
  if (blocked) throw new ServiceError(blocked, {}, { cause: new Error(`egress proxy: ${blocked} for ${response!.url()}`) });
  return { finalUrl: page.url(), mainStatus: response?.status() ?? null };
}

/**
 * Waits until every condition of `conditions` holds for the page's current document: used after
 * `scripts`. `requests` counts requests (started before the script ran) when a networkidle
 * condition is listed.
 */
export async function waitForConditions(page: Page, conditions: WaitUntil[], requests: RequestCount | undefined, deadline: AbortSignal): Promise<void> {
  for (const state of ['domcontentloaded', 'load'] as const) {
    if (conditions.includes(state)) await untilAborted(deadline, page.waitForLoadState(state, { timeout: 0 }));
  }
  if (requests) await untilAborted(deadline, requests.idle(idleLimit(conditions)));
}

/** The time a render started, as first seen by `navigate` (the deadline is the render's own). */
const renderClocks = new WeakMap<AbortSignal, number>();

/**
 * Milliseconds a wait of the render may still take and leave the render time to report a 422
 * before its `timeout` (counted from the start of navigation: the page was ready by then).
 */
export function timeLeft(deadline: AbortSignal, options: RenderOptions): number {
  const total = options.timeout * 1000;
  const spent = Date.now() - (renderClocks.get(deadline) ?? Date.now());
  return Math.max(1, total - spent - Math.min(1000, total / 4));
}

/** How long the network must stay quiet for a networkidle condition. */
const NETWORK_IDLE_MS = 500;

/** True when a condition needs the page's requests counted. */
export function needsRequestCount(conditions: WaitUntil[]): boolean {
  return conditions.some((condition) => condition.startsWith('networkidle'));
}

// The most requests in flight the listed networkidle conditions allow: 0 wins over 2.
function idleLimit(conditions: WaitUntil[]): number {
  return conditions.some((condition) => condition === 'networkidle' || condition === 'networkidle0') ? 0 : 2;
}

// The Playwright lifecycle event navigation itself waits for; networkidle is counted separately.
function lifecycleOf(conditions: WaitUntil[]): 'load' | 'domcontentloaded' | 'commit' {
  if (conditions.includes('load')) return 'load';
  return conditions.includes('domcontentloaded') ? 'domcontentloaded' : 'commit';
}

/** The page's requests in flight, counted while it runs. */
export interface RequestCount {
  /** Resolves once at most `limit` requests have been in flight for NETWORK_IDLE_MS. */
  idle(limit: number): Promise<void>;
  stop(): void;
}

/** Starts counting the page's requests in flight (every frame), for networkidle conditions. */
export function countRequests(page: Page): RequestCount {
  const inFlight = new Set<Request>();
  let changed = () => {};
  const onRequest = (request: Request) => {
    inFlight.add(request);
    changed();
  };
  const onDone = (request: Request) => {
    if (inFlight.delete(request)) changed();
  };
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  return {
    idle(limit) {
      return new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        changed = () => {
          // The quiet period starts over whenever the count goes above the limit.
          if (inFlight.size > limit) {
            clearTimeout(timer);
            timer = undefined;
          } else {
            timer ??= setTimeout(() => {
              changed = () => {};
              resolve();
            }, NETWORK_IDLE_MS);
          }
        };
        changed();
      });
    },
    stop() {
      changed = () => {};
      page.off('request', onRequest);
      page.off('requestfinished', onDone);
      page.off('requestfailed', onDone);
    },
  };
}

/** The document an `html` or `markdown` render shows: markdown becomes a plain HTML document. */
export function documentOf(options: Pick<RenderOptions, 'html' | 'markdown'>): string {
  if (options.html !== undefined) return options.html;
  const body = marked.parse(options.markdown ?? '', { async: false });
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"></head><body>${body}</body></html>`;
}

const PROXY_BLOCK_CODES: ErrorCode[] = ['url_not_allowed', 'name_not_resolved', 'network_error'];

/** The code with which the egress proxy answered instead of the target, if it did. */
function blockedBy(response: Response): ErrorCode | undefined {
  const code = response.headers()[blockedHeader.toLowerCase()] as ErrorCode | undefined;
  return code && PROXY_BLOCK_CODES.includes(code) ? code : undefined;
}

/** Maps a navigation failure to its public code; the raw text stays in `cause`. */
export function navigationError(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  if (error instanceof errors.TimeoutError) return new ServiceError('timeout_error', {}, { cause: error });
  const text = error instanceof Error ? error.message : String(error);
  const match = NET_ERROR_CODES.find(([pattern]) => pattern.test(text));
  return match ? new ServiceError(match[1], {}, { cause: error }) : error;
}

/** Records every request of the page other than the main document, as it finishes or fails. */
export function watchSubRequests(page: Page): SubRequestWatch {
  const outcomes: SubRequestOutcome[] = [];
  const statuses = new WeakMap<Request, number>();
  const blocked = new WeakMap<Request, string>();
  const isMainDocument = (request: Request) => request.isNavigationRequest() && request.frame() === page.mainFrame();
  // 'response' fires before 'requestfinished' and carries the status synchronously.
  // A response the proxy made up (target refused or unreachable) is a network-level failure.
  const onResponse = (response: Response) => {
    const code = blockedBy(response);
    if (code) blocked.set(response.request(), code);
    else statuses.set(response.request(), response.status());
  };
  const onFinished = (request: Request) => {
    if (isMainDocument(request)) return;
    const failure = blocked.get(request);
    outcomes.push({ url: request.url(), ...(failure ? { failure } : { status: statuses.get(request) }) });
  };
  const onFailed = (request: Request) => {
    if (isMainDocument(request)) return;
    const status = statuses.get(request);
    outcomes.push({ url: request.url(), ...(status === undefined ? {} : { status }), failure: request.failure()?.errorText ?? 'failed' });
  };
  page.on('response', onResponse);
  page.on('requestfinished', onFinished);
  page.on('requestfailed', onFailed);
  return {
    outcomes: () => outcomes.map((outcome) => ({ ...outcome })),
    stop() {
      page.off('response', onResponse);
      page.off('requestfinished', onFinished);
      page.off('requestfailed', onFailed);
    },
  };
}

/** Waits `delaySeconds` after navigation, for late scripts and animations. */
export async function settle(delaySeconds: number, deadline: AbortSignal): Promise<void> {
  if (delaySeconds <= 0) return;
  await untilAborted(deadline, new Promise((resolve) => setTimeout(resolve, delaySeconds * 1000)));
}

/**
 * Scrolls the first element matching `selector` to the top of the viewport, then `adjustTop` px
 * further (scroll_into_view_adjust_top; negative scrolls back up); false when none matches.
 */
export async function scrollIntoView(page: Page, selector: string, deadline: AbortSignal, adjustTop = 0): Promise<boolean> {
  const element = await findElement(page, selector, 'scroll_into_view', deadline);
  if (!element) return false;
  await untilAborted(deadline, element.evaluate((node, adjust) => {
    (node as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start', inline: 'nearest' });
    if (adjust !== 0) (globalThis as unknown as { scrollBy(o: object): void }).scrollBy({ top: adjust, behavior: 'instant' });
  }, adjustTop));
  return true;
}

/** The page's visible text, as `document.body.innerText` gives it. */
export async function readVisibleText(page: Page, deadline: AbortSignal): Promise<string> {
  return untilAborted(deadline, page.evaluate<string>('document.body ? document.body.innerText : ""'));
}

/**
 * Captures the image through CDP `Page.captureScreenshot`, which does png, jpeg and webp alike:
 * the `clip_*` rectangle, the element of `selector` (falling back to the viewport when none
 * matches), the whole page up to `full_page_max_height` CSS px (scrolled through first with
 * `full_page_scroll`), or the viewport, over `session` (a CDP session on the page). With
 * `omit_background` the default background is transparent for the capture alone.
 */
export async function capture(page: Page, options: RenderOptions, deadline: AbortSignal, session: CDPSession): Promise<Capture> {
  let clip: Clip | undefined;
  let selectorFound = true;
  // What the capture changes on the page (background, viewport, scroll), undone last first once
  // it is taken; a render that asks for none of it makes no call here.
  const undo: Array<() => Promise<unknown>> = [];
  let taken = false;
  try {
    const fixedViewport = options.capture_beyond_viewport === false;
    if (options.clip_x !== undefined && options.clip_y !== undefined && options.clip_width !== undefined && options.clip_height !== undefined) {
      clip = { x: options.clip_x, y: options.clip_y, width: options.clip_width, height: options.clip_height };
    } else if (options.selector) {
      clip = await elementClip(page, options.selector, deadline, fixedViewport ? undo : undefined);
      selectorFound = clip !== undefined;
    } else if (options.full_page) {
      if (options.full_page_scroll ?? true) await scrollThrough(page, options, deadline);
      clip = await fullPageClip(page, options, deadline);
      if (fixedViewport) await growViewport(page, clip, deadline, undo);
    }
    if (options.omit_background) {
      // Transparent where the page paints nothing; the override outlives navigations, so it is
      // reset before the warm page serves again (a failed reset discards the page).
      undo.push(() => session.send('Emulation.setDefaultBackgroundColorOverride', {}));
      await untilAborted(deadline, session.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } }));
    }
    const captured = await captureWith(session, clip, beyondViewport(options, clip), selectorFound, options, deadline);
    taken = true;
    return captured;
  } finally {
    for (const step of undo.reverse()) {
      if (deadline.aborted) break; // The page is discarded anyway.
      await untilAborted(deadline, step()).catch((error) => {
        if (taken) throw error; // Otherwise the capture's own error is the one to report.
      });
    }
  }
}

// capture_beyond_viewport: as asked, else true with full_page or selector, and with clip_* when
// the rectangle reaches out of the viewport (so that it holds the page there, not a blank).
function beyondViewport(options: RenderOptions, clip: Clip | undefined): boolean {
  if (clip === undefined) return false;
  if (options.capture_beyond_viewport !== undefined) return options.capture_beyond_viewport;
  if (options.full_page || options.selector !== undefined) return true;
  return clip.x + clip.width > options.viewport_width || clip.y + clip.height > options.viewport_height;
}

// The screenshot itself, on an open CDP session.
async function captureWith(session: CDPSession, clip: Clip | undefined, beyondViewport: boolean, selectorFound: boolean, options: RenderOptions, deadline: AbortSignal): Promise<Capture> {
  clip ??= await viewportClip(session, options, deadline);
  // This session does not share Playwright's device-metrics override, so the clip's scale
  // carries device_scale_factor: a 200×100 CSS px element at 2 becomes 400×200 pixels.
  const shot = await untilAborted(deadline, session.send('Page.captureScreenshot', {
    format: options.format,
    ...(options.format === 'png' ? {} : { quality: options.image_quality }),
    clip: { ...clip, scale: options.device_scale_factor },
    captureBeyondViewport: beyondViewport,
  }));
  return { image: Buffer.from(shot.data, 'base64'), selectorFound };
}

// capture_beyond_viewport=false with full_page: the viewport itself is made as large as the
// capture (the page lays out at that size, as in Puppeteer), then given back its size.
async function growViewport(page: Page, clip: Clip, deadline: AbortSignal, undo: Array<() => Promise<unknown>>): Promise<void> {
  const size = page.viewportSize();
  if (!size || (clip.width <= size.width && clip.height <= size.height)) return;
  undo.push(() => page.setViewportSize(size));
  await untilAborted(deadline, page.setViewportSize({ width: Math.max(size.width, clip.width), height: Math.max(size.height, clip.height) }));
}

/** A capture rectangle in document CSS px. */
type Clip = { x: number; y: number; width: number; height: number };

// The element's box in document coordinates; undefined when nothing matches or it has no area.
// With `undo` (capture_beyond_viewport=false) the element is first scrolled to the top of the
// viewport, in the same evaluate, and the scroll back is added to `undo`.
async function elementClip(page: Page, selector: string, deadline: AbortSignal, undo?: Array<() => Promise<unknown>>): Promise<Clip | undefined> {
  const element = await findElement(page, selector, 'selector', deadline);
  if (!element) return undefined;
  type Box = Clip & { scrolledFrom?: { left: number; top: number } };
  const box = await untilAborted(deadline, element.evaluate<Box, boolean>((node, scrollFirst) => {
    const view = globalThis as unknown as { scrollX: number; scrollY: number };
    const from = { left: view.scrollX, top: view.scrollY };
    if (scrollFirst) (node as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start', inline: 'start', behavior: 'instant' });
    const rect = (node as unknown as { getBoundingClientRect(): Clip & { left: number; top: number } }).getBoundingClientRect();
    return { x: rect.left + view.scrollX, y: rect.top + view.scrollY, width: rect.width, height: rect.height, ...(scrollFirst ? { scrolledFrom: from } : {}) };
  }, undo !== undefined));
  const { scrolledFrom, ...clip } = box;
  if (scrolledFrom) undo!.push(() => page.evaluate<void, typeof scrolledFrom>((to) => (globalThis as unknown as { scrollTo(o: object): void }).scrollTo({ ...to, behavior: 'instant' }), scrolledFrom));
  return clip.width >= 1 && clip.height >= 1 ? clip : undefined;
}

// The visible viewport where it is scrolled to, in document coordinates.
async function viewportClip(session: CDPSession, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const { cssVisualViewport } = await untilAborted(deadline, session.send('Page.getLayoutMetrics'));
  return { x: cssVisualViewport.pageX, y: cssVisualViewport.pageY, width: options.viewport_width, height: options.viewport_height };
}

// The document's height, as the full-page capture measures it.
const DOCUMENT_HEIGHT = 'Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0, window.innerHeight)';

// The whole scrollable document, cut at full_page_max_height (never above FULL_PAGE_MAX_HEIGHT).
async function fullPageClip(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const size = await untilAborted(deadline, page.evaluate<{ width: number; height: number }>(`({
    width: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0, window.innerWidth),
    height: ${DOCUMENT_HEIGHT},
  })`));
  const maxHeight = Math.min(options.full_page_max_height, FULL_PAGE_MAX_HEIGHT);
  return { x: 0, y: 0, width: size.width, height: Math.min(size.height, maxHeight) };
}

// One page evaluate: scrolls down by full_page_scroll_by (default the viewport height), pausing
// full_page_scroll_delay ms at each step, until the bottom of what will be captured (the page may
// grow as lazy content arrives) has been in view; then back to the top.
async function scrollThrough(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<void> {
  const maxHeight = Math.min(options.full_page_max_height, FULL_PAGE_MAX_HEIGHT);
  await untilAborted(deadline, page.evaluate<void>(`(async () => {
    const step = ${options.full_page_scroll_by ?? 0} || window.innerHeight;
    const end = () => Math.min(${maxHeight}, ${DOCUMENT_HEIGHT});
    for (let y = step; y - step + window.innerHeight < end(); y += step) {
      window.scrollTo({ left: 0, top: y, behavior: 'instant' });
      await new Promise((resolve) => setTimeout(resolve, ${options.full_page_scroll_delay}));
    }
    window.scrollTo({ left: 0, top: 0, behavior: 'instant' });
  })()`));
}

// First element matching `selector`; a selector the engine cannot parse is the caller's mistake.
async function findElement(page: Page, selector: string, parameter: string, deadline: AbortSignal) {
  try {
    return await untilAborted(deadline, page.$(selector));
  } catch (error) {
    if (deadline.aborted || !/selector/i.test(String(error))) throw error;
    throw new ServiceError('request_not_valid', { error_details: [{ parameter, message: 'The selector is not valid.' }] }, { cause: error });
  }
}

/** Settles with `work`, or rejects with the deadline's reason as soon as it aborts. */
export function untilAborted<T>(deadline: AbortSignal, work: Promise<T>): Promise<T> {
  if (deadline.aborted) {
    work.catch(() => {});
    return Promise.reject(deadline.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason);
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}
