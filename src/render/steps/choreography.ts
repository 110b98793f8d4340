// The scroll scenario of an animation: the page scrolled down in eased steps and back, run in the
// page itself (frame-exact, on the page's own clock; in-page/scroll.ts) while the recorder samples the screen, and a
// navigation to another page on the way when scroll_try_navigate asks for one (docs/animate.md).
import type { Page } from 'playwright-core';
import type { AnimationOptions } from '../../domain/animation.ts';
import type { RenderOptions } from '../../domain/options.ts';
import { inPage } from '../browser/in-page.ts';
import { easingCurves, hintedLink, scrollPage, type ScrollPlan } from '../in-page/scroll.ts';
import { checkTargetUrl } from '../../net/target.ts';
import { evaluateIsolated } from '../browser/playwright.ts';
import { openDocument, untilAborted } from './page.ts';

function scrollPlan(animation: AnimationOptions, elapsedMs: number): ScrollPlan {
  const after = (ms: number | undefined) => (ms === undefined ? null : Math.max(0, ms - elapsedMs));
  return {
    easing: animation.scroll_easing,
    by: animation.scroll_by,
    stepMs: animation.scroll_duration,
    delayMs: animation.scroll_delay,
    startDelayMs: animation.scroll_start_immediately || elapsedMs > 0 ? 0 : animation.scroll_start_delay,
    back: animation.scroll_back,
    backRepeat: animation.scroll_back_algorithm === 'repeat',
    backAfterMs: after(animation.scroll_back_after_duration),
    stopAfterMs: after(animation.scroll_stop_after_duration),
    toEndAfterMs: after(animation.scroll_to_end_after),
    tillSelector: animation.scroll_till_selector ?? null,
    tillAdjustTop: animation.scroll_till_selector_adjust_top,
  };
}

/** Waits `ms`, or rejects with the deadline's reason when it aborts first. */
export function pause(ms: number, deadline: AbortSignal): Promise<void> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      reject(deadline.reason);
    };
    const timer = setTimeout(() => {
      deadline.removeEventListener('abort', stop);
      resolve();
    }, ms);
    deadline.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Checks a URL a render is about to navigate to by the request's own address rules: an absolute
 * http(s) URL whose host passes them (the egress proxy's checkTarget on a worker); throws the
 * refusal naming `param`.
 */
export type TargetCheck = (raw: string, param: string) => Promise<URL>;

/** Without an egress proxy (a browser of the tests'): the scheme and form of the URL, every address allowed. */
export const webUrlOnly: TargetCheck = (raw, param) => checkTargetUrl(raw, { allowPrivate: true, param });

/**
 * The link the hints name on `page`, or null. The page chose it and the page is hostile
 * (docs/security.md): it is looked for in an isolated world, where the page's rewrites of
 * `RegExp`, `String` or an anchor's `href` getter do not reach, and what comes back is checked in
 * Node like `scroll_navigate_to_url` at the ingress before anything navigates to it. A link that
 * fails the check fails the render with its refusal (url_not_allowed naming
 * scroll_navigate_link_hints).
 */
async function linkOfPage(
  page: Page,
  hints: readonly string[],
  checkTarget: TargetCheck,
  signal: AbortSignal,
): Promise<string | null> {
  const link = await untilAborted(signal, evaluateIsolated(page, inPage(hintedLink), hints));
  if (link === null) return null;
  if (typeof link !== 'string') throw new Error('the link search answered something other than a URL');
  return (await untilAborted(signal, checkTarget(link, 'scroll_navigate_link_hints'))).href;
}

/** A running scenario: its end (or failure), and how to stop it when the recording ends first. */
export interface Choreography {
  done: Promise<void>;
  /** Stops what is still to come (a pending navigation above all): the page may serve another render next. */
  stop(): void;
}

/**
 * Starts the scenario on `page`: nothing to do for `default`; for `scroll`, the scroll script,
 * and with `scroll_try_navigate` a navigation after `scroll_navigate_after` ms (to
 * `scroll_navigate_to_url`, else to a hinted link; none found, the scroll goes on) through the
 * render's own navigation step, then the scroll again on the new page. `onNavigated` runs once
 * the new page has loaded (the recorder restarts its screencast there).
 */
export function startChoreography(
  page: Page,
  options: RenderOptions,
  animation: AnimationOptions,
  deadline: AbortSignal,
  onNavigated: () => Promise<void>,
  checkTarget: TargetCheck = webUrlOnly,
): Choreography {
  const stopped = new AbortController();
  const stop = () => stopped.abort(new Error('the recording ended'));
  if (animation.scenario !== 'scroll') return { done: Promise.resolve(), stop };
  // The scroll script itself ends with the page (the pool wipes it before it serves again).
  const signal = AbortSignal.any([deadline, stopped.signal]);
  const startedAt = Date.now();
  const scroll = (elapsedMs: number) =>
    untilAborted(signal, page.evaluate(inPage(scrollPage, [easingCurves]), scrollPlan(animation, elapsedMs)));
  if (!animation.scroll_try_navigate) return { done: scroll(0), stop };

  const done = (async () => {
    // The first page's script ends with its page when the navigation comes: that is not a failure
    // (nor is its end with the deadline, which the recorder reports itself).
    const first = scroll(0).catch(() => {});
    const afterMs = animation.scroll_navigate_after ?? (animation.duration * 1000) / 2;
    await pause(afterMs, signal);
    const target =
      animation.scroll_navigate_to_url ??
      (await linkOfPage(page, animation.scroll_navigate_link_hints, checkTarget, signal));
    if (!target) return first;
    await openDocument(page, { ...options, url: target, html: undefined, markdown: undefined }, signal);
    await first;
    await onNavigated();
    await scroll(Date.now() - startedAt);
  })();
  return { done, stop };
}
