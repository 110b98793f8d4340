// The whole page: its size as Node believes it, the scroll that loads what loads on scroll, the
// bottom bars pinned, the budgets that bound its height, and the capture a viewport at a time
// (full_page_algorithm=by_sections) that screenshot.ts falls back to.

import type { CDPSession, Page } from 'playwright-core';
import { maxImageSide } from '../../domain/formats.ts';
import { FULL_PAGE_MAX_HEIGHT, MAX_CAPTURE_PIXELS, renderDefaults, type RenderOptions } from '../../domain/options.ts';
import { captureFormat } from './image.ts';
import { cdp } from '../browser/cdp.ts';
import { evaluateIsolated, type NetworkRequest, watchNetwork } from '../browser/playwright.ts';
import { inPage } from '../browser/in-page.ts';
import {
  fullPage,
  type FullPageTask,
  scrollWatchers,
  pinBottomBars as pinBarsInPage,
  type ScrollStep,
  scrollPageTo,
  sectionBars,
  showSection,
} from '../in-page/screenshot.ts';
import type { UndoStack } from '../browser/progress.ts';
import { untilAborted } from '../steps/page.ts';

/** full_page_scroll_delay when none is given: the longest pause, each step waiting only while the page loads. */
const DEFAULT_SCROLL_DELAY = renderDefaults.full_page_scroll_delay;

/** A capture rectangle in document CSS px. */
export type Clip = { x: number; y: number; width: number; height: number; zoom?: number };

/**
 * A length the page reported, as Node takes it (docs/security.md, "The page is hostile"): a finite
 * number of at least 0 (else 0), and never more than `most`. The capture's own budgets bound it further.
 */
export function believable(length: unknown, most = Number.MAX_SAFE_INTEGER): number {
  return typeof length === 'number' && Number.isFinite(length) ? Math.min(Math.max(0, length), most) : 0;
}

/** A size the page reported, each side believable. */
function believableSize(size: unknown): { width: number; height: number } {
  const { width, height } = (size ?? {}) as { width?: unknown; height?: unknown };
  return { width: believable(width), height: believable(height) };
}

/** The whole scrollable document's size in CSS px (never less than the viewport), read in an isolated world. */
export async function documentSize(page: Page, deadline: AbortSignal): Promise<{ width: number; height: number }> {
  return believableSize(
    await untilAborted(deadline, evaluateIsolated(page, inPage(fullPage), { kind: 'size' } as const)),
  );
}

/**
 * The size of everything a full-page capture shows. When the document does not scroll but an
 * element does (the app shell's scroller), that element and its ancestors are let out to their content's
 * height (overflow visible, height auto, a fixed or inset box made absolute and free at the
 * bottom), so the document holds the element's whole content and is captured like any long
 * document; the viewport keeps its size, so 100vh sections and fixed headers stay as they were.
 * The page is not put back: it is navigated away from before it serves again.
 */
export async function fullPageSize(page: Page, deadline: AbortSignal): Promise<{ width: number; height: number }> {
  return believableSize(await untilAborted(deadline, page.evaluate(inPage(fullPage), { kind: 'letOutSize' } as const)));
}

/** Lets an app shell's scroller out to its content (as a full-page capture does), so that a print holds all of it. */
export async function letOutScroller(page: Page, deadline: AbortSignal): Promise<void> {
  await untilAborted(deadline, page.evaluate(inPage(fullPage), { kind: 'letOut' } as const));
}

// The capture's rectangle: the whole content, cut to the pixel budget and at fullPageMaxHeight.
export function fullPageClip(content: { width: number; height: number }, options: RenderOptions): Clip {
  // Never less than the viewport, whatever the page said its content measures.
  const width = Math.max(content.width, options.viewport_width);
  const height = Math.max(content.height, options.viewport_height);
  return withinPixelBudget({ x: 0, y: 0, width, height }, options);
}

/**
 * The tallest full page a capture `width` CSS px wide may have: full_page_max_height, never above
 * FULL_PAGE_MAX_HEIGHT, and lower where MAX_CAPTURE_PIXELS at the render's scale ends first.
 */
export function fullPageMaxHeight(
  options: Pick<RenderOptions, 'full_page_max_height' | 'device_scale_factor' | 'format'>,
  width: number,
): number {
  const scale = options.device_scale_factor;
  const budget = Math.max(1, Math.floor(MAX_CAPTURE_PIXELS / (Math.max(1, width) * scale * scale)));
  // And the format's own longest side (WebP's 16383 px), at the render's scale.
  const side = Math.floor(maxImageSide(options.format) / scale);
  return Math.min(options.full_page_max_height, FULL_PAGE_MAX_HEIGHT, budget, side);
}

