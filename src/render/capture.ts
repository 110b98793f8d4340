// One render, start to finish, on a warm page of the workspace: reports what it observed and leaves the
// failure rules to the render actor.

import type { CDPSession, Page } from 'playwright-core';
import type { BrowserHost } from './browser.ts';
import type { PageObservation, RenderOptions } from '../domain/options.ts';
import { applyBlocking } from './blocking.ts';
import { applyEmulation } from './emulation.ts';
import { wantsMetadata } from '../domain/metadata.ts';
import { gatherMetadata } from './metadata.ts';
import { makeOutput, type Output } from './output.ts';
import { runPageActions } from './page-actions.ts';
import { applyRequestSettings } from './request-settings.ts';
import { navigate, readVisibleText, scrollIntoView, settle, watchFonts, watchSubRequests } from './steps.ts';
import { traced } from '../tracing.ts';
import { markStep } from './step-log.ts';
import { breaksARule, takeFailureCapture } from './failure-capture.ts';

/** Makes the output from the page as it stands, once it is ready (a screenshot's is makeOutput). */
export type OutputMaker = (
  page: Page,
  options: RenderOptions,
  deadline: AbortSignal,
  session: CDPSession,
) => Promise<Output>;

/**
 * Renders `options.url` for `workspaceId` and returns what the page showed. Bounded by
 * `options.timeout` (ServiceError 'timeout_error'); aborting `signal` ends it and closes the page.
 * `make` makes the output: the screenshot or document of `options.format`, or a recording;
 * `proxyServer`: an egress route of the render's own (proxy, ip_country_code).
 */
export async function capturePage(
  host: BrowserHost,
  options: RenderOptions,
  signal: AbortSignal,
  workspaceId?: string,
  make: OutputMaker = makeOutput,
  proxyServer?: string,
): Promise<PageObservation> {
  return host.withPage(
    { ...options, workspaceId, ...(proxyServer ? { proxyServer } : {}) },
    signal,
    async (page, deadline, session) => {
      const subRequests = watchSubRequests(page);
      // Font requests still in flight at capture time are waited for (docs/capture.md).
      const fonts = watchFonts(page);
      // What a render sets on the warm page is undone before the page serves the next render.
      const undo: (() => Promise<void>)[] = [];
      let succeeded = false;
      let navigated = false;
      try {
        undo.push(await applyEmulation(page, session, options, deadline));
        undo.push(await applyRequestSettings(page, session, options, deadline));
        const blocking = await applyBlocking(page, options, deadline);
        undo.push(blocking.undo);
        const navigation = await traced('navigate', () => navigate(page, options, deadline));
        markStep('navigated');
        navigated = true;
        const { finalUrl, mainStatus } = navigation;
        undo.push(await traced('page actions', () => runPageActions(page, options, deadline)));
        await settle(options.delay, deadline);
        await blocking.beforeCapture(deadline);
        const missingSelectors: string[] = [];
        if (
          options.scroll_into_view &&
          !(await scrollIntoView(page, options.scroll_into_view, deadline, options.scroll_into_view_adjust_top))
        ) {
          missingSelectors.push(options.scroll_into_view);
        }
        // Reading the text lays the page out once more: only when a content rule will look at it.
        const needsText = options.fail_if_content_missing.length > 0 || options.fail_if_content_contains.length > 0;
        const visibleText = needsText ? await readVisibleText(page, deadline) : '';
        const output = await traced('capture', () => make(page, options, deadline, session));
        markStep('captured');
        if (options.selector && !output.selectorFound) missingSelectors.push(options.selector);
        const image = output.bytes;
        const metadata = wantsMetadata(options)
          ? await gatherMetadata(page, options, navigation, image, deadline)
          : undefined;
        succeeded = true;
        const { warnings } = output;
        const observation: PageObservation = {
          finalUrl,
          mainStatus,
          subRequests: subRequests.outcomes(),
          visibleText,
          missingSelectors,
          image,
          ...(output.file ? { file: output.file } : {}),
          ...(metadata ? { metadata } : {}),
          ...(warnings.length > 0 ? { warnings } : {}),
        };
        // The render actor will fail this render on a rule: keep what the page showed while it is at hand.
        if (breaksARule(observation, options)) await takeFailureCapture(page, deadline);
        return observation;
      } catch (error) {
        // Failed after the page loaded (a script, a wait, a click): the page still shows why.
        if (navigated) await takeFailureCapture(page, deadline);
        throw error;
      } finally {
        subRequests.stop();
        fonts.stop();
        // An undo that fails leaves the page unfit for reuse: its error discards the page. After a failed
        // render the page is discarded anyway, and the render's own error is the one to report.
        for (const step of undo.reverse())
          await step().catch((err) => {
            if (succeeded) throw err;
          });
      }
    },
  );
}
