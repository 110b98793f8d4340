// The Chrome DevTools Protocol as the render steps speak it: a CDP session with one typed method per
// command, grouped by domain (`cdp.Emulation.setTimezoneOverride({ timezoneId })`), its parameters
// and result typed from the protocol types Playwright ships, so no step passes a method name as a
// string or casts its parameters. A method call is exactly one message to the browser.

import type { Browser, CDPSession, Page } from 'playwright-core';
import type { Protocol } from 'playwright-core/types/protocol';
import { type PipeSession, pipeSessionOf } from './playwright.ts';

type Commands = Protocol.CommandParameters;
type Results = Protocol.CommandReturnValues;
type Events = Protocol.Events;

/** The parameters of a CDP event. */
export type CdpEvent<E extends keyof Events> = Events[E];

/** The domains of the protocol: Emulation, Page, Fetch, … */
type DomainName = keyof Commands extends infer K ? (K extends `${infer D}.${string}` ? D : never) : never;

/** One domain's commands as methods; a command whose parameters are all optional may be called without. */
export type Domain<D extends DomainName> = {
  [K in keyof Commands as K extends `${D}.${infer M}` ? M : never]: Partial<Commands[K]> extends Commands[K]
    ? (params?: Commands[K]) => Promise<Results[K]>
    : (params: Commands[K]) => Promise<Results[K]>;
};

/** The domains the render steps use. */
const DOMAINS = [
  'Browser',
  'DOM',
  'DOMDebugger',
  'Emulation',
  'Fetch',
  'HeapProfiler',
  'Network',
  'Page',
  'Runtime',
  'Storage',
  'SystemInfo',
  'Target',
] as const;
type UsedDomain = (typeof DOMAINS)[number];

/** A CDP session on a page, with typed commands and events. */
export type Cdp = { readonly [D in UsedDomain]: Domain<D> } & {
  /** The Playwright session underneath. */
  readonly session: CDPSession;
  on<E extends keyof Events>(event: E, listener: (params: Events[E]) => void): void;
  off<E extends keyof Events>(event: E, listener: (params: Events[E]) => void): void;
  /** Ends the session; what it set up that belongs to it (interception, bindings, scripts) ends with it. */
  detach(): Promise<void>;
};

const faces = new WeakMap<CDPSession, Cdp>();

/**
 * The typed face of `session`; it makes no call of its own. Commands and events go by the session's
 * own end of Chromium's pipe when it is in reach (playwright.ts, pipeSessionOf), else by the
 * client; one face is kept per session.
 */
export function cdp(session: CDPSession): Cdp {
  let face = faces.get(session);
  if (!face) {
    face = faceOf(session, pipeSessionOf(session));
    faces.set(session, face);
  }
  return face;
}

function faceOf(session: CDPSession, pipe: PipeSession | undefined): Cdp {
  type Listener = (params: never) => void;
  // The session is touched only when a command is sent: a render that sends none makes no call.
  const send = pipe
    ? (method: string, params?: object) => pipe.send(method, params)
    : (method: string, params?: object) =>
        (session.send as unknown as (method: string, params?: object) => Promise<unknown>).call(
          session,
          method,
          params,
        );
  const events = (pipe ?? session) as {
    on(event: string, listener: Listener): unknown;
    off(event: string, listener: Listener): unknown;
  };
  const domain = (name: string) =>
    new Proxy({}, { get: (_, method) => (params?: object) => send(`${name}.${String(method)}`, params) });
  const domains = Object.fromEntries(DOMAINS.map((name) => [name, domain(name)]));
  return {
    ...(domains as { [D in UsedDomain]: Domain<D> }),
    session,
    on: (event, listener) => void events.on(event, listener as Listener),
    off: (event, listener) => void events.off(event, listener as Listener),
    detach: () => session.detach(),
  };
}

/** A CDP session of its own on `page` (for a domain whose state the session should own and end). */
export async function openCdp(page: Page): Promise<Cdp> {
  return cdp(await page.context().newCDPSession(page));
}

/**
 * A question about `browser` asked once, on a browser-wide CDP session of its own that ends with the
 * answer; `answers` keeps it for that browser's life. A failed answer is forgotten, so the next
 * caller asks again.
 */
export function askBrowserOnce<T>(
  answers: WeakMap<Browser, Promise<T>>,
  browser: Browser,
  ask: (browserCdp: Cdp) => Promise<T>,
): Promise<T> {
  let answer = answers.get(browser);
  if (!answer) {
    answer = browser.newBrowserCDPSession().then(async (session) => {
      try {
        return await ask(cdp(session));
      } finally {
        await session.detach().catch(() => {});
      }
    });
    answer.catch(() => answers.delete(browser));
    answers.set(browser, answer);
  }
  return answer;
}
