// The formats that are the document rather than a picture of it: pdf (Chromium's print), html (the
// DOM after scripts ran) and markdown (the page's main content, found by Mozilla's Readability in
// the page and converted by node-html-markdown here).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';
import { ServiceError } from '../../errors.ts';
import { cdp, openCdp } from '../browser/cdp.ts';
import { inPage } from '../browser/in-page.ts';
import { type Article, readArticle, readDocumentFacts } from '../in-page/document.ts';
import { evaluateIsolated } from '../browser/playwright.ts';
import { documentSize, letOutScroller } from './full-page.ts';
import type { PageFacts } from './pdf-finish.ts';
import { untilAborted } from '../steps/page.ts';

/** The margin a header or footer template gets when its side's margin is not given: room for a line or two. */
const TEMPLATE_MARGIN = '15mm';

// Chromium prints its own default header or footer (date and title, URL and page) for a template
// left empty: the side the caller gave no template for gets an empty one.
const EMPTY_TEMPLATE = '<span></span>';

/**
 * Prints the whole document to PDF: on `pdf_paper_format` paper (turned with `pdf_landscape`), on
 * a custom `pdf_width` × `pdf_height` paper, or with `pdf_fit_one_page` on one page as wide and
 * tall as the document (an app shell's scrolling element let out to its content first); margins
 * and backgrounds as asked; `pdf_header` / `pdf_footer` templates
 * on every page, `pdf_page_ranges`, `pdf_scale`, `pdf_prefer_css_page_size`, the outline and tags
 * (docs/capture.md, "PDF").
 */
