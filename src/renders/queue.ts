// The ingress side of the render stream: publish a request, then wait for its result without polling.
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { ServiceError } from '../errors.ts';
import { unavailable } from '../jetstream/connection.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import { isFinal, type RenderRequest } from '../domain/render.ts';
import { listenDone, listenOwnDone, type RenderResult } from './done.ts';
import { PENDING_REVISION_HEADER, type RenderRecords } from './records.ts';
import { traceHeaders } from '../jetstream/trace-headers.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { sealRequestSecrets } from '../secrets/request-secrets.ts';

/** How often the backlog figure behind the 503 answer is refreshed. */
const BACKLOG_REFRESH_MS = 1000;
/** A publish is tried this often, each waiting this long for its acknowledgement, before the caller gets a 503. */
const PUBLISH_ATTEMPTS = 3;
const PUBLISH_TIMEOUT_MS = 3000;
/** What submit wrote of a request published without a pending record: nothing, at revision 0. */
const NO_RECORD = { revision: 0 };

/** Publishes render requests and hands back their results. */
export class RenderQueue {
  private backlog = { value: 0, readAt: 0 };

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly topology: Topology,
    readonly records: RenderRecords,
    private readonly queueLimit: number,
    /** Seals the request's secret options before they enter the stream (src/secrets/request-secrets.ts). */
    private readonly sealer?: Sealer,
  ) {}

  /**
   * Accepts a request: records it as pending and publishes it durably, deduplicated by its render
   * id. A synchronous request without a cache entry is published without a pending record: its
   * render id reaches its caller only with its answer, and no other view waits on it, so nobody can
   * ask for its record before the render writes it (or its caller, giving up, ends it).
   */
  async submit(request: RenderRequest): Promise<void> {
    // Read only when stale: otherwise the request's first write leaves in the same flush as
    // whatever was sent just before it (submitAndWait's subscription).
    if (Date.now() - this.backlog.readAt > BACKLOG_REFRESH_MS) await this.readBacklog();
    this.refuseWhenFull();
    try {
      const unseen = request.answer_by !== undefined && request.cache === undefined;
      const pending = unseen ? NO_RECORD : await this.records.createPending(request);
      await this.publish(request, pending?.revision);
    } catch (err) {
      throw unavailable(err);
    }
  }

  // A publish whose acknowledgement was lost (a node died, a leader was being elected) may have been
  // stored: sending it again under the same msgID is deduplicated by the stream.
  // `pendingRevision`: the pending record's when this submit wrote it, 0 when it wrote none
  // (PENDING_REVISION_HEADER).
  private async publish(request: RenderRequest, pendingRevision?: number): Promise<void> {
    const payload = JSON.stringify(sealRequestSecrets(request, this.sealer));
    let headers = traceHeaders(request.trace);
    if (pendingRevision !== undefined)
      (headers ??= natsHeaders()).set(PENDING_REVISION_HEADER, String(pendingRevision));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.js.publish(names.renderSubject(request.workspace_id), payload, {
          msgID: request.render_id,
          timeout: PUBLISH_TIMEOUT_MS,
          headers,
        });
        return;
      } catch (err) {
        if (attempt >= PUBLISH_ATTEMPTS || !isNatsUnavailable(err)) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      }
    }
  }

  /**
   * Submits and waits for the render to end, until the request's `answer_by`. The result arrives as
   * a message on the render's own subject, or on this connection's own for a render without a
   * cache entry (listenOwnDone), or in memory when this process rendered it; at the deadline the
   * render is abandoned unless it ended (then its record answers), so a caller answered with an
   * error is never charged. An image announced before it was stored (the store out of reach) is
   * the answer when `takesUnstored` and it came inline; otherwise the render is abandoned at once
   * the same way.
   */
  async submitAndWait(request: RenderRequest, takesUnstored = false): Promise<RenderResult> {
    // Only its caller waits for a render without a cache entry: it is told on this connection's own subject.
    const own = request.cache === undefined ? listenOwnDone(this.nc, request.render_id) : undefined;
    const done = own ?? listenDone(this.nc, request.render_id);
    try {
      await this.submit(own ? { ...request, done_to: own.subject } : request);
      const result = await done.first(request.answer_by! - Date.now());
      if (result && (!result.unstored || (takesUnstored && result.image))) return result;
      const record = await this.records.abandon(request, 'temporary_unavailable').catch((err) => {
        throw unavailable(err);
      });
      if (record.status === 'succeeded' && !record.abandoned) return { record };
      throw unavailable();
    } finally {
      done.stop();
    }
  }

  /** Waits for a render someone else submitted (a concurrent first view of a cached URL): its stored end. */
  async waitFor(renderId: string, waitSeconds: number): Promise<RenderResult> {
    // An image announced before it is stored has no file to redirect to: the stored end is waited for.
    const done = listenDone(this.nc, renderId, (heard) => !heard.unstored);
    try {
      const known = await this.records.get(renderId);
      if (known && isFinal(known)) return { record: known };
      const result = await done.first(waitSeconds * 1000);
      if (result) return result;
      const latest = await this.records.get(renderId);
      if (latest && isFinal(latest)) return { record: latest };
      throw unavailable();
    } finally {
      done.stop();
    }
  }

  /** Reads how many renders wait in the stream, for refuseWhenFull. */
  private async readBacklog(): Promise<void> {
    this.backlog.readAt = Date.now();
    try {
      const info = await this.topology.jsm.consumers.info(names.renderStream, names.renderConsumer);
      this.backlog.value = info.num_pending + info.num_ack_pending;
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Refuses new work with 503 when the stream already holds more waiting renders than allowed. */
  private refuseWhenFull(): void {
    if (this.backlog.value >= this.queueLimit) {
      throw new ServiceError(
        'temporary_unavailable',
        {},
        { message: 'The render queue is full; retry shortly.', retryAfter: 5 },
      );
    }
  }
}
