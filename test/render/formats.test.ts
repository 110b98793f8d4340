// Output formats and metadata against real Chromium and the format fixture pages: the PDF's
// paper, the live DOM as HTML, the main content as Markdown, converted and resized images, and
// every metadata field.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import type { CDPSession, Page } from 'playwright-core';
import { renderDefaults, type RenderOptions } from '../../src/domain/options.ts';
import { wantsMetadata } from '../../src/domain/metadata.ts';
import { makeOutput } from '../../src/render/outputs/output.ts';
import { capture, FAST_PNG_PIXELS } from '../../src/render/outputs/screenshot.ts';
import { formatPages, SCRIPTED_TEXT, WEB_FONT_FAMILY } from '../fixtures/format-pages.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { Progress } from '../../src/render/browser/progress.ts';

const test = suite('output formats and metadata');

let rig: RenderRig;

/** The first page's MediaBox (width, height in points) and the number of pages of a PDF. */
function pdfPages(pdf: Buffer) {
  const text = pdf.toString('latin1');
  const box = /\/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]/.exec(text);
  assert.ok(box, 'a MediaBox');
  return {
    width: Number(box![3]) - Number(box![1]),
    height: Number(box![4]) - Number(box![2]),
    pages: text.match(/\/Type\s*\/Page\b(?!s)/g)?.length ?? 0,
  };
}
const about = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) <= 2, `${actual} is not about ${expected}`);

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_formats', routes: formatPages });
});

test.after(async () => {
  await rig.stop();
});

test('pdf: A4 portrait by default, letter landscape when asked, one page as tall as the document', async () => {
  const a4 = await rig.render('/article', { format: 'pdf' });
  assert.is(a4.image.subarray(0, 5).toString('latin1'), '%PDF-');
  const a4Box = pdfPages(a4.image);
  about(a4Box.width, 595.3);
  about(a4Box.height, 841.9);

  const letter = pdfPages(
    (
      await rig.render('/article', {
        format: 'pdf',
        pdf_paper_format: 'letter',
        pdf_landscape: true,
        pdf_margin: '10mm',
      })
    ).image,
  );
  about(letter.width, 792);
  about(letter.height, 612);

  // 3000 CSS px of page at 96 px per inch are 2250 pt, on one page.
  const tall = pdfPages(
    (await rig.render('/tall', { format: 'pdf', pdf_fit_one_page: true, viewport_width: 800 })).image,
  );
  assert.is(tall.pages, 1);
  about(tall.width, 600);
  assert.ok(tall.height > 2000, `one page of ${tall.height} pt`);
});

