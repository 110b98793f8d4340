// A render's own vocabulary: the request the ingress accepts, the record the world reads, and their rules.
import type { ErrorCode, ErrorDetails } from '../errors.ts';
import type { RecordedMetadata } from './metadata.ts';
import type { OutputFormat, RenderOptions } from './options.ts';
import type { SavedFormat } from './formats.ts';
import type { RenderWarning } from './warnings.ts';
import type { StoreResult, StoreTarget } from './storage.ts';
import type { AnimationOptions } from './animation.ts';
import type { SourceOptions } from './merge.ts';

/** What the ingress publishes to the render stream: one durable message per accepted request. */
export interface RenderRequest {
  render_id: string;
  workspace_id: string;
  created_at: string;
  options: RenderOptions;
  /**
   * What the render makes: a screenshot (also when absent), an animation (docs/animate.md) or one
   * PDF merged from several (POST /api/pdf/merge).
   */
  kind?: 'screenshot' | 'animation' | 'merge';
  /** The recording and its choreography, for an animation. */
  animation?: AnimationOptions;
  /** For a merge: each source's options, as they differ from `options` (src/domain/merge.ts). */
  sources?: SourceOptions[];
  webhook_url?: string;
  external_identifier?: string;
  /** false: the webhook goes without signature headers (webhook_sign). */
  webhook_sign?: false;
  /** false: a failed render sends no webhook (webhook_errors). */
  webhook_errors?: false;
  /** Set for a cached signed GET: the cache entry this render fills, and for how long. */
  cache?: { key: string; ttl: number };
  /**
   * A synchronous request's deadline (ms since the epoch): the caller is answered by then, so a
   * render that cannot end before it ends as failed and is never charged.
   */
  answer_by?: number;
  /**
   * Where its end is announced when not on the render's own done subject: its caller's ingress's
   * own subject (a synchronous request without a cache entry, src/renders/done.ts).
   */
  done_to?: string;
  /**
   * Set for a monitor's tick (docs/monitors.md): which monitor, the tick's time, and whether the
   * page's visible text is kept beside the capture (a monitor that compares text).
   */
  monitor?: { monitor_id: string; tick_at: string; interval: number; text?: true };
  /** Also upload the output to the customer's bucket; its secret is sealed. */
  store?: StoreTarget;
  /** The W3C trace context of the request that asked for it, when tracing is on (docs/operations.md). */
  trace?: Record<string, string>;
}

/** One entry of a render's timeline: what happened, when, and the milliseconds since the entry before. */
export interface TimelineStep {
  step: 'queued' | 'started' | 'navigated' | 'captured' | 'stored' | 'retry' | 'failed' | 'delivered';
  at: string;
  ms: number;
  /** On the `failed` step: the error the render ended with. */
  error_code?: string;
}

/** `record` with `steps` appended to its timeline, each once (a change applied twice adds nothing). */
export function withSteps(
  record: RenderRecord,
  steps: readonly { step: TimelineStep['step']; at: Date }[],
): RenderRecord {
  const timeline = [...(record.timeline ?? [])];
  for (const { step, at } of steps) {
    const iso = at.toISOString();
    if (timeline.some((known) => known.step === step && known.at === iso)) continue;
    const before = timeline.at(-1);
    timeline.push({ step, at: iso, ms: before ? Math.max(0, at.getTime() - Date.parse(before.at)) : 0 });
  }
  return { ...record, timeline };
}

/**
 * A failed record's timeline ends with a `failed` step carrying its error code, after every step
 * it reached; a record already marked (a change applied twice) is returned as it is.
 */
export function withFailedStep(record: RenderRecord): RenderRecord {
  if (record.status !== 'failed' || record.timeline?.some((known) => known.step === 'failed')) return record;
  const at = record.finished_at ?? new Date().toISOString();
  const timeline = [...(record.timeline ?? [])];
  const before = timeline.at(-1);
  const ms = before ? Math.max(0, Date.parse(at) - Date.parse(before.at)) : 0;
  timeline.push({ step: 'failed', at, ms, ...(record.error_code ? { error_code: record.error_code } : {}) });
  return { ...record, timeline };
}

/** One stored slice of a full-page capture (full_page_slices); offsets and sizes in image pixels. */
export interface RecordedSlice {
  index: number;
  offset_y: number;
  width: number;
  height: number;
  file_name: string;
}

