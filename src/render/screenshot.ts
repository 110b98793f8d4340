// The capture step: the viewport, an element, a clip or the whole page, taken over CDP.

import type { CDPSession, Page } from 'playwright-core';
import { FULL_PAGE_MAX_HEIGHT, MAX_CAPTURE_PIXELS, type RenderOptions } from '../domain/options.ts';
import { captureFormat } from './image.ts';
import { findElement, untilAborted } from './steps.ts';

/** The captured image and whether `selector` (when asked for) matched an element. */
export interface Capture {
  image: Buffer;
  selectorFound: boolean;
}

/**
 * Captures the image through CDP `Page.captureScreenshot`, which does png, jpeg and webp alike
 * (the other image formats are converted from a png by image.ts):
 * the `clip_*` rectangle, the element of `selector` (falling back to the viewport when none
 * matches), the whole page up to `full_page_max_height` CSS px or the pixel budget (scrolled through first with
 * `full_page_scroll`), or the viewport, over `session` (a CDP session on the page). With
 * `omit_background` the default background is transparent for the capture alone.
 */
export async function capture(page: Page, options: RenderOptions, deadline: AbortSignal, session: CDPSession): Promise<Capture> {
  let clip: Clip | undefined;
  let selectorFound = true;
  // What the capture changes on the page (background, viewport, scroll), undone last first once
  // it is taken; a render that asks for none of it makes no call here.
  const undo: Array<() => Promise<unknown>> = [];
  let taken = false;
  try {
    const fixedViewport = options.capture_beyond_viewport === false;
    if (options.clip_x !== undefined && options.clip_y !== undefined && options.clip_width !== undefined && options.clip_height !== undefined) {
      clip = { x: options.clip_x, y: options.clip_y, width: options.clip_width, height: options.clip_height };
    } else if (options.selector) {
      clip = await elementClip(page, options.selector, deadline, fixedViewport ? undo : undefined);
      selectorFound = clip !== undefined;
      if (clip) clip = withinPixelBudget(clip, options);
    } else if (options.full_page) {
      if (options.full_page_scroll ?? true) await scrollThrough(page, options, deadline);
      clip = await fullPageClip(page, options, deadline);
      if (fixedViewport) await growViewport(page, clip, deadline, undo);
    }
    if (options.omit_background) {
      // Transparent where the page paints nothing; the override outlives navigations, so it is
      // reset before the warm page serves again (a failed reset discards the page).
      undo.push(() => session.send('Emulation.setDefaultBackgroundColorOverride', {}));
      await untilAborted(deadline, session.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } }));
    }
    const captured = await captureWith(session, clip, beyondViewport(options, clip), selectorFound, options, deadline);
    taken = true;
    return captured;
  } finally {
    for (const step of undo.reverse()) {
      if (deadline.aborted) break; // The page is discarded anyway.
      await untilAborted(deadline, step()).catch((error) => {
        if (taken) throw error; // Otherwise the capture's own error is the one to report.
      });
    }
  }
}

// capture_beyond_viewport: as asked, else true with full_page or selector, and with clip_* when
// the rectangle reaches out of the viewport (so that it holds the page there, not a blank).
function beyondViewport(options: RenderOptions, clip: Clip | undefined): boolean {
  if (clip === undefined) return false;
  if (options.capture_beyond_viewport !== undefined) return options.capture_beyond_viewport;
  if (options.full_page || options.selector !== undefined) return true;
  return clip.x + clip.width > options.viewport_width || clip.y + clip.height > options.viewport_height;
}

// The screenshot itself, on an open CDP session.
async function captureWith(session: CDPSession, clip: Clip | undefined, beyondViewport: boolean, selectorFound: boolean, options: RenderOptions, deadline: AbortSignal): Promise<Capture> {
  clip ??= await viewportClip(session, options, deadline);
  // This session does not share Playwright's device-metrics override, so the clip's scale
  // carries device_scale_factor: a 200×100 CSS px element at 2 becomes 400×200 pixels. A mobile
  // render's metrics are on this session itself (src/render/emulation.ts): its scale is in them.
  const scale = (options.viewport_mobile ? 1 : options.device_scale_factor) * (clip.zoom ?? 1);
  const shot = await untilAborted(deadline, session.send('Page.captureScreenshot', {
    format: captureFormat(options.format),
    ...(captureFormat(options.format) === 'png' ? {} : { quality: options.image_quality }),
    clip: { x: clip.x, y: clip.y, width: clip.width, height: clip.height, scale },
    captureBeyondViewport: beyondViewport,
  }));
  return { image: Buffer.from(shot.data, 'base64'), selectorFound };
}

// capture_beyond_viewport=false with full_page: the viewport itself is made as large as the
// capture (the page lays out at that size, as in Puppeteer), then given back its size.
async function growViewport(page: Page, clip: Clip, deadline: AbortSignal, undo: Array<() => Promise<unknown>>): Promise<void> {
  const size = page.viewportSize();
  if (!size || (clip.width <= size.width && clip.height <= size.height)) return;
  undo.push(() => page.setViewportSize(size));
  await untilAborted(deadline, page.setViewportSize({ width: Math.max(size.width, clip.width), height: Math.max(size.height, clip.height) }));
}

