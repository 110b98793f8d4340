// The document operations on a printed PDF (docs/capture.md, "PDF for archives and documents"), in
// order: metadata, language, displayed title and watermark (pdf-lib), PDF/A (Ghostscript), then
// encryption (qpdf, AES-256). A PDF that asks for none of them is left as Chromium printed it.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RenderOptions } from '../../domain/options.ts';
import { loadPdf, setFacts, stampWatermark, titleOf } from './pdf-document.ts';
import { GHOSTSCRIPT, inScratch, QPDF, runPdfTool } from './pdf-tools.ts';

/** The options the document operations read. */
export type FinishOptions = Pick<
  RenderOptions,
  | 'pdf_archive'
  | 'pdf_accessible'
  | 'pdf_title'
  | 'pdf_author'
  | 'pdf_subject'
  | 'pdf_keywords'
  | 'pdf_watermark'
  | 'pdf_watermark_opacity'
  | 'pdf_watermark_layer'
  | 'pdf_password'
  | 'pdf_owner_password'
  | 'pdf_permissions'
>;

/** What the page says of itself, for an accessible PDF whose print lacks it. */
export interface PageFacts {
  /** The page's title, else its URL: a PDF/UA document has a title. */
  title: string;
  /** The document's language (`<html lang>`), when it names one. */
  language?: string;
}

/** The language of an accessible PDF whose page names none. */
export const DEFAULT_LANGUAGE = 'en';

/** The sRGB profile of the PDF/A output intent: Ghostscript's own, from Debian's ghostscript package. */
export const SRGB_PROFILE = '/usr/share/color/icc/ghostscript/srgb.icc';

/** True when `options` ask for any document operation. */
export function finishesPdf(options: FinishOptions): boolean {
  return editsObjects(options) || options.pdf_archive !== undefined || encrypts(options);
}

const editsObjects = (options: FinishOptions) =>
  options.pdf_accessible ||
  options.pdf_title !== undefined ||
  options.pdf_author !== undefined ||
  options.pdf_subject !== undefined ||
  options.pdf_keywords !== undefined ||
  options.pdf_watermark !== undefined;

const encrypts = (options: FinishOptions) =>
  options.pdf_password !== undefined ||
  options.pdf_owner_password !== undefined ||
  (options.pdf_permissions?.length ?? 0) > 0;

/**
 * `pdf` with the document operations `options` ask for; each tool is killed when `deadline`
 * aborts, which rejects with its reason. `page` gives an accessible PDF its title and language
 * where the print has none.
 */
