// What the page looked like when a render failed: a small JPEG of the viewport, scaled down to at
// most FAILURE_CAPTURE_MAX_SIDE px a side so that it tells what went wrong and is never a substitute
// for the render a failure does not charge for (docs/security.md), taken only on the
// way out of a failed render whose page was navigated (docs/dashboard.md, "Renders"). It goes on
// the render's log (progress.log.failureCapture), which the worker made and stores it from; a
// render that succeeds costs nothing.
import { thumbnail } from './image.ts';
import type { PageStep } from '../steps/page-step.ts';

/** How long a failure capture is kept: a day, enough to look at it, too short to pile up. */
export const FAILURE_CAPTURE_LIFETIME_SECONDS = 24 * 3600;

/** JPEG quality of a failure capture: enough to recognise the page, a few KB. */
const QUALITY = 35;
/** The longest side of a failure capture, in pixels: a thumbnail, whatever the viewport. */
export const FAILURE_CAPTURE_MAX_SIDE = 480;
/** The longest a failure capture may take; a page too busy to paint by then is left without one. */
const CAPTURE_LIMIT_MS = 2000;

/**
 * Takes the render's failure capture onto its log, once: best effort, within the render's
 * deadline, and never the render's own error.
 */
export async function takeFailureCapture({ page, progress }: PageStep): Promise<void> {
  const { log, signal } = progress;
  if (log.failureCapture || signal.aborted || page.isClosed()) return;
  try {
    const shot = await progress.race(
      page.screenshot({ type: 'jpeg', quality: 80, timeout: CAPTURE_LIMIT_MS, scale: 'css' }),
    );
    log.failureCapture = await thumbnail(shot, FAILURE_CAPTURE_MAX_SIDE, QUALITY);
  } catch {
    // A page that cannot be captured any more leaves the render without a failure capture, nothing else.
  }
}
