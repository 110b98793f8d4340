// In the page, for the blocking (src/render/steps/blocking.ts).

/** Replaces WebSocket in a document by a constructor that refuses as the browser does a blocked address. */
export function refuseWebSockets(): void {
  globalThis.WebSocket = class WebSocket extends EventTarget {
    constructor() {
      super();
      throw new DOMException('WebSocket connections are blocked for this render (block_resources)', 'SecurityError');
    }
  } as unknown as typeof WebSocket;
}

/** What a document shows that element-hiding rules key on. */
export type DomFeatures = { url: string; ids: string[]; classes: string[]; hrefs: string[] };

/** The document's ids, classes and link targets, bounded for a huge document. */
export function collectFeatures(): DomFeatures {
  const ids = new Set<string>();
  const classes = new Set<string>();
  const hrefs = new Set<string>();
  for (const element of document.querySelectorAll('[id],[class],a[href]')) {
    if (ids.size + classes.size + hrefs.size > 20000) break;
    if (element.id) ids.add(element.id);
    for (const name of element.classList) classes.add(name);
    if (element instanceof HTMLAnchorElement && element.href) hrefs.add(element.href);
  }
  return { url: location.href, ids: [...ids], classes: [...classes], hrefs: [...hrefs] };
}

/** What hideOverlays hides: the rules' css, blocked frames and images by URL, and with `heuristics` overlays. */
export type Hiding = { css: string; heuristics: boolean; collapse: string[] };

/**
 * Adds `css` (one style element), hides the elements whose source is in `collapse`, and, with
 * `heuristics`, fixed overlays (see hideOnPage in src/render/steps/blocking.ts), lifting the scroll lock
 * they leave.
 */
export function hideOverlays({ css, heuristics, collapse }: Hiding): void {
  if (css) {
    const style = document.createElement('style');
    style.textContent = css;
    (document.head || document.documentElement).appendChild(style);
  }
  if (collapse.length > 0) {
    const blocked = new Set(collapse);
    for (const element of document.querySelectorAll<HTMLElement>('iframe, frame, img, video, audio, embed, object')) {
      const source =
        element instanceof HTMLImageElement || element instanceof HTMLMediaElement
          ? element.currentSrc || element.src
          : element instanceof HTMLIFrameElement ||
              element instanceof HTMLFrameElement ||
              element instanceof HTMLEmbedElement
            ? element.src
            : element instanceof HTMLObjectElement
              ? element.data
              : '';
      if (source && blocked.has(source)) element.style.setProperty('display', 'none', 'important');
    }
  }
  if (!heuristics || !document.body) return;
  const width = innerWidth;
  const height = innerHeight;
  const pageText = (document.body.textContent || '').length;
  // The next element after the walker's current one that is not inside it.
  const nextOutside = (walker: TreeWalker): Node | null => {
    for (let node: Node | null = walker.currentNode; node; node = walker.parentNode()) {
      const sibling = walker.nextSibling();
      if (sibling) return sibling;
    }
    return null;
  };
  let hidden = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT);
  let element = walker.nextNode() as HTMLElement | null;
  while (element) {
    const style = getComputedStyle(element);
    let skipChildren = style.display === 'none';
    if (!skipChildren && (style.position === 'fixed' || style.position === 'sticky') && style.visibility !== 'hidden') {
      const box = element.getBoundingClientRect();
      const w = Math.min(box.right, width) - Math.max(box.left, 0);
      const h = Math.min(box.bottom, height) - Math.max(box.top, 0);
      const cover = w > 0 && h > 0 ? (w * h) / (width * height) : 0;
      const overlay =
        style.position === 'fixed'
          ? cover >= 0.3 || (cover > 0 && box.bottom >= height - 2 && w >= width * 0.5)
          : cover >= 0.6;
      const holdsThePage = pageText > 200 && (element.textContent || '').length > pageText * 0.5;
      if (overlay && !holdsThePage) {
        element.style.setProperty('display', 'none', 'important');
        hidden += 1;
        skipChildren = true;
      }
    }
    // A walker shown only elements: every node it gives is an HTMLElement (or an SVG one, styled alike).
    element = (skipChildren ? nextOutside(walker) : walker.nextNode()) as HTMLElement | null;
  }
  if (hidden > 0) {
    for (const root of [document.documentElement, document.body]) {
      if (getComputedStyle(root).overflowY === 'hidden') root.style.setProperty('overflow', 'auto', 'important');
    }
  }
}
