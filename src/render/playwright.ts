// playwright-core's values, loaded with require: the package is one large CommonJS bundle, and
// importing it from ESM makes Node scan the whole file for export names first (≈ 0.2 s of every
// start). Types still come from `import type ... from 'playwright-core'`.
import { createRequire } from 'node:module';
import type * as PlaywrightCore from 'playwright-core';
import type { BrowserContext, CDPSession, Page, Request, Response } from 'playwright-core';

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
type ServerResponse = { request(): ServerRequest; status(): number; headerValue(name: string): string | undefined };
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

type ServerFrame = ServerEmitter & {
  _currentDocument?: { documentId?: string };
  _firedLifecycleEvents?: Set<string>;
};

/**
 * Navigates `page` to `url` by `navigate` (a bare `Page.navigate`) and settles once its new
 * document has fired `load`, as `page.goto` does, without a call of Playwright's client: the load
 * is heard on the server's main frame (serverObjectOf). Where that is out of reach, `page.goto`.
 */
export async function navigateToLoad(
  page: Page,
  url: string,
  navigate: (url: string) => Promise<{ loaderId?: string; errorText?: string }>,
): Promise<void> {
  const frame = (serverObjectOf(page) as ServerPage | undefined)?.mainFrame() as ServerFrame | undefined;
  if (!frame?._firedLifecycleEvents || typeof frame.on !== 'function') {
    await page.goto(url);
    return;
  }
  let loaderId: string | undefined;
  let loaded!: () => void;
  const load = new Promise<void>((resolve) => (loaded = resolve));
  // The new document's load settles it (a navigation that makes none, no loaderId: the current one's).
  const check = () => {
    const ours = loaderId === '' || (loaderId !== undefined && frame._currentDocument?.documentId === loaderId);
    if (ours && frame._firedLifecycleEvents!.has('load')) loaded();
  };
  frame.on('addlifecycle', check);
  try {
    const result = await navigate(url);
    if (result.errorText) throw new Error(`navigation to ${url} failed: ${result.errorText}`);
    loaderId = result.loaderId ?? '';
    check();
    await load;
  } finally {
    frame.off('addlifecycle', check);
  }
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
