// Per-render request settings on a warm page: extra headers and Authorization for the target's origin only, cookies, CSP bypass.
//
// Nothing here runs for a render that asks for none of them. Headers go through the CDP Fetch domain
// on a CDP session of their own, with one request pattern for the target's origin: only that
// origin's requests pause (about 5 ms a page with 60 sub-resources, where `page.route`, which
// pauses every request and turns the HTTP cache off, cost about 250 ms), and no other client of the
// page's Fetch domain (Playwright's routes, another step) is disturbed. A redirect to another origin
// is a new request that does not match the pattern and carries none of the headers.

import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';
import { parseHeaderLine, parseSetCookie } from '../domain/combinations.ts';
import { ServiceError } from '../errors.ts';
import { untilAborted } from './steps.ts';

type Undo = () => Promise<void>;
type Header = { name: string; value: string };
type Cookie = NonNullable<ReturnType<typeof parseSetCookie>>;
// The parts of CDP's Fetch.requestPaused and Network.setCookie used here.
type PausedRequest = { requestId: string; request: { url: string; headers: Record<string, string> } };
type CookieParam = {
  name: string;
  value: string;
  url: string;
  domain?: string;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  expires?: number;
};

const nothing: Undo = async () => {};

/** Sets what `options` asks of the page's requests before navigation; the returned undo restores the page. */
export async function applyRequestSettings(
  page: Page,
  session: CDPSession,
  options: RenderOptions,
  deadline: AbortSignal,
): Promise<Undo> {
  const target = options.url === undefined ? undefined : new URL(options.url);
  // Headers and cookies belong to the target URL; the parameter rules refuse them without one.
  const headers = target ? extraHeaders(options) : [];
  const cookies = target
    ? options.cookies.map(parseSetCookie).filter((cookie): cookie is Cookie => cookie !== null)
    : [];
  if (headers.length === 0 && cookies.length === 0 && !options.bypass_csp) return nothing;

  const undo: Undo[] = [];
  const undoAll: Undo = async () => {
    let failure: unknown;
    for (const step of undo.reverse()) await step().catch((error: unknown) => (failure ??= error));
    if (failure !== undefined) throw failure;
  };
  try {
    if (options.bypass_csp) {
      undo.push(() => session.send('Page.setBypassCSP', { enabled: false }).then(() => undefined));
      await untilAborted(deadline, session.send('Page.setBypassCSP', { enabled: true }));
    }
    if (cookies.length > 0) undo.push(await setCookies(session, target!, cookies, deadline));
    if (headers.length > 0) undo.push(await addOriginHeaders(page, target!.origin, headers, deadline));
  } catch (error) {
    // The render fails and its page is discarded; undoing is a courtesy when the browser still answers.
    if (!deadline.aborted) await undoAll().catch(() => {});
    throw error;
  }
  return undoAll;
}

/** `headers` lines and `authorization`, as the requests to the target's origin get them. */
function extraHeaders(options: RenderOptions): Header[] {
  const headers = options.headers.map(parseHeaderLine).filter((header): header is Header => header !== null);
  if (options.authorization !== undefined) headers.push({ name: 'Authorization', value: options.authorization });
  return headers;
}

/**
 * Adds `headers` to every request whose URL is on `origin` until the undo, through a CDP session
 * of its own whose Fetch domain pauses only that origin's requests.
 */
async function addOriginHeaders(page: Page, origin: string, headers: Header[], deadline: AbortSignal): Promise<Undo> {
  const fetch = await untilAborted(deadline, page.context().newCDPSession(page));
  const ours = new Set(headers.map((header) => header.name.toLowerCase()));
  const onPaused = (event: PausedRequest) => {
    const sameOrigin = originOf(event.request.url) === origin;
    // The page's own header of one of these names gives way to ours; off the origin (which the
    // pattern should never let through) a header of ours is removed, whoever set it.
    const kept = Object.entries(event.request.headers)
      .filter(
        ([name, value]) =>
          !ours.has(name.toLowerCase()) || (!sameOrigin && !headers.some((header) => header.value === value)),
      )
      .map(([name, value]) => ({ name, value: String(value) }));
    const sent = sameOrigin ? [...kept, ...headers] : kept;
    // A request the page has given up on meanwhile cannot be continued: nothing to do about it.
    fetch.send('Fetch.continueRequest', { requestId: event.requestId, headers: sent }).catch(() => {});
  };
  fetch.on('Fetch.requestPaused', onPaused);
  const stop: Undo = async () => {
    fetch.off('Fetch.requestPaused', onPaused);
    // Detaching ends the interception and lets every request still paused go on unchanged.
    await fetch.detach().catch(() => {});
  };
  try {
    await untilAborted(
      deadline,
      fetch.send('Fetch.enable', { patterns: [{ urlPattern: `${escapePattern(origin)}/*`, requestStage: 'Request' }] }),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

// The origin of a request URL, or undefined for one that has none.
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

// Fetch patterns treat '*' and '?' as wildcards and '\' as their escape.
const escapePattern = (text: string) => text.replace(/[*?\\]/g, '\\$&');

/**
 * Sets `cookies` for `target` as if its response had sent them: without Domain, a host-only
 * cookie of the target's host; without Path, the target path's directory (RFC 6265 §5.1.4).
 * The undo deletes them (the pool's wipe clears every cookie of the context as well).
 */
async function setCookies(session: CDPSession, target: URL, cookies: Cookie[], deadline: AbortSignal): Promise<Undo> {
  const params = cookies.map((cookie) => cookieParam(target, cookie));
  const undo: Undo = async () => {
    await Promise.all(
      params.map((param) =>
        session.send('Network.deleteCookies', {
          name: param.name,
          url: `${target.origin}${param.path}`,
          path: param.path,
        }),
      ),
    );
  };
  const results = await untilAborted(
    deadline,
    Promise.allSettled(params.map((param) => session.send('Network.setCookie', param))),
  );
  const refused = params.filter(
    (_, i) =>
      results[i].status === 'rejected' ||
      (results[i] as PromiseFulfilledResult<{ success?: boolean }>).value.success === false,
  );
  if (refused.length > 0) {
    await undo().catch(() => {});
    throw new ServiceError('request_not_valid', {
      error_details: refused.map((param) => ({
        parameter: 'cookies',
        message: `${param.name}: the browser refuses this cookie for ${target.origin} (Secure needs https; SameSite=None needs Secure)`,
      })),
    });
  }
  return undo;
}

// The CDP form of one cookie for `target`.
function cookieParam(target: URL, cookie: Cookie): CookieParam {
  return {
    name: cookie.name,
    value: cookie.value,
    url: target.href,
    ...(cookie.domain ? { domain: cookie.domain } : {}),
    path: cookie.path?.startsWith('/') ? cookie.path : defaultPath(target),
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
    ...(cookie.sameSite ? { sameSite: cookie.sameSite } : {}),
    ...(cookie.expires !== undefined ? { expires: cookie.expires } : {}),
  };
}

// RFC 6265 §5.1.4: the URL path up to its last '/', or '/'.
function defaultPath(url: URL): string {
  const path = url.pathname;
  const last = path.lastIndexOf('/');
  return last <= 0 ? '/' : path.slice(0, last);
}
