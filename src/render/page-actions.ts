// What a render does on the loaded page before capturing: styles, scripts, hidden elements, waits, clicks, hovers.
import type { ElementHandle, Frame, Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';
import { ServiceError } from '../errors.ts';
import { countRequests, needsRequestCount, timeLeft, untilAborted, waitForConditions } from './steps.ts';

type Undo = () => Promise<void>;

/**
 * Runs the page actions `options` asks for, in the documented order: styles, hide_selectors,
 * scripts (then scripts_wait_until), wait_for_selector, click, hover. The returned undo removes
 * what they added (style elements, the mouse over an element). A render asking none of them
 * costs nothing: no evaluate, no listener.
 */
export async function runPageActions(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Undo> {
  const undo: Undo[] = [];
  const undoAll: Undo = async () => {
    for (const step of undo.reverse()) await step();
  };
  try {
    if (options.styles) undo.push(await addStyle(page, options.styles, deadline));
    if (options.hide_selectors.length > 0) undo.push(await addStyle(page, hidingCss(options.hide_selectors), deadline));
    // include_shadow_dom: the same rules inside every shadow root the page has now, closed ones too.
    if (options.hide_selectors.length > 0 && options.include_shadow_dom)
      undo.push(await addStyleToShadowRoots(page, hidingCss(options.hide_selectors), deadline));
    if (options.scripts) await runScripts(page, options, deadline);
    if (options.wait_for_selector) await waitForVisible(page, options, deadline);
    for (const action of ['click', 'hover'] as const) {
      const selector = options[action];
      if (selector === undefined) continue;
      // Both leave the mouse over the element: moved away before the page serves again.
      undo.push(await pointAt(page, action, selector, options, deadline));
    }
  } catch (error) {
    await undoAll().catch(() => {});
    throw error;
  }
  return undoAll;
}

/** One `display: none !important` rule per selector, so that one bad selector spoils only its own rule. */
export function hidingCss(selectors: readonly string[]): string {
  return selectors.map((selector) => `${selector} { display: none !important; }`).join('\n');
}

// A <style> element at the end of the document; the undo removes it (gone anyway if the document was replaced).
async function addStyle(page: Page, css: string, deadline: AbortSignal): Promise<Undo> {
  const element = await untilAborted(deadline, page.addStyleTag({ content: css }));
  return async () => {
    await element.evaluate((node) => (node as unknown as { remove(): void }).remove()).catch(() => {});
    await element.dispose().catch(() => {});
  };
}

type DomNode = { backendNodeId: number; children?: DomNode[]; shadowRoots?: DomNode[]; contentDocument?: DomNode };

/**
 * A <style> element appended to every shadow root of the page (open and closed, in frames too),
 * found over CDP as a page script could not find a closed one; the undo removes them.
 */
async function addStyleToShadowRoots(page: Page, css: string, deadline: AbortSignal): Promise<Undo> {
  const session = await untilAborted(deadline, page.context().newCDPSession(page));
  const added: string[] = [];
  const undo: Undo = async () => {
    for (const objectId of added) {
      await session
        .send('Runtime.callFunctionOn', { objectId, functionDeclaration: 'function () { this.remove(); }' })
        .catch(() => {});
    }
    await session.detach().catch(() => {});
  };
  try {
    const { root } = (await untilAborted(deadline, session.send('DOM.getDocument', { depth: -1, pierce: true }))) as {
      root: DomNode;
    };
    const roots: DomNode[] = [];
    const visit = (node: DomNode) => {
      for (const shadow of node.shadowRoots ?? []) {
        roots.push(shadow);
        visit(shadow);
      }
      for (const child of node.children ?? []) visit(child);
      if (node.contentDocument) visit(node.contentDocument);
    };
    visit(root);
    for (const shadow of roots) {
      const { object } = await untilAborted(
        deadline,
        session.send('DOM.resolveNode', { backendNodeId: shadow.backendNodeId }),
      );
      const { result } = await untilAborted(
        deadline,
        session.send('Runtime.callFunctionOn', {
          objectId: object.objectId!,
          functionDeclaration:
            'function (css) { const style = this.ownerDocument.createElement("style"); style.textContent = css; this.appendChild(style); return style; }',
          arguments: [{ value: css }],
        }),
      );
      if (result.objectId) added.push(result.objectId);
    }
  } catch (error) {
    await undo();
    throw error;
  }
  return undo;
}

/** What the in-page runner of `scripts` reports back. */
type ScriptOutcome = { error?: string; navigated: boolean };

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
      outcome = await untilAborted(
        deadline,
        page.evaluate<ScriptOutcome>(`(${RUN_SCRIPT_IN_PAGE})(${JSON.stringify(options.scripts)})`),
      );
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

// Runs in the page (a string: the test runner's transpiler must not touch it). Indirect eval: the
// script is global code, as if in a <script> element, and its completion value is awaited. The
// Navigation API's `navigate` event tells whether it started a cross-document navigation.
const RUN_SCRIPT_IN_PAGE = `async (source) => {
  let navigated = false;
  const onNavigate = (event) => { if (!event.destination.sameDocument) navigated = true; };
  globalThis.navigation?.addEventListener('navigate', onNavigate);
  try {
    await (0, globalThis.eval)(source);
    return { navigated };
  } catch (error) {
    return { error: error instanceof Error ? error.message || error.name : String(error), navigated };
  } finally {
    globalThis.navigation?.removeEventListener('navigate', onNavigate);
  }
}`;

// Waits until an element matching wait_for_selector is visible; none in the time the render has → 422.
// With wait_for_selector_algorithm=at_least_by_count, every selector of a list (`h1, .price`)
// must have a visible match, where at_least_one is content with a match of any of them.
async function waitForVisible(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<void> {
  const list = options.wait_for_selector!;
  const selectors = options.wait_for_selector_algorithm === 'at_least_by_count' ? splitSelectorList(list) : [list];
  const timeout = timeLeft(deadline, options);
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
  deadline: AbortSignal,
): Promise<Undo> {
  const required =
    action === 'click' ? options.error_on_click_selector_not_found : options.error_on_hover_selector_not_found;
  const moveAway: Undo = () => page.mouse.move(-1, -1);
  let element: ElementHandle | null = null;
  try {
    element = await untilAborted(deadline, page.$(selector));
    // Matched but not rendered (display: none, no box): nothing a mouse could reach, a miss.
    if (element && (await untilAborted(deadline, element.isVisible()))) {
      // force: the mouse goes where the element is, as a user's would, even under an overlay.
      const timeout = timeLeft(deadline, options);
      await untilAborted(
        deadline,
        action === 'click' ? element.click({ force: true, timeout }) : element.hover({ force: true, timeout }),
      );
      return moveAway;
    }
  } catch (error) {
    const failure = selectorError(error, action, selector, deadline);
    if (!(failure instanceof ServiceError && failure.code === 'selector_not_found')) throw failure;
  } finally {
    void element?.dispose().catch(() => {});
  }
  if (required) throw notFound(action, selector);
  return async () => {};
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
