// The delivery role: one delivery actor per delivery of a DELIVERIES job, resumed from its KV record.
import type { JetStreamClient } from '@nats-io/jetstream';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  deliveryMachine,
  type AttemptOutcome,
  type DeliveryOutput,
  type RecordAttemptInput,
  type SendWebhookInput,
} from '../../actors/delivery.machine.ts';
import type { Config } from '../config.ts';
import {
  jsonMessage,
  logConsumeError,
  startConsumeLoop,
  type Delivery,
  type Disposition,
} from '../jetstream/consume.ts';
import { DELIVERY_ACK_WAIT_SECONDS, names } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../workspaces/workspace.ts';
import type { DeliveryJob, DeliveryQueue, DeliveryRecord } from './records.ts';
import { sendWebhook } from './send.ts';
import { destinationOf, FairShares } from './shares.ts';
import { metrics } from '../metrics.ts';
import { endSpan, inSpan, startSpan } from '../tracing.ts';
import { carrierOf } from '../jetstream/trace-headers.ts';
import type { RenderRecords } from '../renders/records.ts';

/** What a delivery worker needs. */
export interface DeliveryWorkerDeps extends Omit<DeliveryMessageDeps, 'sendWebhook'> {
  js: JetStreamClient;
}

/** What handling delivery jobs needs; the POST is passed in, so tests need no receiver. */
export interface DeliveryMessageDeps {
  config: Pick<Config, 'allowPrivateTargets' | 'webhookRetrySchedule'>;
  log: Logger;
  deliveries: Pick<DeliveryQueue, 'get' | 'update'>;
  /** Read at every attempt, so a rotated secret key signs the attempts after the rotation. */
  workspaces: Pick<WorkspaceStore, 'get'>;
  /** Where a delivered webhook is written into its render's timeline. */
  renders?: Pick<RenderRecords, 'addStep'>;
  sendWebhook: typeof sendWebhook;
  /** The process's slots shared between workspaces and destinations; by default DELIVERY_CONCURRENCY of them. */
  shares?: FairShares;
}

/** A running delivery worker. */
export interface DeliveryWorker {
  stop(): Promise<void>;
}

/** Deliveries sent at once by one process. */
const DELIVERY_CONCURRENCY = 16;
/**
 * Slots a workspace or a destination that is already sending never takes (FairShares): a webhook
 * of anyone else starts at once while others' receivers stall.
 */
const DELIVERY_RESERVE = 4;
/** How long a delivery over its share waits before it is tried again (no attempt is counted), and its jitter. */
const OVER_SHARE_DELAY_MS = 1000;
const OVER_SHARE_JITTER_MS = 500;
/** Deliveries of a job whose record cannot be found (about an hour of retries) before it is terminated and logged. */
const MISSING_RECORD_PATIENCE = 120;

/** Reads a delivery job: one without its id, render, workspace, address, body or round is terminated. */
export const decodeDeliveryJob = jsonMessage<DeliveryJob>({
  id: 'string',
  render_id: 'string',
  workspace_id: 'string',
  webhook_url: 'string',
  body: 'string',
  round: 'number',
});

