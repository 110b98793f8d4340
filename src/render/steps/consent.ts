// Cookie banners answered the way a person would: DuckDuckGo's autoconsent (its Playwright bundle
// and its consent-platform rules, as npm installs them) runs in every document of the render,
// finds the consent platform, and refuses optional cookies where the banner offers that.
//
// The script is registered on the blocking's own CDP session (src/render/steps/blocking.ts) before
// navigation; autoconsent reports its progress through a binding of that session, and the
// capture waits, bounded, until it has answered the banner or found none.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cdp } from '../browser/cdp.ts';
import { inPageSource } from '../browser/in-page.ts';
import { connectAutoconsent } from '../in-page/consent.ts';

/** The binding autoconsent's reports arrive through. */
export const CONSENT_BINDING = '__shutterbusConsent';

/** The longest a capture waits for autoconsent to answer a banner. */
const CONSENT_WAIT_MS = 3000;

// The autoconsent settings: refuse (optOut), hide banners while answering them (prehide), use
// its cosmetic rules too, and search for a platform only briefly: a capture waits for the first
// search, and the cookie-notice filter list hides late banners it would miss.
const CONFIG = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  enableHeuristicDetection: false,
  detectRetries: 6,
  isMainWorld: true,
  prehideTimeout: 2500,
  logs: {
    lifecycle: false,
    rulesteps: false,
    detectionsteps: false,
    evals: false,
    errors: false,
    messages: false,
    waits: false,
  },
};

let source: string | undefined;

/**
 * The script every document of a render with block_cookie_banners runs first: answers
 * autoconsent's init request with the rules and the settings above, passes its state reports
 * to the binding, then starts autoconsent's Playwright bundle. Built once per process.
 */
export function consentScript(): string {
  if (source !== undefined) return source;
  const packageMain = fileURLToPath(import.meta.resolve('@duckduckgo/autoconsent'));
  const bundle = readFileSync(path.join(path.dirname(packageMain), 'autoconsent.playwright.js'), 'utf8');
  const rules = readFileSync(
    fileURLToPath(import.meta.resolve('@duckduckgo/autoconsent/rules/compact-rules.json')),
    'utf8',
  );
  source = `${inPageSource(connectAutoconsent, CONSENT_BINDING, CONFIG, rules)}\n${bundle}`;
  return source;
}

/** What one autoconsent instance (one document) last reported. */
interface ConsentReport {
  id: string;
  top: boolean;
  lifecycle: string;
  attempts: number;
}

// States in which autoconsent is still at work on a banner it found.
const ANSWERING = new Set(['cmpDetected', 'openPopupDetected', 'runningOptOut']);
// States before its first search for a platform has ended.
const STARTING = new Set(['loading', 'waitingForInitResponse', 'initialized']);

/** Follows autoconsent's reports on `session`; `settled` resolves once no document is still answering a banner. */
export function watchConsent(session: Pick<Cdp, 'on' | 'off'>): {
  settled(limitMs: number): Promise<void>;
  stop(): void;
} {
  const reports = new Map<string, ConsentReport>();
  let changed = () => {};
  const onBinding = (event: { name: string; payload: string }) => {
    if (event.name !== CONSENT_BINDING) return;
    try {
      const report = JSON.parse(event.payload) as ConsentReport;
      reports.set(report.id, report);
      changed();
    } catch {
      // Not autoconsent's: a page calling the binding itself.
    }
  };
  session.on('Runtime.bindingCalled', onBinding);
  // The top document is busy until its first search for a platform is over (a second one began or
  // it found none); any document is busy while it answers a banner.
  const busy = () =>
    [...reports.values()].some(
      (report) =>
        ANSWERING.has(report.lifecycle) ||
        (report.top && (STARTING.has(report.lifecycle) || (report.lifecycle === 'started' && report.attempts < 2))),
    );
  return {
    settled(limitMs) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(limitMs, CONSENT_WAIT_MS));
        function done() {
          clearTimeout(timer);
          changed = () => {};
          resolve();
        }
        changed = () => {
          if (!busy() && [...reports.values()].some((report) => report.top)) done();
        };
        changed();
      });
    },
    stop() {
      changed = () => {};
      session.off('Runtime.bindingCalled', onBinding);
    },
  };
}
