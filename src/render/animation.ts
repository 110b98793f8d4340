// An animated capture on a warm page of the workspace: the page prepared as for a screenshot
// (capture.ts), then recorded (recorder.ts). At most one recording per CPU runs in a process;
// the others wait for a turn before they take a page (docs/animate.md).
import { availableParallelism } from 'node:os';
import type { AnimationOptions } from '../domain/animation.ts';
import type { JudgedObservation } from '../domain/judgement.ts';
import type { RenderOptions } from '../domain/options.ts';
import type { RenderBrowser } from './browser/browser.ts';
import { capturePage, type CaptureUse } from './capture.ts';
import type { TargetCheck } from './steps/choreography.ts';
import { discardRecording, recordAnimation } from './outputs/recorder.ts';

export { discardRecording };

/** Turns to record: a recording waits for one before it takes a page, and gives it back at its end. */
export class RecordingTurns {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Runs `work` in a turn; waiting for one ends with `signal`'s reason when it aborts first. */
  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.#take(signal);
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }

  /** Recordings running now. */
  get running(): number {
    return this.size - this.#free;
  }

  #take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.#waiting.splice(this.#waiting.indexOf(turn), 1);
        reject(signal.reason);
      };
      this.#waiting.push(turn);
      signal.addEventListener('abort', leave, { once: true });
    });
  }
}

/** This process's turns: one recording per CPU (a recording keeps Chromium's compositor and ffmpeg busy). */
export const recordingTurns = new RecordingTurns(availableParallelism());

/**
 * Where a recording's page goes besides its request: its proxy, profile, log and judge (as
 * capturePage's), the check of a navigation the page chose, its turns.
 */
export interface RecordingSetup extends Omit<CaptureUse, 'workspaceId' | 'make'> {
  /** The egress proxy's address rules for a link the page chose (choreography.ts); by default the scheme only. */
  checkTarget?: TargetCheck;
  turns?: RecordingTurns;
}

/**
 * Records `animation` of the page of `options` for `workspaceId`, in a turn of `setup.turns`; what the
 * page showed, its output the encoded file on disk (`file`; its owner removes it with discardRecording). Bounded and cancelled as capturePage is; the page's
 * traffic leaves through `setup.proxyServer` when given (the customer's or a country's proxy).
 */
export function captureAnimation(
  host: RenderBrowser,
  options: RenderOptions,
  animation: AnimationOptions,
  signal: AbortSignal,
  workspaceId?: string,
  { checkTarget, turns = recordingTurns, ...use }: RecordingSetup = {},
): Promise<JudgedObservation> {
  return turns.run(signal, async () => {
    const observation = await capturePage(host, options, signal, {
      ...use,
      workspaceId,
      make: (step) => recordAnimation(step, animation, checkTarget),
    });
    // A render cancelled meanwhile takes no file: nobody else would remove it.
    if (signal.aborted) {
      await discardRecording(observation.file);
      throw signal.reason;
    }
    return observation;
  });
}
