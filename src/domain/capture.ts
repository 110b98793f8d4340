// What the render machine hands its page capture (the `capturePage` actor the worker provides).
import type { AnimationOptions } from './animation.ts';
import type { Judge } from './judgement.ts';
import type { SourceOptions } from './merge.ts';
import type { RenderOptions } from './options.ts';
import type { RenderLog } from './render-log.ts';

/** Input of the `capturePage` promise actor. */
export interface CapturePageInput {
  renderId: string;
  options: RenderOptions;
  /** The workspace the render is for: its warm pages are never lent to another workspace. */
  workspaceId: string;
  /** For an animation: what to record (the render is then a recording, not a screenshot). */
  animation?: AnimationOptions;
  /** A monitor's tick that compares text: the page's visible text is read beside the capture. */
  monitorText?: true;
  /** For a merge: its sources, each rendered to PDF, then merged into one (`options` are the merged file's). */
  sources?: SourceOptions[];
  /** The render's log: the steps mark it, and a failed render's page goes on it (its failure capture). */
  log: RenderLog;
  /** The machine's failure rules, called once on what the page showed (each merge source's too). */
  judge: Judge;
}