test('html is the DOM after scripts ran; markdown the main content with headings, links, list and table', async () => {
  const html = (await rig.render('/article', { format: 'html' })).image.toString('utf8');
  assert.match(html, /^<!DOCTYPE html>/i);
  assert.ok(html.includes(SCRIPTED_TEXT), 'the text the script wrote');

  const markdown = (await rig.render('/article', { format: 'markdown' })).image.toString('utf8');
  assert.match(markdown, /^# Quarterly report/m);
  assert.match(markdown, /^#+ Highlights$/m);
  assert.ok(markdown.includes(`[the full figures](${rig.site.url}/more)`), markdown);
  assert.match(markdown, /^[*-] Revenue grew$/m);
  assert.match(markdown, /\|\s*Quarter\s*\|\s*Revenue\s*\|/);
  assert.match(markdown, /\|\s*Q2\s*\|\s*120\s*\|/);
  assert.ok(markdown.includes(SCRIPTED_TEXT));
  assert.not.match(markdown, /<script|<style/);
});

test('gif, avif and tiff through sharp, resized to image_width / image_height', async () => {
  const box = { viewport_width: 400, viewport_height: 300 };
  for (const [format, options, expected] of [
    ['gif', { image_width: 200 }, { width: 200, height: 150 }],
    ['avif', { image_height: 60, image_quality: 40 }, { width: 80, height: 60 }],
    ['tiff', {}, { width: 400, height: 300 }],
  ] as const) {
    const { image } = await rig.render('/box', { ...box, format, ...options });
    const { width, height, format: decoded } = await sharp(image).metadata();
    assert.equal(
      { width, height, format: decoded },
      { ...expected, format: format === 'avif' ? 'heif' : format },
      format,
    );
  }
});

test('metadata: title, Open Graph and icon made absolute, the web font, status, headers, image size and content', async () => {
  const every = {
    metadata_image_size: true,
    metadata_page_title: true,
    metadata_open_graph: true,
    metadata_icon: true,
    metadata_fonts: true,
    metadata_http_response_status_code: true,
    metadata_http_response_headers: true,
    metadata_content: true,
  };
  const { metadata } = await rig.render('/article', {
    ...every,
    viewport_width: 640,
    viewport_height: 480,
    metadata_content_format: 'markdown',
  });
  const base = rig.site.url;
  assert.equal(metadata?.image_size, { width: 640, height: 480 });
  assert.is(metadata?.page_title, 'Quarterly report');
  assert.equal(metadata?.open_graph, {
    title: 'Quarterly report (OG)',
    description: 'Figures of the quarter',
    image: `${base}/images/cover.png`,
    url: `${base}/article`,
    type: 'article',
    site_name: 'Fixture News',
  });
  assert.equal(metadata?.icon, { url: `${base}/images/icon.png`, type: 'image/png' });
  assert.ok(metadata?.fonts?.includes(WEB_FONT_FAMILY), JSON.stringify(metadata?.fonts));
  assert.ok(metadata?.fonts?.includes('Arial'), JSON.stringify(metadata?.fonts));
  assert.is(metadata?.http_response_status_code, 200);
  assert.is(metadata?.http_response_headers?.['x-fixture'], 'formats');
  assert.is(metadata?.content?.format, 'markdown');
  assert.match(metadata?.content?.text ?? '', /^# Quarterly report/m);

  // None asked: none gathered.
  assert.is((await rig.render('/article', {})).metadata, undefined);
});

test('cost: a png without metadata makes two CDP calls, the font check and the capture, and nothing of the page', async () => {
  const calls: string[] = [];
  const page = new Proxy(
    {},
    {
      get: (_, name) => {
        calls.push(`page.${String(name)}`);
        return () => Promise.resolve();
      },
    },
  ) as unknown as Page;
  const replies: Record<string, unknown> = {
    'Runtime.evaluate': { result: { type: 'boolean', value: true } },
    'Page.getLayoutMetrics': { cssVisualViewport: { pageX: 0, pageY: 0, scale: 1 } },
    'Page.captureScreenshot': { data: Buffer.from('png').toString('base64') },
  };
  const session = {
    send: (method: string) => {
      calls.push(method);
      return Promise.resolve(replies[method]);
    },
  } as unknown as CDPSession;
  const options = { ...renderDefaults, url: 'https://example.com/' };
  const output = await makeOutput({ page, session, options, progress: Progress.start(30_000) });
  assert.is(output.bytes.toString(), 'png');
  assert.equal(calls, ['Runtime.evaluate', 'Page.captureScreenshot']);
  assert.is(wantsMetadata(options), false);
});

test('cost: only a png converted or scaled afterwards, or a large one, is captured with the fast PNG encoding', async () => {
  const sent: Array<Record<string, unknown>> = [];
  const page = new Proxy({}, { get: () => () => Promise.resolve() }) as unknown as Page;
  const session = {
    send: (method: string, params: Record<string, unknown>) => {
      if (method === 'Page.captureScreenshot') sent.push(params);
      return Promise.resolve(
        method === 'Page.captureScreenshot'
          ? { data: Buffer.from('png').toString('base64') }
          : method === 'Runtime.evaluate'
            ? { result: { type: 'boolean', value: true } }
            : { cssVisualViewport: { pageX: 0, pageY: 0, scale: 1 } },
      );
    },
  } as unknown as CDPSession;
  const url = 'https://example.com/';
  const asked: Array<Partial<RenderOptions>> = [
    { format: 'png' },
    { format: 'jpeg' },
    { format: 'webp' },
    { format: 'gif' },
    { format: 'tiff' },
    { format: 'png', image_width: 640 },
    // Below FAST_PNG_PIXELS the smaller file; at it the faster encoding.
    { format: 'png', viewport_width: 1920, viewport_height: 1080 },
    { format: 'png', viewport_width: 2000, viewport_height: FAST_PNG_PIXELS / 2000 },
  ];
  for (const options of asked)
    await capture({
      page,
      session,
      options: { ...renderDefaults, url, ...options } as RenderOptions,
      progress: Progress.start(30_000),
    });
  assert.equal(
    sent.map((params) => params.optimizeForSpeed === true),
    [false, false, false, true, true, true, false, true],
  );
});

test.run();
