// The delivery role: one delivery actor per job of the DELIVERIES stream, resumed from its KV record.
import type { JetStreamClient } from '@nats-io/jetstream';
import { createActor, fromPromise } from 'xstate';
import { deliveryMachine, type DeliveryOutput, type SendWebhookInput } from '../../actors/delivery.machine.ts';
import type { Config } from '../config.ts';
import { logConsumeError, startConsumeLoop, type ConsumeLoop, type Delivery, type Disposition } from '../jetstream/consume.ts';
import { DELIVERY_ACK_WAIT_SECONDS, names } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import type { WorkspaceStore } from '../workspaces/workspace.ts';
import type { DeliveryJob, DeliveryQueue, DeliveryRecord } from './records.ts';
import { sendWebhook, type AttemptResult } from './send.ts';

/** What a delivery worker needs. */
export interface DeliveryWorkerDeps {
  config: Config;
  log: Logger;
  js: JetStreamClient;
  deliveries: DeliveryQueue;
  /** Read at every attempt, so a rotated secret key signs the attempts after the rotation. */
  workspaces: WorkspaceStore;
}

/** A running delivery worker. */
export interface DeliveryWorker {
  stop(): Promise<void>;
}

/** Where one run of the actor stopped: at an end, or parked in `backingOff` until `delayMs` passed. */
type RunResult = { kind: 'final'; output: DeliveryOutput } | { kind: 'parked'; attempts: number; delayMs: number; last_error?: string };

const decoder = new TextDecoder();
/** Deliveries sent at once by one process. */
const DELIVERY_CONCURRENCY = 16;
/** Deliveries of a job whose record cannot be found (about an hour of retries) before it is terminated and logged. */
const MISSING_RECORD_PATIENCE = 120;

/** Starts pulling delivery jobs; each delivery of a job is one attempt. */
export async function startDeliveryWorker(deps: DeliveryWorkerDeps): Promise<DeliveryWorker> {
  const { config, log, js, deliveries, workspaces } = deps;
  const policy = { allowPrivate: config.allowPrivateTargets };

  const attemptOnce = async (job: DeliveryJob, attempt: number): Promise<AttemptResult> => {
    const workspace = await workspaces.get(job.workspace_id);
    if (!workspace) return { outcome: 'refused', error: `workspace ${job.workspace_id} no longer exists` };
    const result = await sendWebhook({ id: job.id, webhookUrl: job.webhook_url, body: job.body, secretKey: workspace.secret_key }, policy);
    // Recorded before the verdict is acted on, so a crash from here on resumes at the next attempt.
    await deliveries.update(job.id, (current) =>
      current.round !== job.round
        ? undefined
        : { ...current, attempts: attempt, ...(result.outcome === 'delivered' ? {} : { last_error: result.error }) },
    );
    log.info({ delivery_id: job.id, render_id: job.render_id, attempt, outcome: result.outcome, status: 'status' in result ? result.status : undefined }, 'webhook attempt');
    return result;
  };

  /** Runs the actor from the recorded attempt count until it ends or enters `backingOff`. */
  const runActor = (job: DeliveryJob, attempts: number): Promise<RunResult> =>
    new Promise((resolve, reject) => {
      const machine = deliveryMachine.provide({
        actors: { sendWebhook: fromPromise<AttemptResult, SendWebhookInput>(({ input }) => attemptOnce(job, input.attempt)) },
      });
      const actor = createActor(machine, { input: { deliveryId: job.id, attempts, schedule: config.webhookRetrySchedule } });
      actor.subscribe({
        next: (snapshot) => {
          if (snapshot.status === 'done') resolve({ kind: 'final', output: snapshot.output! });
          else if (snapshot.matches('backingOff')) {
            const { attempts: made, delayMs = 0, lastResult } = snapshot.context;
            actor.stop();
            resolve({ kind: 'parked', attempts: made, delayMs, last_error: lastResult && 'error' in lastResult ? lastResult.error : undefined });
          }
        },
        error: reject,
      });
      actor.start();
    });

  const settle = (job: DeliveryJob, change: (current: DeliveryRecord) => DeliveryRecord) =>
    deliveries.update(job.id, (current) => (current.round === job.round ? change(current) : undefined));

  const handle = async (delivery: Delivery): Promise<Disposition> => {
    const job = JSON.parse(decoder.decode(delivery.data)) as DeliveryJob;
    const record = await deliveries.get(job.id);
    if (!record) {
      // The record is written before its job is published, so it will be there: never ack the job away.
      if (delivery.deliveryCount >= MISSING_RECORD_PATIENCE) {
        log.error({ delivery_id: job.id, render_id: job.render_id, deliveries: delivery.deliveryCount }, 'webhook job has no delivery record; terminated');
        return { kind: 'term', reason: 'no delivery record' };
      }
      log.warn({ delivery_id: job.id, render_id: job.render_id, deliveries: delivery.deliveryCount }, 'webhook job before its delivery record; retried');
      return { kind: 'retry', delayMs: Math.min(30_000, 1000 * delivery.deliveryCount) };
    }
    // A job of an older round (a redrive or replay started a new one), or a delivery already ended.
    if (record.round !== job.round || record.status === 'delivered' || record.status === 'dead') return { kind: 'ack' };
    if (record.attempts > config.webhookRetrySchedule.length) {
      // The last attempt was made and recorded, then the process died before recording the end.
      await settle(job, (current) => ({ ...current, status: 'dead' }));
      return { kind: 'ack' };
    }
    const result = await runActor(job, record.attempts);
    if (result.kind === 'parked') {
      await settle(job, (current) => ({ ...current, status: 'backing_off', attempts: result.attempts, last_error: result.last_error }));
      return { kind: 'retry', delayMs: result.delayMs };
    }
    const { output } = result;
    await settle(job, (current) => ({ ...current, status: output.status, attempts: output.attempts, ...(output.last_error ? { last_error: output.last_error } : {}) }));
    if (output.status === 'dead') log.warn({ delivery_id: job.id, render_id: job.render_id, attempts: output.attempts, last_error: output.last_error }, 'webhook dead-lettered');
    return { kind: 'ack' };
  };

  const consumer = await js.consumers.get(names.deliveryStream, names.deliveryConsumer);
  const loop: ConsumeLoop = await startConsumeLoop({
    consumer,
    concurrency: DELIVERY_CONCURRENCY,
    ackWaitSeconds: DELIVERY_ACK_WAIT_SECONDS,
    maxDeliver: Number.POSITIVE_INFINITY,
    handle,
    onError: logConsumeError(log, 'delivery'),
  });
  return { stop: () => loop.stop() };
}
