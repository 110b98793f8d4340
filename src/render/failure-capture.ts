// What the page looked like when a render failed: a small JPEG of the viewport, scaled down to at
// most FAILURE_CAPTURE_MAX_SIDE px a side so that it tells what went wrong and is never a substitute
// for the render a failure does not charge for (docs/security.md), taken only on the
// way out of a failed render whose page was navigated (docs/dashboard.md, "Renders"). It reaches
// the worker through async context, as the render's steps do, so the page steps and the render
// actor carry nothing extra, and a render that succeeds costs nothing.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Page } from 'playwright-core';
import { renderRules, type RenderRuleName } from '../../actors/render.rules.ts';
import type { PageObservation, RenderOptions } from '../domain/options.ts';
import { thumbnail } from './image.ts';
import { untilAborted } from './steps.ts';

/** How long a failure capture is kept: a day, enough to look at it, too short to pile up. */
export const FAILURE_CAPTURE_LIFETIME_SECONDS = 24 * 3600;

/** JPEG quality of a failure capture: enough to recognise the page, a few KB. */
const QUALITY = 35;
/** The longest side of a failure capture, in pixels: a thumbnail, whatever the viewport. */
export const FAILURE_CAPTURE_MAX_SIDE = 480;
/** The longest a failure capture may take; a page too busy to paint by then is left without one. */
const CAPTURE_LIMIT_MS = 2000;

/** The slot one render's failure capture is kept in until the worker stores it. */
export class FailureCaptureSlot {
  image?: Buffer;
}

const current = new AsyncLocalStorage<FailureCaptureSlot>();

/** Runs `work` with `slot` as the place a failure capture of this render goes. */
export function withFailureCaptureSlot<T>(slot: FailureCaptureSlot, work: () => T): T {
  return current.run(slot, work);
}

/** True when one of the failure rules (checked again by the render actor) will fail this observation. */
export function breaksARule(observation: PageObservation, options: RenderOptions): boolean {
  return (Object.keys(renderRules) as RenderRuleName[]).some(
    (rule) => renderRules[rule](observation, options) !== null,
  );
}

/**
 * Takes the failure capture of the render this code runs in, if it keeps one (the worker's renders
 * do): best effort, within the render's deadline, and never the render's own error.
 */
export async function takeFailureCapture(page: Page, deadline: AbortSignal): Promise<void> {
  const slot = current.getStore();
  if (!slot || slot.image || deadline.aborted || page.isClosed()) return;
  try {
    const shot = await untilAborted(
      deadline,
      page.screenshot({ type: 'jpeg', quality: 80, timeout: CAPTURE_LIMIT_MS, scale: 'css' }),
    );
    slot.image = await thumbnail(shot, FAILURE_CAPTURE_MAX_SIDE, QUALITY);
  } catch {
    // A page that cannot be captured any more leaves the render without a failure capture, nothing else.
  }
}
