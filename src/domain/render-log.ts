// What one render's steps leave for its record besides the output: the steps as they happened
// (started, navigated, captured, stored) for its timeline (docs/api.md), and, for a render that
// fails after its page loaded, what the page looked like then (docs/dashboard.md, "Renders").
// The worker makes one per delivery and hands it down explicitly: through the render machine's
// input to the actors it invokes, and on to the page steps on their Progress.
import type { TimelineStep } from './render.ts';

/** One render's log: what happened when, in order, and its failure capture when it has one. */
export class RenderLog {
  readonly steps: { step: TimelineStep['step']; at: Date }[] = [];
  /** A small JPEG of the page when the render failed (src/render/outputs/failure-capture.ts). */
  failureCapture?: Buffer;

  /** Notes that `step` happened (now, unless `at` says when). */
  mark(step: TimelineStep['step'], at = new Date()): void {
    this.steps.push({ step, at });
  }
}
