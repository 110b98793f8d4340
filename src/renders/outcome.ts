// A render's end: its record's last change, its settlement (a succeeded render charged once, a
// failed one never), its webhook queued, and its announcement to the ingress waiting for it.
import type { NatsConnection } from '@nats-io/transport-node';
import type { RenderOutput } from '../../actors/render.machine.ts';
import type { PageObservation } from '../domain/options.ts';
import { pendingRecord, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import type { Versioned } from '../jetstream/kv-json.ts';
import { sizeOf } from '../storage/output-store.ts';
import { throughNatsOutage } from './patience.ts';
import { announceDone, doneSubjectOf } from './done.ts';
import type { RenderRecords } from './records.ts';

/** What ending a render needs. */
export interface OutcomeDeps {
  nc: NatsConnection;
  records: RenderRecords;
  /** Settles the quota of an ended render; must be idempotent, as it runs again on redelivery or replay. */
  settle: (record: RenderRecord) => Promise<void>;
  /** Queues the webhook of an ended render that asked for one; idempotent per render, as it runs again on redelivery. */
  enqueueWebhook?: (record: RenderRecord) => Promise<void>;
}

/** A record's change to a failed end with `fields`. */
export const failed =
  (fields: Pick<RenderRecord, 'error_code' | 'error_message' | 'error_details'>) =>
  (current: RenderRecord): RenderRecord => ({
    ...current,
    status: 'failed',
    finished_at: new Date().toISOString(),
    ...fields,
  });

/** A record's change to the end the render actor gave as its verdict. */
export const ended = (output: Exclude<RenderOutput, { status: 'retryLater' }>) =>
  output.status === 'succeeded'
    ? (current: RenderRecord): RenderRecord => ({
        ...current,
        status: 'succeeded',
        finished_at: new Date().toISOString(),
        file_name: output.stored.file_name,
        size_bytes: output.stored.size_bytes,
        ...(output.stored.metadata ? { metadata: output.stored.metadata } : {}),
        ...(output.stored.slices ? { slices: output.stored.slices } : {}),
        ...(output.stored.monitor_text_file_name
          ? { monitor_text_file_name: output.stored.monitor_text_file_name }
          : {}),
        ...(output.stored.saved ? { saved: output.stored.saved } : {}),
        ...(output.vision !== undefined ? { vision: output.vision } : {}),
        ...(output.stored.warnings ? { warnings: output.stored.warnings } : {}),
        ...(output.uploaded ? { store: output.uploaded } : {}),
      })
    : (current: RenderRecord): RenderRecord => ({
        ...failed({
          error_code: output.error_code,
          error_message: output.error_message,
          error_details: output.details,
        })(current),
      });

/** How renders end on this worker: recorded, settled, their webhooks queued, announced. */
export function renderOutcome(deps: OutcomeDeps) {
  const { nc, records } = deps;

  /** Tells the ingress waiting for `request` (on doneSubjectOf it) how its render ended. */
  const announce = (request: RenderRequest, record: RenderRecord, image?: Buffer, unstored = false) =>
    announceDone(nc, doneSubjectOf(request), record, image, unstored);

  /**
   * Announces a succeeded render's image before it is stored (the store out of reach past its
   * caller's timeout, docs/operations.md "Outages"); `current` is the record as last known.
   */
  const announceUnstored = (
    current: RenderRecord | null | undefined,
    request: RenderRequest,
    observation: PageObservation,
  ) => {
    const { image, warnings } = observation;
    const unstored: RenderRecord = {
      ...(current ?? pendingRecord(request)),
      status: 'succeeded',
      finished_at: new Date().toISOString(),
      size_bytes: sizeOf(observation.file ?? image),
      ...(warnings && warnings.length > 0 ? { warnings } : {}),
    };
    announce(request, unstored, image, true);
  };

  /**
   * Records the end (unless it ended already), settles it, queues its webhook and announces it.
   * `known`: the record as this delivery last read or wrote it, sparing a read when it is current.
   */
  const finish = async (
    request: RenderRequest,
    change: (current: RenderRecord) => RenderRecord,
    options: { answerBy?: number; image?: Buffer; known?: Versioned<RenderRecord> } = {},
  ) => {
    let known = options.known;
    const { record, changed } = await throughNatsOutage(options.answerBy, () => {
      const first = known;
      known = undefined;
      return records.transition(request, change, first);
    });
    // Charged before told: a webhook's receiver that reads the usage finds the render counted.
    await throughNatsOutage(options.answerBy, () => deps.settle(record));
    if (!record.abandoned) await throughNatsOutage(options.answerBy, async () => deps.enqueueWebhook?.(record));
    // Only the render that made this record has its image in hand.
    announce(request, record, changed ? options.image : undefined);
    return record;
  };

  /** A redelivery of a render that already ended (or was abandoned by its caller): settled and answered again. */
  const repeat = async (request: RenderRequest, known: RenderRecord) => {
    await deps.settle(known);
    if (!known.abandoned) await deps.enqueueWebhook?.(known);
    announce(request, known);
  };

  return { announce, announceUnstored, finish, repeat };
}

/** How renders end on a worker (renderOutcome). */
export type RenderOutcome = ReturnType<typeof renderOutcome>;
