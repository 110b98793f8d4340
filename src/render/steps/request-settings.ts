// Per-render request settings on a warm page: extra headers and Authorization for the target's origin only, cookies, CSP bypass.
//
// Nothing here runs for a render that asks for none of them. Headers go through the CDP Fetch domain
// on a CDP session of their own, with one request pattern for the target's origin: only that
// origin's requests pause (about 5 ms a page with 60 sub-resources, where `page.route`, which
// pauses every request and turns the HTTP cache off, cost about 250 ms), and no other client of the
// page's Fetch domain (Playwright's routes, another step) is disturbed. A redirect to another origin
// is a new request that does not match the pattern and carries none of the headers.

import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';
import { parseHeaderLine, parseSetCookie } from '../../domain/page-request.ts';
import { ServiceError } from '../../errors.ts';
import { type CdpEvent, cdp, openCdp } from '../browser/cdp.ts';
import type { Progress } from '../browser/progress.ts';
import type { PageStep } from './page-step.ts';

type Header = { name: string; value: string };
type Cookie = NonNullable<ReturnType<typeof parseSetCookie>>;
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

/**
 * Sets what `options` asks of the page's requests before navigation, deferring to `progress` the
 * undo that restores the page.
 */
export async function applyRequestSettings({ page, session, options, progress }: PageStep): Promise<void> {
  const target = options.url === undefined ? undefined : new URL(options.url);
  // Headers and cookies belong to the target URL; the parameter rules refuse them without one.
  const headers = target ? extraHeaders(options) : [];
  const cookies = target
    ? options.cookies.map(parseSetCookie).filter((cookie): cookie is Cookie => cookie !== null)
    : [];
  if (headers.length === 0 && cookies.length === 0 && !options.bypass_csp) return;
  if (options.bypass_csp) {
    const { Page } = cdp(session);
    progress.defer(() => Page.setBypassCSP({ enabled: false }));
    await progress.race(Page.setBypassCSP({ enabled: true }));
  }
  if (cookies.length > 0) await setCookies(session, target!, cookies, progress);
  if (headers.length > 0) await addOriginHeaders(page, target!.origin, headers, progress);
}

/** `headers` lines and `authorization`, as the requests to the target's origin get them. */
function extraHeaders(options: RenderOptions): Header[] {
  const headers = options.headers.map(parseHeaderLine).filter((header): header is Header => header !== null);
  if (options.authorization !== undefined) headers.push({ name: 'Authorization', value: options.authorization });
  return headers;
}

/**
 * Adds `headers` to every request whose URL is on `origin` until the deferred undo, through a CDP session
 * of its own whose Fetch domain pauses only that origin's requests.
 */
async function addOriginHeaders(page: Page, origin: string, headers: Header[], progress: Progress): Promise<void> {
  const fetch = await progress.race(openCdp(page));
  const ours = new Set(headers.map((header) => header.name.toLowerCase()));
  const onPaused = (event: CdpEvent<'Fetch.requestPaused'>) => {
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
    fetch.Fetch.continueRequest({ requestId: event.requestId, headers: sent }).catch(() => {});
  };
  fetch.on('Fetch.requestPaused', onPaused);
  progress.defer(async () => {
    fetch.off('Fetch.requestPaused', onPaused);
    // Detaching ends the interception and lets every request still paused go on unchanged.
    await fetch.detach().catch(() => {});
  });
  await progress.race(
    fetch.Fetch.enable({ patterns: [{ urlPattern: `${escapePattern(origin)}/*`, requestStage: 'Request' }] }),
  );
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
 * The deferred undo deletes them (the pool's wipe clears every cookie of the context as well).
 */
async function setCookies(session: CDPSession, target: URL, cookies: Cookie[], progress: Progress): Promise<void> {
  const { Network } = cdp(session);
  const params = cookies.map((cookie) => cookieParam(target, cookie));
  progress.defer(() =>
    Promise.all(
      params.map((param) =>
        Network.deleteCookies({ name: param.name, url: `${target.origin}${param.path}`, path: param.path }),
      ),
    ),
  );
  const results = await progress.race(Promise.allSettled(params.map((param) => Network.setCookie(param))));
  const refused = params.filter((_, i) => {
    const result = results[i];
    return result.status === 'rejected' || result.value.success === false;
  });
  if (refused.length > 0) {
    throw new ServiceError('request_not_valid', {
      error_details: refused.map((param) => ({
        parameter: 'cookies',
        message: `${param.name}: the browser refuses this cookie for ${target.origin} (Secure needs https; SameSite=None needs Secure)`,
      })),
    });
  }
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
