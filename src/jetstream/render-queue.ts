// The ingress side of the render stream: publish a request, then wait for its result without polling.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { ServiceError } from '../errors.ts';
import { names, type Topology } from './topology.ts';
import { isFinal, readRenderDone, type RenderRecord, type RenderRecords, type RenderRequest, type RenderResult } from './render-records.ts';


/** How often the backlog figure behind the 503 answer is refreshed. */
const BACKLOG_REFRESH_MS = 1000;

/** Publishes render requests and hands back their results. */
export class RenderQueue {
  private backlog = { value: 0, readAt: 0 };

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly topology: Topology,
    readonly records: RenderRecords,
    private readonly queueLimit: number,
  ) {}

  /** Accepts a request: records it as pending and publishes it durably, deduplicated by its render id. */
  async submit(request: RenderRequest): Promise<void> {
    await this.refuseWhenFull();
    try {
      await this.records.createPending(request);
      await this.js.publish(names.renderSubject(request.workspace_id), JSON.stringify(request), {
        msgID: request.render_id,
      });
    } catch (err) {
      throw new ServiceError('temporary_unavailable', {}, { cause: err, retryAfter: 5 });
    }
  }

  /**
   * Submits and waits for the render to end. The result arrives as a message on the render's
   * own subject; the record is read once more at the deadline in case that message was missed.
   */
  async submitAndWait(request: RenderRequest, waitSeconds: number): Promise<RenderResult> {
    return this.awaitResult(request.render_id, waitSeconds, () => this.submit(request));
  }

  /** Waits for a render someone else submitted (a concurrent first view of a cached URL). */
  async waitFor(renderId: string, waitSeconds: number): Promise<RenderResult> {
    return this.awaitResult(renderId, waitSeconds, async () => {
      const known = await this.records.get(renderId);
      return known && isFinal(known) ? { record: known } : undefined;
    });
  }

  // Subscribes before `start`, so a result announced in between cannot be missed.
  private async awaitResult(
    renderId: string,
    waitSeconds: number,
    start: () => Promise<RenderResult | undefined | void>,
  ): Promise<RenderResult> {
    const done = this.nc.subscribe(names.renderDone(renderId), { max: 1 });
    try {
      const already = await start();
      if (already) return already;
      const result = await firstResult(done, waitSeconds * 1000);
      if (result) return result;
      const latest = await this.records.get(renderId);
      if (latest && isFinal(latest)) return { record: latest };
      throw new ServiceError('timeout_error');
    } finally {
      done.unsubscribe();
    }
  }

  /** Refuses new work with 503 when the stream already holds more waiting renders than allowed. */
  private async refuseWhenFull(): Promise<void> {
    const now = Date.now();
    if (now - this.backlog.readAt > BACKLOG_REFRESH_MS) {
      this.backlog.readAt = now;
      try {
        const info = await this.topology.jsm.consumers.info(names.renderStream, names.renderConsumer);
        this.backlog.value = info.num_pending + info.num_ack_pending;
      } catch (err) {
        throw new ServiceError('temporary_unavailable', {}, { cause: err, retryAfter: 5 });
      }
    }
    if (this.backlog.value >= this.queueLimit) {
      throw new ServiceError('temporary_unavailable', {}, { message: 'The render queue is full; retry shortly.', retryAfter: 5 });
    }
  }
}

async function firstResult(subscription: Subscription, waitMs: number): Promise<RenderResult | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), waitMs);
  });
  const next = (async () => {
    for await (const message of subscription) return readRenderDone(message);
    return null;
  })();
  try {
    return await Promise.race([next, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
