// The recorded state of every render, in the `renders` KV bucket: what status endpoints and waiting callers read.
import type { KV } from '@nats-io/kv';
import type { ErrorCode, ErrorDetails } from '../errors.ts';
import type { ImageFormat, RenderOptions } from '../render/options.ts';

/** What the ingress publishes to the render stream: one durable message per accepted request. */
export interface RenderRequest {
  render_id: string;
  workspace_id: string;
  created_at: string;
  options: RenderOptions;
  webhook_url?: string;
  external_identifier?: string;
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
}

/** True once a render has ended, one way or the other. */
export function isFinal(record: Pick<RenderRecord, 'status'>): boolean {
  return record.status === 'succeeded' || record.status === 'failed';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
  };
}

/** Reads and changes render records; every change is compare-and-set on the entry's revision. */
export class RenderRecords {
  constructor(private readonly bucket: KV) {}

  /** The record of a render, or null. */
  async get(renderId: string): Promise<RenderRecord | null> {
    const entry = await this.bucket.get(renderId);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
    return JSON.parse(decoder.decode(entry.value)) as RenderRecord;
  }

  /** Writes the pending record of a new request (a no-op when it is already there). */
  async createPending(request: RenderRequest): Promise<void> {
    await this.bucket.create(request.render_id, encoder.encode(JSON.stringify(pendingRecord(request)))).catch((err) => {
      if (!/wrong last sequence|key exists/i.test(String(err?.message))) throw err;
    });
  }

  /**
   * Applies `change` unless the render already ended. Returns the new record and whether this call
   * made the change; a concurrent writer makes it read and try again, so no change is lost.
   */
  async transition(
    request: RenderRequest,
    change: (current: RenderRecord) => RenderRecord,
  ): Promise<{ record: RenderRecord; changed: boolean }> {
    for (;;) {
      const entry = await this.bucket.get(request.render_id);
      const exists = entry && entry.operation === 'PUT' && entry.length > 0;
      const current = exists ? (JSON.parse(decoder.decode(entry.value)) as RenderRecord) : pendingRecord(request);
      if (isFinal(current)) return { record: current, changed: false };
      const next = change(current);
      try {
        const payload = encoder.encode(JSON.stringify(next));
        if (exists) await this.bucket.update(request.render_id, payload, entry.revision);
        else await this.bucket.create(request.render_id, payload);
        return { record: next, changed: true };
      } catch (err) {
        if (!/wrong last sequence|key exists/i.test(String((err as Error)?.message))) throw err;
      }
    }
  }
}
