// Small named page steps a render is composed of: navigate, watch, settle, scroll, read, capture.

import type { CDPSession, Page, Request, Response } from 'playwright-core';
import { blockedHeader } from '../net/egress-proxy.ts';
import { errors } from './playwright.ts';
import { ServiceError, type ErrorCode } from '../errors.ts';
import { FULL_PAGE_MAX_HEIGHT, type RenderOptions, type SubRequestOutcome } from '../domain/options.ts';

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

/** Opens `options.url`, waits for `wait_until`, and reports the main document's final status and URL. */
export async function navigate(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Navigation> {
  let response: Response | null;
  try {
    response = await untilAborted(deadline, page.goto(options.url!, { waitUntil: playwrightWaitUntil(options.wait_until) }));
  } catch (error) {
    throw navigationError(error);
  }
  // The egress proxy answers a refused or unreachable plain-http target itself, marking the response.
  const blocked = response ? blockedBy(response) : undefined;
  if (blocked) throw new ServiceError(blocked, {}, { cause: new Error(`egress proxy: ${blocked} for ${response!.url()}`) });
  return { finalUrl: page.url(), mainStatus: response?.status() ?? null };
}

// Until navigation learns every condition of wait_until: the strictest one Playwright knows.
function playwrightWaitUntil(conditions: RenderOptions['wait_until']): 'load' | 'domcontentloaded' | 'networkidle' {
  if (conditions.some((c) => c.startsWith('networkidle'))) return 'networkidle';
  return conditions.includes('load') ? 'load' : 'domcontentloaded';
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

/** Scrolls the first element matching `selector` to the top of the viewport; false when none matches. */
export async function scrollIntoView(page: Page, selector: string, deadline: AbortSignal): Promise<boolean> {
  const element = await findElement(page, selector, 'scroll_into_view', deadline);
  if (!element) return false;
  await untilAborted(deadline, element.evaluate((node) => (node as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start', inline: 'nearest' })));
  return true;
}

/** The page's visible text, as `document.body.innerText` gives it. */
export async function readVisibleText(page: Page, deadline: AbortSignal): Promise<string> {
  return untilAborted(deadline, page.evaluate<string>('document.body ? document.body.innerText : ""'));
}

/**
 * Captures the image through CDP `Page.captureScreenshot`, which does png, jpeg and webp alike:
 * the element of `selector` (falling back to the viewport when none matches), the whole page
 * up to FULL_PAGE_MAX_HEIGHT CSS px, or the viewport, over `session` (a CDP session on the page).
 */
export async function capture(page: Page, options: RenderOptions, deadline: AbortSignal, session: CDPSession): Promise<Capture> {
  let clip: Clip | undefined;
  let selectorFound = true;
  if (options.selector) {
    clip = await elementClip(page, options.selector, deadline);
    selectorFound = clip !== undefined;
  } else if (options.full_page) {
    clip = await fullPageClip(page, deadline);
  }
  return captureWith(session, clip, selectorFound, options, deadline);
}

// The screenshot itself, on an open CDP session.
async function captureWith(session: CDPSession, clip: Clip | undefined, selectorFound: boolean, options: RenderOptions, deadline: AbortSignal): Promise<Capture> {
  const beyondViewport = clip !== undefined;
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

/** A capture rectangle in document CSS px. */
type Clip = { x: number; y: number; width: number; height: number };

// The element's box in document coordinates; undefined when nothing matches or it has no area.
async function elementClip(page: Page, selector: string, deadline: AbortSignal): Promise<Clip | undefined> {
  const element = await findElement(page, selector, 'selector', deadline);
  if (!element) return undefined;
  const box = await untilAborted(deadline, element.evaluate<Clip>((node) => {
    const rect = (node as unknown as { getBoundingClientRect(): Clip & { left: number; top: number } }).getBoundingClientRect();
    const view = globalThis as unknown as { scrollX: number; scrollY: number };
    return { x: rect.left + view.scrollX, y: rect.top + view.scrollY, width: rect.width, height: rect.height };
  }));
  return box.width >= 1 && box.height >= 1 ? box : undefined;
}

// The visible viewport where it is scrolled to, in document coordinates.
async function viewportClip(session: CDPSession, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const { cssVisualViewport } = await untilAborted(deadline, session.send('Page.getLayoutMetrics'));
  return { x: cssVisualViewport.pageX, y: cssVisualViewport.pageY, width: options.viewport_width, height: options.viewport_height };
}

// The whole scrollable document, cut at FULL_PAGE_MAX_HEIGHT.
async function fullPageClip(page: Page, deadline: AbortSignal): Promise<Clip> {
  const size = await untilAborted(deadline, page.evaluate<{ width: number; height: number }>(`({
    width: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0, window.innerWidth),
    height: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0, window.innerHeight),
  })`));
  return { x: 0, y: 0, width: size.width, height: Math.min(size.height, FULL_PAGE_MAX_HEIGHT) };
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
