// In the page, for the capture (src/render/outputs/screenshot.ts). The full-page work is one function, so
// that its parts share the search for an app shell's scroller: a function runs in the page alone,
// without the module it was written in.

/** A box in document CSS px. */
export type Box = { x: number; y: number; width: number; height: number };

/** What the full-page capture asks of the page. */
export type FullPageTask =
  /** The whole scrollable document's size (never less than the viewport). */
  | { kind: 'size' }
  /** The size of everything a full-page capture shows, an app shell's scroller let out first. */
  | { kind: 'letOutSize' }
  /** An app shell's scroller let out to its content (as a full-page capture does). */
  | { kind: 'letOut' }
  /**
   * Step `index` (from 1) of a scroll by `step` px (0: the view's height) down to `maxHeight`:
   * scrolled there and painted twice, or, once the step before had the end in view, back to the top.
   */
  | { kind: 'scrollStep'; index: number; step: number; maxHeight: number }
  /** Two more frames at the same place: whether the page was still busy during them. */
  | { kind: 'settle' }
  /** Back to the top, the scroll cut short. */
  | { kind: 'top' };

/** What a scroll step saw: whether the scroll is done, and whether the page was busy loading in the step's frames. */
export type ScrollStep = { done: boolean; busy: boolean };

/** Does `task` (see FullPageTask); returns the size for the size tasks, what a step saw for the scroll tasks. */
export async function fullPage(
  task: FullPageTask,
): Promise<{ width: number; height: number } | ScrollStep | undefined> {
  const documentHeight = () =>
    Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0, innerHeight);
  const documentSize = () => ({
    width: Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0, innerWidth),
    height: documentHeight(),
  });
  // The element whose scrolling shows the page's content when the document itself does not
  // scroll, or barely (the app-shell layout: a viewport-filling element with overflow auto), or
  // null. Of the elements that scroll vertically further than the document does, the one showing
  // the most area, if it shows at least a quarter of the viewport; the body counts (a body with
  // overflow auto inside an html with overflow hidden). A document over two viewports tall is not searched.
  const findScroller = (): HTMLElement | null => {
    const documentExtra = document.documentElement.scrollHeight - innerHeight;
    if (documentExtra > innerHeight) return null;
    let best: HTMLElement | null = null;
    let bestArea = 0;
    for (const element of document.querySelectorAll<HTMLElement>('body, body *')) {
      if (element.scrollHeight - element.clientHeight <= Math.max(1, documentExtra)) continue;
      if (!/^(auto|scroll|overlay)$/.test(getComputedStyle(element).overflowY)) continue;
      const area = element.clientWidth * element.clientHeight;
      if (area > bestArea) {
        best = element;
        bestArea = area;
      }
    }
    return bestArea >= (innerWidth * innerHeight) / 4 ? best : null;
  };
  // The scroller, if any, and its ancestors let out to their content's height, so that the
  // document holds the scroller's whole content.
  const letOut = () => {
    const force = (element: HTMLElement, property: string, value: string) =>
      element.style.setProperty(property, value, 'important');
    for (let element = findScroller(); element !== null; element = element.parentElement) {
      const style = getComputedStyle(element);
      force(element, 'overflow', 'visible');
      force(element, 'height', 'auto');
      force(element, 'max-height', 'none');
      if (style.position === 'fixed' || style.position === 'sticky')
        force(element, 'position', style.position === 'fixed' ? 'absolute' : 'relative');
      if (style.position === 'fixed' || style.position === 'absolute') force(element, 'bottom', 'auto');
    }
  };
  switch (task.kind) {
    case 'size':
      return documentSize();
    case 'letOutSize':
      letOut();
      return documentSize();
    case 'letOut':
      letOut();
      return undefined;
    case 'top': {
      (findScroller() ?? window).scrollTo({ left: 0, top: 0, behavior: 'instant' });
      return undefined;
    }
    case 'scrollStep':
    case 'settle': {
      const scroller = findScroller();
      const view: { scrollTo(options: ScrollToOptions): void } = scroller ?? window;
      const viewHeight = scroller ? scroller.clientHeight : innerHeight;
      const height = () => (scroller ? scroller.scrollHeight : documentHeight());
      if (task.kind === 'scrollStep') {
        const step = task.step || viewHeight;
        if ((task.index - 1) * step + viewHeight >= Math.min(task.maxHeight, height())) {
          view.scrollTo({ left: 0, top: 0, behavior: 'instant' });
          return { done: true, busy: false };
        }
        view.scrollTo({ left: 0, top: task.index * step, behavior: 'instant' });
      }
      // Busy: the document changed or grew in the next two frames (an observer's content arriving),
      // or an image near the view is still loading (a lazy one the scroll started).
      const before = height();
      let mutations = 0;
      const observer = new MutationObserver((records) => void (mutations += records.length));
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      // The frames are waited for, however late under load: an IntersectionObserver sees the
      // scroll only in a frame. A page that paints nothing for a second moves on.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            clearTimeout(timer);
            resolve();
          }),
        );
      });
      observer.disconnect();
      const loading = [...document.images].some((image) => {
        if (image.complete) return false;
        const box = image.getBoundingClientRect();
        return box.bottom > -innerHeight && box.top < 2 * innerHeight;
      });
      return { done: false, busy: mutations > 0 || height() !== before || loading };
    }
  }
}

/**
 * What a scroll may set off on the page, as its DOM shows it: `lazy`, a lazy image still to load or a
 * lazy frame; `scripted`, a script element or an inline event handler, without which nothing of
 * the page's own can watch the scroll; `shell`, a document that scrolls a viewport or less, whose
 * content may be an app shell's scroller (its listeners are on the scroller, not the window).
 */
