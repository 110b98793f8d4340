// A monitor's tick that compares text: the page's visible text (or the selector's), read beside the
// capture in an isolated world of its own, so the page's scripts cannot change what it reads.
import type { OutputMaker } from './output.ts';
import { cdp } from '../browser/cdp.ts';
import { inPageSource } from '../browser/in-page.ts';
import { visibleTextOf } from '../in-page/steps.ts';
import { untilAborted } from '../browser/progress.ts';
import type { PageStep } from '../steps/page-step.ts';

/** The most text (characters) kept of one capture: a long terms-of-service page fits, a hostile page's flood does not. */
export const MONITOR_TEXT_LIMIT = 256 * 1024;

/**
 * The visible text of the page, or of the first element matching `options.selector`, in reading
 * order (innerText), at most MONITOR_TEXT_LIMIT characters. Read in an isolated world made for it:
 * the DOM is the page's, the globals and prototypes are not.
 */
export async function readMonitorText({ session, options, progress }: PageStep): Promise<string> {
  const deadline = progress.signal;
  const { Page, Runtime } = cdp(session);
  const { frameTree } = await untilAborted(deadline, Page.getFrameTree());
  const { executionContextId } = await untilAborted(
    deadline,
    Page.createIsolatedWorld({ frameId: frameTree.frame.id, worldName: 'shutterbus-monitor-text' }),
  );
  const { result, exceptionDetails } = await untilAborted(
    deadline,
    Runtime.evaluate({
      expression: inPageSource(visibleTextOf, options.selector ?? null, MONITOR_TEXT_LIMIT),
      contextId: executionContextId,
      returnByValue: true,
    }),
  );
  if (exceptionDetails) throw new Error(`the page's text could not be read: ${exceptionDetails.text}`);
  return typeof result.value === 'string' ? result.value : '';
}

/** `make`, then the visible text a monitor compares, read from the page as captured. */
export function withMonitorText(make: OutputMaker): OutputMaker {
  return async (step) => {
    const output = await make(step);
    return { ...output, monitorText: await readMonitorText(step) };
  };
}