/** The handler of the DELIVERIES stream: each delivery of a job is one attempt. */
export function deliveryMessages(deps: DeliveryMessageDeps) {
  const { config, log, deliveries, workspaces } = deps;
  const policy = { allowPrivate: config.allowPrivateTargets };
  const shares = deps.shares ?? new FairShares(DELIVERY_CONCURRENCY, DELIVERY_RESERVE);

  // Changes the record only while it is still in the job's round: a redrive or replay started a new one.
  const settle = (job: DeliveryJob, change: (current: DeliveryRecord) => DeliveryRecord) =>
    deliveries.update(job.id, (current) => (current.round === job.round ? change(current) : undefined));

  // The machine's steps, for this job.
  const deliveryActors = (job: DeliveryJob) => {
    // The timestamp the last attempt sent and signed, recorded with it (the dashboard shows its headers).
    let timestamp: number | undefined;
    return {
      sendWebhook: fromPromise<AttemptOutcome, SendWebhookInput>(async () => {
        const workspace = await workspaces.get(job.workspace_id);
        if (!workspace) return { outcome: 'refused', error: `workspace ${job.workspace_id} no longer exists` };
        timestamp = Math.floor(Date.now() / 1000);
        return deps.sendWebhook(
          {
            id: job.id,
            webhookUrl: job.webhook_url,
            body: job.body,
            secretKey: workspace.secret_key,
            timestamp,
            ...(job.unsigned ? { unsigned: true } : {}),
          },
          policy,
        );
      }),
      recordAttempt: fromPromise<void, RecordAttemptInput>(async ({ input: { attempt, result } }) => {
        await settle(job, (current) => ({
          ...current,
          attempts: attempt,
          ...(timestamp !== undefined ? { last_attempt_at: timestamp } : {}),
          ...(result.outcome === 'delivered' ? {} : { last_error: result.error }),
        }));
        metrics.webhookAttempts.inc({ outcome: result.outcome });
        log.info(
          {
            delivery_id: job.id,
            render_id: job.render_id,
            attempt,
            outcome: result.outcome,
            status: 'status' in result ? result.status : undefined,
          },
          'webhook attempt',
        );
      }),
    };
  };

  /** Runs one delivery actor from the recorded attempts to its verdict. */
  const runDelivery = (job: DeliveryJob, record: DeliveryRecord): Promise<DeliveryOutput> => {
    const actor = createActor(deliveryMachine.provide({ actors: deliveryActors(job) }), {
      input: {
        deliveryId: job.id,
        attempts: record.attempts,
        schedule: config.webhookRetrySchedule,
        lastError: record.last_error,
      },
    });
    const output = toPromise(actor);
    actor.start();
    return output;
  };

  /** One delivery within its share: resumed from its record, one attempt, its verdict recorded. */
  const handleDelivery = async (delivery: Delivery<DeliveryJob>): Promise<Disposition> => {
    const job = delivery.message;
    const record = await deliveries.get(job.id);
    if (!record) {
      // The record is written before its job is published, so it will be there: never ack the job away.
      if (delivery.deliveryCount >= MISSING_RECORD_PATIENCE) {
        log.error(
          { delivery_id: job.id, render_id: job.render_id, deliveries: delivery.deliveryCount },
          'webhook job has no delivery record; terminated',
        );
        return { kind: 'term', reason: 'no delivery record' };
      }
      log.warn(
        { delivery_id: job.id, render_id: job.render_id, deliveries: delivery.deliveryCount },
        'webhook job before its delivery record; retried',
      );
      return { kind: 'retry', delayMs: Math.min(30_000, 1000 * delivery.deliveryCount) };
    }
    // A job of an older round (a redrive or replay started a new one), or a delivery already ended.
    if (record.round !== job.round || record.status === 'delivered' || record.status === 'dead') return { kind: 'ack' };
    // Each attempt joins the trace of the render it announces (docs/operations.md).
    const span = startSpan(
      'webhook delivery',
      carrierOf(delivery.header),
      { 'shutterbus.delivery_id': job.id, 'shutterbus.render_id': job.render_id },
      'consumer',
    );
    const output = await inSpan(span, () => runDelivery(job, record));
    endSpan(span, output.status === 'delivered' ? undefined : output.last_error);
    if (output.status === 'retryLater') {
      await settle(job, (current) => ({
        ...current,
        status: 'backing_off',
        attempts: output.attempts,
        last_error: output.last_error,
      }));
      return { kind: 'retry', delayMs: output.delayMs };
    }
    await settle(job, (current) => ({
      ...current,
      status: output.status,
      attempts: output.attempts,
      ...(output.status === 'dead' && output.last_error ? { last_error: output.last_error } : {}),
    }));
    if (output.status === 'delivered')
      await deps.renders
        ?.addStep(job.render_id, 'delivered')
        .catch((err) => log.warn({ err, render_id: job.render_id }, 'timeline not recorded'));
    if (output.status === 'dead') metrics.webhookDeadLetters.inc();
    if (output.status === 'dead')
      log.warn(
        { delivery_id: job.id, render_id: job.render_id, attempts: output.attempts, last_error: output.last_error },
        'webhook dead-lettered',
      );
    return { kind: 'ack' };
  };

  return async (delivery: Delivery<DeliveryJob>): Promise<Disposition> => {
    const job = delivery.message;
    // Over its workspace's or its destination's share: back to the stream at once, the slot free
    // for someone else's webhook, before anything is read for it.
    const claim = shares.claim({ workspace: job.workspace_id, destination: destinationOf(job.webhook_url) });
    if (!claim)
      return { kind: 'retry', delayMs: OVER_SHARE_DELAY_MS + Math.floor(Math.random() * OVER_SHARE_JITTER_MS) };
    try {
      return await handleDelivery(delivery);
    } finally {
      claim.release();
    }
  };
}

/** Starts pulling delivery jobs; each delivery of a job is one attempt. */
export async function startDeliveryWorker(deps: DeliveryWorkerDeps): Promise<DeliveryWorker> {
  const { js, log } = deps;
  const loop = await startConsumeLoop({
    consumer: await js.consumers.get(names.deliveryStream, names.deliveryConsumer),
    concurrency: DELIVERY_CONCURRENCY,
    ackWaitSeconds: DELIVERY_ACK_WAIT_SECONDS,
    maxDeliver: Number.POSITIVE_INFINITY,
    decode: decodeDeliveryJob,
    handle: deliveryMessages({ ...deps, sendWebhook }),
    onError: logConsumeError(log, 'delivery'),
  });
  return { stop: () => loop.stop() };
}
