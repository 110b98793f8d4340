// The public view of a render: what the API shows of its record, each field under one name and
// built one way wherever it is shown (GET /api/renders/{id}, the webhook, the JSON answer; docs/api.md).
import type { ErrorCode } from '../errors.ts';
import { publicMetadata, type PublicMetadata } from '../domain/metadata.ts';
import type { OutputFormat } from '../domain/options.ts';
import {
  publicExtras,
  type publicSlices,
  type RenderRecord,
  type RenderStatus,
  type TimelineStep,
} from '../domain/render.ts';
import type { StoreResult } from '../domain/storage.ts';
import type { RenderWarning } from '../domain/warnings.ts';

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

/** One entry of a failed upload's `error_details`: the customer's storage's own answer. */
export interface StorageErrorDetail {
  parameter: string;
  code: string;
  message: string;
}

/** Every field a render's view may show, with its type; each use shows those its list names. */
export interface RenderViewValues {
  /** Only the JSON answer of a succeeded render shows the view: a failure is answered with its error. */
  is_successful: true;
  render_id: string;
  status: RenderStatus;
  url?: string;
  format: OutputFormat;
  /** A succeeded render's file; a failed one hands out no output. */
  file_url?: string;
  size_bytes?: number;
  /** ScreenshotOne's name for file_url. */
  screenshot_url?: string;
  /** A cached signed GET's answer: the file later views redirect to. */
  cache_url?: string;
  metadata?: PublicMetadata;
  slices?: ReturnType<typeof publicSlices>;
  saved?: Record<string, string>;
  vision?: string;
  warnings?: RenderWarning[];
  store?: StoreResult;
  error_code?: ErrorCode;
  error_message?: string;
  error_details?: StorageErrorDetail[];
  failure_capture_url?: string;
  external_identifier?: string;
  created_at: string;
  finished_at?: string;
  timeline: TimelineStep[];
}

/** A field of a render's public view. */
export type RenderViewField = (typeof renderViewFields)[RenderViewUse][number];

// Every typed field is shown by some use (and so has an OpenAPI schema): this fails to compile otherwise.
const everyFieldListed: Exclude<keyof RenderViewValues, RenderViewField> extends never ? true : never = true;
void everyFieldListed;

/** A render as `use` shows it: the fields of its list. */
export type RenderView<U extends RenderViewUse> = Pick<RenderViewValues, (typeof renderViewFields)[U][number]>;
/** GET /api/renders/{id}'s answer. */
export type RenderStatusView = RenderView<'status'>;
/** A render webhook's `data`. */
export type RenderWebhookView = RenderView<'webhook'>;
/** The JSON answer of a render that succeeded (response_type=json). */
export type RenderAnswerView = RenderView<'answer'>;

/** What a use adds to the record: `cached`, a cached signed GET's answer (its file is what later views redirect to). */
export interface RenderViewExtras {
  cached?: boolean;
}

/** Every field the API may show of `record`; each absent when the record has nothing to say. */
function everyField(
  record: RenderRecord,
  urlOf: (fileName: string) => string,
  extras: RenderViewExtras,
): RenderViewValues {
  // Only a succeeded render has an output to show: a failed one gives nothing away (docs/security.md).
  const fileUrl = record.status === 'succeeded' && record.file_name ? urlOf(record.file_name) : undefined;
  return {
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
    ...(record.error_code === 'storage_upload_failed' && record.error_details?.error_details
      ? { error_details: record.error_details.error_details as StorageErrorDetail[] }
      : {}),
    ...(record.failure_capture ? { failure_capture_url: urlOf(record.failure_capture) } : {}),
    ...(record.external_identifier ? { external_identifier: record.external_identifier } : {}),
    created_at: record.created_at,
    ...(record.finished_at ? { finished_at: record.finished_at } : {}),
    timeline: record.timeline ?? [],
  };
}

/** The public view of `record` as `use` shows it; file names become URLs through `urlOf` (files.ts fileUrl). */
export function renderView<U extends RenderViewUse>(
  record: RenderRecord,
  urlOf: (fileName: string) => string,
  use: U,
  extras: RenderViewExtras = {},
): RenderView<U> {
  const fields = everyField(record, urlOf, extras);
  const view: Record<string, unknown> = {};
  for (const name of renderViewFields[use]) if (fields[name] !== undefined) view[name] = fields[name];
  // Each field of the use's list, copied when it has a value: what RenderView<U> says the view has.
  return view as RenderView<U>;
}
