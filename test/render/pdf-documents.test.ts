// The document operations on a printed PDF (docs/capture.md, "PDF for archives and documents") and
// the merge, against real Chromium, Ghostscript and qpdf, read back with tools nobody here wrote:
// poppler-utils (pdfinfo, pdffonts, pdftotext, pdftoppm) and qpdf (--check, --show-encryption, --json).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { judge } from '../../actors/render.rules.ts';
import { sourceDifference } from '../../src/domain/merge.ts';
import type { RenderOptions } from '../../src/domain/options.ts';
import { ServiceError } from '../../src/errors.ts';
import { captureMerge } from '../../src/render/merge.ts';
import { mergePdfs } from '../../src/render/outputs/pdf-document.ts';
import { finishPdf } from '../../src/render/outputs/pdf-finish.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('pdf documents');

let rig: RenderRig;
let directory: string;

const PAGE = (name: string, lang = 'de') =>
  `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>Report ${name}</title></head><body>` +
  `<h1>Chapter ${name} one</h1><p>Text of ${name}.</p><h2>Part ${name}</h2>` +
  `<h1 style="break-before:page">Chapter ${name} two</h1><p style="opacity:.5">Faint ${name}.</p></body></html>`;

let count = 0;
function file(pdf: Uint8Array): string {
  const target = path.join(directory, `${++count}.pdf`);
  writeFileSync(target, pdf);
  return target;
}

/** pdfinfo's fields (with the user password when given). */
function info(pdf: Uint8Array, password?: string): Record<string, string> {
  const args = password === undefined ? [file(pdf)] : ['-upw', password, file(pdf)];
  const text = execFileSync('pdfinfo', args, { encoding: 'utf8' });
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]),
  );
}

/** pdffonts' rows: name and whether embedded. */
function fonts(pdf: Uint8Array): { name: string; embedded: boolean }[] {
  const lines = execFileSync('pdffonts', [file(pdf)], { encoding: 'utf8' })
    .split('\n')
    .slice(2)
    .filter(Boolean);
  // Columns: name type encoding emb sub uni object ID; the type may hold spaces, so read from the end.
  return lines.map((line) => {
    const cells = line.trim().split(/\s+/);
    return { name: cells[0], embedded: cells[cells.length - 5] === 'yes' };
  });
}

const text = (pdf: Uint8Array) => execFileSync('pdftotext', [file(pdf), '-'], { encoding: 'utf8' });
/** The text in the content's order with every blank removed: a turned watermark comes out in pieces. */
const squeezed = (pdf: Uint8Array) =>
  execFileSync('pdftotext', ['-raw', file(pdf), '-'], { encoding: 'utf8' }).replace(/\s+/g, '');
/** qpdf's JSON of the file's objects. */
const qpdfJson = (pdf: Uint8Array, ...keys: string[]) =>
  JSON.parse(
    execFileSync('qpdf', ['--json', ...keys.map((key) => `--json-key=${key}`), file(pdf)], { encoding: 'utf8' }),
  );
const qpdfCheck = (pdf: Uint8Array) => spawnSync('qpdf', ['--check', file(pdf)], { encoding: 'utf8' });

const print = async (html: string, options: Partial<RenderOptions> = {}) =>
  (await rig.render('', { html, format: 'pdf', ...options })).image;

test.before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-pdf-documents-'));
  rig = await startRenderRig({ workspaceId: 'ws_pdf_documents' });
});

test.after(async () => {
  await rig.stop();
  rmSync(directory, { recursive: true, force: true });
});

