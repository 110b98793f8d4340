// The formats that are the document rather than a picture of it: pdf (Chromium's print), html (the
// DOM after scripts ran) and markdown (the page's main content, found by Mozilla's Readability in
// the page and converted by node-html-markdown here).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';
import { documentSize } from './screenshot.ts';
import { untilAborted } from './steps.ts';

/**
 * Prints the whole document to PDF: on `pdf_paper_format` paper (turned with `pdf_landscape`),
 * or with `pdf_fit_one_page` on one page as wide and tall as the document; margins and
 * backgrounds as asked.
 */
export async function printPdf(page: Page, options: RenderOptions, deadline: AbortSignal): Promise<Buffer> {
  const margin = {
    top: options.pdf_margin_top ?? options.pdf_margin,
    right: options.pdf_margin_right ?? options.pdf_margin,
    bottom: options.pdf_margin_bottom ?? options.pdf_margin,
    left: options.pdf_margin_left ?? options.pdf_margin,
  };
  const paper = options.pdf_fit_one_page ? await onePage(page, margin, deadline) : { format: options.pdf_paper_format, landscape: options.pdf_landscape };
  return untilAborted(deadline, page.pdf({ ...paper, margin, printBackground: options.pdf_print_background }));
}

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
  const match = /^([\d.]+)(px|in|cm|mm)?$/.exec(length ?? '0');
  return match ? Number(match[1]) * PIXELS_PER_UNIT[match[2] ?? 'px'] : 0;
}

/**
 * The document as the page holds it now, scripts' changes included, serialised with its doctype.
 * With `includeShadowDom`, open and closed shadow roots too, as declarative shadow roots
 * (`<template shadowrootmode>`), read over CDP (a page script cannot reach a closed root).
 */
export async function serialiseHtml(page: Page, deadline: AbortSignal, includeShadowDom = false): Promise<string> {
  if (!includeShadowDom) return untilAborted(deadline, page.content());
  const session = await untilAborted(deadline, page.context().newCDPSession(page));
  try {
    const { root } = await untilAborted(deadline, session.send('DOM.getDocument', { depth: 0 }));
    const { outerHTML } = await untilAborted(deadline, session.send('DOM.getOuterHTML', { nodeId: root.nodeId, includeShadowDOM: true }));
    return outerHTML;
  } finally {
    await session.detach().catch(() => {});
  }
}

let readabilitySource: string | undefined;

// In-page: a document parsed from serialised HTML with its declarative shadow roots (closed ones
// opened, as only this copy sees them), each host's shadow content moved into the host in place of
// its light children, slots filled with the children assigned to them.
const FLATTEN_SHADOW_ROOTS = `function flattened(html) {
  const copy = Document.parseHTMLUnsafe(html.replaceAll('shadowrootmode="closed"', 'shadowrootmode="open"'));
  const flatten = (root) => {
    for (const host of [...root.querySelectorAll('*')]) {
      const shadow = host.shadowRoot;
      if (!shadow) continue;
      flatten(shadow);
      const light = [...host.childNodes];
      for (const slot of [...shadow.querySelectorAll('slot')]) {
        const name = slot.getAttribute('name');
        const assigned = light.filter((node) => (node.getAttribute ? node.getAttribute('slot') : null) === name);
        slot.replaceWith(...(assigned.length > 0 ? assigned : [...slot.childNodes]));
      }
      host.replaceChildren(...shadow.childNodes);
    }
  };
  flatten(copy);
  return copy;
}`;
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
  readabilitySource ??= readFileSync(createRequire(import.meta.url).resolve('@mozilla/readability/Readability.js'), 'utf8');
  // include_shadow_dom: the document with its shadow roots (serialiseHtml), parsed again in the
  // page and flattened (each host's shadow content in its place, its slots filled) for Readability.
  const source = includeShadowDom ? `flattened(${JSON.stringify(await serialiseHtml(page, deadline, true))})` : 'document.cloneNode(true)';
  // Runtime.evaluate is not subject to the page's Content-Security-Policy; the script defines
  // Readability inside this function only, and works on a clone, so the page is left as it was.
  const article = await untilAborted(deadline, page.evaluate<{ title: string; content: string }>(`(() => {
    const module = undefined; // Readability.js exports itself when it sees one: not onto the page's.
    ${readabilitySource}
    ${includeShadowDom ? FLATTEN_SHADOW_ROOTS : ''}
    const article = new Readability(${source}).parse();
    if (article && article.content) return { title: article.title || document.title, content: article.content };
    return { title: document.title, content: document.body ? document.body.innerHTML : '' };
  })()`));
  const toMarkdown = await loadConverter();
  const body = toMarkdown(article.content).trim();
  const title = article.title.trim();
  return `${title && !body.startsWith('# ') ? `# ${title}\n\n` : ''}${body}\n`;
}
