// The capture step: the viewport, an element, a clip or the whole page, taken over CDP.

import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';

import { warning, type RenderWarning } from '../../domain/warnings.ts';
import { captureFormat, pngIsIntermediate } from './image.ts';
import { cdp } from '../browser/cdp.ts';
import { inPage } from '../browser/in-page.ts';
import { elementBox, scrollPageTo } from '../in-page/screenshot.ts';
import type { UndoStack } from '../browser/progress.ts';
import { holdStillNow, maskElements } from '../steps/still.ts';
import { findElement, untilAborted } from '../steps/page.ts';
import { awaitFonts } from '../steps/font-watch.ts';
import type { PageStep } from '../steps/page-step.ts';
import {
  believable,
  captureBySections,
  type Clip,
  fullPageClip,
  fullPageSize,
  pinBottomBars,
  scrollThrough,
  withinPixelBudget,
} from './full-page.ts';

/** The captured image, whether `selector` (when asked for) matched an element, and what the caller should know. */
export interface Capture {
  image: Buffer;
  selectorFound: boolean;
  warnings: RenderWarning[];
}

/**
 * Captures the image through CDP `Page.captureScreenshot`, which does png, jpeg and webp alike
 * (the other image formats are converted from a png by image.ts):
 * the `clip_*` rectangle, the element of `selector` (falling back to the viewport when none
 * matches), the whole page up to `full_page_max_height` CSS px or the pixel budget (scrolled through first with
 * `full_page_scroll`), or the viewport, over `session` (a CDP session on the page). With
 * `omit_background` the default background is transparent for the capture alone.
 */
export async function capture(step: PageStep): Promise<Capture> {
  const { page, options, progress, session } = step;
  const deadline = progress.signal;
  let clip: Clip | undefined;
  let selectorFound = true;
  // What the capture changes on the page (background, viewport, scroll), undone once it is taken;
  // a render that asks for none of it makes no call here.
  const undo = progress.scope();
  const warnings: RenderWarning[] = [];
  try {
    const fixedViewport =
      options.capture_beyond_viewport === false ||
      (options.selector !== undefined &&
        options.selector_algorithm === 'clip' &&
        options.capture_beyond_viewport === undefined);
    if (
      options.clip_x !== undefined &&
      options.clip_y !== undefined &&
      options.clip_width !== undefined &&
      options.clip_height !== undefined
    ) {
      clip = { x: options.clip_x, y: options.clip_y, width: options.clip_width, height: options.clip_height };
    } else if (options.selector) {
      // Captured as the viewport paints it: scrolled to the top first unless selector_scroll_into_view=false.
      clip = await elementClip(
        page,
        options.selector,
        deadline,
        fixedViewport ? undo : undefined,
        options.selector_scroll_into_view,
      );
      selectorFound = clip !== undefined;
      if (clip) clip = withinPixelBudget(clip, options);
    } else if (options.full_page) {
      if (options.full_page_scroll ?? true) await scrollThrough(page, session, options, deadline);
      const content = await fullPageSize(page, deadline);
      clip = fullPageClip(content, options);
      // Generic on purpose: whatever limit made the capture shorter than the page, the caller hears of it.
      if (clip.height < content.height)
        warnings.push(
          warning(
            'full_page_cut',
            `The page is ${Math.ceil(content.height)} px tall; the capture ${Math.floor(clip.height)} px.`,
          ),
        );
      // by_sections scrolls the viewport through the page instead, and places the bars itself.
      if (options.full_page_algorithm !== 'by_sections') {
        if (fixedViewport) await growViewport(page, clip, deadline, undo);
        else await pinBottomBars(page, clip.height, deadline);
      }
    }
    if (options.omit_background) {
      // Transparent where the page paints nothing; the override outlives navigations, so it is
      // reset before the warm page serves again (a failed reset discards the page).
      const { Emulation } = cdp(session);
      undo.defer(() => Emulation.setDefaultBackgroundColorOverride({}));
      await progress.race(Emulation.setDefaultBackgroundColorOverride({ color: { r: 0, g: 0, b: 0, a: 0 } }));
    }
    if (!(await awaitFonts(step))) warnings.push(warning('fonts_not_loaded'));
    // A full page's scroll may have set more in motion; the masks go where the elements are now.
    if (options.disable_animations && options.full_page) await holdStillNow(session, progress);
    await maskElements(session, options, progress, undo);
    // The whole page's rectangle, when that is what is captured.
    const pageClip = options.full_page && options.selector === undefined ? clip : undefined;
    if (pageClip && options.full_page_algorithm === 'by_sections') {
      const image = await captureBySections(page, session, pageClip, options, deadline, undo);
      return { image, selectorFound: true, warnings };
    }
    const beyond = beyondViewport(options, clip);
    try {
      return { ...(await captureWith(session, clip, beyond, selectorFound, options, deadline)), warnings };
    } catch (error) {
      // Chromium's compositor now and then gives back no bitmap for a page-tall surface (seen on a
      // loaded machine, never on the same capture alone): the page is taken a viewport at a time instead.
      if (!pageClip || !beyond || deadline.aborted || !noBitmap(error)) throw error;
      const image = await captureBySections(page, session, pageClip, options, deadline, undo);
      return { image, selectorFound: true, warnings: [...warnings, warning('full_page_by_sections')] };
    }
  } finally {
    await undo.run();
  }
}

/** Chromium's answer when its compositor returned no bitmap for a capture. */
function noBitmap(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Unable to capture screenshot');
}