/** A capture rectangle in document CSS px. */
type Clip = { x: number; y: number; width: number; height: number; zoom?: number };

// The element's box in document coordinates; undefined when nothing matches or it has no area.
// With `undo` (capture_beyond_viewport=false) the element is first scrolled to the top of the
// viewport, in the same evaluate, and the scroll back is added to `undo`.
async function elementClip(page: Page, selector: string, deadline: AbortSignal, undo?: Array<() => Promise<unknown>>): Promise<Clip | undefined> {
  const element = await findElement(page, selector, 'selector', deadline);
  if (!element) return undefined;
  type Box = Clip & { scrolledFrom?: { left: number; top: number } };
  const box = await untilAborted(deadline, element.evaluate<Box, boolean>((node, scrollFirst) => {
    const view = globalThis as unknown as { scrollX: number; scrollY: number };
    const from = { left: view.scrollX, top: view.scrollY };
    if (scrollFirst) (node as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start', inline: 'start', behavior: 'instant' });
    const rect = (node as unknown as { getBoundingClientRect(): Clip & { left: number; top: number } }).getBoundingClientRect();
    return { x: rect.left + view.scrollX, y: rect.top + view.scrollY, width: rect.width, height: rect.height, ...(scrollFirst ? { scrolledFrom: from } : {}) };
  }, undo !== undefined));
  const { scrolledFrom, ...clip } = box;
  if (scrolledFrom) undo!.push(() => page.evaluate<void, typeof scrolledFrom>((to) => (globalThis as unknown as { scrollTo(o: object): void }).scrollTo({ ...to, behavior: 'instant' }), scrolledFrom));
  return clip.width >= 1 && clip.height >= 1 ? clip : undefined;
}

// The visible viewport where it is scrolled to, in document coordinates.
async function viewportClip(session: CDPSession, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const { cssVisualViewport: view } = await untilAborted(deadline, session.send('Page.getLayoutMetrics'));
  // A mobile page laid out wider than the screen (its meta viewport) is shown zoomed out, as a
  // phone shows it: the clip covers the whole visible page and is scaled down by the same zoom.
  const zoom = view.scale > 0 && view.scale < 1 ? view.scale : 1;
  return { x: view.pageX, y: view.pageY, width: options.viewport_width / zoom, height: options.viewport_height / zoom, zoom };
}

// The document's height, as the full-page capture measures it.
const DOCUMENT_HEIGHT = 'Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0, window.innerHeight)';

/** The whole scrollable document's size in CSS px (never less than the viewport). */
export function documentSize(page: Page, deadline: AbortSignal): Promise<{ width: number; height: number }> {
  return untilAborted(deadline, page.evaluate<{ width: number; height: number }>(`({
    width: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0, window.innerWidth),
    height: ${DOCUMENT_HEIGHT},
  })`));
}

// The whole scrollable document, cut at fullPageMaxHeight.
async function fullPageClip(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const size = await documentSize(page, deadline);
  return withinPixelBudget({ x: 0, y: 0, width: size.width, height: size.height }, options);
}

/**
 * The tallest full page a capture `width` CSS px wide may have: full_page_max_height, never above
 * FULL_PAGE_MAX_HEIGHT, and lower where MAX_CAPTURE_PIXELS at the render's scale ends first.
 */
export function fullPageMaxHeight(options: Pick<RenderOptions, 'full_page_max_height' | 'device_scale_factor'>, width: number): number {
  const scale = options.device_scale_factor;
  const budget = Math.max(1, Math.floor(MAX_CAPTURE_PIXELS / (Math.max(1, width) * scale * scale)));
  return Math.min(options.full_page_max_height, FULL_PAGE_MAX_HEIGHT, budget);
}

// A page or element box cut to what the pixel budget allows: first in width (a document far
// wider than it is tall keeps at least a viewport's height), then at fullPageMaxHeight.
function withinPixelBudget(clip: Clip, options: RenderOptions): Clip {
  const scale = options.device_scale_factor;
  const widest = Math.floor(MAX_CAPTURE_PIXELS / (scale * scale * Math.min(clip.height, options.viewport_height)));
  const width = Math.min(clip.width, Math.max(options.viewport_width, widest));
  return { ...clip, width, height: Math.min(clip.height, fullPageMaxHeight(options, width)) };
}

// One page evaluate: scrolls down by full_page_scroll_by (default the viewport height), pausing
// full_page_scroll_delay ms at each step, until the bottom of what may be captured (the page may
// grow as lazy content arrives) has been in view; then back to the top.
async function scrollThrough(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<void> {
  // A document is at least as wide as the viewport: the height at that width is never short.
  const maxHeight = fullPageMaxHeight(options, options.viewport_width);
  await untilAborted(deadline, page.evaluate<void>(`(async () => {
    const step = ${options.full_page_scroll_by ?? 0} || window.innerHeight;
    const end = () => Math.min(${maxHeight}, ${DOCUMENT_HEIGHT});
    for (let y = step; y - step + window.innerHeight < end(); y += step) {
      window.scrollTo({ left: 0, top: y, behavior: 'instant' });
      await new Promise((resolve) => setTimeout(resolve, ${options.full_page_scroll_delay}));
    }
    window.scrollTo({ left: 0, top: 0, behavior: 'instant' });
  })()`));
}
