// The PDF options (docs/capture.md, "PDF") against real Chromium, read back with poppler-utils:
// pdfinfo for pages, size and tags, pdftotext for the text of each page, pdftohtml for the outline.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('pdf options');

let rig: RenderRig;
let directory: string;

// Five sections, one per page, each under a heading.
const SECTIONS = `<!doctype html><html><head><meta charset="utf-8"><title>Quarterly report</title></head><body>${[
  1, 2, 3, 4, 5,
]
  .map((n) => `<section style="break-after:page"><h1>Section ${n}</h1><p>Body of section ${n}.</p></section>`)
  .join('')}</body></html>`;

// A long document without page breaks: how many pages it takes depends on the scale.
const LONG = `<!doctype html><html><body>${Array.from({ length: 120 }, (_, i) => `<p style="font-size:20px">Line ${i + 1}</p>`).join('')}</body></html>`;

let count = 0;
/** Writes the PDF to a file of the test's own and returns its path. */
function file(pdf: Buffer): string {
  const target = path.join(directory, `${++count}.pdf`);
  writeFileSync(target, pdf);
  return target;
}

/** pdfinfo's fields of the PDF. */
function info(pdf: Buffer): Record<string, string> {
  const text = execFileSync('pdfinfo', [file(pdf)], { encoding: 'utf8' });
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]),
  );
}

/** The text of each page of the PDF. */
function pageTexts(pdf: Buffer): string[] {
  const target = file(pdf);
  const pages = Number(info(pdf).Pages);
  return Array.from({ length: pages }, (_, i) =>
    execFileSync('pdftotext', ['-layout', '-f', String(i + 1), '-l', String(i + 1), target, '-'], { encoding: 'utf8' }),
  );
}

const pdf = async (html: string, options: Record<string, unknown> = {}) =>
  (await rig.render('', { html, format: 'pdf', ...options })).image;

test.before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-pdf-'));
  rig = await startRenderRig({ workspaceId: 'ws_pdf_options' });
});

test.after(async () => {
  await rig.stop();
  rmSync(directory, { recursive: true, force: true });
});

test('a pdf prints with print media; media_type=screen prints it as the screen shows it', async () => {
  const page =
    '<style>@media print { .screen { display: none } } @media screen { .print { display: none } }</style><p class="screen">On screen</p><p class="print">On paper</p>';
  const printed = pageTexts(await pdf(page)).join('');
  assert.match(printed, 'On paper');
  assert.not.match(printed, 'On screen');
  const asShown = pageTexts(await pdf(page, { media_type: 'screen' })).join('');
  assert.match(asShown, 'On screen');
  assert.not.match(asShown, 'On paper');
});

test('pdf_header and pdf_footer on every page, with the title, page number and page count', async () => {
  const document = await pdf(SECTIONS, {
    pdf_header: '<div style="font-size:10px;width:100%;text-align:center">Header of <span class="title"></span></div>',
    pdf_footer:
      '<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span> · <span class="date"></span></div>',
  });
  const texts = pageTexts(document);
  assert.is(texts.length, 5);
  const year = String(new Date().getFullYear()).slice(-2);
  texts.forEach((text, i) => {
    assert.match(text, 'Header of Quarterly report', `page ${i + 1} has the header`);
    assert.match(text, `Page ${i + 1} of 5`, `page ${i + 1} has its number`);
    assert.match(text, `Section ${i + 1}`);
    assert.match(text, year, `page ${i + 1} has the date`);
  });
  // Without templates, no header or footer at all.
  const plain = pageTexts(await pdf(SECTIONS));
  assert.not.match(plain[0], 'Quarterly report');
  assert.not.match(plain[0], /\b1\s*\/\s*5\b/);
});

test('only pdf_footer: no default header appears', async () => {
  const texts = pageTexts(
    await pdf(SECTIONS, { pdf_footer: '<div style="font-size:10px">Footer <span class="pageNumber"></span></div>' }),
  );
  assert.match(texts[1], 'Footer 2');
  assert.not.match(texts[1], 'Quarterly report');
});

test('the url class of a template gets the address of the page printed', async () => {
  const { image } = await rig.render('/', {
    format: 'pdf',
    pdf_footer: '<div style="font-size:10px">Printed from <span class="url"></span></div>',
  });
  assert.match(pageTexts(image)[0], `Printed from ${rig.site.url}/`);
});

test("pdf_page_ranges prints those pages only; a page past the end is the caller's to fix", async () => {
  const texts = pageTexts(await pdf(SECTIONS, { pdf_page_ranges: '1-3,5' }));
  assert.equal(
    texts.map((text) => /Section (\d)/.exec(text)?.[1]),
    ['1', '2', '3', '5'],
  );
  try {
    await pdf(SECTIONS, { pdf_page_ranges: '9' });
    assert.unreachable('a page past the end fails');
  } catch (error) {
    assert.instance(error, ServiceError);
    assert.is((error as ServiceError).code, 'request_not_valid');
  }
});