export async function printPdf(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Buffer> {
  // An app shell prints its scroller's whole content, not the part in view (docs/capture.md).
  await letOutScroller(page, deadline);
  const templates = options.pdf_header !== undefined || options.pdf_footer !== undefined;
  const margin = {
    top:
      options.pdf_margin_top ?? options.pdf_margin ?? (options.pdf_header !== undefined ? TEMPLATE_MARGIN : undefined),
    right: options.pdf_margin_right ?? options.pdf_margin,
    bottom:
      options.pdf_margin_bottom ??
      options.pdf_margin ??
      (options.pdf_footer !== undefined ? TEMPLATE_MARGIN : undefined),
    left: options.pdf_margin_left ?? options.pdf_margin,
  };
  const paper = options.pdf_fit_one_page
    ? await onePage(page, margin, deadline)
    : options.pdf_width !== undefined && options.pdf_height !== undefined
      ? { width: options.pdf_width, height: options.pdf_height, landscape: options.pdf_landscape }
      : { format: options.pdf_paper_format, landscape: options.pdf_landscape };
  const pdf = page.pdf({
    ...paper,
    margin,
    printBackground: options.pdf_print_background,
    scale: options.pdf_scale,
    preferCSSPageSize: options.pdf_prefer_css_page_size,
    outline: options.pdf_outline,
    // Chromium builds the outline from the tagged structure: an outline needs the tags too.
    tagged: options.pdf_tagged || options.pdf_outline || options.pdf_accessible,
    ...(options.pdf_page_ranges !== undefined ? { pageRanges: options.pdf_page_ranges.replace(/\s+/g, '') } : {}),
    ...(templates
      ? {
          displayHeaderFooter: true,
          headerTemplate: options.pdf_header || EMPTY_TEMPLATE,
          footerTemplate: options.pdf_footer || EMPTY_TEMPLATE,
        }
      : {}),
  });
  return untilAborted(deadline, pdf).catch((error: unknown) => {
    // Only the document knows how many pages it prints to: a range past its end is the caller's to fix.
    if (/page range/i.test(String(error)) && options.pdf_page_ranges !== undefined) {
      throw new ServiceError(
        'request_not_valid',
        { error_details: [{ parameter: 'pdf_page_ranges', message: 'names a page the document does not have' }] },
        { cause: error },
      );
    }
    // Margins wider or taller than the paper leave nothing to print on: the caller's to fix too.
    if (/content area is empty/i.test(String(error))) {
      const given = MARGINS.filter((name) => options[name] !== undefined);
      throw new ServiceError(
        'request_not_valid',
        {
          error_details: (given.length > 0 ? given : MARGINS.slice(0, 1)).map((parameter) => ({
            parameter,
            message: 'the margins leave no room on the paper',
          })),
        },
        { cause: error },
      );
    }
    throw error;
  });
}

/** The page's title (its URL when it has none) and language, for an accessible PDF (src/render/outputs/pdf-finish.ts). */
export async function readPageFacts(page: Page, deadline: AbortSignal): Promise<PageFacts> {
  // Read in an isolated world, and taken as strings only: the page's word about itself (docs/security.md).
  const facts = await untilAborted(deadline, evaluateIsolated(page, inPage(readDocumentFacts), undefined));
  const title = typeof facts?.title === 'string' ? facts.title : '';
  const language = typeof facts?.language === 'string' ? facts.language : '';
  const url = page.url();
  return {
    title: title || (/^https?:/.test(url) ? url : 'Untitled document'),
    ...(language ? { language } : {}),
  };
}

const MARGINS = ['pdf_margin', 'pdf_margin_top', 'pdf_margin_right', 'pdf_margin_bottom', 'pdf_margin_left'] as const;

type Margin = { top?: string; right?: string; bottom?: string; left?: string };

// One page the size of the document plus its margins; anything the print layout pushes past it
// (print styles may lay it out a little longer) is cut rather than spilt onto a second page.
async function onePage(page: Page, margin: Margin, deadline: AbortSignal) {
  const size = await documentSize(page, deadline);
  const width = size.width + pixels(margin.left) + pixels(margin.right);
  const height = size.height + pixels(margin.top) + pixels(margin.bottom);
  return { width: `${Math.ceil(width)}px`, height: `${Math.ceil(height) + 1}px`, pageRanges: '1' };
}

const PIXELS_PER_UNIT: Record<string, number> = { px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 };

// A CSS length of the parameter table (px, in, cm, mm) in CSS pixels.
function pixels(length: string | undefined): number {
  const match = /^([\d.]+)(px|in|cm|mm)?$/i.exec(length ?? '0');
  return match ? Number(match[1]) * PIXELS_PER_UNIT[match[2]?.toLowerCase() ?? 'px'] : 0;
}

/**
 * The document as the page holds it now, scripts' changes included, serialised with its doctype.
 * With `includeShadowDom`, open and closed shadow roots too, as declarative shadow roots
 * (`<template shadowrootmode>`), read over CDP (a page script cannot reach a closed root).
 */
/**
 * The page as Chromium archives it (CDP Page.captureSnapshot): one MHTML file holding the document
 * as rendered and every sub-resource it shows, readable offline.
 */
export async function archivePage(session: CDPSession, deadline: AbortSignal): Promise<Buffer> {
  const { data } = await untilAborted(deadline, cdp(session).Page.captureSnapshot({ format: 'mhtml' }));
  return Buffer.from(data, 'utf8');
}

export async function serialiseHtml(page: Page, deadline: AbortSignal, includeShadowDom = false): Promise<string> {
  if (!includeShadowDom) return untilAborted(deadline, page.content());
  const session = await untilAborted(deadline, openCdp(page));
  try {
    const { root } = await untilAborted(deadline, session.DOM.getDocument({ depth: 0 }));
    const { outerHTML } = await untilAborted(
      deadline,
      session.DOM.getOuterHTML({ nodeId: root.nodeId, includeShadowDOM: true }),
    );
    return outerHTML;
  } finally {
    await session.detach().catch(() => {});
  }
}

let readabilitySource: string | undefined;

type HtmlToMarkdown = (html: string) => string;
let converter: Promise<HtmlToMarkdown> | undefined;

// node-html-markdown is loaded on the first Markdown render, never before.
function loadConverter(): Promise<HtmlToMarkdown> {
  converter ??= import('node-html-markdown').then(({ NodeHtmlMarkdown }) => {
    const translator = new NodeHtmlMarkdown();
    return (html: string) => translator.translate(html);
  });
  return converter;
}

/**
 * The page's main content as Markdown: Readability runs in the page on a copy of the document
 * (no second navigation; relative links made absolute), its article becomes Markdown under the
 * title as a heading. A page Readability finds no article in gives its whole body.
 */
export async function extractMarkdown(page: Page, deadline: AbortSignal, includeShadowDom = false): Promise<string> {
  readabilitySource ??= readFileSync(
    createRequire(import.meta.url).resolve('@mozilla/readability/Readability.js'),
    'utf8',
  );
  // include_shadow_dom: the document with its shadow roots (serialiseHtml), parsed again in the
  // page and flattened (each host's shadow content in its place, its slots filled) for Readability.
  const shadowHtml = includeShadowDom ? await serialiseHtml(page, deadline, true) : null;
  // Runtime.evaluate is not subject to the page's Content-Security-Policy; the script defines
  // Readability inside this function only (its source is text: the page may forbid eval), and
  // works on a copy, so the page is left as it was.
  const article = await untilAborted(
    deadline,
    page.evaluate<Article>(`(() => {
    const module = undefined; // Readability.js exports itself when it sees one: not onto the page's.
    ${readabilitySource}
    return (${String(inPage(readArticle))})(Readability, ${JSON.stringify(shadowHtml)});
  })()`),
  );
  const toMarkdown = await loadConverter();
  const body = toMarkdown(article.content).trim();
  const title = article.title.trim();
  return `${title && !body.startsWith('# ') ? `# ${title}\n\n` : ''}${body}\n`;
}
