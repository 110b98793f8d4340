// The render's output in the format asked for: a screenshot (converted and scaled as asked), the
// printed PDF, the serialised HTML or the Markdown of the main content.
import type { CDPSession, Page } from 'playwright-core';
import { formatFacts, type SavedFormat } from '../../domain/formats.ts';
import type { RenderOptions } from '../../domain/options.ts';
import { warning, type RenderWarning } from '../../domain/warnings.ts';
import type { OutputFile } from '../../storage/output-store.ts';
import { archivePage, extractMarkdown, printPdf, readPageFacts, serialiseHtml } from './document.ts';
import { finishesPdf, finishPdf } from './pdf-finish.ts';
import { traced } from '../../tracing.ts';
import { finishImage } from './image.ts';
import { capture } from './screenshot.ts';
import { awaitFonts } from '../steps/font-watch.ts';
import type { PageStep } from '../steps/page-step.ts';

/** One file of save_formats: the page in that format, from the same render as the output. */
export interface SavedFile {
  format: SavedFormat;
  bytes: Buffer;
}

/** The output file's bytes, whether `selector` (an image's, when asked for) matched an element, and the render's warnings. */
/** Makes the output from the page as it stands, once it is ready (a screenshot's is makeOutput). */
export type OutputMaker = (step: PageStep) => Promise<Output>;

export interface Output {
  bytes: Buffer;
  /** save_formats' files, in the order asked; absent when none was asked for. */
  saved?: SavedFile[];
  /** The output on disk instead, when too large for memory (a recording); `bytes` is then empty. */
  file?: OutputFile;
  selectorFound: boolean;
  warnings: RenderWarning[];
  /** The visible text a monitor compares, when its tick asked for it (monitor-text.ts). */
  monitorText?: string;
}

/** Makes the output of `options.format` from the page as it stands, then save_formats' files of the same page. */
export async function makeOutput(step: PageStep): Promise<Output> {
  const { page, options, progress, session } = step;
  const output = await makeMain(step);
  if (options.save_formats.length === 0) return output;
  const saved: SavedFile[] = [];
  for (const format of new Set(options.save_formats)) {
    saved.push({ format, bytes: await documentOf(format, page, options, progress.signal, session) });
  }
  return { ...output, saved };
}

/** The page as a document of `format` (html, markdown or mhtml): the output of that format, or a file of save_formats. */
async function documentOf(
  format: SavedFormat,
  page: Page,
  options: RenderOptions,
  deadline: AbortSignal,
  session: CDPSession,
): Promise<Buffer> {
  switch (formatFacts(format).take?.capture) {
    case 'html':
      return Buffer.from(await serialiseHtml(page, deadline, options.include_shadow_dom), 'utf8');
    case 'markdown':
      return Buffer.from(await extractMarkdown(page, deadline, options.include_shadow_dom), 'utf8');
    default:
      return archivePage(session, deadline);
  }
}

async function makeMain(step: PageStep): Promise<Output> {
  const { page, options, progress, session } = step;
  const deadline = progress.signal;
  // Which capture makes the format is the format registry's (src/domain/formats.ts).
  switch (formatFacts(options.format).take?.capture) {
    case 'pdf': {
      const fontsLoaded = await awaitFonts(step);
      const printed = await printPdf(page, options, deadline);
      return {
        bytes: finishesPdf(options)
          ? await traced('pdf document', async () =>
              finishPdf(
                printed,
                options,
                deadline,
                options.pdf_accessible ? await readPageFacts(page, deadline) : undefined,
              ),
            )
          : printed,
        selectorFound: true,
        warnings: fontsLoaded ? [] : [warning('fonts_not_loaded')],
      };
    }
    case 'html':
    case 'markdown':
    case 'mhtml':
      return {
        bytes: await documentOf(options.format as SavedFormat, page, options, deadline, session),
        selectorFound: true,
        warnings: [],
      };
    default: {
      const captured = await capture(step);
      return {
        bytes: await finishImage(captured.image, options, captured.warnings),
        selectorFound: captured.selectorFound,
        warnings: captured.warnings,
      };
    }
  }
}
