// The metadata_* options (docs/api.md): what the page says about itself, read in the same visit
// as the output, after it was made. A render that asks for none of it never comes here.
import type { PageMetadata } from '../../domain/metadata.ts';
import { imageFormats } from '../../domain/options.ts';
import { extractMarkdown, serialiseHtml } from './document.ts';
import { imageSize } from './image.ts';
import { inPage } from '../browser/in-page.ts';
import { evaluateIsolated } from '../browser/playwright.ts';
import { readPageFacts } from '../in-page/metadata.ts';
import { untilAborted, type Navigation } from '../steps/page.ts';
import type { PageStep } from '../steps/page-step.ts';

/** What the metadata reads besides the page: where navigation ended, and the render's output (for image_size). */
export interface MetadataSources {
  navigation: Navigation;
  output: Buffer;
}

/** Gathers every metadata field `options` asks for. */
export async function gatherMetadata(
  { page, options, progress }: PageStep,
  { navigation, output }: MetadataSources,
): Promise<PageMetadata> {
  const deadline = progress.signal;
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
    // In an isolated world: the page's DOM as it is, not as its rewritten getters tell it.
    Object.assign(metadata, await untilAborted(deadline, evaluateIsolated(page, inPage(readPageFacts), asks)));
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
