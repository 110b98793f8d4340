// In the page, for still captures (src/render/steps/still.ts); run in an isolated world, sharing the DOM only.

/** What holdStill did: how many animations it stopped and videos it paused. */
export type Stilled = { animations: number; videos: number };

/**
 * Holds the page still for its capture: every animation (CSS animations and transitions, Web
 * Animations, in shadow trees too) finished, an infinite one paused at its start; every video
 * paused at its first frame (waited for, at most `seekMs`, its presentation at most `presentMs`); the text caret made transparent by a
 * constructed style sheet `caretCss` in the document and each open shadow root.
 */
export async function holdStill(caretCss: string, seekMs: number, presentMs: number): Promise<Stilled> {
  // What starts from now on (a transition a script sets off, an animation a class adds) ends as it starts.
  const stop = (event: Event) => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    for (const animation of target.getAnimations()) settle(animation);
  };
  for (const type of ['transitionrun', 'animationstart']) document.addEventListener(type, stop, true);
  // What the page set off on its load, a frame or two later, is running by now.
  for (let frame = 0; frame < 2; frame++) await new Promise((resolve) => requestAnimationFrame(resolve));
  const roots: (Document | ShadowRoot)[] = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const element of roots[i].querySelectorAll('*')) if (element.shadowRoot) roots.push(element.shadowRoot);
  }
  const animations = document.getAnimations();
  for (const animation of animations) settle(animation);
  const seeks: Promise<unknown>[] = [];
  let videos = 0;
  const event = (target: EventTarget, type: string) =>
    new Promise((resolve) => target.addEventListener(type, resolve, { once: true }));
  // Paused, then back at 0 with its first frame decoded (a video still loading shows it once loaded).
  const toFirstFrame = async (video: HTMLVideoElement) => {
    if (
      video.readyState < HTMLMediaElement.HAVE_CURRENT_DATA &&
      video.networkState !== HTMLMediaElement.NETWORK_EMPTY
    ) {
      // A video that loads its metadata only would never have a frame to show.
      video.preload = 'auto';
      await event(video, 'loadeddata');
    }
    video.autoplay = false;
    video.pause();
    // The frame on the screen is the one the compositor last presented, which trails seeked (and,
    // on a busy machine, a frame still playing when pause() was called): frames are waited for
    // until the one presented is the first. One that is there already is not presented again:
    // a video that never played is waited for briefly, at most `presentMs`.
    const presented = (ms: number) =>
      new Promise<number | null>((resolve) => {
        video.requestVideoFrameCallback((_, frame) => resolve(frame.mediaTime));
        setTimeout(() => resolve(null), ms);
      });
    const played = video.currentTime !== 0;
    const seeked = event(video, 'seeked');
    video.currentTime = 0;
    await seeked;
    if (!played) {
      await presented(presentMs);
      return;
    }
    // A video that played has a frame to replace: on a busy machine its presentation may take a
    // while, so each is waited for longer before the one on the screen is taken as it is.
    for (;;) {
      const mediaTime = await presented(presentMs * 4);
      if (mediaTime === null || mediaTime < 0.001) return;
    }
  };
  for (const root of roots) {
    for (const video of root.querySelectorAll('video')) {
      videos++;
      seeks.push(toFirstFrame(video));
    }
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(caretCss);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  }
  if (seeks.length > 0) {
    await Promise.race([Promise.all(seeks), new Promise((resolve) => setTimeout(resolve, seekMs))]);
    // The frame sought reaches the screen a frame or two later.
    for (let frame = 0; frame < 2; frame++) await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  return { animations: animations.length, videos };
}

/**
 * Finishes `animation`, or holds it at its start when it never ends: its first iteration's first
 * moment, after its delay (before it, a negative delay included, it may show something else).
 */
export function settle(animation: Animation): void {
  const end = animation.effect?.getComputedTiming().endTime;
  if (typeof end === 'number' && Number.isFinite(end)) {
    animation.finish();
  } else {
    animation.pause();
    animation.currentTime = Number(animation.effect?.getTiming().delay ?? 0) / Math.abs(animation.playbackRate || 1);
  }
}

