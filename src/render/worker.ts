// The render role: one render actor per request from the stream, its outcome recorded, announced and settled.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createActor, fromPromise, toPromise } from 'xstate';
import { capturePageOn, renderMachine, type RenderOutput, type StoreImageInput, type StoredImage } from '../../actors/render.machine.ts';
import type { Config } from '../config.ts';
import { errorTable } from '../errors.ts';
import { startConsumeLoop, type ConsumeLoop, type Delivery, type Disposition } from '../jetstream/consume.ts';
import { isFinal, REPLAY_HEADER, renderDoneMessage, type RenderRecord, type RenderRecords, type RenderRequest } from '../jetstream/render-records.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import { DEFAULT_FILE_LIFETIME_SECONDS, newFileName, type FileStore } from '../storage/store.ts';
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
  /** Settles the quota of an ended render; must be idempotent, as it runs again on redelivery or replay. */
  settle: (record: RenderRecord) => Promise<void>;
  /** Queues the webhook of an ended render that asked for one; idempotent per render, as it runs again on redelivery. */
  enqueueWebhook?: (record: RenderRecord) => Promise<void>;
}

/** A running render worker. */
export interface RenderWorker {
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

/** Starts pulling render requests and running them, `config.renderConcurrency` at a time. */
export async function startRenderWorker(deps: RenderWorkerDeps): Promise<RenderWorker> {
  const { config, log, nc, js, records, store, browser } = deps;

  const announce = (record: RenderRecord, image?: Buffer) => nc.publish(names.renderDone(record.render_id), ...renderDoneMessage(record, image));

  const finish = async (request: RenderRequest, change: (current: RenderRecord) => RenderRecord, image?: Buffer) => {
    const { record, changed } = await records.transition(request, change);
    await deps.settle(record);
    await deps.enqueueWebhook?.(record);
    // Only the render that made this record has its image in hand.
    announce(record, changed ? image : undefined);
    return record;
  };

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
          await store.put(fileName, input.observation.image, input.options.format);
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
    const known = await records.get(request.render_id);
    if (known && delivery.header(REPLAY_HEADER) && isFinal(known)) {
      // An operator's replay of an ended render: render it again into the same record. The quota
      // reservation was settled the first time, so settling again charges nothing.
      await records.reopen(request.render_id);
    } else if (known && isFinal(known)) {
      // A redelivery of a render that already ended: settle and answer again, render nothing.
      await deps.settle(known);
      await deps.enqueueWebhook?.(known);
      announce(known);
      return { kind: 'ack' };
    }
    await records.transition(request, (current) => ({ ...current, status: 'rendering', started_at: new Date().toISOString() }));
    const startedAt = performance.now();
    const { output, image } = await runActor(request, delivery.signal);
    metrics.renders.inc({ status: output.status, error_code: output.status === 'failed' ? output.error_code : '' });
    metrics.renderDuration.observe((performance.now() - startedAt) / 1000);
    const finishedAt = new Date().toISOString();
    if (output.status === 'succeeded') {
      await finish(request, (current) => ({
        ...current,
        status: 'succeeded',
        finished_at: finishedAt,
        file_name: output.stored.file_name,
        size_bytes: output.stored.size_bytes,
      }), image);
      return { kind: 'ack' };
    }
    if (output.retryable && !delivery.isLastDelivery && !delivery.signal.aborted) {
      log.warn({ render_id: request.render_id, delivery: delivery.deliveryCount, error_code: output.error_code }, 'render will be retried');
      return { kind: 'retry', delayMs: 1000 * delivery.deliveryCount };
    }
    if (delivery.signal.aborted) return { kind: 'retry', delayMs: 0 };
    await finish(request, (current) => ({
      ...current,
      status: 'failed',
      finished_at: finishedAt,
      error_code: output.error_code,
      error_message: output.error_message,
      error_details: output.details,
    }));
    return { kind: 'ack' };
  };

  const consumer = await js.consumers.get(names.renderStream, names.renderConsumer);
  const loop: ConsumeLoop = await startConsumeLoop({
    consumer,
    concurrency: config.renderConcurrency,
    ackWaitSeconds: config.renderAckWaitSeconds,
    maxDeliver: config.renderMaxDeliver,
    handle,
    onError: (err, msg) => log.error({ err, stream_seq: msg?.seq }, msg ? 'render handler failed' : 'render pull failed'),
  });

  // A request whose every delivery died with its worker ends as a failed render, not in limbo.
  // The advisories wait in a stream, so one raised while no worker ran is handled by the next.
  const giveUp = async (delivery: Delivery): Promise<Disposition> => {
    const advisory = JSON.parse(decoder.decode(delivery.data)) as { stream_seq: number; deliveries: number };
    const stored = await deps.topology.jsm.streams.getMessage(names.renderStream, { seq: advisory.stream_seq }).catch(() => null);
    if (!stored) return { kind: 'ack' };
    const request = JSON.parse(decoder.decode(stored.data)) as RenderRequest;
    log.error({ render_id: request.render_id, deliveries: advisory.deliveries }, 'render gave up after its last delivery');
    await finish(request, (current) => ({
      ...current,
      status: 'failed',
      finished_at: new Date().toISOString(),
      error_code: 'internal_application_error',
      error_message: errorTable.internal_application_error.message,
    }));
    return { kind: 'ack' };
  };
  const giveUps = await startConsumeLoop({
    consumer: await js.consumers.get(names.renderGiveUpStream, names.renderGiveUpConsumer),
    concurrency: 1,
    ackWaitSeconds: 30,
    maxDeliver: Number.POSITIVE_INFINITY,
    handle: giveUp,
    onError: (err) => log.error({ err }, 'max-deliveries advisory not handled'),
  });

  return {
    async stop() {
      await giveUps.stop();
      await loop.stop();
    },
  };
}
