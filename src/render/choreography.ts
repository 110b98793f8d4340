// The scroll scenario of an animation: the page scrolled down in eased steps and back, run in the
// page itself (frame-exact, on the page's own clock) while the recorder samples the screen, and a
// navigation to another page on the way when scroll_try_navigate asks for one (docs/animate.md).
import type { Page } from 'playwright-core';
import type { AnimationOptions } from '../domain/animation.ts';
import type { RenderOptions } from '../domain/options.ts';
import { navigate, untilAborted } from './steps.ts';

/**
 * The 13 curves of `scroll_easing`, progress 0..1 to position 0..1, as page source: the in-page
 * script is sent as text (a transpiled function's source would carry the transpiler's helpers).
 */
export const EASINGS_SOURCE = `({
  linear: (t) => t,
  ease_in_quad: (t) => t * t,
  ease_out_quad: (t) => t * (2 - t),
  ease_in_out_quad: (t) => (t < 0.5 ? 2 * t * t : -1 + (4 - 2 * t) * t),
  ease_in_cubic: (t) => t * t * t,
  ease_out_cubic: (t) => (t - 1) ** 3 + 1,
  ease_in_out_cubic: (t) => (t < 0.5 ? 4 * t ** 3 : (t - 1) * (2 * t - 2) * (2 * t - 2) + 1),
  ease_in_quart: (t) => t ** 4,
  ease_out_quart: (t) => 1 - (t - 1) ** 4,
  ease_in_out_quart: (t) => (t < 0.5 ? 8 * t ** 4 : 1 - 8 * (t - 1) ** 4),
  ease_in_quint: (t) => t ** 5,
  ease_out_quint: (t) => 1 + (t - 1) ** 5,
  ease_in_out_quint: (t) => (t < 0.5 ? 16 * t ** 5 : 1 + 16 * (t - 1) ** 5),
})`;

/** The scroll plan the in-page script follows; times in ms from its start, null when not asked for. */
interface ScrollPlan {
  easing: string;
  by: number;
  stepMs: number;
  delayMs: number;
  startDelayMs: number;
  back: boolean;
  backRepeat: boolean;
  backAfterMs: number | null;
  stopAfterMs: number | null;
  toEndAfterMs: number | null;
  tillSelector: string | null;
  tillAdjustTop: number;
}

// Down in steps of `by` (each eased over `stepMs`, then `delayMs` of rest) to the end of the page
// or the element of `tillSelector`; then back to the top in one step or in steps. A page that does
// not move when scrolled ends the way down rather than looping.
const SCROLL_SCRIPT = `async (plan) => {
  const curves = ${EASINGS_SOURCE};
  const ease = curves[plan.easing] || curves.linear;
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const root = document.scrollingElement || document.documentElement;
  const bottom = () => Math.max(0, root.scrollHeight - window.innerHeight);
  const end = () => {
    const element = plan.tillSelector ? document.querySelector(plan.tillSelector) : null;
    if (!element) return bottom();
    const top = element.getBoundingClientRect().top + window.scrollY + plan.tillAdjustTop;
    return Math.min(bottom(), Math.max(0, top));
  };
  const stopAt = () => Math.min(plan.stopAfterMs ?? Infinity, plan.backAfterMs ?? Infinity);
  const glide = (to, ms, until) => new Promise((resolve) => {
    const from = window.scrollY;
    const t0 = performance.now();
    const frame = () => {
      const p = Math.min(1, (performance.now() - t0) / ms);
      window.scrollTo({ left: window.scrollX, top: from + (to - from) * ease(p), behavior: 'instant' });
      if (p < 1 && elapsed() < until) requestAnimationFrame(frame);
      else resolve();
    };
    requestAnimationFrame(frame);
  });
  if (plan.startDelayMs > 0) await sleep(plan.startDelayMs);
  for (;;) {
    const target = end();
    if (window.scrollY >= target - 1 || elapsed() >= stopAt()) break;
    const toEnd = plan.toEndAfterMs !== null && elapsed() >= plan.toEndAfterMs;
    const from = window.scrollY;
    await glide(toEnd ? target : Math.min(target, from + plan.by), plan.stepMs, stopAt());
    if (Math.abs(window.scrollY - from) < 1) break;
    if (window.scrollY < end() - 1) await sleep(Math.min(plan.delayMs, Math.max(0, stopAt() - elapsed())));
  }
  if (!plan.back || (plan.stopAfterMs !== null && elapsed() >= plan.stopAfterMs)) return;
  await sleep(plan.delayMs);
  if (!plan.backRepeat) return glide(0, plan.stepMs, Infinity);
  while (window.scrollY > 0) {
    await glide(Math.max(0, window.scrollY - plan.by), plan.stepMs, Infinity);
    if (window.scrollY > 0) await sleep(plan.delayMs);
  }
}`;

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

// The first link of the page whose text or address holds one of the hints (case ignored).
const HINTED_LINK_SCRIPT = `(hints) => {
  const words = hints.map((hint) => hint.toLowerCase()).filter(Boolean);
  for (const link of document.querySelectorAll('a[href]')) {
    if (!/^https?:/.test(link.href)) continue;
    const text = ((link.textContent || '') + ' ' + link.href).toLowerCase();
    if (words.some((word) => text.includes(word))) return link.href;
  }
  return null;
}`;

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
): Choreography {
  const stopped = new AbortController();
  const stop = () => stopped.abort(new Error('the recording ended'));
  if (animation.scenario !== 'scroll') return { done: Promise.resolve(), stop };
  // The scroll script itself ends with the page (the pool wipes it before it serves again).
  const signal = AbortSignal.any([deadline, stopped.signal]);
  const startedAt = Date.now();
  const scroll = (elapsedMs: number) =>
    untilAborted(signal, page.evaluate(`(${SCROLL_SCRIPT})(${JSON.stringify(scrollPlan(animation, elapsedMs))})`)).then(
      () => {},
    );
  if (!animation.scroll_try_navigate) return { done: scroll(0), stop };

  const done = (async () => {
    // The first page's script ends with its page when the navigation comes: that is not a failure
    // (nor is its end with the deadline, which the recorder reports itself).
    const first = scroll(0).catch(() => {});
    const afterMs = animation.scroll_navigate_after ?? (animation.duration * 1000) / 2;
    await pause(afterMs, signal);
    const target =
      animation.scroll_navigate_to_url ??
      ((await untilAborted(
        signal,
        page.evaluate(`(${HINTED_LINK_SCRIPT})(${JSON.stringify(animation.scroll_navigate_link_hints)})`),
      )) as string | null);
    if (!target) return first;
    await navigate(page, { ...options, url: target, html: undefined, markdown: undefined }, signal);
    await first;
    await onNavigated();
    await scroll(Date.now() - startedAt);
  })();
  return { done, stop };
}