/** Slices as answers show them: the file's URL given by `urlOf` (files.ts fileUrl). */
export function publicSlices(slices: RecordedSlice[], urlOf: (fileName: string) => string) {
  return slices.map(({ file_name, ...slice }) => ({ ...slice, url: urlOf(file_name) }));
}

/** save_formats' files of a render: each file's name, by format. */
export type SavedFiles = Partial<Record<SavedFormat, string>>;

/** The render's answers beyond the file (slices, saved files, vision), as every answer shows them. */
export function publicExtras(
  record: Pick<RenderRecord, 'slices' | 'saved' | 'vision'>,
  urlOf: (fileName: string) => string,
) {
  return {
    ...(record.slices ? { slices: publicSlices(record.slices, urlOf) } : {}),
    ...(record.saved
      ? {
          saved: Object.fromEntries(
            Object.entries(record.saved).map(([format, fileName]) => [format, urlOf(fileName as string)]),
          ),
        }
      : {}),
    ...(record.vision !== undefined ? { vision: record.vision } : {}),
  };
}

/** The render actor's states as the outside sees them. */
export type RenderStatus = 'pending' | 'rendering' | 'succeeded' | 'failed';

/** One render's recorded state. */
export interface RenderRecord {
  render_id: string;
  workspace_id: string;
  status: RenderStatus;
  /** The page's URL; absent for a render of an html or markdown document. */
  url?: string;
  format: OutputFormat;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  file_name?: string;
  size_bytes?: number;
  /** What the metadata_* options asked for, once succeeded. */
  metadata?: RecordedMetadata;
  /** full_page_slices: each slice stored as a file of its own, top to bottom. */
  slices?: RecordedSlice[];
  /** save_formats: the page's files beside the output, by format, once succeeded. */
  saved?: SavedFiles;
  /** The vision API's answer (vision_prompt), once succeeded. */
  vision?: string;
  /** What the caller should know about the output, once succeeded (docs/capture.md); absent when nothing. */
  warnings?: RenderWarning[];
  /** Where the output was uploaded in the customer's bucket, once succeeded. */
  store?: StoreResult;
  error_code?: ErrorCode;
  error_message?: string;
  error_details?: ErrorDetails;
  /** A failed render's JPEG of the page as it was when it failed (kept a day), where one could be taken. */
  failure_capture?: string;
  external_identifier?: string;
  webhook_url?: string;
  webhook_sign?: false;
  webhook_errors?: false;
  cache?: RenderRequest['cache'];
  /** The monitor whose tick this render is, and the tick's time. */
  monitor_id?: string;
  monitor_tick_at?: string;
  /** A monitor's tick that keeps the page's visible text: the file it is in. */
  monitor_text_file_name?: string;
  /** Ended by the ingress, which answered its caller with an error: never charged, never announced by webhook. */
  abandoned?: boolean;
  /** The request's W3C trace context, so that its webhook delivery joins the same trace. */
  trace?: RenderRequest['trace'];
  /** Queued, started, navigated, captured, stored, delivered, and each retry, with times. */
  timeline?: TimelineStep[];
}

/** True once a render has ended, one way or the other. */
export function isFinal(record: Pick<RenderRecord, 'status'>): boolean {
  return record.status === 'succeeded' || record.status === 'failed';
}

/** How many renders a request is charged as: one per source of a merge, else one. */
export function rendersCharged(request: Pick<RenderRequest, 'kind' | 'sources'>): number {
  return request.kind === 'merge' ? Math.max(1, request.sources?.length ?? 1) : 1;
}

/** The first record of an accepted request. */
export function pendingRecord(request: RenderRequest): RenderRecord {
  return {
    render_id: request.render_id,
    workspace_id: request.workspace_id,
    status: 'pending',
    ...(request.options.url ? { url: request.options.url } : {}),
    format: request.options.format,
    created_at: request.created_at,
    ...(request.external_identifier ? { external_identifier: request.external_identifier } : {}),
    ...(request.webhook_url ? { webhook_url: request.webhook_url } : {}),
    ...(request.webhook_sign === false ? { webhook_sign: false as const } : {}),
    ...(request.webhook_errors === false ? { webhook_errors: false as const } : {}),
    ...(request.cache ? { cache: request.cache } : {}),
    ...(request.trace ? { trace: request.trace } : {}),
    timeline: [{ step: 'queued', at: request.created_at, ms: 0 }],
    ...(request.monitor ? { monitor_id: request.monitor.monitor_id, monitor_tick_at: request.monitor.tick_at } : {}),
  };
}
