// The public view of a render: what the API shows of its record, each field under one name and
// built one way wherever it is shown (GET /api/renders/{id}, the webhook, the JSON answer; docs/api.md).
import { publicMetadata } from '../domain/metadata.ts';
import { publicExtras, type RenderRecord } from '../domain/render.ts';

/** Where a render is shown: its status, its webhook's `data`, or the JSON answer of a render that succeeded. */
export type RenderViewUse = 'status' | 'webhook' | 'answer';

/** The fields each use shows, in the order it shows them; OpenAPI's schemas are built from the same lists. */
export const renderViewFields = {
  status: [
    'render_id',
    'status',
    'file_url',
    'metadata',
    'slices',
    'saved',
    'vision',
    'warnings',
    'store',
    'error_code',
    'error_message',
    'error_details',
    'failure_capture_url',
    'external_identifier',
    'created_at',
    'finished_at',
    'timeline',
  ],
  webhook: [
    'render_id',
    'url',
    'format',
    'file_url',
    'size_bytes',
    'metadata',
    'slices',
    'saved',
    'vision',
    'warnings',
    'store',
    'error_code',
    'error_message',
    'error_details',
    'external_identifier',
  ],
  answer: [
    'is_successful',
    'render_id',
    'file_url',
    'screenshot_url',
    'cache_url',
    'format',
    'size_bytes',
    'store',
    'metadata',
    'slices',
    'saved',
    'vision',
    'warnings',
  ],
} as const satisfies Record<RenderViewUse, readonly string[]>;

/** What a use adds to the record: `cached`, a cached signed GET's answer (its file is what later views redirect to). */
export interface RenderViewExtras {
  cached?: boolean;
}

/** Every field the API may show of `record`; each absent when the record has nothing to say. */
function everyField(record: RenderRecord, urlOf: (fileName: string) => string, extras: RenderViewExtras) {
  // Only a succeeded render has an output to show: a failed one gives nothing away (docs/security.md).
  const fileUrl = record.status === 'succeeded' && record.file_name ? urlOf(record.file_name) : undefined;
  return {
    // Only the JSON answer of a succeeded render shows the view: a failure is answered with its error.
    is_successful: true,
    render_id: record.render_id,
    status: record.status,
    ...(record.url !== undefined ? { url: record.url } : {}),
    format: record.format,
    ...(fileUrl ? { file_url: fileUrl, size_bytes: record.size_bytes } : {}),
    // screenshot_url is ScreenshotOne's name for file_url.
    ...(fileUrl ? { screenshot_url: fileUrl } : {}),
    ...(fileUrl && extras.cached ? { cache_url: fileUrl } : {}),
    ...(record.metadata ? { metadata: publicMetadata(record.metadata, urlOf) } : {}),
    ...publicExtras(record, urlOf),
    ...(record.warnings ? { warnings: record.warnings } : {}),
    ...(record.store ? { store: record.store } : {}),
    ...(record.error_code ? { error_code: record.error_code, error_message: record.error_message } : {}),
    // A refused upload says what the customer's storage answered.
    ...(record.error_code === 'storage_upload_failed' ? record.error_details : {}),
    ...(record.failure_capture ? { failure_capture_url: urlOf(record.failure_capture) } : {}),
    ...(record.external_identifier ? { external_identifier: record.external_identifier } : {}),
    created_at: record.created_at,
    ...(record.finished_at ? { finished_at: record.finished_at } : {}),
    timeline: record.timeline ?? [],
  } as Record<string, unknown>;
}

/** The public view of `record` as `use` shows it; file names become URLs through `urlOf` (files.ts fileUrl). */
export function renderView(
  record: RenderRecord,
  urlOf: (fileName: string) => string,
  use: RenderViewUse,
  extras: RenderViewExtras = {},
): Record<string, unknown> {
  const fields = everyField(record, urlOf, extras);
  const view: Record<string, unknown> = {};
  for (const name of renderViewFields[use]) if (fields[name] !== undefined) view[name] = fields[name];
  return view;
}

/** A field of a render's public view. */
export type RenderViewField = (typeof renderViewFields)[RenderViewUse][number];
