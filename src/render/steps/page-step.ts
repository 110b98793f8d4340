// The one argument every page step of a render takes (docs/architecture.md, "A render step"): the
// page and its CDP session, the options as rendered, and the render's Progress (deadline, undo
// stack, log). Per-render state lives here or in the capture's locals, never in a module's map.
import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';
import type { Progress } from '../browser/progress.ts';

/** The page's font requests in flight, known from the network events Playwright receives anyway (watchFonts). */
export interface FontWatch {
  /** Font requests started and not yet finished or failed. */
  inFlight(): number;
  /** Resolves true once none is in flight, or false after `ms`. */
  settled(ms: number): Promise<boolean>;
  stop(): void;
}

/** What a page step works on: one render's page, session, options and Progress. */
export interface PageStep {
  page: Page;
  session: CDPSession;
  /** The options as rendered: the emulation's viewport and scale in them (withMetrics). */
  options: RenderOptions;
  progress: Progress;
  /** The page's font requests, watched since before navigation; the output waits for them (awaitFonts). */
  fonts?: FontWatch;
}