export async function finishPdf(
  pdf: Uint8Array,
  options: FinishOptions,
  deadline: AbortSignal,
  page?: PageFacts,
): Promise<Buffer> {
  let bytes = pdf;
  if (editsObjects(options)) bytes = await editObjects(bytes, options, page);
  deadline.throwIfAborted();
  if (options.pdf_archive !== undefined) bytes = await toArchive(bytes, options, deadline);
  if (encrypts(options)) bytes = await encrypt(bytes, options, deadline);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

async function editObjects(bytes: Uint8Array, options: FinishOptions, page: PageFacts | undefined) {
  const pdf = await loadPdf(bytes);
  const accessible = options.pdf_accessible;
  // PDF/A gets its document information from Ghostscript (documentInfo), which drops what pdf-lib writes there.
  const info: Partial<FinishOptions> = options.pdf_archive === undefined ? options : {};
  setFacts(pdf, {
    // Chromium titles a page without a <title> with its URL (about:blank for a document): the page's facts know better.
    title: info.pdf_title ?? (accessible ? (page?.title ?? titleOf(pdf)) : undefined),
    author: info.pdf_author,
    subject: info.pdf_subject,
    keywords: info.pdf_keywords,
    ...(accessible ? { language: page?.language ?? DEFAULT_LANGUAGE, displayTitle: true } : {}),
  });
  if (options.pdf_watermark !== undefined)
    await stampWatermark(pdf, {
      text: options.pdf_watermark,
      opacity: options.pdf_watermark_opacity,
      layer: options.pdf_watermark_layer,
      opaque: options.pdf_archive === 'a-1b',
    });
  // No object streams: the file stays readable by every PDF 1.4 reader, as Chromium printed it.
  return pdf.save({ useObjectStreams: false });
}

// The output intent and its sRGB profile, as pdfmarks: Ghostscript's PDFA_def.ps without its placeholder title.
const PDFA_DEFINITION = `
/ICCProfile (${SRGB_PROFILE}) def
[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark
[{icc_PDFA} << /N 3 >> /PUT pdfmark
[{icc_PDFA} ICCProfile (r) file /PUT pdfmark
[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark
[{OutputIntent_PDFA} << /Type /OutputIntent /S /GTS_PDFA1 /DestOutputProfile {icc_PDFA}
  /OutputConditionIdentifier (sRGB) /Info (sRGB IEC61966-2.1) >> /PUT pdfmark
[{Catalog} << /OutputIntents [ {OutputIntent_PDFA} ] >> /PUT pdfmark
`;

/**
 * PDF/A of `level` by Ghostscript's pdfwrite: fonts embedded, the sRGB output intent, XMP with
 * pdfaid part and conformance; colours as RGB, images kept lossless. -dSAFER: it reads only its
 * inputs and the profile, and writes only its output.
 */
async function toArchive(bytes: Uint8Array, options: FinishOptions, deadline: AbortSignal) {
  const level = options.pdf_archive!;
  return inScratch(async (folder) => {
    const [input, definition, info, output] = ['in.pdf', 'pdfa.ps', 'info.ps', 'out.pdf'].map((name) =>
      join(folder, name),
    );
    await Promise.all([
      writeFile(input, bytes),
      writeFile(definition, PDFA_DEFINITION),
      // After the input: the information asked for wins over the print's own.
      writeFile(info, documentInfo(options)),
    ]);
    await runPdfTool(
      GHOSTSCRIPT,
      [
        '-q',
        '-dSAFER',
        '-dBATCH',
        '-dNOPAUSE',
        `--permit-file-read=${SRGB_PROFILE}`,
        '-sDEVICE=pdfwrite',
        `-dPDFA=${level.charAt(2)}`,
        // A feature PDF/A does not allow is left out, not a reason to give up PDF/A.
        '-dPDFACompatibilityPolicy=1',
        '-sColorConversionStrategy=RGB',
        '-dAutoFilterColorImages=false',
        '-dAutoFilterGrayImages=false',
        '-dColorImageFilter=/FlateEncode',
        '-dGrayImageFilter=/FlateEncode',
        `-sOutputFile=${output}`,
        definition,
        input,
        info,
      ],
      deadline,
    );
    return readFile(output);
  });
}

/**
 * The document information asked for, as a pdfmark, which Ghostscript writes into both the
 * information and the XMP (PDF/A keeps them alike). Ghostscript 10.0 (Debian 12) drops from PDF/A
 * any such text beyond printable ASCII: a field of other characters is left out (docs/capture.md).
 */
function documentInfo(options: FinishOptions): string {
  const given: [string, string | undefined][] = [
    ['Title', options.pdf_title],
    ['Author', options.pdf_author],
    ['Subject', options.pdf_subject],
    ['Keywords', options.pdf_keywords],
  ];
  const fields = given.filter(
    (field): field is [string, string] => field[1] !== undefined && /^[\x20-\x7e]*$/.test(field[1]),
  );
  if (fields.length === 0) return '';
  const literal = (text: string) => `(${text.replace(/[\\()]/g, '\\$&')})`;
  return `[ ${fields.map(([name, value]) => `/${name} ${literal(value)}`).join(' ')} /DOCINFO pdfmark\n`;
}

/**
 * AES-256 by qpdf: the passwords and permissions go on its standard input (a command line is
 * visible to every local user). Without an owner password, a random one nobody learns.
 */
async function encrypt(bytes: Uint8Array, options: FinishOptions, deadline: AbortSignal) {
  const owner = options.pdf_owner_password ?? randomBytes(24).toString('base64url');
  const permitted = new Set(options.pdf_permissions ?? []);
  const restrictions =
    options.pdf_permissions === undefined
      ? []
      : [
          `--print=${permitted.has('print') ? 'full' : 'none'}`,
          `--extract=${permitted.has('copy') ? 'y' : 'n'}`,
          `--modify=${permitted.has('modify') ? 'all' : 'none'}`,
        ];
  const args = ['--encrypt', options.pdf_password ?? '', owner, '256', ...restrictions, '--'];
  return inScratch(async (folder) => {
    const [input, output] = ['in.pdf', 'out.pdf'].map((name) => join(folder, name));
    await writeFile(input, bytes);
    // Exit 3: done, with warnings about the input that qpdf repaired.
    await runPdfTool(QPDF, [input, output, '@-'], deadline, `${args.join('\n')}\n`, [0, 3]);
    return readFile(output);
  });
}
