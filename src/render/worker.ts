// The render role: one render actor per request from the stream, its outcome recorded, announced and settled.
import { hostname } from 'node:os';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createActor, fromPromise, toPromise } from 'xstate';
import { capturePageOn, renderMachine, type RenderOutput, type StoreImageInput, type StoredImage } from '../../actors/render.machine.ts';
import type { Config } from '../config.ts';
import { errorTable, ServiceError } from '../errors.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { retryWhile } from '../retry.ts';
import { logConsumeError, startConsumeLoop, type ConsumeLoop, type Delivery, type Disposition } from '../jetstream/consume.ts';
import { isFinal, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import { REPLAY_HEADER, renderDoneMessage, type RenderRecords } from '../jetstream/render-records.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import { DEFAULT_FILE_LIFETIME_SECONDS, newFileName } from '../domain/files.ts';
import { isStoreUnavailable, type FileStore } from '../storage/store.ts';
import type { BrowserHost } from './browser.ts';

/** What a render worker needs. */
export interface RenderWorkerDeps {
  config: Config;
  log: Logger;
  nc: NatsConnection;
  js: JetStreamClient;
  topology: Topology;
  records: RenderRecords;
  store: FileStore;
  browser: BrowserHost;
  /**
   * Settles the quota of an ended render; must be idempotent, as it runs again on redelivery or
   * replay. `firstSettlement`: this worker just ended the render, so it was never settled before.
   */
  settle: (record: RenderRecord, firstSettlement: boolean) => Promise<void>;
  /** Queues the webhook of an ended render that asked for one; idempotent per render, as it runs again on redelivery. */
  enqueueWebhook?: (record: RenderRecord) => Promise<void>;
}

/** A running render worker. */
export interface RenderWorker {
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

/** How long an asynchronous render waits out an outage of NATS or the store before its delivery is retried. */
const OUTAGE_PATIENCE_MS = 3 * 60_000;

/** A render that could not end before its caller was answered. */
const LATE: Pick<RenderRecord, 'error_code' | 'error_message'> = {
  error_code: 'temporary_unavailable',
  error_message: 'The render could not finish before its caller was answered; retry shortly.',
};

/** Starts pulling render requests and running them, `config.renderConcurrency` at a time. */
export async function startRenderWorker(deps: RenderWorkerDeps): Promise<RenderWorker> {
  const { config, log, nc, js, records, store, browser } = deps;
  const worker = `${hostname()}:${process.pid}`;

  const announce = (record: RenderRecord, image?: Buffer) => nc.publish(names.renderDone(record.render_id), ...renderDoneMessage(record, image));

  // Until when a render waits out an outage: its caller's deadline, or a few minutes when nobody waits.
  const patience = (request: RenderRequest) => (request.answer_by ?? Date.now() + OUTAGE_PATIENCE_MS) - 1000;
  const throughNatsOutage = <T>(request: RenderRequest, step: () => Promise<T>) => retryWhile(step, isNatsUnavailable, patience(request));

  /** Records the end (unless it ended already), settles it, queues its webhook and announces it. */
  const finish = async (request: RenderRequest, change: (current: RenderRecord) => RenderRecord, options: { image?: Buffer; replay?: boolean } = {}) => {
    const { record, changed } = await throughNatsOutage(request, () => records.transition(request, change));
    await throughNatsOutage(request, () => deps.settle(record, changed && !options.replay));
    if (!record.abandoned) await throughNatsOutage(request, async () => deps.enqueueWebhook?.(record));
    // Only the render that made this record has its image in hand.
    announce(record, changed ? options.image : undefined);
    return record;
  };

  const failed = (fields: Pick<RenderRecord, 'error_code' | 'error_message' | 'error_details'>) => (current: RenderRecord): RenderRecord => ({
    ...current,
    status: 'failed',
    finished_at: new Date().toISOString(),
    ...fields,
  });

  // One machine per request: the stored file's lifetime depends on it, and its image is kept for the announcement.
  const runActor = async (request: RenderRequest, signal: AbortSignal): Promise<{ output: RenderOutput; image?: Buffer }> => {
    let image: Buffer | undefined;
    const machine = renderMachine.provide({
      actors: {
        capturePage: capturePageOn(browser),
        storeImage: fromPromise<StoredImage, StoreImageInput>(async ({ input }) => {
          // A cached file lives as long as its cache entry; any other as long as the render records.
          const lifetime = request.cache?.ttl ?? DEFAULT_FILE_LIFETIME_SECONDS;
          const fileName = newFileName(input.options.format, new Date(Date.now() + lifetime * 1000));
          // The image is in hand: an outage of the store is waited out rather than rendering again.
          await retryWhile(() => store.put(fileName, input.observation.image, input.options.format), isStoreUnavailable, patience(request), signal).catch((err) => {
            throw isStoreUnavailable(err) ? new ServiceError('temporary_unavailable', {}, { cause: err }) : err;
          });
          image = input.observation.image;
          return { file_name: fileName, size_bytes: image.length };
        }),
      },
    });
    const actor = createActor(machine, { input: { renderId: request.render_id, options: request.options, workspaceId: request.workspace_id } });
    // Cancelling (not stopping) lets the machine abort the capture and still end with an output.
    const cancel = () => actor.send({ type: 'render.cancel' });
    signal.addEventListener('abort', cancel, { once: true });
    try {
      actor.start();
      actor.send({ type: 'render.start' });
      return { output: await toPromise(actor), image };
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };

  const handle = async (delivery: Delivery): Promise<Disposition> => {
    const request = JSON.parse(decoder.decode(delivery.data)) as RenderRequest;
    const replay = Boolean(delivery.header(REPLAY_HEADER));
    const known = await records.get(request.render_id);
    if (known && replay && isFinal(known)) {
      // An operator's replay of an ended render: render it again into the same record. The quota
      // reservation was settled the first time, so settling again charges nothing.
      await records.reopen(request.render_id);
    } else if (known && isFinal(known)) {
      // A redelivery of a render that already ended (or was abandoned by its caller): settle and
      // answer again, render nothing.
      await deps.settle(known, false);
      if (!known.abandoned) await deps.enqueueWebhook?.(known);
      announce(known);
      return { kind: 'ack' };
    }
    const late = () => request.answer_by !== undefined && Date.now() >= request.answer_by;
    if (late()) {
      await finish(request, failed(LATE));
      return { kind: 'ack' };
    }
    await records.transition(request, (current) => ({ ...current, status: 'rendering', started_at: new Date().toISOString() }));
    const startedAt = performance.now();
    const { output, image } = await runActor(request, delivery.signal);
    const seconds = (performance.now() - startedAt) / 1000;
    metrics.renders.inc({ status: output.status, error_code: output.status === 'failed' ? output.error_code : '' });
    metrics.renderDuration.observe(seconds);
    const line = { render_id: request.render_id, workspace_id: request.workspace_id, worker, delivery: delivery.deliveryCount, ms: Math.round(seconds * 1000) };
    if (output.status === 'succeeded') {
      // Its caller was answered with an error meanwhile: the image is not handed out, nor charged.
      const change = late()
        ? failed(LATE)
        : (current: RenderRecord): RenderRecord => ({
            ...current,
            status: 'succeeded',
            finished_at: new Date().toISOString(),
            file_name: output.stored.file_name,
            size_bytes: output.stored.size_bytes,
          });
      const record = await finish(request, change, { image, replay });
      log.info({ ...line, outcome: record.status, error_code: record.error_code }, 'render ended');
      return { kind: 'ack' };
    }
    if (output.retryable && !delivery.isLastDelivery && !delivery.signal.aborted && !late()) {
      log.warn({ ...line, outcome: 'retry', error_code: output.error_code }, 'render will be retried');
      return { kind: 'retry', delayMs: 1000 * delivery.deliveryCount };
    }
    if (delivery.signal.aborted) return { kind: 'retry', delayMs: 0 };
    const record = await finish(request, failed({ error_code: output.error_code, error_message: output.error_message, error_details: output.details }), { replay });
    log.info({ ...line, outcome: record.status, error_code: record.error_code }, 'render ended');
    return { kind: 'ack' };
  };

  const consumer = await js.consumers.get(names.renderStream, names.renderConsumer);
  const loop: ConsumeLoop = await startConsumeLoop({
    consumer,
    concurrency: config.renderConcurrency,
    ackWaitSeconds: config.renderAckWaitSeconds,
    maxDeliver: config.renderMaxDeliver,
    handle,
    onError: logConsumeError(log, 'render'),
  });

  // A request whose every delivery died with its worker ends as a failed render, not in limbo.
  // The advisories wait in a stream, so one raised while no worker ran is handled by the next.
  const giveUp = async (delivery: Delivery): Promise<Disposition> => {
    const advisory = JSON.parse(decoder.decode(delivery.data)) as { stream_seq: number; deliveries: number };
    const stored = await deps.topology.jsm.streams.getMessage(names.renderStream, { seq: advisory.stream_seq }).catch(() => null);
    if (!stored) return { kind: 'ack' };
    const request = JSON.parse(decoder.decode(stored.data)) as RenderRequest;
    log.error({ render_id: request.render_id, workspace_id: request.workspace_id, deliveries: advisory.deliveries }, 'render gave up after its last delivery');
    await finish(request, failed({ error_code: 'internal_application_error', error_message: errorTable.internal_application_error.message }));
    return { kind: 'ack' };
  };
  const giveUps = await startConsumeLoop({
    consumer: await js.consumers.get(names.renderGiveUpStream, names.renderGiveUpConsumer),
    concurrency: 1,
    ackWaitSeconds: 30,
    maxDeliver: Number.POSITIVE_INFINITY,
    handle: giveUp,
    onError: logConsumeError(log, 'max-deliveries advisory'),
  });

  return {
    async stop() {
      await giveUps.stop();
      await loop.stop();
    },
  };
}
