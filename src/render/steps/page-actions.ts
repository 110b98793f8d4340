// What a render does on the loaded page before capturing: styles, scripts, hidden elements, waits, clicks, hovers.
import type { ElementHandle, Frame, Page } from 'playwright-core';
import type { Protocol } from 'playwright-core/types/protocol';
import type { RenderOptions } from '../../domain/options.ts';
import { ServiceError } from '../../errors.ts';
import { openCdp } from '../browser/cdp.ts';
import { inPage } from '../browser/in-page.ts';
import {
  adoptStyleSheet,
  appendStyle,
  dropStyleSheet,
  removeNode,
  removeThis,
  runScript,
  type ScriptOutcome,
} from '../in-page/page-actions.ts';
import type { Progress } from '../browser/progress.ts';
import { countRequests, needsRequestCount, untilAborted, waitForConditions } from './page.ts';
import type { PageStep } from './page-step.ts';

/**
 * Runs the page actions `options` asks for, in the documented order: styles, hide_selectors,
 * scripts (then scripts_wait_until), wait_for_selector, click, hover, deferring to `progress` the
 * undo of what they added (style elements, the mouse over an element). A render asking none of
 * them costs nothing: no evaluate, no listener.
 */
export async function runPageActions({ page, options, progress }: PageStep): Promise<void> {
  const deadline = progress.signal;
  if (options.styles) await addStyle(page, options.styles, progress, 'skip');
  if (options.hide_selectors.length > 0) await addStyle(page, hidingCss(options.hide_selectors), progress, 'adopt');
  // include_shadow_dom: the same rules inside every shadow root the page has now, closed ones too.
  if (options.hide_selectors.length > 0 && options.include_shadow_dom)
    await addStyleToShadowRoots(page, hidingCss(options.hide_selectors), progress);
  if (options.scripts) await runScripts(page, options, deadline);
  if (options.wait_for_selector) await waitForVisible(page, options, progress);
  for (const action of ['click', 'hover'] as const) {
    const selector = options[action];
    if (selector === undefined) continue;
    // Both leave the mouse over the element: moved away before the page serves again.
    await pointAt(page, action, selector, options, progress);
  }
}

/** One `display: none !important` rule per selector, so that one bad selector spoils only its own rule. */
export function hidingCss(selectors: readonly string[]): string {
  return selectors.map((selector) => `${selector} { display: none !important; }`).join('\n');
}

// A <style> element at the end of the document; the undo removes it (gone anyway if the document
// was replaced). A page whose Content-Security-Policy refuses inline styles refuses it too, unless
// bypass_csp lifted the policy: `styles` then go without, as the policy says (`ifRefused: 'skip'`),
// and hide_selectors' rules are adopted as a constructed style sheet, which no policy governs.
async function addStyle(page: Page, css: string, progress: Progress, ifRefused: 'skip' | 'adopt'): Promise<void> {
  let element: ElementHandle;
  try {
    element = await progress.race(page.addStyleTag({ content: css }));
  } catch (error) {
    if (progress.signal.aborted || !/Content Security Policy/.test(String(error))) throw error;
    if (ifRefused === 'skip') return;
    const sheet = await progress.race(page.evaluateHandle(inPage(adoptStyleSheet), css));
    progress.defer(async () => {
      await sheet.evaluate(inPage(dropStyleSheet)).catch(() => {});
      await sheet.dispose().catch(() => {});
    });
    return;
  }
  progress.defer(async () => {
    await element.evaluate(inPage(removeNode)).catch(() => {});
    await element.dispose().catch(() => {});
  });
}

/**
 * A <style> element appended to every shadow root of the page (open and closed, in frames too),
 * found over CDP as a page script could not find a closed one; the undo removes them.
 */
async function addStyleToShadowRoots(page: Page, css: string, progress: Progress): Promise<void> {
  const session = await progress.race(openCdp(page));
  const added: string[] = [];
  progress.defer(async () => {
    for (const objectId of added) {
      await session.Runtime.callFunctionOn({ objectId, functionDeclaration: String(inPage(removeThis)) }).catch(
        () => {},
      );
    }
    await session.detach().catch(() => {});
  });
  const { root } = await progress.race(session.DOM.getDocument({ depth: -1, pierce: true }));
  const roots: Protocol.DOM.Node[] = [];
  const visit = (node: Protocol.DOM.Node) => {
    for (const shadow of node.shadowRoots ?? []) {
      roots.push(shadow);
      visit(shadow);
    }
    for (const child of node.children ?? []) visit(child);
    if (node.contentDocument) visit(node.contentDocument);
  };
  visit(root);
  for (const shadow of roots) {
    const { object } = await progress.race(session.DOM.resolveNode({ backendNodeId: shadow.backendNodeId }));
    const { result } = await progress.race(
      session.Runtime.callFunctionOn({
        objectId: object.objectId!,
        functionDeclaration: String(inPage(appendStyle)),
        arguments: [{ value: css }],
      }),
    );
    if (result.objectId) added.push(result.objectId);
  }
}