// A page or element box cut to what the pixel budget allows: first in width (a document far
// wider than it is tall keeps at least a viewport's height), then at fullPageMaxHeight.
export function withinPixelBudget(clip: Clip, options: RenderOptions): Clip {
  const scale = options.device_scale_factor;
  const widest = Math.floor(MAX_CAPTURE_PIXELS / (scale * scale * Math.min(clip.height, options.viewport_height)));
  const width = Math.min(clip.width, Math.max(options.viewport_width, widest), maxImageSide(options.format) / scale);
  return { ...clip, width, height: Math.min(clip.height, fullPageMaxHeight(options, width)) };
}

// Listeners that a scroll sets off: a lazy loader's or an infinite list's.
const SCROLL_EVENTS = new Set(['scroll', 'wheel', 'touchmove']);
// The inspector's handles of one check, released together.
const LAZY_CHECK_GROUP = 'shutterbus-loads-on-scroll';

/**
 * Whether scrolling may change what a full-page capture shows: a lazy image or frame (read in an
 * isolated world), or, on a page that runs scripts, an app shell (its document scrolls a viewport
 * or less), a scroll, wheel or touchmove listener on its window or document, or an
 * IntersectionObserver anywhere in its heap (asked last: the inspector's
 * search of the heap collects its garbage first, ≈ 50–90 ms). The page's own world is only read,
 * by side-effect-free evaluations, and what it answers only decides whether the scroll runs,
 * within its own bounds: any doubt is a yes.
 */
async function loadsOnScroll(page: Page, session: CDPSession, deadline: AbortSignal): Promise<boolean> {
  const { Runtime, DOMDebugger } = cdp(session);
  const read = async (expression: string) => {
    const { result, exceptionDetails } = await untilAborted(
      deadline,
      Runtime.evaluate({ expression, objectGroup: LAZY_CHECK_GROUP, throwOnSideEffect: true, silent: true }),
    );
    return exceptionDetails ? undefined : result.objectId;
  };
  try {
    const watchers = await untilAborted(deadline, evaluateIsolated(page, inPage(scrollWatchers), undefined));
    if (watchers?.lazy !== false) return true;
    if (watchers.scripted === false) return false;
    // A scripted app shell: its scroller's listeners are not the window's; it is scrolled.
    if (watchers.shell !== false) return true;
    for (const target of ['window', 'document']) {
      const objectId = await read(target);
      if (!objectId) return true;
      const { listeners } = await untilAborted(deadline, DOMDebugger.getEventListeners({ objectId }));
      if (listeners.some((listener) => SCROLL_EVENTS.has(listener.type))) return true;
    }
    const prototype = await read('IntersectionObserver.prototype');
    if (!prototype) return true;
    const { objects } = await untilAborted(
      deadline,
      Runtime.queryObjects({ prototypeObjectId: prototype, objectGroup: LAZY_CHECK_GROUP }),
    );
    // The inspector's own array: its description is "Array(n)".
    return /^Array\((\d+)\)$/.exec(objects.description ?? '')?.[1] !== '0';
  } catch (error) {
    if (deadline.aborted) throw error;
    return true;
  } finally {
    void Runtime.releaseObjectGroup({ objectGroup: LAZY_CHECK_GROUP }).catch(() => {});
  }
}

/**
 * Puts the page's bottom bars (a fixed or sticky footer, a cookie bar: fixed or sticky boxes
 * whose bottom is the viewport's, in its lower half) at the bottom of a full-page capture of
 * `captureHeight` CSS px, where a person scrolling to the end sees them, rather than a viewport's
 * height down it, over the content: a fixed one moved down by a transform, a sticky one let back
 * to its place in the flow. Headers need nothing: at the top of the page they are where they
 * belong. The page is not put back: it is navigated away from before it serves again.
 */
export async function pinBottomBars(page: Page, captureHeight: number, deadline: AbortSignal): Promise<void> {
  await untilAborted(deadline, page.evaluate(inPage(pinBarsInPage), captureHeight));
}

