// The render role: one render actor per request from the stream, its outcome recorded, announced and settled.
import { hostname } from 'node:os';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { RenderOutput } from '../../actors/render.machine.ts';
import type { Config } from '../config.ts';
import { RenderLog } from '../domain/render-log.ts';
import { isFinal, pendingRecord, withSteps, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import { errorTable } from '../errors.ts';
import {
  jsonMessage,
  logConsumeError,
  startConsumeLoop,
  type Delivery,
  type Disposition,
} from '../jetstream/consume.ts';
import type { Versioned } from '../jetstream/kv-json.ts';
import { carrierOf } from '../jetstream/trace-headers.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import { metrics } from '../metrics.ts';
import type { RenderBrowser } from '../render/browser/browser.ts';
import { requestCapture, type RequestCaptureDeps } from '../render/request-capture.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { openRequestSecrets } from '../secrets/request-secrets.ts';
import { endSpan, inSpan, startSpan } from '../tracing.ts';
import { ended, failed, renderOutcome, type OutcomeDeps, type RenderOutcome } from './outcome.ts';
import { storeFailureCapture } from './output.ts';
import { PENDING_REVISION_HEADER, REPLAY_HEADER } from './records.ts';
import { runRender, type RenderRun, type RunDeps } from './run.ts';

/** What a render worker needs. */
export interface RenderWorkerDeps extends Omit<RenderMessageDeps, 'capturePage'> {
  config: Config;
  browser: RenderBrowser;
  /** The egress proxy the browser is behind: a render with a proxy of its own gets a route on it. */
  egress?: RequestCaptureDeps['egress'];
  /** The workspaces' profiles, for renders with profile or save_profile. */
  profiles?: RequestCaptureDeps['profiles'];
}

/** What handling render messages needs; the page capture is passed in, so tests need no browser. */
export interface RenderMessageDeps extends OutcomeDeps, RunDeps {
  js: JetStreamClient;
  topology: Topology;
  /** Opens the request's sealed secret options (src/secrets/request-secrets.ts). */
  sealer?: Sealer;
}

/** A running render worker. */
export interface RenderWorker {
  stop(): Promise<void>;
}

/** Reads a render request: a message without its render id, workspace, creation time or options is terminated. */
export const decodeRenderRequest = jsonMessage<RenderRequest>({
  render_id: 'string',
  workspace_id: 'string',
  created_at: 'string',
  'options.format': 'string',
  'options.timeout': 'number',
});

/** A max-deliveries advisory: which request of the render stream ran out of deliveries. */
interface MaxDeliveriesAdvisory {
  stream_seq: number;
  deliveries: number;
}
const decodeAdvisory = jsonMessage<MaxDeliveriesAdvisory>({ stream_seq: 'number', deliveries: 'number' });

/** What one delivery's render came to, with what was observed around it. */
interface Observed {
  output: RenderOutput;
  /** Its timeline steps, and a failed render's page as it was when it failed, when it got far enough. */
  log: RenderLog;
  /** The fields of the render's log lines. */
  line: Record<string, unknown>;
}

/** What the steps of handling one delivery share: the worker's collaborators, how renders end, and its name in logs. */
interface WorkerContext {
  deps: RenderMessageDeps;
  outcome: RenderOutcome;
  worker: string;
}

/**
 * The record as the ingress left it (PENDING_REVISION_HEADER): pending at that revision, or none at
 * revision 0 (a synchronous request without a cache entry, RenderQueue.submit), for a first
 * delivery whose caller still waits. It can have changed since only if the publish failed after all
 * and the request was given back, and then the render's first write fails, reads the ended record
 * and keeps it (the render is answered and settled as ended). Any other delivery reads the record.
 */
function pendingAsWritten(
  delivery: Delivery<RenderRequest>,
  request: RenderRequest,
): Versioned<RenderRecord> | undefined {
  const header = delivery.header(PENDING_REVISION_HEADER);
  const revision = Number(header);
  if (delivery.deliveryCount !== 1 || header === undefined || !Number.isInteger(revision) || revision < 0)
    return undefined;
  // A caller who stopped waiting abandoned the record: reading it spares the render.
  if (request.answer_by !== undefined && Date.now() >= request.answer_by) return undefined;
  return { value: revision === 0 ? null : pendingRecord(request), revision };
}

/** The render this delivery is to run, or null when it ended already (answered again, nothing rendered). */
async function begin({ deps, outcome }: WorkerContext, delivery: Delivery<RenderRequest>): Promise<RenderRun | null> {
  // Secret options travel sealed; opened here for the render and never written back.
  const request = openRequestSecrets(delivery.message, deps.sealer);
  const replay = Boolean(delivery.header(REPLAY_HEADER));
  const read =
    (replay ? undefined : pendingAsWritten(delivery, request)) ?? (await deps.records.read(request.render_id));
  const known = read.value;
  if (known && isFinal(known) && !replay) {
    await outcome.repeat(request, known);
    return null;
  }
  const version: RenderRun['version'] = { known: read };
  if (known && isFinal(known)) {
    // An operator's replay of an ended render: render it again into the same record. The quota
    // reservation was settled the first time, so settling again charges nothing.
    await deps.records.reopen(request.render_id);
    version.known = undefined;
  }
  // A replay has no caller waiting: the original request's deadline passed long ago.
  return { request, answerBy: replay ? undefined : request.answer_by, version, early: { answered: false } };
}

/** Runs the render actor in its span, with the log its steps mark (and its failure capture goes on); counts and times it. */
async function observe(
  { deps, outcome, worker }: WorkerContext,
  run: RenderRun,
  delivery: Delivery<RenderRequest>,
): Promise<Observed> {
  const { request } = run;
  const startedAt = performance.now();
  // The render's span continues the trace of the request that asked for it (docs/operations.md).
  const span = startSpan(
    'render',
    carrierOf(delivery.header),
    { 'shutterbus.render_id': request.render_id, 'shutterbus.delivery': delivery.deliveryCount },
    'consumer',
  );
  const log = new RenderLog();
  log.mark('started');
  const output = await inSpan(span, () => runRender(deps, outcome, run, delivery, log));
  endSpan(span, output.status === 'succeeded' ? undefined : output.error_code);
  const seconds = (performance.now() - startedAt) / 1000;
  metrics.renders.inc({ status: output.status, error_code: output.status === 'succeeded' ? '' : output.error_code });
  metrics.renderDuration.observe(seconds);
  const line = {
    render_id: request.render_id,
    workspace_id: request.workspace_id,
    worker,
    delivery: delivery.deliveryCount,
    ms: Math.round(seconds * 1000),
  };
  return { output, log, line };
}

/** Ends the render as its actor decided: a retry later, or its outcome recorded, settled and announced. */
async function conclude(
  { deps, outcome }: WorkerContext,
  run: RenderRun,
  { output, log, line }: Observed,
): Promise<Disposition> {
  const { request, version } = run;
  const err = output.status === 'succeeded' ? undefined : output.cause;
  if (output.status === 'retryLater') {
    deps.log.warn({ ...line, outcome: 'retry', error_code: output.error_code, err }, 'render will be retried');
    log.mark('retry');
    // The timeline shows the try that failed; losing this write loses only that entry.
    await deps.records
      .transition(request, (current) => withSteps(current, log.steps), version.known)
      .catch((err) => deps.log.warn({ ...line, err }, 'timeline not recorded'));
    return { kind: 'retry', delayMs: output.delayMs };
  }
  // Only a failed render whose page got far enough has a capture: a render that succeeds stores nothing more.
  const failureImage = log.failureCapture;
  const captured =
    output.status === 'failed' && failureImage ? await storeFailureCapture(deps, failureImage, line) : undefined;
  const withCapture = (record: RenderRecord): RenderRecord =>
    captured ? { ...record, failure_capture: captured } : record;
  // A caller answered with the image before it was stored waits no more.
  const record = await outcome.finish(request, (current) => withSteps(withCapture(ended(output)(current)), log.steps), {
    answerBy: run.early.answered ? undefined : run.answerBy,
    image: output.status === 'succeeded' ? output.image : undefined,
    known: version.known,
  });
  deps.log.info({ ...line, outcome: record.status, error_code: record.error_code, err }, 'render ended');
  return { kind: 'ack' };
}

/** The handlers of the render stream (`handle`) and of its max-deliveries advisories (`giveUp`). */
export function renderMessages(deps: RenderMessageDeps) {
  const { log } = deps;
  const outcome = renderOutcome(deps);
  const context: WorkerContext = { deps, outcome, worker: `${hostname()}:${process.pid}` };

  const handle = async (delivery: Delivery<RenderRequest>): Promise<Disposition> => {
    const run = await begin(context, delivery);
    if (!run) return { kind: 'ack' };
    return conclude(context, run, await observe(context, run, delivery));
  };

  // A request whose every delivery died with its worker ends as a failed render, not in limbo.
  // The advisories wait in a stream, so one raised while no worker ran is handled by the next.
  const giveUp = async (delivery: Delivery<MaxDeliveriesAdvisory>): Promise<Disposition> => {
    const advisory = delivery.message;
    // Null when the request is gone from the stream (aged out, or deleted by an operator).
    const stored = await deps.topology.jsm.streams.getMessage(names.renderStream, { seq: advisory.stream_seq });
    if (!stored) return { kind: 'ack' };
    const request = decodeRenderRequest(stored.data);
    log.error(
      { render_id: request.render_id, workspace_id: request.workspace_id, deliveries: advisory.deliveries },
      'render gave up after its last delivery',
    );
    await outcome.finish(
      request,
      failed({
        error_code: 'internal_application_error',
        error_message: errorTable.internal_application_error.message,
      }),
      { answerBy: request.answer_by },
    );
    return { kind: 'ack' };
  };

  return { handle, giveUp };
}

/** Starts pulling render requests and running them, `config.renderConcurrency` at a time. */
export async function startRenderWorker(deps: RenderWorkerDeps): Promise<RenderWorker> {
  const { config, log, js } = deps;
  const { handle, giveUp } = renderMessages({ ...deps, capturePage: requestCapture(deps) });

  const loop = await startConsumeLoop({
    consumer: await js.consumers.get(names.renderStream, names.renderConsumer),
    concurrency: config.renderConcurrency,
    ackWaitSeconds: config.renderAckWaitSeconds,
    maxDeliver: config.renderMaxDeliver,
    decode: decodeRenderRequest,
    handle,
    onError: logConsumeError(log, 'render'),
  });
  const giveUps = await startConsumeLoop({
    consumer: await js.consumers.get(names.renderGiveUpStream, names.renderGiveUpConsumer),
    concurrency: 1,
    ackWaitSeconds: 30,
    maxDeliver: Number.POSITIVE_INFINITY,
    decode: decodeAdvisory,
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