/**
 * Runs `scripts` as global code in the page's main world and awaits its completion value when
 * that is a promise. A throw (or rejection) is `422 script_error` with its message. With
 * `scripts_wait_until` the render then waits for those conditions, on the new document when
 * the script started a navigation.
 */
async function runScripts(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<void> {
  const conditions = options.scripts_wait_until;
  const requests = needsRequestCount(conditions) ? countRequests(page) : undefined;
  // The main frame committing a new document while (or just after) the script ran.
  let onCommit: ((frame: Frame) => void) | undefined;
  const committed =
    conditions.length === 0
      ? undefined
      : new Promise<void>((resolve) => {
          onCommit = (frame) => {
            if (frame === page.mainFrame()) resolve();
          };
          page.on('framenavigated', onCommit);
        });
  try {
    let outcome: ScriptOutcome;
    try {
      outcome = await untilAborted(deadline, page.evaluate(inPage(runScript), options.scripts ?? ''));
    } catch (error) {
      // The script replaced the document before it finished: the navigation is what it did.
      if (deadline.aborted || !/context was destroyed|navigat/i.test(String(error))) throw error;
      outcome = { navigated: true };
    }
    if (outcome.error !== undefined) {
      throw new ServiceError(
        'script_error',
        { error_details: [{ parameter: 'scripts', message: outcome.error }] },
        { cause: new Error(outcome.error) },
      );
    }
    if (conditions.length === 0) return;
    if (outcome.navigated) await untilAborted(deadline, committed!);
    await waitForConditions(page, conditions, requests, deadline);
  } finally {
    requests?.stop();
    if (onCommit) page.off('framenavigated', onCommit);
  }
}

// Waits until an element matching wait_for_selector is visible; none in the time the render has → 422.
// With wait_for_selector_algorithm=at_least_by_count, every selector of a list (`h1, .price`)
// must have a visible match, where at_least_one is content with a match of any of them.
async function waitForVisible(page: Page, options: RenderOptions, progress: Progress): Promise<void> {
  const deadline = progress.signal;
  const list = options.wait_for_selector!;
  const selectors = options.wait_for_selector_algorithm === 'at_least_by_count' ? splitSelectorList(list) : [list];
  const timeout = progress.timeLeft();
  await Promise.all(
    selectors.map(async (selector) => {
      try {
        await untilAborted(deadline, page.waitForSelector(selector, { state: 'visible', timeout }));
      } catch (error) {
        throw selectorError(error, 'wait_for_selector', selector, deadline);
      }
    }),
  );
}

/** The selectors of a comma-separated list, split at top-level commas only (not in (), [] or quotes). */
export function splitSelectorList(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}

// Clicks or hovers the first element matching `selector`, at its centre, scrolling it into view
// first; a miss (no match, or nothing to point at) is a 422 unless the request switched that off.
async function pointAt(
  page: Page,
  action: 'click' | 'hover',
  selector: string,
  options: RenderOptions,
  progress: Progress,
): Promise<void> {
  const deadline = progress.signal;
  const required =
    action === 'click' ? options.error_on_click_selector_not_found : options.error_on_hover_selector_not_found;
  let element: ElementHandle | null = null;
  try {
    element = await untilAborted(deadline, page.$(selector));
    // Matched but not rendered (display: none, no box): nothing a mouse could reach, a miss.
    if (element && (await untilAborted(deadline, element.isVisible()))) {
      // force: the mouse goes where the element is, as a user's would, even under an overlay.
      const timeout = progress.timeLeft();
      await untilAborted(
        deadline,
        action === 'click' ? element.click({ force: true, timeout }) : element.hover({ force: true, timeout }),
      );
      progress.defer(() => page.mouse.move(-1, -1));
      return;
    }
  } catch (error) {
    const failure = selectorError(error, action, selector, deadline);
    if (!(failure instanceof ServiceError && failure.code === 'selector_not_found')) throw failure;
  } finally {
    void element?.dispose().catch(() => {});
  }
  if (required) throw notFound(action, selector);
}

// A selector wait or action that failed: a bad selector is a 400, an element never there or not
// visible is a 422 naming the parameter; the deadline passing keeps its own reason.
function selectorError(error: unknown, parameter: string, selector: string, deadline: AbortSignal): unknown {
  if (deadline.aborted || error instanceof ServiceError) return error;
  const text = String(error);
  if (/not a valid selector|Unexpected token|while parsing (css )?selector|Unknown engine/i.test(text)) {
    return new ServiceError(
      'request_not_valid',
      { error_details: [{ parameter, message: 'The selector is not valid.' }] },
      { cause: error },
    );
  }
  if (/Timeout|not visible|not attached|no bounding box|outside of the viewport|detached/i.test(text))
    return notFound(parameter, selector, error);
  return error;
}

// The same details as the render rule for `selector` (actors/render.rules.ts selectorNotFound).
function notFound(parameter: string, selector: string, cause?: unknown): ServiceError {
  return new ServiceError('selector_not_found', { error_details: [{ parameter, selector }] }, { cause });
}
