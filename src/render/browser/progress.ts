// The contract every page step of a render works under (docs/architecture.md), after Playwright's
// own Progress: one object per render, handed to each step (on its PageStep), carrying the
// render's deadline, the one stack of undos that puts the warm page back as the pool lent it, and
// the render's log (its timeline steps and failure capture).
import { RenderLog } from '../../domain/render-log.ts';
import type { TimelineStep } from '../../domain/render.ts';

/** Something a step set on the page, taken back before the page serves again. */
export type Undo = () => Promise<unknown>;

/**
 * One render's progress: its deadline (the signal, the time left), its undo stack and its log.
 * Steps race their waits against `signal`, bound them by `timeLeft()`, `defer` the undo of
 * whatever they set on the page as soon as they set it, so a step failing half-way still has its
 * part undone, and `mark` the timeline steps they reach. The one who made it
 * (BrowserHost.withPage) runs the undos when the render's steps are done.
 */
export class Progress {
  /** Aborts when the render's timeout passes or the render is cancelled. */
  readonly signal: AbortSignal;
  /** The render's log, the worker's when it keeps one (src/domain/render-log.ts). */
  readonly log: RenderLog;
  readonly #endsAt: number;
  readonly #timeoutMs: number;
  readonly #undos = new UndoStack(this);
  readonly #failures: unknown[] = [];

  /** `signal` aborts at the latest `timeoutMs` from now. */
  constructor(signal: AbortSignal, timeoutMs: number, log = new RenderLog()) {
    this.signal = signal;
    this.log = log;
    this.#timeoutMs = timeoutMs;
    this.#endsAt = Date.now() + timeoutMs;
  }

  /** A render of `timeoutMs`, ended early by `signal` when given, its steps marked on `log`. */
  static start(timeoutMs: number, signal?: AbortSignal, log?: RenderLog): Progress {
    const timeout = AbortSignal.timeout(timeoutMs);
    return new Progress(signal ? AbortSignal.any([signal, timeout]) : timeout, timeoutMs, log);
  }

  /** Marks a step of the render's timeline as reached now. */
  mark(step: TimelineStep['step']): void {
    this.log.mark(step);
  }

  /**
   * Milliseconds a wait of the render may still take and leave the render time to report a 422
   * before its timeout passes.
   */
  timeLeft(): number {
    return Math.max(1, this.#endsAt - Date.now() - Math.min(1000, this.#timeoutMs / 4));
  }

  /** Settles with `work`, or rejects with the deadline's reason as soon as it aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    return untilAborted(this.signal, work);
  }

  /** Adds `undo` to the render's stack: it runs once the render's steps are done, last added first. */
  defer(undo: Undo): void {
    this.#undos.defer(undo);
  }

  /**
   * A stack of its own for what a step sets only for a while (the capture's background, its grown
   * viewport), run by the step itself with `run()`; under the same rule as the render's.
   */
  scope(): UndoStack {
    return new UndoStack(this);
  }

  /** Runs the render's undos (see UndoStack.run). */
  undo(): Promise<void> {
    return this.#undos.run();
  }

  /** What failed to be undone, in the order it failed: a page with any must not serve again. */
  get undoFailures(): readonly unknown[] {
    return this.#failures;
  }

  /** @internal Where an undo stack reports a failed undo. */
  failed(error: unknown): void {
    this.#failures.push(error);
  }
}

/**
 * Undos run under one rule: last added first, every one of them even when one before it failed;
 * a failure is kept on the render's Progress, and a page with a failed undo is discarded rather
 * than reused. Once the deadline has passed nothing is undone: the page is discarded anyway.
 */
export class UndoStack {
  readonly #progress: Progress;
  #undos: Undo[] = [];

  constructor(progress: Progress) {
    this.#progress = progress;
  }

  defer(undo: Undo): void {
    this.#undos.push(undo);
  }

  /** Runs and empties the stack; never rejects (failures go to the Progress). */
  async run(): Promise<void> {
    const undos = this.#undos.reverse();
    this.#undos = [];
    for (const undo of undos) {
      if (this.#progress.signal.aborted) return;
      try {
        await this.#progress.race(undo());
      } catch (error) {
        if (!this.#progress.signal.aborted) this.#progress.failed(error);
      }
    }
  }
}

/** Settles with `work`, or rejects with the deadline's reason as soon as it aborts. */
export function untilAborted<T>(deadline: AbortSignal, work: Promise<T>): Promise<T> {
  if (deadline.aborted) {
    work.catch(() => {});
    return Promise.reject(deadline.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason);
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}
