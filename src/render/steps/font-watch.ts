// The page's web fonts: watched from before navigation, and waited for before the output is
// made (docs/capture.md, "Before the capture: web fonts").

import type { Page } from 'playwright-core';
import { type NetworkRequest, watchNetwork } from '../browser/playwright.ts';
import { cdp } from '../browser/cdp.ts';
import { inPageSource } from '../browser/in-page.ts';
import { fontsReady } from '../in-page/steps.ts';
import { untilAborted } from '../browser/progress.ts';
import type { FontWatch, PageStep } from './page-step.ts';

/** The longest a capture waits for the page's web fonts (docs/capture.md). */
export const FONT_WAIT_MS = 5000;

/**
 * Starts watching the page's font requests (before navigation, so none is missed); the render
 * keeps the watch on its PageStep (`fonts`) for `awaitFonts`. It makes no browser call of its own.
 */
export function watchFonts(page: Page): FontWatch {
  const inFlight = new Set<NetworkRequest>();
  const waiters = new Set<() => void>();
  const onDone = (request: NetworkRequest) => {
    if (!inFlight.delete(request) || inFlight.size > 0) return;
    for (const wake of waiters) wake();
  };
  const requests = watchNetwork(page, {
    request: (request) => {
      if (request.resourceType() === 'font') inFlight.add(request);
    },
    finished: onDone,
    failed: onDone,
  });
  const watch: FontWatch = {
    inFlight: () => inFlight.size,
    settled(ms) {
      if (inFlight.size === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const done = (settled: boolean) => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(settled);
        };
        const wake = () => done(true);
        const timer = setTimeout(() => done(false), ms);
        waiters.add(wake);
      });
    },
    stop: () => requests.stop(),
  };
  return watch;
}

/**
 * Waits while the page's web fonts are loading (fonts that started loading after `load`, or that
 * no layout had asked for yet, included), at most FONT_WAIT_MS and never past the render's time;
 * false when it gave up with fonts still loading. Font requests in flight (watchFonts) are waited
 * for here; then `document.fonts` is asked, after a layout, whether the fonts are ready to draw:
 * one Runtime.evaluate on `session` that answers at once on a page whose fonts are in.
 */
export async function awaitFonts({ session, progress, fonts: watch }: PageStep): Promise<boolean> {
  const deadline = progress.signal;
  const endsAt = Date.now() + Math.min(FONT_WAIT_MS, progress.timeLeft());
  if (watch && watch.inFlight() > 0 && !(await untilAborted(deadline, watch.settled(endsAt - Date.now()))))
    return false;
  const { result } = await untilAborted(
    deadline,
    cdp(session).Runtime.evaluate({
      expression: inPageSource(fontsReady, Math.max(1, endsAt - Date.now())),
      awaitPromise: true,
      returnByValue: true,
    }),
  );
  return result.value !== false;
}
