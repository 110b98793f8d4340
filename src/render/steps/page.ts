// Small named page steps a render is composed of: navigate, watch, settle, scroll, read. Each
// takes the render's PageStep (page-step.ts). The capture itself is in screenshot.ts.

import type { CDPSession, Page } from 'playwright-core';
import { blockedHeader } from '../../net/egress/proxy-state.ts';
import {
  type DocumentResponse,
  errors,
  gotoDocument,
  mainFrameUrl,
  type NetworkRequest,
  watchNetwork,
  evaluateIsolated,
} from '../browser/playwright.ts';
import { ServiceError, type ErrorCode } from '../../errors.ts';
import { marked } from 'marked';
import { cdp, openCdp } from '../browser/cdp.ts';
import { inPage } from '../browser/in-page.ts';
import { scrollToTop, visibleText } from '../in-page/steps.ts';
import { untilAborted } from '../browser/progress.ts';
import type { PageStep } from './page-step.ts';
import type { RenderOptions, SubRequestOutcome, WaitUntil } from '../../domain/options.ts';

/** Where navigation ended: the main document's final URL and status (null when no response). */
export interface Navigation {
  finalUrl: string;
  mainStatus: number | null;
  /** The main document's response headers, read only for metadata_http_response_headers. */
  mainHeaders?: Record<string, string>;
}

