// The recorded state of every render, in the `renders` KV bucket.
import type { KV } from '@nats-io/kv';
import { errorTable, type ErrorCode } from '../errors.ts';
import {
  pendingRecord,
  isFinal,
  withFailedStep,
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
        // Whatever ended it, a failed render's timeline says so last (docs/api.md).
        return isFinal(record) ? undefined : withFailedStep(change(record));
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
        saved: _saved,
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
