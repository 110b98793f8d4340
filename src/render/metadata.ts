// The metadata_* options (docs/api.md): what the page says about itself, read in the same visit
// as the output, after it was made. A render that asks for none of it never comes here.
import type { Page } from 'playwright-core';
import type { OpenGraph, PageMetadata } from '../domain/metadata.ts';
import { imageFormats, type RenderOptions } from '../domain/options.ts';
import { extractMarkdown, serialiseHtml } from './document.ts';
import { imageSize } from './image.ts';
import { untilAborted, type Navigation } from './steps.ts';

/** What one page evaluate reads: only the fields asked for are filled. */
interface PageFacts {
  page_title?: string | null;
  open_graph?: OpenGraph;
  icon?: { url: string; type: string | null } | null;
  fonts?: string[];
}

/** Gathers every metadata field `options` asks for; `output` is the render's output (for image_size). */
export async function gatherMetadata(
  page: Page,
  options: RenderOptions,
  navigation: Navigation,
  output: Buffer,
  deadline: AbortSignal,
): Promise<PageMetadata> {
  const metadata: PageMetadata = {};
  if (options.metadata_image_size && imageFormats.includes(options.format))
    metadata.image_size = await imageSize(output);
  const asks = {
    title: options.metadata_page_title,
    openGraph: options.metadata_open_graph,
    icon: options.metadata_icon,
    fonts: options.metadata_fonts,
  };
  if (Object.values(asks).some(Boolean)) {
    Object.assign(
      metadata,
      await untilAborted(deadline, page.evaluate<PageFacts>(`(${READ_PAGE_FACTS})(${JSON.stringify(asks)})`)),
    );
  }
  if (options.metadata_http_response_status_code) metadata.http_response_status_code = navigation.mainStatus;
  if (options.metadata_http_response_headers) metadata.http_response_headers = navigation.mainHeaders ?? {};
  if (options.metadata_content) {
    const format = options.metadata_content_format;
    // The output is that very text already when the format matches: no second read.
    const text =
      options.format === format
        ? output.toString('utf8')
        : format === 'html'
          ? await serialiseHtml(page, deadline, options.include_shadow_dom)
          : await extractMarkdown(page, deadline, options.include_shadow_dom);
    metadata.content = { text, format };
  }
  return metadata;
}

// Runs in the page with `asks`: kept as text, so that no compiler helper ends up inside it.
const READ_PAGE_FACTS = `(asks) => {
  const absolute = (value) => {
    if (!value) return null;
    try { return new URL(value, document.baseURI).href; } catch { return value; }
  };
  const facts = {};
  if (asks.title) facts.page_title = document.title || null;
  if (asks.openGraph) {
    const og = (name) => {
      const meta = document.querySelector('meta[property="og:' + name + '"], meta[name="og:' + name + '"]');
      return meta ? (meta.getAttribute('content') || '').trim() || null : null;
    };
    facts.open_graph = { title: og('title'), description: og('description'), image: absolute(og('image')), url: absolute(og('url')), type: og('type'), site_name: og('site_name') };
  }
  if (asks.icon) {
    const link = document.querySelector('link[rel~="icon" i][href], link[rel="apple-touch-icon" i][href]');
    facts.icon = link ? { url: absolute(link.getAttribute('href')), type: link.getAttribute('type') || null } : null;
  }
  if (asks.fonts) {
    // Of each font-family list text is set in, the family that applies: the first web font that
    // loaded, skipping web fonts that failed; a family that is no web font is the system's.
    const faces = [...document.fonts];
    const unquote = (family) => family.trim().replace(/^["']|["']$/g, '');
    const stacks = new Set();
    for (const element of document.querySelectorAll('body, body *')) {
      const hasText = [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim() !== '');
      if (hasText) stacks.add(getComputedStyle(element).fontFamily);
    }
    const used = new Set();
    for (const stack of stacks) {
      const family = stack.split(',').map(unquote).filter(Boolean).find((name) => {
        const matching = faces.filter((face) => unquote(face.family).toLowerCase() === name.toLowerCase());
        return matching.length === 0 || matching.some((face) => face.status === 'loaded');
      });
      if (family) used.add(family);
    }
    facts.fonts = [...used];
  }
  return facts;
}`;