test('pdf_scale shrinks the rendering onto fewer pages', async () => {
  const full = Number(info(await pdf(LONG)).Pages);
  const half = Number(info(await pdf(LONG, { pdf_scale: 0.5 })).Pages);
  assert.ok(full >= 2 && half < full, `${full} pages at scale 1, ${half} at 0.5`);
});

test('pdf_width and pdf_height make a custom paper; pdf_prefer_css_page_size lets @page win', async () => {
  assert.match(info(await pdf(SECTIONS, { pdf_width: '5in', pdf_height: '7in' }))['Page size'], /^360 x 504 pts/);
  assert.match(info(await pdf(SECTIONS, { pdf_width: '5IN', pdf_height: '672PX' }))['Page size'], /^360 x 504 pts/);
  const cssSized = '<!doctype html><style>@page { size: 4in 6in; }</style><p>Sized by CSS</p>';
  assert.match(info(await pdf(cssSized, { pdf_prefer_css_page_size: true }))['Page size'], /^288 x 432 pts/);
  assert.match(info(await pdf(cssSized))['Page size'], /\(A4\)/);
});

test('pdf_outline: bookmarks from the headings', async () => {
  const outline = (document: Buffer) =>
    execFileSync('pdftohtml', ['-xml', '-i', '-stdout', file(document)], { encoding: 'utf8' });
  const withOutline = outline(await pdf(SECTIONS, { pdf_outline: true }));
  for (const n of [1, 2, 3, 4, 5])
    assert.match(withOutline, new RegExp(`<outline>[\\s\\S]*<item page="${n}">Section ${n}</item>`));
  assert.not.match(outline(await pdf(SECTIONS)), '<outline>');
});

test('pdf_tagged: a tagged PDF', async () => {
  assert.is(info(await pdf(SECTIONS, { pdf_tagged: true })).Tagged, 'yes');
  assert.is(info(await pdf(SECTIONS)).Tagged, 'no');
});

test("an app shell prints its scroller's whole content, not the part in view", async () => {
  const lines = Array.from({ length: 150 }, (_, i) => `<p>Line ${i + 1}</p>`).join('');
  const shell = `<!doctype html><body style="margin:0"><div style="display:flex;flex-direction:column;height:100vh"><header style="height:56px;flex:none">Header</header><main style="flex:1;overflow:auto;min-height:0">${lines}</main></div></body>`;
  const texts = pageTexts(await pdf(shell));
  assert.ok(texts.length >= 3, `${texts.length} pages`);
  assert.match(texts.at(-1)!, 'Line 150');
  assert.is(texts.join('').match(/Header/g)?.length, 1);
});

test('Chromium fetches nothing for a template, whatever it refers to', async () => {
  const before = rig.site.received.length;
  const template = `<div style="font-size:10px;height:20px;background:url(${rig.site.url}/template-background.png)"><img src="${rig.site.url}/template-logo.png"> <span class="pageNumber"></span></div>`;
  const texts = pageTexts(await pdf(SECTIONS, { pdf_header: template }));
  assert.match(texts[0], /^\s*1\b/m);
  assert.equal(
    rig.site.received.slice(before).map((request) => request.path),
    [],
  );
});

test("margins that leave no room on the paper are the caller's to fix", async () => {
  for (const margins of [{ pdf_margin: '5in' }, { pdf_margin_top: '6in', pdf_margin_bottom: '6in' }]) {
    try {
      await pdf(SECTIONS, margins);
      assert.unreachable(`${JSON.stringify(margins)} printed`);
    } catch (error) {
      assert.instance(error, ServiceError, String(error));
      assert.is((error as ServiceError).code, 'request_not_valid', JSON.stringify(margins));
      assert.match(JSON.stringify((error as ServiceError).details), /pdf_margin/);
    }
  }
});
test("a PDF draws every script as glyphs and emoji in colour, with the page's own text kept", async () => {
  const samples = ['Ag', 'Ωλ', 'Жя', '汉字', 'かな', '한글', 'عرب', 'עבר', 'हिन्दी', 'தமிழ்', 'ไทย'];
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body style="font:32px sans-serif">${samples
    .map((text) => `<p>${text}</p>`)
    .join('')}<p style="font-size:96px">😀</p></body></html>`;
  const target = file(await pdf(html));
  const fonts = execFileSync('pdffonts', [target], { encoding: 'utf8' });
  assert.not.match(fonts, /Tofu|LastResort/i, fonts);
  // Text is text, in each script (the PDF is searchable).
  const text = execFileSync('pdftotext', [target, '-'], { encoding: 'utf8' });
  for (const sample of ['Ag', 'Ωλ', 'Жя', '汉字', 'かな', '한글', 'ไทย'])
    assert.ok(text.includes(sample), `${sample} in ${text}`);
  // The emoji is in colour: a rasterised page has strongly coloured pixels.
  const raster = execFileSync('pdftoppm', ['-r', '50', '-png', '-f', '1', '-l', '1', target], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const { data, info: meta } = await sharp(raster).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let coloured = 0;
  for (let i = 0; i < data.length; i += meta.channels) {
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 80) coloured++;
  }
  assert.ok(coloured > 50, `${coloured} coloured pixels`);
});

test.run();
