// In the page, for the page steps (src/render/steps/page.ts).

/**
 * True once the document's fonts are ready to draw, false when `ms` pass first. A layout is made
 * first: it requests the fonts its text needs that no layout has asked for yet (a rule added by a
 * script, text shown late), which a capture's own layout would otherwise start too late to draw.
 */
export function fontsReady(ms: number): boolean | Promise<boolean> {
  void document.documentElement?.offsetWidth;
  const fonts = document.fonts;
  if (fonts?.status !== 'loading') return true;
  return Promise.race([
    fonts.ready.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}

/** Scrolls `node` to the top of the viewport, then `adjust` px further down (negative: up). */
export function scrollToTop(node: Element, adjust: number): void {
  node.scrollIntoView({ block: 'start', inline: 'nearest' });
  if (adjust !== 0) scrollBy({ top: adjust, behavior: 'instant' });
}

/** The page's visible text, as `document.body.innerText` gives it. */
export function visibleText(): string {
  return document.body ? document.body.innerText : '';
}

/** Resolves once the page has been painted twice from now (two animation frames). */
export function paintedTwice(): Promise<void> {
  return new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
}

/**
 * The visible text of the first element matching `selector` (the body when null), as innerText
 * lays it out, cut to `limit` characters before it leaves the page. Run in an isolated world: the
 * page's scripts cannot stand in for innerText or see the call.
 */
export function visibleTextOf(selector: string | null, limit: number): string {
  let root: Element | null = null;
  try {
    root = selector === null ? document.body : document.querySelector(selector);
  } catch {
    // A selector the CSS engine cannot parse matches nothing here; the capture reports it.
  }
  if (!root) return '';
  const text = root instanceof HTMLElement ? root.innerText : (root.textContent ?? '');
  return text.length > limit ? text.slice(0, limit) : text;
}
