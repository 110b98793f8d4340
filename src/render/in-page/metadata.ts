// In the page, for the metadata_* options (src/render/outputs/metadata.ts).
import type { OpenGraph } from '../../domain/metadata.ts';

/** Which facts to read. */
export type FactAsks = { title: boolean; openGraph: boolean; icon: boolean; fonts: boolean };

/** What one page evaluate reads: only the fields asked for are filled. */
export interface PageFacts {
  page_title?: string | null;
  open_graph?: OpenGraph;
  icon?: { url: string | null; type: string | null } | null;
  fonts?: string[];
}

/** Reads the facts `asks` names: the title, the Open Graph tags, the icon, the fonts text is set in. */
export function readPageFacts(asks: FactAsks): PageFacts {
  const absolute = (value: string | null): string | null => {
    if (!value) return null;
    try {
      return new URL(value, document.baseURI).href;
    } catch {
      return value;
    }
  };
  const facts: PageFacts = {};
  if (asks.title) facts.page_title = document.title || null;
  if (asks.openGraph) {
    const og = (name: string): string | null => {
      const meta = document.querySelector(`meta[property="og:${name}"], meta[name="og:${name}"]`);
      return meta ? (meta.getAttribute('content') || '').trim() || null : null;
    };
    facts.open_graph = {
      title: og('title'),
      description: og('description'),
      image: absolute(og('image')),
      url: absolute(og('url')),
      type: og('type'),
      site_name: og('site_name'),
    };
  }
  if (asks.icon) {
    const link = document.querySelector('link[rel~="icon" i][href], link[rel="apple-touch-icon" i][href]');
    facts.icon = link ? { url: absolute(link.getAttribute('href')), type: link.getAttribute('type') || null } : null;
  }
  if (asks.fonts) {
    // Of each font-family list text is set in, the family that applies: the first web font that
    // loaded, skipping web fonts that failed; a family that is no web font is the system's.
    const faces = [...document.fonts];
    const unquote = (family: string) => family.trim().replace(/^["']|["']$/g, '');
    const stacks = new Set<string>();
    for (const element of document.querySelectorAll('body, body *')) {
      const hasText = [...element.childNodes].some(
        (node) => node.nodeType === Node.TEXT_NODE && (node.textContent ?? '').trim() !== '',
      );
      if (hasText) stacks.add(getComputedStyle(element).fontFamily);
    }
    const used = new Set<string>();
    for (const stack of stacks) {
      const family = stack
        .split(',')
        .map(unquote)
        .filter(Boolean)
        .find((name) => {
          const matching = faces.filter((face) => unquote(face.family).toLowerCase() === name.toLowerCase());
          return matching.length === 0 || matching.some((face) => face.status === 'loaded');
        });
      if (family) used.add(family);
    }
    facts.fonts = [...used];
  }
  return facts;
}
