// One render, start to finish, on a warm page of the workspace: its page steps in order, each
// taking the render's PageStep. It reports what it observed; the failure rules are the render
// machine's, handed in as `judge` and called once, here, while the page is still at hand.

import type { RenderBrowser } from './browser/browser.ts';
import type { Judge, JudgedObservation } from '../domain/judgement.ts';
import type { PageObservation, RenderOptions } from '../domain/options.ts';
import type { RenderLog } from '../domain/render-log.ts';
import { applyBlocking } from './steps/blocking.ts';
import { applyEmulation, withMetrics } from './steps/emulation.ts';
import { wantsMetadata } from '../domain/metadata.ts';
import { gatherMetadata } from './outputs/metadata.ts';
import { makeOutput, type OutputMaker } from './outputs/output.ts';
import { runPageActions } from './steps/page-actions.ts';
import type { PageStep } from './steps/page-step.ts';
import { applyRequestSettings } from './steps/request-settings.ts';
import { navigate, readVisibleText, scrollIntoView, settle, watchSubRequests } from './steps/page.ts';
import { watchFonts } from './steps/font-watch.ts';
import { traced } from '../tracing.ts';
import { stillPage } from './steps/still.ts';
import { loadProfile, readProfile, type ProfileUse } from './steps/profile.ts';
import { takeFailureCapture } from './outputs/failure-capture.ts';

/** How a render is captured besides its options; every field may be left out. */
export interface CaptureUse {
  /** The workspace the render is for: its warm pages are never lent to another workspace. */
  workspaceId?: string;
  /** Makes the output: the screenshot or document of `options.format` (the default), or a recording. */
  make?: OutputMaker;
  /** An egress route of the render's own (proxy, ip_country_code): a one-off page behind it. */
  proxyServer?: string;
  /** The stored state to load first (profile) and where the state the page ends with goes (save_profile). */
  profile?: ProfileUse;
  /**
   * The render's log: its steps are marked on it and, when the render fails after its page loaded,
   * the failure capture goes on it. Without one nobody keeps either, and no failure capture is taken.
   */
  log?: RenderLog;
  /** The failure rules (the render machine's): the observation carries what they found (`broken`). */
  judge?: Judge;
}

/**
 * Renders `options.url` and returns what the page showed. Bounded by `options.timeout`
 * (ServiceError 'timeout_error'); aborting `signal` ends it and closes the page.
 */
export async function capturePage(
  host: RenderBrowser,
  options: RenderOptions,
  signal: AbortSignal,
  { workspaceId, make = makeOutput, proxyServer, profile = {}, log, judge }: CaptureUse = {},
): Promise<JudgedObservation> {
  return host.withPage(
    { ...options, workspaceId, ...(proxyServer ? { proxyServer } : {}), ...(log ? { log } : {}) },
    signal,
    async (page, progress, session) => {
      const subRequests = watchSubRequests(page);
      // Font requests still in flight at capture time are waited for (docs/capture.md).
      const fonts = watchFonts(page);
      const prepare: PageStep = { page, session, options, progress, fonts };
      // What a render sets on the warm page it defers the undo of to `progress`, run by withPage.
      let navigated = false;
      try {
        // The later steps measure the viewport the page has: the emulation's size and scale.
        const metrics = await applyEmulation(prepare);
        const step: PageStep = { ...prepare, options: withMetrics(options, metrics) };
        const rendered = step.options;
        await applyRequestSettings(step);
        if (profile.load) await loadProfile(step, profile.load);
        const blocking = await applyBlocking(step);
        const navigation = await traced('navigate', () => navigate(step));
        progress.mark('navigated');
        navigated = true;
        const { finalUrl, mainStatus } = navigation;
        await traced('page actions', () => runPageActions(step));
        await settle(step);
        await blocking.beforeCapture(progress);
        await stillPage(step);
        const missingSelectors: string[] = [];
        if (!(await scrollIntoView(step))) missingSelectors.push(rendered.scroll_into_view!);
        const output = await traced('capture', () => make(step));
        progress.mark('captured');
        if (profile.save) await profile.save(await readProfile(step));
        // The text as captured: a full page's scroll has loaded what loads on scroll (its changes
        // to the page undone by now). Reading it lays the page out once more: only for a content rule.
        const needsText = rendered.fail_if_content_missing.length > 0 || rendered.fail_if_content_contains.length > 0;
        const visibleText = needsText ? await readVisibleText(step) : '';
        if (rendered.selector && !output.selectorFound) missingSelectors.push(rendered.selector);
        const image = output.bytes;
        const metadata = wantsMetadata(rendered)
          ? await gatherMetadata(step, { navigation, output: image })
          : undefined;
        const { warnings } = output;
        const observation: PageObservation = {
          finalUrl,
          mainStatus,
          subRequests: subRequests.outcomes(),
          visibleText,
          missingSelectors,
          image,
          ...(output.monitorText !== undefined ? { monitorText: output.monitorText } : {}),
          ...(output.file ? { file: output.file } : {}),
          ...(output.saved ? { saved: output.saved } : {}),
          ...(metadata ? { metadata } : {}),
          ...(warnings.length > 0 ? { warnings } : {}),
        };
        if (!judge) return observation;
        // The one judgement of the render; a broken rule fails it: keep what the page showed while it is at hand.
        const broken = judge(observation, rendered);
        if (broken && log) await takeFailureCapture(step);
        return { ...observation, broken };
      } catch (error) {
        // Failed after the page loaded (a script, a wait, a click): the page still shows why.
        if (navigated && log) await takeFailureCapture(prepare);
        throw error;
      } finally {
        subRequests.stop();
        fonts.stop();
      }
    },
  );
}