/** What removeMatching did: how many elements it removed, and the selectors the browser could not parse. */
export type Removed = { removed: number; invalid: string[] };

/** Removes every element matching one of `selectors` from the document and its open shadow roots. */
export function removeMatching(selectors: string[]): Removed {
  const roots: (Document | ShadowRoot)[] = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const element of roots[i].querySelectorAll('*')) if (element.shadowRoot) roots.push(element.shadowRoot);
  }
  const invalid: string[] = [];
  let removed = 0;
  for (const selector of selectors) {
    for (const root of roots) {
      let matches: Element[];
      try {
        matches = [...root.querySelectorAll(selector)];
      } catch {
        invalid.push(selector);
        break;
      }
      for (const element of matches) {
        element.remove();
        removed++;
      }
    }
  }
  return { removed, invalid };
}

/** What maskMatching did: how many boxes it drew, and the selectors the browser could not parse. */
export type Masked = { boxes: number; invalid: string[] };

/**
 * Covers every element matching one of `selectors` (in the document and its open shadow roots) with
 * a box of `color` marked with the attribute `marker`: the part of the element its scrolling or
 * clipping ancestors let show, no more, so nothing outside it is covered. A box scrolls with the
 * document, or stays put with an element that does (position: fixed).
 */
export function maskMatching(selectors: string[], color: string, marker: string): Masked {
  const roots: (Document | ShadowRoot)[] = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const element of roots[i].querySelectorAll('*')) if (element.shadowRoot) roots.push(element.shadowRoot);
  }
  const parentOf = (element: Element): Element | null => {
    if (element.parentElement) return element.parentElement;
    const root = element.getRootNode();
    return root instanceof ShadowRoot ? root.host : null;
  };
  const invalid: string[] = [];
  let boxes = 0;
  const seen = new Set<Element>();
  for (const selector of selectors) {
    for (const root of roots) {
      let matches: Element[];
      try {
        matches = [...root.querySelectorAll(selector)];
      } catch {
        invalid.push(selector);
        break;
      }
      for (const element of matches) {
        if (seen.has(element)) continue;
        seen.add(element);
        const rect = element.getBoundingClientRect();
        let left = rect.left;
        let top = rect.top;
        let right = rect.right;
        let bottom = rect.bottom;
        let fixed = false;
        for (let at: Element | null = element; at; at = parentOf(at)) {
          const style = getComputedStyle(at);
          if (style.position === 'fixed') fixed = true;
          if (at === element || at === document.documentElement || at === document.body) continue;
          if (style.overflowX !== 'visible' || style.overflowY !== 'visible' || style.contain.includes('paint')) {
            const clip = at.getBoundingClientRect();
            left = Math.max(left, clip.left + at.clientLeft);
            top = Math.max(top, clip.top + at.clientTop);
            right = Math.min(right, clip.left + at.clientLeft + at.clientWidth);
            bottom = Math.min(bottom, clip.top + at.clientTop + at.clientHeight);
          }
        }
        if (right <= left || bottom <= top) continue;
        const box = document.createElement('div');
        box.setAttribute(marker, '');
        const x = fixed ? left : left + scrollX;
        const y = fixed ? top : top + scrollY;
        const place: [string, string][] = [
          ['all', 'initial'],
          ['position', fixed ? 'fixed' : 'absolute'],
          ['display', 'block'],
          ['left', `${x}px`],
          ['top', `${y}px`],
          ['width', `${right - left}px`],
          ['height', `${bottom - top}px`],
          ['background', color],
          ['z-index', '2147483647'],
          ['pointer-events', 'none'],
        ];
        for (const [property, value] of place) box.style.setProperty(property, value, 'important');
        document.documentElement.appendChild(box);
        boxes++;
      }
    }
  }
  return { boxes, invalid };
}

/** Removes the boxes maskMatching drew. */
export function unmask(marker: string): number {
  const boxes = document.querySelectorAll(`[${marker}]`);
  for (const box of boxes) box.remove();
  return boxes.length;
}
