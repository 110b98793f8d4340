// playwright-core's values, loaded with require: the package is one large CommonJS bundle, and
// importing it from ESM makes Node scan the whole file for export names first (≈ 0.2 s of every
// start). Types still come from `import type ... from 'playwright-core'`.
import { createRequire } from 'node:module';
import type * as PlaywrightCore from 'playwright-core';
import type { BrowserContext, CDPSession, Page, Request, Response } from 'playwright-core';
import { ServiceError } from '../../errors.ts';

export const { chromium, errors } = createRequire(import.meta.url)('playwright-core') as typeof PlaywrightCore;

// ChannelOwner._wrapApiCall, on every object of playwright-core's client: not public, so looked up
// and used only where present.
type ApiCallWrapper = <T>(body: () => Promise<T>, options: { internal: boolean }) => Promise<T>;

/**
 * Runs `work` as one internal Playwright API call. Playwright's client starts every API call that
 * is not inside another by capturing and parsing its caller's stack (50 frames, to name the call
 * and locate it for traces) and running it in a zone of its own; calls made inside one reuse its
 * zone. A plain render and its wipe make about ten calls: this spares that work for all but one.
 * Internal calls are not reported to Playwright's tracing and inspector, which the service does
 * not use. What `work` throws passes through untouched (an API call would prefix its message with
 * the call's name).
 */
