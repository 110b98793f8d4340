// The steps of one render as they happen (started, navigated, captured, stored), kept for its record's
// timeline (docs/api.md). A render's steps mark the log of the render they run in, found through
// async context, so the page steps need no extra parameter.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TimelineStep } from '../domain/render.ts';

/** What happened when, in the order it happened. */
export class StepLog {
  readonly steps: { step: TimelineStep['step']; at: Date }[] = [];

  mark(step: TimelineStep['step'], at = new Date()): void {
    this.steps.push({ step, at });
  }
}

const current = new AsyncLocalStorage<StepLog>();

/** Runs `work` with `log` as the log its steps mark. */
export function withStepLog<T>(log: StepLog, work: () => T): T {
  return current.run(log, work);
}

/** The steps so far of the render this code runs in. */
export function currentSteps(): StepLog['steps'] {
  return current.getStore()?.steps ?? [];
}

/** Marks a step of the render this code runs in (nothing outside one). */
export function markStep(step: TimelineStep['step']): void {
  current.getStore()?.mark(step);
}
