// Still captures (docs/capture.md, "Still captures"): elements removed from the page, its motion
// stopped, parts of it masked. Each runs in an isolated world (isolated-world.ts) and changes only
// the document, which the pool's wipe discards with the page's navigation to about:blank; the masks
// are taken off again as soon as the image is taken. A render asking none of them makes no call.
import type { CDPSession } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';
import { ServiceError } from '../../errors.ts';
import { evaluateIsolated } from '../browser/isolated-world.ts';
import { holdStill, settle, maskMatching, removeMatching, unmask } from '../in-page/still.ts';
import type { Progress, UndoStack } from '../browser/progress.ts';
import type { PageStep } from './page-step.ts';

/** Hides the caret wherever the page draws one, whatever colour the page gave it. */
const CARET_CSS = '*, *::before, *::after { caret-color: transparent !important; }';
/** The longest a video's load and seek back to its first frame are waited for. */
const SEEK_MS = 5000;
/** The longest a video's first frame is waited for on the screen once sought (one already there is not shown again). */
const PRESENT_MS = 500;
/** The attribute the mask boxes carry, so that they alone are taken off. */
const MASK_MARKER = 'data-shutterbus-mask';

/**
 * Before the output is made: remove_selectors' elements removed, then with disable_animations the
 * page held still (animations finished or at their start, videos at their first frame, no caret).
 */
export async function stillPage({ session, options, progress }: PageStep): Promise<void> {
  if (options.remove_selectors.length > 0) {
    const answer = await progress.race(evaluateIsolated(session, removeMatching, [[...options.remove_selectors]]));
    refuseInvalid('remove_selectors', answer);
  }
  if (options.disable_animations) await holdStillNow(session, progress);
}

/** disable_animations, again right before the image is taken (a full page's scroll may have started more). */
export async function holdStillNow(session: CDPSession, progress: Progress): Promise<void> {
  const answer = await progress.race(evaluateIsolated(session, holdStill, [CARET_CSS, SEEK_MS, PRESENT_MS], [settle]));
  if (!isCounts(answer, ['animations', 'videos'])) throw new Error('holdStill answered something else');
}

/**
 * mask_selectors: a box of mask_color over each matching element for the image alone; taking them
 * off is deferred to `undo`, the capture's own stack.
 */
export async function maskElements(
  session: CDPSession,
  options: RenderOptions,
  progress: Progress,
  undo: UndoStack,
): Promise<void> {
  if (options.mask_selectors.length === 0) return;
  undo.defer(() => evaluateIsolated(session, unmask, [MASK_MARKER]));
  const answer = await progress.race(
    evaluateIsolated(session, maskMatching, [[...options.mask_selectors], options.mask_color, MASK_MARKER]),
  );
  refuseInvalid('mask_selectors', answer);
}

// A selector the browser cannot parse is the caller's to fix: a 400 naming the parameter. The
// answer comes from the page, so its shape is checked before it is believed.
function refuseInvalid(parameter: string, answer: unknown): void {
  if (!isCounts(answer, [parameter === 'remove_selectors' ? 'removed' : 'boxes'])) {
    throw new Error(`${parameter}: the page answered something else`);
  }
  const { invalid } = answer as { invalid?: unknown };
  if (!Array.isArray(invalid) || !invalid.every((selector) => typeof selector === 'string')) {
    throw new Error(`${parameter}: the page answered something else`);
  }
  if (invalid.length > 0) {
    throw new ServiceError('request_not_valid', {
      error_details: invalid.map((selector) => ({ parameter, message: `${selector}: the selector is not valid` })),
    });
  }
}

function isCounts(answer: unknown, names: string[]): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  return names.every((name) => Number.isInteger((answer as Record<string, unknown>)[name]));
}