export async function asOneApiCall<T>(work: () => Promise<T>): Promise<T> {
  const wrap = (chromium as unknown as { _wrapApiCall?: ApiCallWrapper })._wrapApiCall?.bind(chromium);
  if (!wrap) return work();
  const outcome = await wrap<{ value: T } | { error: unknown }>(
    async () => {
      try {
        return { value: await work() };
      } catch (error) {
        return { error };
      }
    },
    { internal: true },
  );
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

// What playwright-core's in-process client reaches its server through: `toImpl` maps a client
// object to the server's (not public, so looked up and used only where present).
type ClientObject = { _connection?: { toImpl?: (object: unknown) => unknown } };

/**
 * The object of Playwright's server behind a client object (a page, a CDP session), when the server
 * runs in this process, as it does in the service (Chromium is launched through playwright-core).
 * What the client does goes to the server in the same process as messages of its own, validated on
 * both sides, each a turn of the event loop later, with an error built up front and the call's
 * bookkeeping; what the server emits reaches client objects the same way, after the server has
 * built a client-side copy of each request and response. Undefined when the server is out of reach
 * (another process, another Playwright) or the object has ended.
 */
function serverObjectOf(object: object): unknown {
  try {
    return (object as ClientObject)._connection?.toImpl?.(object);
  } catch {
    return undefined;
  }
}

/** The browser side of a CDP session: one message on Chromium's pipe a command, its events as emitted. */
export interface PipeSession {
  send(method: string, params?: object): Promise<unknown>;
  on(event: string, listener: (params: never) => void): unknown;
  off(event: string, listener: (params: never) => void): unknown;
}

/** The session on Chromium's pipe behind `session` (serverObjectOf): sent there, a command is the one message the server would send. */
export function pipeSessionOf(session: CDPSession): PipeSession | undefined {
  const pipe = (serverObjectOf(session) as { _session?: PipeSession } | undefined)?._session;
  return typeof pipe?.send === 'function' && typeof pipe.on === 'function' ? pipe : undefined;
}

/** A request of a page, as Playwright's server and its client both describe it; one object from start to end. */
export interface NetworkRequest {
  url(): string;
  resourceType(): string;
  isNavigationRequest(): boolean;
  failure(): { errorText: string } | null;
}

/** What a watch of a page's requests (every frame's) is told. */
export interface NetworkListeners {
  request?(request: NetworkRequest): void;
  /** The response's status and headers arrived (`header` takes a lower-case name). */
  response?(request: NetworkRequest, status: number, header: (name: string) => string | undefined): void;
  finished?(request: NetworkRequest): void;
  failed?(request: NetworkRequest): void;
}

/** A watch of a page's requests. */
export interface NetworkWatch {
  /** True for the page's main document (a navigation of its main frame). */
  isMainDocument(request: NetworkRequest): boolean;
  stop(): void;
}

type ServerRequest = NetworkRequest & { frame(): { _page?: unknown } | null };
type ServerResponse = {
  url(): string;
  request(): ServerRequest;
  status(): number;
  headerValue(name: string): string | undefined;
  internalRawResponseHeaders(): Promise<{ name: string; value: string }[]>;
};
type ServerEmitter = {
  on(event: string, listener: (payload: never) => void): unknown;
  off(event: string, listener: (payload: never) => void): unknown;
};
type ServerPage = { browserContext: ServerEmitter; mainFrame(): unknown };

/**
 * Tells `listeners` of `page`'s requests. Heard on the server's browser context when it is in reach
 * (serverObjectOf): the client then makes no copy of a request the render does not navigate to,
 * nor a message of it. Else on the client's page. A listener runs inside Playwright's handling of
 * the event, so what it throws is dropped.
 */
export function watchNetwork(page: Page, listeners: NetworkListeners): NetworkWatch {
  const { request, response, finished, failed } = listeners;
  const handlers: Array<[string, (payload: never) => void]> = [];
  const server = serverObjectOf(page) as ServerPage | undefined;
  let emitter: ServerEmitter;
  let mainFrame: unknown;
  if (server && typeof server.mainFrame === 'function' && typeof server.browserContext?.on === 'function') {
    emitter = server.browserContext;
    mainFrame = server.mainFrame();
    const owned = (of: ServerRequest) => of.frame()?._page === server;
    if (request) handlers.push(['request', (of: ServerRequest) => owned(of) && quietly(() => request(of))]);
    if (response)
      handlers.push([
        'response',
        (answer: ServerResponse) =>
          owned(answer.request()) &&
          quietly(() => response(answer.request(), answer.status(), (name) => answer.headerValue(name))),
      ]);
    if (finished)
      handlers.push([
        'requestfinished',
        ({ request: of }: { request: ServerRequest }) => owned(of) && quietly(() => finished(of)),
      ]);
    if (failed) handlers.push(['requestfailed', (of: ServerRequest) => owned(of) && quietly(() => failed(of))]);
  } else {
    emitter = page as unknown as ServerEmitter;
    mainFrame = page.mainFrame();
    if (request) handlers.push(['request', (of: Request) => quietly(() => request(of))]);
    if (response)
      handlers.push([
        'response',
        (answer: Response) =>
          quietly(() => response(answer.request(), answer.status(), (name) => answer.headers()[name])),
      ]);
    if (finished) handlers.push(['requestfinished', (of: Request) => quietly(() => finished(of))]);
    if (failed) handlers.push(['requestfailed', (of: Request) => quietly(() => failed(of))]);
  }
  for (const [event, handler] of handlers) emitter.on(event, handler);
  return {
    isMainDocument: (of) => of.isNavigationRequest() && (of as unknown as { frame(): unknown }).frame() === mainFrame,
    stop: () => {
      for (const [event, handler] of handlers) emitter.off(event, handler);
    },
  };
}

// Runs a listener inside Playwright's handling of an event: what it throws is not Playwright's to handle.
function quietly(listener: () => void): void {
  try {
    listener();
  } catch {
    // Dropped.
  }
}

/**
 * Tells `listener` the URL of every request of `context`'s pages as it starts: on the server's
 * browser context when in reach (watchNetwork), else on the client's. Never stops: it lives as
 * long as the context.
 */
export function watchContextRequests(context: BrowserContext, listener: (url: string) => void): void {
  const server = serverObjectOf(context) as ServerEmitter | undefined;
  const onRequest = (request: NetworkRequest) => quietly(() => listener(request.url()));
  if (server && typeof server.on === 'function') server.on('request', onRequest);
  else context.on('request', onRequest);
}

type ServerFrame = ServerEmitter & { _firedLifecycleEvents?: Set<string>; url?(): string };
// What the server's frame tells of a navigation (its `internalnavigation` event).
type ServerNavigation = {
  url?: string;
  error?: Error;
  newDocument?: { documentId?: string; request?: { _finalRequest(): ServerDocumentRequest } };
};
type ServerDocumentRequest = { _waitForResponse(): Promise<ServerResponse | null> };

/** The main document's response, as a navigation reads it. */
export interface DocumentResponse {
  url(): string;
  status(): number;
  /** A header's value, by its lower-case name. */
  header(name: string): string | undefined;
  /** Every header as it came over the wire, by lower-case name; repeated ones joined (`set-cookie`'s by newlines). */
  allHeaders(): Promise<Record<string, string>>;
}

// The server's main frame of `page` (serverObjectOf), when in reach.
function serverMainFrame(page: Page): ServerFrame | undefined {
  return (serverObjectOf(page) as ServerPage | undefined)?.mainFrame() as ServerFrame | undefined;
}

/**
 * The URL of `page`'s main document as the server's frame knows it: the client's `page.url()`
 * hears of a commit by an event that may still be on its way when gotoDocument has settled.
 */
export function mainFrameUrl(page: Page): string {
  const frame = serverMainFrame(page);
  return typeof frame?.url === 'function' ? frame.url() : page.url();
}

/**
 * The one gate of every navigation the service makes (gotoDocument): an absolute http(s) URL, or
 * the wipe's about:blank. `file:`, `chrome:`, `view-source:`, `javascript:`, `data:` and every other
 * scheme are refused in Node before Chromium hears of them, whoever chose the URL; Chromium itself
 * refuses them to a page's own navigations. Throws url_not_allowed.
 */
export function assertWebNavigation(url: string): void {
  if (url === 'about:blank') return;
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = '';
  }
  if (protocol === 'http:' || protocol === 'https:') return;
  throw new ServiceError(
    'url_not_allowed',
    { error_details: [{ parameter: 'url', message: 'only http and https pages are navigated to' }] },
    { cause: new Error(`a navigation to ${protocol || 'an unreadable URL'} refused`) },
  );
}