// capture_beyond_viewport: as asked, else true with full_page or selector, and with clip_* when
// the rectangle reaches out of the viewport (so that it holds the page there, not a blank).
function beyondViewport(options: RenderOptions, clip: Clip | undefined): boolean {
  if (clip === undefined) return false;
  if (options.capture_beyond_viewport !== undefined) return options.capture_beyond_viewport;
  if (options.full_page) return true;
  if (options.selector !== undefined) return options.selector_algorithm !== 'clip';
  return clip.x + clip.width > options.viewport_width || clip.y + clip.height > options.viewport_height;
}

/**
 * Pixels from which Chromium encodes a png with its fast zlib setting even where the png is the
 * output: a 1280 × 5,000 px full page's encoding falls from ≈ 170 to ≈ 30 ms of the browser's CPU,
 * a third of the capture, for a file ≈ 1.3× larger, losslessly the same image. A viewport or an
 * element (≈ 15 ms to save) keeps the smaller file (docs/performance.md, "Full pages").
 */
export const FAST_PNG_PIXELS = 4_000_000;

// How Chromium encodes a capture of `pixels`: its format, a quality where lossy, the fast PNG
// path where the PNG is only an intermediate or a large one.
function encodingOf(options: RenderOptions, pixels: number) {
  const format = captureFormat(options.format);
  const fast = format === 'png' && (pngIsIntermediate(options) || pixels >= FAST_PNG_PIXELS);
  return {
    format,
    ...(format === 'png' ? {} : { quality: options.image_quality }),
    ...(fast ? { optimizeForSpeed: true } : {}),
  };
}

// The screenshot itself, on an open CDP session.
async function captureWith(
  session: CDPSession,
  clip: Clip | undefined,
  beyondViewport: boolean,
  selectorFound: boolean,
  options: RenderOptions,
  deadline: AbortSignal,
): Promise<Omit<Capture, 'warnings'>> {
  if (clip === undefined && !options.viewport_mobile && options.device_scale_factor === 1) {
    // The viewport where it is scrolled to, at one pixel per CSS px: Chromium's own default, so
    // no clip and no layout metrics call (the zoom and scale below are for phones and scale factors).
    const shot = await untilAborted(
      deadline,
      cdp(session).Page.captureScreenshot(encodingOf(options, options.viewport_width * options.viewport_height)),
    );
    return { image: imageOf(shot.data), selectorFound };
  }
  clip ??= await viewportClip(session, options, deadline);
  // This session does not share Playwright's device-metrics override, so the clip's scale
  // carries device_scale_factor: a 200×100 CSS px element at 2 becomes 400×200 pixels. A mobile
  // render's metrics are on this session itself (src/render/steps/emulation.ts): its scale is in them.
  const scale = (options.viewport_mobile ? 1 : options.device_scale_factor) * (clip.zoom ?? 1);
  const shot = await untilAborted(
    deadline,
    cdp(session).Page.captureScreenshot({
      ...encodingOf(options, clip.width * clip.height * scale * scale),
      clip: { x: clip.x, y: clip.y, width: clip.width, height: clip.height, scale },
      captureBeyondViewport: beyondViewport,
    }),
  );
  return { image: imageOf(shot.data), selectorFound };
}

/** Chromium's image; an empty one (its encoder refused the size) is a failed render, never an empty success. */
function imageOf(data: string): Buffer {
  const image = Buffer.from(data, 'base64');
  if (image.length === 0) throw new Error('Chromium returned an empty screenshot');
  return image;
}

// capture_beyond_viewport=false with full_page: the viewport itself is made as large as the
// capture (the page lays out at that size, as in Puppeteer), then given back its size.
async function growViewport(page: Page, clip: Clip, deadline: AbortSignal, undo: UndoStack): Promise<void> {
  const size = page.viewportSize();
  if (!size || (clip.width <= size.width && clip.height <= size.height)) return;
  undo.defer(() => page.setViewportSize(size));
  await untilAborted(
    deadline,
    page.setViewportSize({ width: Math.max(size.width, clip.width), height: Math.max(size.height, clip.height) }),
  );
}

// The element's box in document coordinates; undefined when nothing matches or it has no area.
// With `undo` (capture_beyond_viewport=false) the element is first scrolled to the top of the
// viewport, in the same evaluate, and the scroll back is added to `undo`.
async function elementClip(
  page: Page,
  selector: string,
  deadline: AbortSignal,
  undo?: UndoStack,
  scroll = true,
): Promise<Clip | undefined> {
  const element = await findElement(page, selector, 'selector', deadline);
  if (!element) return undefined;
  const box = await untilAborted(deadline, element.evaluate(inPage(elementBox), undo !== undefined && scroll));
  const { scrolledFrom } = box;
  if (scrolledFrom)
    undo!.defer(() =>
      page.evaluate(inPage(scrollPageTo), { left: believable(scrolledFrom.left), top: believable(scrolledFrom.top) }),
    );
  // The box is the page's word: each side a finite length, or no box at all.
  const at = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
  const clip = { x: at(box.x), y: at(box.y), width: believable(box.width), height: believable(box.height) };
  return clip.width >= 1 && clip.height >= 1 ? clip : undefined;
}

// The visible viewport where it is scrolled to, in document coordinates.
async function viewportClip(session: CDPSession, options: RenderOptions, deadline: AbortSignal): Promise<Clip> {
  const { cssVisualViewport: view } = await untilAborted(deadline, cdp(session).Page.getLayoutMetrics());
  // A mobile page laid out wider than the screen (its meta viewport) is shown zoomed out, as a
  // phone shows it: the clip covers the whole visible page and is scaled down by the same zoom.
  const zoom = view.scale > 0 && view.scale < 1 ? view.scale : 1;
  return {
    x: view.pageX,
    y: view.pageY,
    width: options.viewport_width / zoom,
    height: options.viewport_height / zoom,
    zoom,
  };
}
