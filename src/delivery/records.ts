// Webhook deliveries: the job published to the DELIVERIES stream and the record kept per delivery in KV.
import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { createJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import type { RenderRecord } from '../domain/render.ts';
import { names } from '../jetstream/topology.ts';
import { fileUrl } from '../domain/files.ts';
import { traceHeaders } from '../jetstream/trace-headers.ts';
import { renderView } from '../renders/view.ts';

/** One message of the DELIVERIES stream: send `body` to `webhook_url`, in round `round`. */
export interface DeliveryJob {
  id: string;
  render_id: string;
  workspace_id: string;
  webhook_url: string;
  /** The exact JSON body every attempt sends and signs. */
  body: string;
  /** 0 for the first round; each redrive or replay starts a new one and older jobs are ignored. */
  round: number;
  /** webhook_sign=false: sent without signature headers. */
  unsigned?: true;
}

/** Where a delivery stands. */
export type DeliveryStatus = 'pending' | 'backing_off' | 'delivered' | 'dead';

/** A delivery's recorded state in the `deliveries` bucket: what a restarted sender resumes from. */
export interface DeliveryRecord extends DeliveryJob {
  status: DeliveryStatus;
  /** Attempts made in the current round. */
  attempts: number;
  last_error?: string;
  /** Unix seconds of the last attempt: its webhook timestamp, which its signatures cover. */
  last_attempt_at?: number;
  created_at: string;
  updated_at: string;
}

/** The webhook body (docs/api.md). */
export interface WebhookPayload {
  id: string;
  type: 'render.succeeded' | 'render.failed' | 'monitor.changed' | 'monitor.failed';
  created_at: string;
  data: Record<string, unknown>;
}

/** The delivery id of a render's webhook: derived from the render id, so announcing a render twice is one delivery. */
export function deliveryIdOf(renderId: string): string {
  return `wh_${createHash('sha256').update(`webhook:${renderId}`).digest('hex').slice(0, 32)}`;
}

/** The webhook payload announcing an ended render. */
export function webhookPayload(record: RenderRecord, filesBaseUrl: string, createdAt = new Date()): WebhookPayload {
  const succeeded = record.status === 'succeeded';
  return {
    id: deliveryIdOf(record.render_id),
    type: succeeded ? 'render.succeeded' : 'render.failed',
    created_at: createdAt.toISOString(),
    data: renderView(record, (name) => fileUrl(filesBaseUrl, name), 'webhook'),
  };
}

/** Records deliveries in KV and publishes their jobs. */
export class DeliveryQueue {
  constructor(
    private readonly js: JetStreamClient,
    private readonly bucket: KV,
  ) {}

  /** The record of a delivery, or null. */
  async get(id: string): Promise<DeliveryRecord | null> {
    return (await readJson<DeliveryRecord>(this.bucket, id)).value;
  }

  /** Every recorded delivery (operators' listings; the bucket ages out with the render records). */
  async all(): Promise<DeliveryRecord[]> {
    const records: DeliveryRecord[] = [];
    for await (const key of await this.bucket.keys()) {
      const record = await this.get(key);
      if (record) records.push(record);
    }
    return records.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /**
   * Queues the webhook of an ended render, once: the record is created only if absent and the
   * job is deduplicated by the delivery id, so a redelivered or replayed render sends nothing new.
   */
  async enqueue(render: RenderRecord, filesBaseUrl: string): Promise<void> {
    if (!render.webhook_url) return;
    // webhook_errors=false: only a success is announced.
    if (render.status === 'failed' && render.webhook_errors === false) return;
    const about = {
      render_id: render.render_id,
      workspace_id: render.workspace_id,
      webhook_url: render.webhook_url,
      ...(render.webhook_sign === false ? { unsigned: true as const } : {}),
    };
    await this.enqueueEvent(about, webhookPayload(render, filesBaseUrl), render.trace);
  }

  /**
   * Queues any event's delivery once (a monitor's, docs/monitors.md): deduplicated by the payload's
   * id as `enqueue` is, and sent, signed and retried like a render's webhook; `trace` joins its
   * attempts to the trace of the request behind it.
   */
  async enqueueEvent(
    about: Pick<DeliveryJob, 'render_id' | 'workspace_id' | 'webhook_url' | 'unsigned'>,
    payload: WebhookPayload,
    trace?: RenderRecord['trace'],
  ): Promise<void> {
    const now = new Date().toISOString();
    const job: DeliveryJob = { id: payload.id, ...about, body: JSON.stringify(payload), round: 0 };
    const fresh: DeliveryRecord = { ...job, status: 'pending', attempts: 0, created_at: now, updated_at: now };
    // Announced again (redelivery, replay): the record that exists decides whether it is still to send.
    const recorded = (await createJson(this.bucket, job.id, fresh)) ? fresh : (await this.get(job.id))!;
    if (recorded.round === 0 && recorded.status === 'pending' && recorded.attempts === 0) {
      await this.js.publish(names.deliverySubject(job.workspace_id), JSON.stringify(jobOf(recorded)), {
        msgID: job.id,
        headers: traceHeaders(trace),
      });
    }
  }

  /** Starts a new round of a recorded delivery (redrive, replay): same id and body, attempts from zero. */
  async resend(id: string): Promise<DeliveryRecord | null> {
    const { value } = await updateJson<DeliveryRecord>(this.bucket, id, (current) =>
      current
        ? { ...current, status: 'pending', attempts: 0, round: current.round + 1, updated_at: new Date().toISOString() }
        : undefined,
    );
    if (!value) return null;
    await this.js.publish(names.deliverySubject(value.workspace_id), JSON.stringify(jobOf(value)), {
      msgID: `${id}.${value.round}`,
    });
    return value;
  }

  /** Changes a delivery's record with compare-and-set; `change` returns undefined to leave it. */
  async update(
    id: string,
    change: (current: DeliveryRecord) => DeliveryRecord | undefined,
  ): Promise<DeliveryRecord | null> {
    const { value } = await updateJson<DeliveryRecord>(this.bucket, id, (current) => {
      if (!current) return undefined;
      const next = change(current);
      return next && { ...next, updated_at: new Date().toISOString() };
    });
    return value;
  }
}

function jobOf(record: DeliveryRecord): DeliveryJob {
  const { id, render_id, workspace_id, webhook_url, body, round, unsigned } = record;
  return { id, render_id, workspace_id, webhook_url, body, round, ...(unsigned ? { unsigned } : {}) };
}