export function scrollWatchers(): { lazy: boolean; scripted: boolean; shell: boolean } {
  const lazy =
    document.querySelector('iframe[loading="lazy" i]') !== null ||
    [...document.querySelectorAll<HTMLImageElement>('img[loading="lazy" i]')].some((image) => !image.complete);
  const handlers = document.evaluate(
    'count(//@*[starts-with(name(), "on")])',
    document,
    null,
    XPathResult.NUMBER_TYPE,
    null,
  );
  return {
    lazy,
    scripted: document.scripts.length > 0 || handlers.numberValue > 0,
    shell: document.documentElement.scrollHeight - innerHeight <= innerHeight,
  };
}

/**
 * Moves the page's bottom bars (fixed or sticky boxes whose bottom is the viewport's, in its
 * lower half) to the bottom of a capture `captureHeight` CSS px tall (see pinBottomBars in
 * src/render/outputs/screenshot.ts).
 */
export function pinBottomBars(captureHeight: number): void {
  const shift = captureHeight - innerHeight;
  if (shift < 1) return;
  const moved: HTMLElement[] = [];
  for (const element of document.querySelectorAll<HTMLElement>('body *')) {
    const style = getComputedStyle(element);
    if (style.position !== 'fixed' && style.position !== 'sticky') continue;
    const box = element.getBoundingClientRect();
    if (box.height === 0 || box.top < innerHeight / 2 || Math.abs(box.bottom - innerHeight) > 1) continue;
    if (moved.some((bar) => bar.contains(element))) continue;
    moved.push(element);
    if (style.position === 'sticky') {
      element.style.setProperty('position', 'relative', 'important');
      element.style.setProperty('bottom', 'auto', 'important');
    } else {
      element.style.setProperty(
        'transform',
        `translateY(${shift}px)${style.transform === 'none' ? '' : ` ${style.transform}`}`,
        'important',
      );
    }
  }
}

/** An element's box in document coordinates, and where the page was scrolled to if it scrolled the element to the top first. */
export type ElementBox = Box & { scrolledFrom?: { left: number; top: number } };

/** The box of `node` in document coordinates, scrolled to the top of the viewport first with `scrollFirst`. */
export function elementBox(node: Element, scrollFirst: boolean): ElementBox {
  const from = { left: scrollX, top: scrollY };
  if (scrollFirst) node.scrollIntoView({ block: 'start', inline: 'start', behavior: 'instant' });
  const rect = node.getBoundingClientRect();
  return {
    x: rect.left + scrollX,
    y: rect.top + scrollY,
    width: rect.width,
    height: rect.height,
    ...(scrollFirst ? { scrolledFrom: from } : {}),
  };
}

/** Scrolls the page to `to`, at once. */
export function scrollPageTo(to: { left: number; top: number }): void {
  scrollTo({ ...to, behavior: 'instant' });
}

/**
 * A page's fixed boxes, for a capture by sections: those in the viewport's upper half (a header)
 * and those at its bottom (a footer, a cookie bar: bottom bars as pinBottomBars finds them). Each
 * is captured once, not in every section: the upper ones in the first, the bottom bars in the
 * last. Other fixed boxes (a backdrop filling the viewport, a widget halfway down) stay in every
 * section. `hidden` keeps the inline opacity each had before it was hidden.
 */
export type SectionBars = {
  top: HTMLElement[];
  bottom: HTMLElement[];
  hidden: Map<HTMLElement, [string, string]>;
};

/**
 * The page's fixed boxes, sorted as SectionBars; its sticky boxes are let back into their place
 * in the flow, where a capture of the whole page at once shows them, so that a sticky header does
 * not stick to the top of every section.
 */
export function sectionBars(): SectionBars {
  const bars: SectionBars = { top: [], bottom: [], hidden: new Map() };
  for (const element of document.querySelectorAll<HTMLElement>('body *')) {
    const style = getComputedStyle(element);
    if (style.position === 'sticky') {
      element.style.setProperty('position', 'relative', 'important');
      element.style.setProperty('top', 'auto', 'important');
      element.style.setProperty('bottom', 'auto', 'important');
      continue;
    }
    if (style.position !== 'fixed') continue;
    if ([...bars.top, ...bars.bottom].some((bar) => bar.contains(element))) continue;
    const box = element.getBoundingClientRect();
    if (box.height === 0) continue;
    if (box.bottom <= innerHeight / 2) bars.top.push(element);
    else if (box.top >= innerHeight / 2 && Math.abs(box.bottom - innerHeight) <= 1) bars.bottom.push(element);
  }
  return bars;
}

/**
 * Shows the page's section at `top` (the first and the last sections as told): `bars` shown or
 * hidden as the section wants them (see SectionBars), the page scrolled there; resolves once it
 * has been painted twice.
 */
export function showSection(bars: SectionBars, section: { top: number; first: boolean; last: boolean }): Promise<void> {
  const show = (element: HTMLElement, shown: boolean) => {
    const before = bars.hidden.get(element);
    if (shown && before) {
      element.style.setProperty('opacity', before[0], before[1]);
      bars.hidden.delete(element);
    } else if (!shown && !before) {
      bars.hidden.set(element, [
        element.style.getPropertyValue('opacity'),
        element.style.getPropertyPriority('opacity'),
      ]);
      element.style.setProperty('opacity', '0', 'important');
    }
  };
  for (const element of bars.top) show(element, section.first);
  for (const element of bars.bottom) show(element, section.last);
  return new Promise<void>((resolve) => {
    scrollTo({ left: 0, top: section.top, behavior: 'instant' });
    requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
  });
}
