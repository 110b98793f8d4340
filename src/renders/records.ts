// The recorded state of every render, in the `renders` KV bucket, and its announcement on a core subject.
import type { KV } from '@nats-io/kv';
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/transport-node';
import { errorTable, type ErrorCode } from '../errors.ts';
import {
  pendingRecord,
  isFinal,
  withSteps,
  type RenderRecord,
  type RenderRequest,
  type TimelineStep,
} from '../domain/render.ts';
import { readJson, updateJson, type Versioned } from '../jetstream/kv-json.ts';

/** The header that marks an operator's replay of a render request (`shutterbus replay renders`). */
export const REPLAY_HEADER = 'Shutterbus-Replay';

/**
 * The header of a render request that carries the revision of the pending record its ingress
 * wrote, so that the request's first delivery can start from that record without reading it.
 */
export const PENDING_REVISION_HEADER = 'Shutterbus-Pending-Revision';

// A create is a write expected to find no document: a key that holds one makes it read and give up.
const ABSENT: Versioned<RenderRecord> = { value: null, revision: 0 };

/** Reads and changes render records; every change is compare-and-set on the entry's revision. */
export class RenderRecords {
  constructor(private readonly bucket: KV) {}

  /** The record of a render, or null. */
  async get(renderId: string): Promise<RenderRecord | null> {
    return (await readJson<RenderRecord>(this.bucket, renderId)).value;
  }

  /** The record of a render (null when absent) with its revision, for a later `transition` to start from. */
  async read(renderId: string): Promise<Versioned<RenderRecord>> {
    return readJson<RenderRecord>(this.bucket, renderId);
  }

  /**
   * Writes the pending record of a new request (a no-op when it is already there): the record as
   * written when this call wrote it.
   */
  async createPending(request: RenderRequest): Promise<Versioned<RenderRecord> | undefined> {
    const pending = pendingRecord(request);
    const { changed, revision } = await updateJson<RenderRecord>(
      this.bucket,
      request.render_id,
      (current) => (current === null ? pending : undefined),
      ABSENT,
    );
    return changed ? { value: pending, revision: revision! } : undefined;
  }

  /**
   * Applies `change` unless the render already ended; `changed` says whether this call made the
   * change, and `version` is the record as written. `known` (a version read or written before)
   * spares a read when nothing wrote the record since; otherwise it is read again.
   */
  async transition(
    request: RenderRequest,
    change: (current: RenderRecord) => RenderRecord,
    known?: Versioned<RenderRecord>,
  ): Promise<{ record: RenderRecord; changed: boolean; version?: Versioned<RenderRecord> }> {
    const { value, changed, revision } = await updateJson<RenderRecord>(
      this.bucket,
      request.render_id,
      (current) => {
        const record = current ?? pendingRecord(request);
        return isFinal(record) ? undefined : change(record);
      },
      known,
    );
    const record = value ?? pendingRecord(request);
    return { record, changed, ...(revision === undefined ? {} : { version: { value: record, revision } }) };
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

  /** Adds a step to a render's timeline, ended or not (its webhook is delivered after it ends). */
  async addStep(renderId: string, step: TimelineStep['step'], at = new Date()): Promise<void> {
    await updateJson<RenderRecord>(this.bucket, renderId, (current) =>
      current ? withSteps(current, [{ step, at }]) : undefined,
    );
  }

  /** Puts an ended render back to `rendering` for a replay, dropping its previous outcome. */
  async reopen(renderId: string): Promise<void> {
    await updateJson<RenderRecord>(this.bucket, renderId, (current) => {
      if (!current || !isFinal(current)) return undefined;
      const {
        file_name: _file,
        size_bytes: _size,
        metadata: _metadata,
        slices: _slices,
        vision: _vision,
        warnings: _warnings,
        store: _store,
        failure_capture: _capture,
        error_code: _code,
        error_message: _message,
        error_details: _details,
        finished_at: _finished,
        ...kept
      } = current;
      return { ...kept, status: 'rendering', started_at: new Date().toISOString() };
    });
  }
}

/** The header of a render's done message that carries its record. */
const RECORD_HEADER = 'Shutterbus-Record';

/** Images up to this size travel in the done message, sparing the waiting ingress a read from the bucket. */
const INLINE_IMAGE_LIMIT = 768 * 1024;

/** The header of a done message sent before the image is stored (docs/operations.md, "Outages"). */
const UNSTORED_HEADER = 'Shutterbus-Unstored';

/**
 * A render's end as announced to the ingress waiting for it: the record, and the image when small.
 * `unstored`: the store did not answer within the caller's timeout, so the image (inline, when small)
 * is announced before it is stored; the record is not written yet and has no file, and the worker
 * keeps trying the store. A caller may be answered with the image, or refused (the render abandoned).
 */
export interface RenderResult {
  record: RenderRecord;
  image?: Buffer;
  unstored?: true;
}

/** The payload and headers of a done message; `unstored` marks an image announced before it is stored. */
export function renderDoneMessage(
  record: RenderRecord,
  image?: Buffer,
  unstored = false,
): [Uint8Array, { headers: MsgHdrs }] {
  const headers = natsHeaders();
  headers.set(RECORD_HEADER, JSON.stringify(record));
  if (unstored) headers.set(UNSTORED_HEADER, '1');
  const inline = image && image.length <= INLINE_IMAGE_LIMIT ? image : new Uint8Array();
  return [inline, { headers }];
}

/** Reads a done message back. */
export function readRenderDone(message: Msg): RenderResult {
  const record = JSON.parse(message.headers!.get(RECORD_HEADER)) as RenderRecord;
  const unstored = message.headers!.has(UNSTORED_HEADER) ? { unstored: true as const } : {};
  return message.data.length > 0 ? { record, image: Buffer.from(message.data), ...unstored } : { record, ...unstored };
}