for (const [level, part] of [
  ['a-1b', '1'],
  ['a-2b', '2'],
  ['a-3b', '3'],
] as const) {
  test(`pdf_archive=${level}: fonts embedded, the sRGB output intent, pdfaid part ${part} and B, no encryption`, async () => {
    const pdf = await print(PAGE('A'), { pdf_archive: level, pdf_title: 'Archived report', pdf_watermark: 'ARCHIVE' });
    const fields = info(pdf);
    assert.is(fields.Encrypted, 'no');
    assert.is(fields['Metadata Stream'], 'yes');
    assert.is(fields.Title, 'Archived report');
    assert.is(fields.Pages, '2');
    const faces = fonts(pdf);
    assert.ok(faces.length >= 2, 'the text and the watermark have fonts');
    assert.ok(
      faces.every((face) => face.embedded),
      `every font embedded: ${JSON.stringify(faces)}`,
    );
    assert.is(qpdfCheck(pdf).status, 0, qpdfCheck(pdf).stdout);
    const raw = Buffer.from(
      execFileSync('qpdf', ['--decode-level=none', '--object-streams=disable', file(pdf), '-'], {
        maxBuffer: 64 * 1024 * 1024,
      }),
    );
    const xmp = raw.toString('latin1');
    assert.match(xmp, new RegExp(`pdfaid:part(='|>|=")${part}`));
    assert.match(xmp, /pdfaid:conformance(='|>|=")B/);
    assert.match(xmp, /\/S \/GTS_PDFA1/);
    assert.match(xmp, /\/DestOutputProfile \d+ 0 R/);
    assert.match(squeezed(pdf), 'ARCHIVE');
    // Nothing outside the file: no URI of a file to launch, no external stream.
    assert.not.match(xmp, /\/Launch|\/FFilter|\/F \(http/);
  });
}

test('pdf_accessible: tagged, the language and title set, the title displayed', async () => {
  const pdf = await print(PAGE('B', 'fr'), { pdf_accessible: true });
  const fields = info(pdf);
  assert.is(fields.Tagged, 'yes');
  assert.is(fields.Title, 'Report B');
  const catalog = qpdfJson(pdf, 'qpdf').qpdf[1];
  const root = Object.values<any>(catalog).find((object) => object.value?.['/Type'] === '/Catalog').value;
  assert.is(root['/Lang'], 'u:fr');
  assert.is(root['/ViewerPreferences']['/DisplayDocTitle'], true);
  assert.is(root['/MarkInfo']['/Marked'], true);
  // A page without a title or a language gets a title, and Chromium's language or en.
  const bare = await print('<p>No title here</p>', { pdf_accessible: true });
  assert.is(info(bare).Title, 'Untitled document');
  const bareRoot = Object.values<any>(qpdfJson(bare, 'qpdf').qpdf[1]).find(
    (object) => object.value?.['/Type'] === '/Catalog',
  ).value;
  assert.match(bareRoot['/Lang'], /^u:en/);
});

test('pdf_title, pdf_author, pdf_subject, pdf_keywords are the document information', async () => {
  const pdf = await print(PAGE('C'), {
    pdf_title: 'Rapport annuel – 2026',
    pdf_author: 'Zoë Example',
    pdf_subject: 'Accounts',
    pdf_keywords: 'invoice, 2026',
  });
  const fields = info(pdf);
  assert.is(fields.Title, 'Rapport annuel – 2026');
  assert.is(fields.Author, 'Zoë Example');
  assert.is(fields.Subject, 'Accounts');
  assert.is(fields.Keywords, 'invoice, 2026');
  assert.is(fields.Pages, '2');
  assert.ok(fonts(pdf).every((face) => face.embedded));
});

/** The PDF's first page as an image (pdftoppm), and the colour of its middle. */
async function middle(pdf: Uint8Array): Promise<number[]> {
  const png = execFileSync('pdftoppm', ['-png', '-r', '30', '-f', '1', '-l', '1', file(pdf)]);
  const { data, info: size } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  // The darkest pixel of a band across the middle: the watermark's strokes cross it.
  let darkest = [255, 255, 255];
  const y = Math.floor(size.height / 2);
  for (let x = Math.floor(size.width * 0.3); x < size.width * 0.7; x++) {
    const at = (y * size.width + x) * size.channels;
    const pixel = [...data.subarray(at, at + 3)];
    if (pixel[0] + pixel[1] + pixel[2] < darkest[0] + darkest[1] + darkest[2]) darkest = pixel;
  }
  return darkest;
}

test('pdf_watermark on every page, over the content or under a background that hides it', async () => {
  const painted = '<html><body style="margin:0;background:#3366cc"><div style="height:2000px"></div></body></html>';
  const over = await print(painted, { pdf_watermark: 'CONFIDENTIAL', pdf_watermark_opacity: 0.9 });
  const under = await print(painted, {
    pdf_watermark: 'CONFIDENTIAL',
    pdf_watermark_opacity: 0.9,
    pdf_watermark_layer: 'under',
  });
  const pages = Number(info(over).Pages);
  assert.ok(pages >= 2);
  // Once per page.
  assert.is(squeezed(over).split('CONFIDENTIAL').length - 1, pages);
  assert.ok(fonts(over).every((face) => face.embedded));
  const [overMiddle, underMiddle] = [await middle(over), await middle(under)];
  assert.ok(overMiddle[2] < 80, `over: dark strokes across the blue (${overMiddle})`);
  assert.ok(underMiddle[2] > 150, `under: the blue background hides it (${underMiddle})`);
});

test('pdf_password: AES-256, and the file does not open without it', async () => {
  const pdf = await print(PAGE('D'), { pdf_password: 'open sésame', pdf_permissions: ['print'] });
  const target = file(pdf);
  const refused = spawnSync('pdftotext', [target, '-'], { encoding: 'utf8' });
  assert.is.not(refused.status, 0);
  assert.match(refused.stderr, /password/i);
  const opened = execFileSync('pdftotext', ['-upw', 'open sésame', target, '-'], { encoding: 'utf8' });
  assert.match(opened, 'Chapter D one');
  const encryption = execFileSync('qpdf', ['--password=open sésame', '--show-encryption', target], {
    encoding: 'utf8',
  });
  assert.match(encryption, /R = 6/);
  assert.match(encryption, /print high resolution: allowed/);
  assert.match(encryption, /extract for any purpose: not allowed/);
  assert.match(encryption, /modify other: not allowed/);
  assert.match(info(pdf, 'open sésame').Encrypted, /AES-256/);
  assert.is(qpdfCheck(pdf).status === 0 || qpdfCheck(pdf).status === 3, false, 'no password: qpdf cannot check it');
});

test('pdf_permissions alone: opens freely, restricted without the owner password', async () => {
  const pdf = await print(PAGE('E'), { pdf_owner_password: 'owner-only', pdf_permissions: ['copy'] });
  assert.match(text(pdf), 'Chapter E one');
  const fields = info(pdf);
  assert.match(fields.Encrypted, /print:no copy:yes change:no/);
  const encryption = execFileSync('qpdf', ['--show-encryption', file(pdf)], { encoding: 'utf8' });
  assert.match(encryption, /R = 6/);
  const asOwner = execFileSync('qpdf', ['--password=owner-only', '--show-encryption', file(pdf)], {
    encoding: 'utf8',
  });
  assert.match(asOwner, /Supplied password is owner password/);
});

test('a document operation is killed at the deadline', async () => {
  const pdf = await print(PAGE('F'));
  const deadline = new AbortController();
  const started = Date.now();
  const finishing = finishPdf(
    pdf,
    { pdf_archive: 'a-2b', pdf_watermark_opacity: 0.2, pdf_watermark_layer: 'over', pdf_accessible: false },
    deadline.signal,
  );
  setTimeout(() => deadline.abort(new ServiceError('timeout_error')), 50);
  const error = await finishing.then(
    () => null,
    (reason: unknown) => reason,
  );
  assert.instance(error, ServiceError);
  assert.is((error as ServiceError).code, 'timeout_error');
  assert.ok(Date.now() - started < 2000, 'ended at the deadline, not when Ghostscript would have');
});

test('mergePdfs: pages in order, one outline of all, one structure tree of all', async () => {
  const [one, two, three] = await Promise.all(
    ['X', 'Y', 'Z'].map((name) => print(PAGE(name, 'en'), { pdf_outline: true })),
  );
  const merged = await mergePdfs([one, two, three]);
  const fields = info(merged);
  assert.is(fields.Pages, '6');
  assert.is(fields.Tagged, 'yes');
  assert.is(fields.Title, 'Report X');
  assert.is(qpdfCheck(merged).status, 0);
  const order = [...text(merged).matchAll(/Chapter (\w) (one|two)/g)].map((match) => `${match[1]}${match[2]}`);
  assert.equal(order, ['Xone', 'Xtwo', 'Yone', 'Ytwo', 'Zone', 'Ztwo']);
  const outline = qpdfJson(merged, 'outlines').outlines as any[];
  assert.equal(
    outline.map((item) => [item.title, item.destpageposfrom1]),
    [
      ['Chapter X one', 1],
      ['Chapter X two', 2],
      ['Chapter Y one', 3],
      ['Chapter Y two', 4],
      ['Chapter Z one', 5],
      ['Chapter Z two', 6],
    ],
  );
  assert.is(outline[2].kids[0].title, 'Part Y');
  const structure = execFileSync('pdfinfo', ['-struct-text', file(merged)], { encoding: 'utf8' });
  assert.is(structure.match(/^Document/gm)?.length, 1, 'one Document element');
  for (const name of ['X', 'Y', 'Z']) assert.match(structure, `"Chapter ${name} two"`);
});

test('captureMerge: the first failing source in order fails the merge, naming it', async () => {
  const options = {
    ...(await import('../../src/domain/options.ts')).renderDefaults,
    timeout: 20,
    format: 'pdf',
    html: PAGE('M'),
  } as RenderOptions;
  const source = (html: string, extra: Partial<RenderOptions> = {}) =>
    sourceDifference(options, { ...options, html, ...extra } as RenderOptions);
  const ok = await captureMerge(
    rig.host,
    { ...options, pdf_watermark: 'MERGED' },
    [source(PAGE('M')), source(PAGE('N'))],
    new AbortController().signal,
    { workspaceId: 'ws_pdf_documents', judge },
  );
  assert.is(info(ok.image).Pages, '4');
  assert.is(squeezed(ok.image).split('MERGED').length - 1, 4);
  const failed = await captureMerge(
    rig.host,
    options,
    [
      source(PAGE('M')),
      source(PAGE('N'), { fail_if_content_missing: ['not on the page'] }),
      source(PAGE('O'), { fail_if_content_contains: ['Chapter'] }),
    ],
    new AbortController().signal,
    { workspaceId: 'ws_pdf_documents', judge },
  ).then(
    () => null,
    (error: unknown) => error,
  );
  assert.instance(failed, ServiceError, String(failed));
  assert.is((failed as ServiceError).code, 'content_missing_specified_string');
  assert.is((failed as ServiceError).details.source, 1);
});

test.run();
