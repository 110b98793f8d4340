// In the page, for the page actions (src/render/steps/page-actions.ts).

/** Removes `node` from its document (a style element a render added). */
export function removeNode(node: Element): void {
  node.remove();
}

/** Removes the node it is called on (CDP Runtime.callFunctionOn). */
export function removeThis(this: Element): void {
  this.remove();
}

/** Adopts a constructed style sheet of `css` into the document (a Content-Security-Policy does not govern those). */
export function adoptStyleSheet(css: string): CSSStyleSheet {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  return sheet;
}

/** Takes back a style sheet `adoptStyleSheet` adopted. */
export function dropStyleSheet(sheet: CSSStyleSheet): void {
  document.adoptedStyleSheets = document.adoptedStyleSheets.filter((adopted) => adopted !== sheet);
}

/** Appends a style element of `css` to the shadow root it is called on, and returns the element. */
export function appendStyle(this: ShadowRoot, css: string): HTMLStyleElement {
  const style = this.ownerDocument.createElement('style');
  style.textContent = css;
  this.appendChild(style);
  return style;
}

/** What the runner of `scripts` reports back. */
export type ScriptOutcome = { error?: string; navigated: boolean };

// The Navigation API, where the browser has it (the DOM library does not declare it yet).
type NavigateEvent = Event & { destination: { sameDocument: boolean } };
type NavigationApi = {
  addEventListener(type: 'navigate', listener: (event: NavigateEvent) => void): void;
  removeEventListener(type: 'navigate', listener: (event: NavigateEvent) => void): void;
};

/**
 * Runs `source` as global code (indirect eval, as if in a <script> element) and awaits its
 * completion value. The Navigation API's `navigate` event tells whether it started a
 * cross-document navigation.
 */
export async function runScript(source: string): Promise<ScriptOutcome> {
  let navigated = false;
  const onNavigate = (event: NavigateEvent) => {
    if (!event.destination.sameDocument) navigated = true;
  };
  const navigation = (globalThis as { navigation?: NavigationApi }).navigation;
  navigation?.addEventListener('navigate', onNavigate);
  try {
    // biome-ignore lint/security/noGlobalEval: running the customer's `scripts` is what this is for.
    await (0, globalThis.eval)(source);
    return { navigated };
  } catch (error) {
    return { error: error instanceof Error ? error.message || error.name : String(error), navigated };
  } finally {
    navigation?.removeEventListener('navigate', onNavigate);
  }
}
