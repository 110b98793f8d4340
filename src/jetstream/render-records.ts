// The recorded state of every render, in the `renders` KV bucket: what status endpoints and waiting callers read.
import type { KV } from '@nats-io/kv';
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node';
import { errorTable, type ErrorCode, type ErrorDetails } from '../errors.ts';
import type { ImageFormat, RenderOptions } from '../render/options.ts';
import { createJson, readJson, updateJson } from './kv-json.ts';

/** What the ingress publishes to the render stream: one durable message per accepted request. */
export interface RenderRequest {
  render_id: string;
  workspace_id: string;
  created_at: string;
  options: RenderOptions;
  webhook_url?: string;
  external_identifier?: string;
  /** Set for a cached signed GET: the cache entry this render fills, and for how long. */
  cache?: { key: string; ttl: number };
  /**
   * A synchronous request's deadline (ms since the epoch): the caller is answered by then, so a
   * render that cannot end before it ends as failed and is never charged.
   */
  answer_by?: number;
}

/** The render actor's states as the outside sees them. */
export type RenderStatus = 'pending' | 'rendering' | 'succeeded' | 'failed';

/** One render's recorded state. */
export interface RenderRecord {
  render_id: string;
  workspace_id: string;
  status: RenderStatus;
  url: string;
  format: ImageFormat;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  file_name?: string;
  size_bytes?: number;
  error_code?: ErrorCode;
  error_message?: string;
  error_details?: ErrorDetails;
  external_identifier?: string;
  webhook_url?: string;
  cache?: RenderRequest['cache'];
  /** Ended by the ingress, which answered its caller with an error: never charged, never announced by webhook. */
  abandoned?: boolean;
}

/** The header that marks an operator's replay of a render request (`shutterbus replay renders`). */
export const REPLAY_HEADER = 'Shutterbus-Replay';

/** True once a render has ended, one way or the other. */
export function isFinal(record: Pick<RenderRecord, 'status'>): boolean {
  return record.status === 'succeeded' || record.status === 'failed';
}

/** The first record of an accepted request. */
export function pendingRecord(request: RenderRequest): RenderRecord {
  return {
    render_id: request.render_id,
    workspace_id: request.workspace_id,
    status: 'pending',
    url: request.options.url,
    format: request.options.format,
    created_at: request.created_at,
    ...(request.external_identifier ? { external_identifier: request.external_identifier } : {}),
    ...(request.webhook_url ? { webhook_url: request.webhook_url } : {}),
    ...(request.cache ? { cache: request.cache } : {}),
  };
}

/** Reads and changes render records; every change is compare-and-set on the entry's revision. */
export class RenderRecords {
  constructor(private readonly bucket: KV) {}

  /** The record of a render, or null. */
  async get(renderId: string): Promise<RenderRecord | null> {
    return (await readJson<RenderRecord>(this.bucket, renderId)).value;
  }

  /** Writes the pending record of a new request (a no-op when it is already there). */
  async createPending(request: RenderRequest): Promise<void> {
    await createJson(this.bucket, request.render_id, pendingRecord(request));
  }

  /** Applies `change` unless the render already ended; `changed` says whether this call made the change. */
  async transition(
    request: RenderRequest,
    change: (current: RenderRecord) => RenderRecord,
  ): Promise<{ record: RenderRecord; changed: boolean }> {
    const { value, changed } = await updateJson<RenderRecord>(this.bucket, request.render_id, (current) => {
      const record = current ?? pendingRecord(request);
      return isFinal(record) ? undefined : change(record);
    });
    return { record: value ?? pendingRecord(request), changed };
  }

  /**
   * Ends a render whose caller was answered with `code` (the request never reached the stream, or
   * its caller stopped waiting), unless it ended first: the record as it stands afterwards.
   */
  async abandon(request: RenderRequest, code: ErrorCode): Promise<RenderRecord> {
    const { record } = await this.transition(request, (current) => ({
      ...current,
      status: 'failed',
      finished_at: new Date().toISOString(),
      error_code: code,
      error_message: errorTable[code].message,
      abandoned: true,
    }));
    return record;
  }

  /** Puts an ended render back to `rendering` for a replay, dropping its previous outcome. */
  async reopen(renderId: string): Promise<void> {
    await updateJson<RenderRecord>(this.bucket, renderId, (current) => {
      if (!current || !isFinal(current)) return undefined;
      const { file_name: _file, size_bytes: _size, error_code: _code, error_message: _message, error_details: _details, finished_at: _finished, ...kept } = current;
      return { ...kept, status: 'rendering', started_at: new Date().toISOString() };
    });
  }
}

/** The header of a render's done message that carries its record. */
const RECORD_HEADER = 'Shutterbus-Record';

/** Images up to this size travel in the done message, sparing the waiting ingress a read from the bucket. */
const INLINE_IMAGE_LIMIT = 768 * 1024;

/** A render's end as announced to the ingress waiting for it: the record, and the image when small. */
export interface RenderResult {
  record: RenderRecord;
  image?: Buffer;
}

/** The payload and headers of a done message. */
export function renderDoneMessage(record: RenderRecord, image?: Buffer): [Uint8Array, { headers: MsgHdrs }] {
  const headers = natsHeaders();
  headers.set(RECORD_HEADER, JSON.stringify(record));
  const inline = image && image.length <= INLINE_IMAGE_LIMIT ? image : new Uint8Array();
  return [inline, { headers }];
}

/** Reads a done message back. */
export function readRenderDone(message: Msg): RenderResult {
  const record = JSON.parse(message.headers!.get(RECORD_HEADER)) as RenderRecord;
  return message.data.length > 0 ? { record, image: Buffer.from(message.data) } : { record };
}