// Scrolls down by full_page_scroll_by (default the viewport height) until the bottom of what will
// be captured (the page may grow as lazy content arrives) has been in view; then back to the top.
// A page whose document does not scroll has its app-shell scroller scrolled instead. Each step
// waits only while the page is loading what it brought into view: requests in flight (any of the
// page's started since the scroll began, from Playwright's network events), an image near the view not yet complete, the
// document changing or growing in the step's two frames; at most full_page_scroll_delay ms. A
// step that loads nothing costs its two frames. A delay given other than the default is waited in
// full at every step, as the caller asked.
export async function scrollThrough(
  page: Page,
  session: CDPSession,
  options: RenderOptions,
  deadline: AbortSignal,
): Promise<void> {
  // At the default delay the scroll is only for what loads on scroll: a page with nothing of the
  // kind is captured as it stands. A delay the caller chose is a scroll they asked for.
  if (options.full_page_scroll_delay === DEFAULT_SCROLL_DELAY && !(await loadsOnScroll(page, session, deadline)))
    return;
  // A document is at least as wide as the viewport: the height at that width is never short.
  const maxHeight = fullPageMaxHeight(options, options.viewport_width);
  // Requests started since the scroll began, and those of them still in flight.
  const inFlight = new Set<NetworkRequest>();
  let started = 0;
  let quiet: (() => void) | null = null;
  const settled = (request: NetworkRequest) => {
    if (inFlight.delete(request) && inFlight.size === 0) quiet?.();
  };
  const requests = watchNetwork(page, {
    request: (request) => {
      inFlight.add(request);
      started += 1;
    },
    finished: settled,
    failed: settled,
  });
  // In an isolated world: the page's own getters (a scrollHeight that answers NaN) do not steer it.
  const evaluate = (task: FullPageTask) =>
    untilAborted(deadline, evaluateIsolated(page, inPage(fullPage), task)) as Promise<ScrollStep>;
  // The page says when the bottom is reached, and a page may lie: the steps that reach
  // maxHeight at the viewport's height are the most it is given.
  const maxSteps = Math.ceil(maxHeight / Math.max(1, options.full_page_scroll_by || options.viewport_height)) + 1;
  try {
    for (let index = 1; ; index++) {
      if (index > maxSteps) {
        await evaluate({ kind: 'top' });
        return;
      }
      const startedBefore = started;
      let step = await evaluate({ kind: 'scrollStep', index, step: options.full_page_scroll_by ?? 0, maxHeight });
      if (step.done) return;
      const until = performance.now() + options.full_page_scroll_delay;
      if (options.full_page_scroll_delay !== DEFAULT_SCROLL_DELAY) {
        // A delay the caller chose is a pause per step (ScreenshotOne's meaning), waited in full.
        await untilAborted(deadline, new Promise((resolve) => setTimeout(resolve, options.full_page_scroll_delay)));
        continue;
      }
      let startedSince = startedBefore;
      while ((step.busy || inFlight.size > 0 || started > startedSince) && performance.now() < until) {
        startedSince = started;
        if (inFlight.size > 0) await quietOrTimeout(until - performance.now(), (wake) => (quiet = wake));
        quiet = null;
        step = await evaluate({ kind: 'settle' });
      }
    }
  } finally {
    requests.stop();
  }
}

// Resolves once `listen`'s wake is called, or after `ms`.
function quietOrTimeout(ms: number, listen: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    listen(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * full_page_algorithm=by_sections: the page scrolled one viewport at a time, each section captured
 * as the viewport paints it (lazy and scroll-driven content in place), and the sections stitched
 * into one image of `clip` (the full page, in CSS px) with sharp. As in one capture of the whole
 * page, a fixed or sticky header appears once at the top and a bottom bar once at the bottom
 * (sectionBars). The scroll goes back to the top after; the bars are not put back, as in pinBottomBars.
 */
export async function captureBySections(
  page: Page,
  session: CDPSession,
  clip: Clip,
  options: RenderOptions,
  deadline: AbortSignal,
  undo: UndoStack,
): Promise<Buffer> {
  // As in captureWith: a mobile render's scale is in its session's metrics, not in the clip; the
  // image's pixels per CSS px are the device scale factor either way.
  const scale = options.viewport_mobile ? 1 : options.device_scale_factor;
  const pixels = options.device_scale_factor;
  const width = Math.min(clip.width, options.viewport_width);
  const sections: { top: number; image: Buffer }[] = [];
  undo.defer(() => page.evaluate(inPage(scrollPageTo), { left: 0, top: 0 }));
  const bars = await untilAborted(deadline, page.evaluateHandle(inPage(sectionBars)));
  undo.defer(() => bars.dispose());
  for (let y = 0; y < clip.height; y += options.viewport_height) {
    const height = Math.min(options.viewport_height, clip.height - y);
    const section = { top: y, first: y === 0, last: y + options.viewport_height >= clip.height };
    // Scrolled there (the browser clamps at the bottom), the fixed boxes shown once, and painted
    // twice before the capture.
    await untilAborted(deadline, bars.evaluate(inPage(showSection), section));
    const shot = await untilAborted(
      deadline,
      cdp(session).Page.captureScreenshot({
        // Stitched and encoded again below: the fast encoding's larger sections cost nothing.
        format: 'png',
        optimizeForSpeed: true,
        clip: { x: 0, y, width, height, scale },
        captureBeyondViewport: false,
      }),
    );
    sections.push({ top: Math.round(y * pixels), image: Buffer.from(shot.data, 'base64') });
  }
  const sharp = (await import('sharp')).default;
  const stitched = sharp({
    create: {
      width: Math.round(width * pixels),
      height: Math.round(clip.height * pixels),
      channels: 4,
      background: { r: 255, g: 255, b: 255, alpha: options.omit_background ? 0 : 1 },
    },
    limitInputPixels: false,
  }).composite(sections.map(({ top, image }) => ({ input: image, top, left: 0 })));
  const format = captureFormat(options.format);
  const image = await (format === 'png'
    ? stitched.png()
    : stitched.toFormat(format, { quality: options.image_quality })
  ).toBuffer();
  return image;
}