/** What `Page.navigate` answers. */
export type NavigateResult = { loaderId?: string; errorText?: string; isDownload?: boolean };

/**
 * Navigates `page`'s main frame to `url` and settles once the frame has fired `waitUntil`, as
 * `page.goto(url, { waitUntil })` does, with the same errors' texts, but without a call of
 * Playwright's client: `navigate` sends `Page.navigate`, and the new document's commit, the frame's
 * lifecycle and the document's response are heard on the server's main frame (serverObjectOf). A
 * crash or close of the page meanwhile fails it. Resolves with the document's final response (after
 * its redirects; null for a navigation within the document or one with no response). Where the
 * server is out of reach, or no `navigate` is given, `page.goto`.
 */
export async function gotoDocument(
  page: Page,
  url: string,
  waitUntil: 'load' | 'domcontentloaded' | 'commit',
  navigate?: (url: string) => Promise<NavigateResult>,
): Promise<DocumentResponse | null> {
  assertWebNavigation(url);
  const frame = serverMainFrame(page);
  const fired = frame?._firedLifecycleEvents;
  if (!navigate || !frame || !fired || typeof frame.on !== 'function') {
    const response = await page.goto(url, { waitUntil });
    return (
      response && {
        url: () => response.url(),
        status: () => response.status(),
        header: (name) => response.headers()[name],
        allHeaders: () => response.allHeaders(),
      }
    );
  }
  const navigations: ServerNavigation[] = [];
  let heard = () => {};
  let fail!: (error: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  const onNavigation = (event: ServerNavigation) => {
    navigations.push(event);
    heard();
  };
  const onLifecycle = () => heard();
  const onCrash = () => fail(new Error('Page crashed'));
  const onClose = () => fail(new Error('Target page, context or browser has been closed'));
  // Resolves with what `check` finds, asked again at every navigation and lifecycle event.
  const until = <T>(check: () => T | undefined) =>
    Promise.race([
      failed,
      new Promise<T>((resolve) => {
        heard = () => {
          const found = check();
          if (found !== undefined) resolve(found);
        };
        heard();
      }),
    ]);
  frame.on('internalnavigation', onNavigation);
  frame.on('addlifecycle', onLifecycle);
  page.on('crash', onCrash);
  page.on('close', onClose);
  try {
    const result = await Promise.race([navigate(url), failed]);
    if (result.isDownload) throw new Error('Download is starting');
    if (result.errorText) throw new Error(`${result.errorText} at ${url}`);
    const documentId = result.loaderId;
    // Its own document's commit (or an error before it); a navigation within the document makes none.
    const event = await until(() =>
      navigations.find((navigation) =>
        documentId
          ? navigation.newDocument && (navigation.newDocument.documentId === documentId || !navigation.error)
          : !navigation.newDocument,
      ),
    );
    if (documentId && event.newDocument?.documentId !== documentId)
      throw new Error(`Navigation to "${url}" is interrupted by another navigation to "${event.url}"`);
    if (event.error) throw event.error;
    await until(() => fired.has(waitUntil) || undefined);
    const response = await event.newDocument?.request?._finalRequest()._waitForResponse();
    return response
      ? {
          url: () => response.url(),
          status: () => response.status(),
          header: (name) => response.headerValue(name),
          allHeaders: async () => joinedHeaders(await response.internalRawResponseHeaders()),
        }
      : null;
  } finally {
    frame.off('internalnavigation', onNavigation);
    frame.off('addlifecycle', onLifecycle);
    page.off('crash', onCrash);
    page.off('close', onClose);
  }
}

// Headers by lower-case name, as Playwright's client joins them for `allHeaders()`.
function joinedHeaders(headers: { name: string; value: string }[]): Record<string, string> {
  const joined: Record<string, string[]> = {};
  for (const { name, value } of headers) (joined[name.toLowerCase()] ??= []).push(value);
  return Object.fromEntries(
    Object.entries(joined).map(([name, values]) => [name, values.join(name === 'set-cookie' ? '\n' : ', ')]),
  );
}

type ServerTransport = {
  send?: (message: object) => void;
  _closed?: boolean;
  _pipeWrite?: { write(chunk: string): unknown };
};

/**
 * Sends what Playwright's server writes to Chromium's pipe in one write a turn: the messages sent
 * within one synchronous stretch, each with its NUL separator, in one string (Playwright's own
 * transport writes a message and its separator as two writes). Where the pipe is out of reach, nothing.
 */
export function batchPipeWrites(browser: object): void {
  const transport = (serverObjectOf(browser) as { _connection?: { _transport?: ServerTransport } } | undefined)
    ?._connection?._transport;
  const pipe = transport?._pipeWrite;
  if (!transport || typeof transport.send !== 'function' || typeof pipe?.write !== 'function') return;
  let queued = '';
  const flush = () => {
    const chunk = queued;
    queued = '';
    pipe.write(chunk);
  };
  transport.send = (message) => {
    if (transport._closed) throw new Error('Pipe has been closed');
    if (queued === '') queueMicrotask(flush);
    queued += `${JSON.stringify(message)}\0`;
  };
}

// The server frame's evaluation in a world of the caller's choosing (not public, looked up).
type WorldEvaluation = (
  expression: string,
  options: { isFunction: boolean; world: 'utility' },
  arg: unknown,
) => Promise<unknown>;

/**
 * Runs `fn(arg)` in `page`'s main frame in Playwright's utility world: an isolated world of its
 * own, sharing the page's DOM but none of its JavaScript, so a page that rewrote `RegExp`, a
 * prototype's getter or `JSON` changes nothing of what `fn` computes (docs/security.md, "The page
 * is hostile"). Its result is still the page's word about its DOM: the caller checks it. Throws
 * when the server's frame is out of reach: there is no falling back to the page's own world.
 */
export async function evaluateIsolated<A, R>(page: Page, fn: (arg: A) => R, arg: A): Promise<Awaited<R>> {
  const frame = serverMainFrame(page) as (ServerFrame & { _evaluateExpression?: WorldEvaluation }) | undefined;
  if (typeof frame?._evaluateExpression !== 'function')
    throw new Error('no isolated world in reach for an in-page helper');
  return (await frame._evaluateExpression(String(fn), { isFunction: true, world: 'utility' }, arg)) as Awaited<R>;
}