/** A running record of the page's sub-requests; `outcomes()` is a snapshot in finishing order. */
export interface SubRequestWatch {
  outcomes(): SubRequestOutcome[];
  stop(): void;
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
 * The navigation step: opens the page (`options.url`, or the `html` / `markdown` document), waits
 * until every condition of `wait_until` holds, and reports the main document's final status and
 * URL (status null for a document of our own). `navigation_timeout` bounds the whole of it:
 * timeout_error. The URL is opened by a bare `Page.navigate` on the step's session (gotoDocument).
 */
export function navigate({ page, options, progress, session }: PageStep): Promise<Navigation> {
  return openDocument(page, options, progress.signal, session);
}

/**
 * The navigation of `navigate`, bounded by `deadline`: for the recording's choreography too, which
 * navigates again under a signal of its own (without `session`, through Playwright's own goto).
 */
export async function openDocument(
  page: Page,
  options: RenderOptions,
  deadline: AbortSignal,
  session?: CDPSession,
): Promise<Navigation> {
  const limit = AbortSignal.any([deadline, AbortSignal.timeout(options.navigation_timeout * 1000)]);
  const startedAt = Date.now();
  const left = () => Math.max(1, options.navigation_timeout * 1000 - (Date.now() - startedAt));
  // Only a networkidle condition needs the page's requests counted, from before the first one.
  const requests = needsRequestCount(options.wait_until) ? countRequests(page) : undefined;
  // A page captured whatever its status: an HTTP authentication challenge is declined so that the
  // browser shows the 401 page itself instead of giving up on it (below, navigationError).
  const declining =
    options.ignore_host_errors && options.url !== undefined
      ? await untilAborted(limit, declineAuthChallenges(page))
      : undefined;
  let response: DocumentResponse | null = null;
  try {
    const waitUntil = lifecycleOf(options.wait_until);
    if (options.url !== undefined) {
      const navigateBy = session && ((url: string) => cdp(session).Page.navigate({ url }));
      response = await untilAborted(limit, gotoDocument(page, options.url, waitUntil, navigateBy));
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
    await declining?.();
  }
  // The egress proxy answers a refused or unreachable plain-http target itself, marking the response.
  const blocked = response ? blockedBy(response) : undefined;
  if (blocked)
    throw new ServiceError(blocked, {}, { cause: new Error(`egress proxy: ${blocked} for ${response!.url()}`) });
  // Chromium gives up on an HTTP authentication challenge nobody answers (navigationError), but
  // chromium-headless-shell has no login prompt to give up on and shows the site's 401 page: unless
  // it was declined on purpose (ignore_host_errors), that is the same host error.
  if (response && !options.ignore_host_errors && isAuthChallenge(response))
    throw new ServiceError(
      'host_returned_error',
      { returned_status_code: 401 },
      { cause: new Error(`HTTP authentication challenge unanswered at ${response.url()}`) },
    );
  const mainHeaders =
    options.metadata_http_response_headers && response
      ? await untilAborted(deadline, response.allHeaders())
      : undefined;
  return {
    finalUrl: mainFrameUrl(page),
    mainStatus: response?.status() ?? null,
    ...(mainHeaders ? { mainHeaders } : {}),
  };
}

/**
 * Waits until every condition of `conditions` holds for the page's current document: used after
 * `scripts`. `requests` counts requests (started before the script ran) when a networkidle
 * condition is listed.
 */
export async function waitForConditions(
  page: Page,
  conditions: readonly WaitUntil[],
  requests: RequestCount | undefined,
  deadline: AbortSignal,
): Promise<void> {
  for (const state of ['domcontentloaded', 'load'] as const) {
    if (conditions.includes(state)) await untilAborted(deadline, page.waitForLoadState(state, { timeout: 0 }));
  }
  if (requests) await untilAborted(deadline, requests.idle(idleLimit(conditions)));
}

/** How long the network must stay quiet for a networkidle condition. */
const NETWORK_IDLE_MS = 500;

/** True when a condition needs the page's requests counted. */
export function needsRequestCount(conditions: readonly WaitUntil[]): boolean {
  return conditions.some((condition) => condition.startsWith('networkidle'));
}

// The most requests in flight the listed networkidle conditions allow: 0 wins over 2.
function idleLimit(conditions: readonly WaitUntil[]): number {
  return conditions.some((condition) => condition === 'networkidle' || condition === 'networkidle0') ? 0 : 2;
}

// The Playwright lifecycle event navigation itself waits for; networkidle is counted separately.
function lifecycleOf(conditions: readonly WaitUntil[]): 'load' | 'domcontentloaded' | 'commit' {
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
  const inFlight = new Set<NetworkRequest>();
  let changed = () => {};
  const onDone = (request: NetworkRequest) => {
    if (inFlight.delete(request)) changed();
  };
  const watch = watchNetwork(page, {
    request: (request) => {
      inFlight.add(request);
      changed();
    },
    finished: onDone,
    failed: onDone,
  });
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
      watch.stop();
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
function blockedBy(response: DocumentResponse): ErrorCode | undefined {
  return blockedCode(response.header(blockedHeader.toLowerCase()));
}

/** The code of the egress proxy's header, if it is one the proxy answers with. */
function blockedCode(value: string | undefined): ErrorCode | undefined {
  const code = value as ErrorCode | undefined;
  return code && PROXY_BLOCK_CODES.includes(code) ? code : undefined;
}

// The HTTP authentication schemes Chromium answers a challenge of (by default, on Linux).
const AUTH_SCHEMES = /^\s*(basic|digest|ntlm|negotiate)\b/im;

/** True when the site answered with a 401 whose challenge Chromium would ask credentials for. */
function isAuthChallenge(response: DocumentResponse): boolean {
  return response.status() === 401 && AUTH_SCHEMES.test(response.header('www-authenticate') ?? '');
}

/**
 * Declines every HTTP authentication challenge of the page's documents (their other requests are
 * not paused), so a 401 shows as the page the site sent; returns what ends it, by detaching.
 */
async function declineAuthChallenges(page: Page): Promise<() => Promise<void>> {
  const session = await openCdp(page);
  const { Fetch } = session;
  session.on(
    'Fetch.requestPaused',
    (event) => void Fetch.continueRequest({ requestId: event.requestId }).catch(() => {}),
  );
  session.on(
    'Fetch.authRequired',
    (event) =>
      void Fetch.continueWithAuth({
        requestId: event.requestId,
        authChallengeResponse: { response: 'CancelAuth' },
      }).catch(() => {}),
  );
  await Fetch.enable({ patterns: [{ urlPattern: '*', resourceType: 'Document' }], handleAuthRequests: true });
  return () => session.detach().catch(() => {});
}

/** Maps a navigation failure to its public code; the raw text stays in `cause`. */
export function navigationError(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  if (error instanceof errors.TimeoutError) return new ServiceError('timeout_error', {}, { cause: error });
  const text = error instanceof Error ? error.message : String(error);
  // An HTTP authentication challenge no credentials answered: Chromium gives up on it with this
  // net error, but the site did answer, with a 401 (a 407 would be a proxy's, and a network error).
  if (/net::ERR_INVALID_AUTH_CREDENTIALS/.test(text))
    return new ServiceError('host_returned_error', { returned_status_code: 401 }, { cause: error });
  const match = NET_ERROR_CODES.find(([pattern]) => pattern.test(text));
  return match ? new ServiceError(match[1], {}, { cause: error }) : error;
}

/** Records every request of the page other than the main document, as it finishes or fails. */
export function watchSubRequests(page: Page): SubRequestWatch {
  const outcomes: SubRequestOutcome[] = [];
  const statuses = new WeakMap<NetworkRequest, number>();
  const blocked = new WeakMap<NetworkRequest, string>();
  const watch = watchNetwork(page, {
    // The response comes before the request finishes.
    // A response the proxy made up (target refused or unreachable) is a network-level failure.
    response: (request, status, header) => {
      const code = blockedCode(header(blockedHeader.toLowerCase()));
      if (code) blocked.set(request, code);
      else statuses.set(request, status);
    },
    finished: (request) => {
      if (watch.isMainDocument(request)) return;
      const failure = blocked.get(request);
      outcomes.push({ url: request.url(), ...(failure ? { failure } : { status: statuses.get(request) }) });
    },
    failed: (request) => {
      if (watch.isMainDocument(request)) return;
      const status = statuses.get(request);
      outcomes.push({
        url: request.url(),
        ...(status === undefined ? {} : { status }),
        failure: request.failure()?.errorText ?? 'failed',
      });
    },
  });
  return {
    outcomes: () => outcomes.map((outcome) => ({ ...outcome })),
    stop: () => watch.stop(),
  };
}

/** Waits `delay` seconds after navigation, for late scripts and animations. */
export async function settle({ options, progress }: PageStep): Promise<void> {
  if (options.delay <= 0) return;
  await progress.race(new Promise((resolve) => setTimeout(resolve, options.delay * 1000)));
}

/**
 * Scrolls the first element matching `scroll_into_view` to the top of the viewport, then
 * `scroll_into_view_adjust_top` px further (negative scrolls back up); false when none matches.
 */
export async function scrollIntoView({ page, options, progress }: PageStep): Promise<boolean> {
  if (options.scroll_into_view === undefined) return true;
  const element = await findElement(page, options.scroll_into_view, 'scroll_into_view', progress.signal);
  if (!element) return false;
  await progress.race(element.evaluate(inPage(scrollToTop), options.scroll_into_view_adjust_top ?? 0));
  return true;
}

/** The page's visible text, as `document.body.innerText` gives it. */
export async function readVisibleText({ page, progress }: PageStep): Promise<string> {
  // In an isolated world: a page that rewrote innerText's getter cannot pass a content rule it fails.
  const text = await progress.race(evaluateIsolated(page, inPage(visibleText), undefined));
  return typeof text === 'string' ? text : '';
}

/** First element matching `selector`; a selector the engine cannot parse is the caller's mistake. */
export async function findElement(page: Page, selector: string, parameter: string, deadline: AbortSignal) {
  try {
    return await untilAborted(deadline, page.$(selector));
  } catch (error) {
    if (deadline.aborted || !/selector/i.test(String(error))) throw error;
    throw new ServiceError(
      'request_not_valid',
      { error_details: [{ parameter, message: 'The selector is not valid.' }] },
      { cause: error },
    );
  }
}

export { untilAborted };
