// In the page, for an animation's scroll scenario (src/render/steps/choreography.ts).

/** The scroll plan scrollPage follows; times in ms from its start, null when not asked for. */
export interface ScrollPlan {
  /** One of `scroll_easing`'s curves (src/domain/animation.ts); another is linear. */
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

/**
 * The 13 curves of `scroll_easing`, progress 0..1 to position 0..1. A helper of scrollPage: it
 * reaches the page with it (`inPage(scrollPage, [easingCurves])`).
 */
export function easingCurves(): Record<string, (t: number) => number> {
  return {
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
  };
}

/**
 * Down in steps of `by` (each eased over `stepMs`, then `delayMs` of rest) to the end of the page
 * or the element of `tillSelector`; then back to the top in one step or in steps. A page that does
 * not move when scrolled ends the way down rather than looping.
 */
export async function scrollPage(plan: ScrollPlan): Promise<void> {
  const curves = easingCurves();
  const ease = curves[plan.easing] || curves.linear;
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const root = document.scrollingElement || document.documentElement;
  const bottom = () => Math.max(0, root.scrollHeight - window.innerHeight);
  const end = () => {
    const element = plan.tillSelector ? document.querySelector(plan.tillSelector) : null;
    if (!element) return bottom();
    const top = element.getBoundingClientRect().top + window.scrollY + plan.tillAdjustTop;
    return Math.min(bottom(), Math.max(0, top));
  };
  const stopAt = () => Math.min(plan.stopAfterMs ?? Infinity, plan.backAfterMs ?? Infinity);
  const glide = (to: number, ms: number, until: number) =>
    new Promise<void>((resolve) => {
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
}

/** The address of the first link of the page whose text or address holds one of `hints` (case ignored). */
export function hintedLink(hints: readonly string[]): string | null {
  const words = hints.map((hint) => hint.toLowerCase()).filter(Boolean);
  for (const link of document.querySelectorAll<HTMLAnchorElement>('a[href]')) {
    if (!/^https?:/.test(link.href)) continue;
    const text = `${link.textContent || ''} ${link.href}`.toLowerCase();
    if (words.some((word) => text.includes(word))) return link.href;
  }
  return null;
}
