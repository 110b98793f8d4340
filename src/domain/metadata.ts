// What the metadata_* options gather about a page (docs/api.md): as the render observed it, as a
// render record keeps it, and as the API, the status route and the webhook show it.

/** The page's Open Graph tags (`og:*`); `image` and `url` made absolute. Absent tags are null. */
export interface OpenGraph {
  title: string | null;
  description: string | null;
  image: string | null;
  url: string | null;
  type: string | null;
  site_name: string | null;
}

/** The fields every metadata_* option may add, apart from `content`. */
interface MetadataFields {
  image_size?: { width: number; height: number };
  page_title?: string | null;
  open_graph?: OpenGraph;
  /** The page's icon (`<link rel="icon">` and kin), its URL made absolute; null when it names none. */
  icon?: { url: string; type: string | null } | null;
  /** Font family names the page's text is set in. */
  fonts?: string[];
  http_response_status_code?: number | null;
  http_response_headers?: Record<string, string>;
}

/** Metadata as a render gathered it: `content` is the text itself. */
export interface PageMetadata extends MetadataFields {
  content?: { text: string; format: 'html' | 'markdown' };
}

/** Metadata as a render record keeps it: `content` was stored as a file of its own. */
export interface RecordedMetadata extends MetadataFields {
  content?: { file_name: string; format: 'html' | 'markdown' };
}

/** Metadata as answers show it: `content` is the URL of that file. */
export interface PublicMetadata extends MetadataFields {
  content?: { url: string; format: 'html' | 'markdown' };
}

/** The metadata_* switches, in the documented order. */
export const metadataOptions = [
  'metadata_image_size',
  'metadata_page_title',
  'metadata_open_graph',
  'metadata_icon',
  'metadata_fonts',
  'metadata_http_response_status_code',
  'metadata_http_response_headers',
  'metadata_content',
] as const;

/** True when any metadata_* option is on: only then does a render gather anything. */
export function wantsMetadata(options: Record<(typeof metadataOptions)[number], boolean>): boolean {
  return metadataOptions.some((name) => options[name]);
}

/** Recorded metadata as answers show it, the content file's URL given by `urlOf` (files.ts fileUrl). */
export function publicMetadata(recorded: RecordedMetadata, urlOf: (fileName: string) => string): PublicMetadata {
  const { content, ...fields } = recorded;
  return content ? { ...fields, content: { url: urlOf(content.file_name), format: content.format } } : fields;
}
