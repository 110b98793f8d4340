// The render role: one render actor per request from the stream, its outcome recorded, announced and settled.
import { hostname } from 'node:os';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  LATE,
  renderMachine,
  type CapturePageInput,
  type RecordStartInput,
  type RenderOutput,
  type StoreImageInput,
  type StoredImage,
  type UploadOutputInput,
} from '../../actors/render.machine.ts';
import type { Config } from '../config.ts';
import { errorTable, ServiceError } from '../errors.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { retryWhile } from '../retry.ts';
import {
  jsonMessage,
  logConsumeError,
  startConsumeLoop,
  type Delivery,
  type Disposition,
} from '../jetstream/consume.ts';
import { isFinal, pendingRecord, withSteps, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import type { OutputFormat, PageObservation } from '../domain/options.ts';
import type { RecordedMetadata } from '../domain/metadata.ts';
import { REPLAY_HEADER, renderDoneMessage, type RenderRecords } from './records.ts';
import type { Versioned } from '../jetstream/kv-json.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import { DEFAULT_FILE_LIFETIME_SECONDS, newFileName } from '../domain/files.ts';
import { isStoreUnavailable, type FileStore } from '../storage/store.ts';
import { uploadOutput, type CustomerBucketPolicy } from '../storage/customer-bucket.ts';
import type { StoreResult } from '../domain/storage.ts';
import type { BrowserHost } from '../render/browser.ts';
import { capturePage } from '../render/capture.ts';
import { endSpan, inSpan, startSpan, traced } from '../tracing.ts';
import { carrierOf } from '../jetstream/trace-headers.ts';
import { currentSteps, markStep, StepLog, withStepLog } from '../render/step-log.ts';
import type { EgressProxy } from '../net/egress-proxy.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { openRequestSecrets } from '../secrets/request-secrets.ts';
import { upstreamProxyOf } from '../net/upstream.ts';
import { askVision } from '../render/vision.ts';
import { sliceImage } from '../render/image.ts';
import type { RenderOptions } from '../domain/options.ts';
import { captureAnimation } from '../render/animation.ts';
import {
  FAILURE_CAPTURE_LIFETIME_SECONDS,
  FailureCaptureSlot,
  withFailureCaptureSlot,
} from '../render/failure-capture.ts';

/** What a render worker needs. */
export interface RenderWorkerDeps extends Omit<RenderMessageDeps, 'capturePage'> {
  config: Config;
  browser: BrowserHost;
  /** The egress proxy the browser is behind: a render with a proxy of its own gets a route on it. */
  egress?: Pick<EgressProxy, 'route'>;
}

/** What handling render messages needs; the page capture is passed in, so tests need no browser. */
export interface RenderMessageDeps {
  log: Logger;
  nc: NatsConnection;
  js: JetStreamClient;
  topology: Topology;
  records: RenderRecords;
  store: Pick<FileStore, 'put'>;
  /** Opens and reaches customers' buckets for requests with `store` (docs/storage.md). */
  customerBuckets?: CustomerBucketPolicy;
  /** Renders one page and reports what it showed; aborting `signal` ends it and closes the page. */
  capturePage: (input: CapturePageInput, signal: AbortSignal) => Promise<PageObservation>;
  /** Settles the quota of an ended render; must be idempotent, as it runs again on redelivery or replay. */
  settle: (record: RenderRecord) => Promise<void>;
  /** Queues the webhook of an ended render that asked for one; idempotent per render, as it runs again on redelivery. */
  enqueueWebhook?: (record: RenderRecord) => Promise<void>;
  /** Opens the request's sealed secret options (src/secrets/request-secrets.ts). */
  sealer?: Sealer;
}

/** A running render worker. */
export interface RenderWorker {
  stop(): Promise<void>;
}

/** The longest a failed render waits to store its failure capture; a late one is left unrecorded and swept with its day. */
const FAILURE_CAPTURE_STORE_LIMIT_MS = 3000;

/** How long an asynchronous render waits out an outage of NATS or the store before its delivery is retried. */
const OUTAGE_PATIENCE_MS = 3 * 60_000;
/**
 * How long a render keeps retrying an upload its customer's storage failed for now: an asynchronous
 * one has minutes; a caller waiting is answered within seconds (and never after its deadline).
 */
const UPLOAD_PATIENCE_MS = 2 * 60_000;
const SYNC_UPLOAD_PATIENCE_MS = 5000;
/**
 * A caller waiting hears its image within its own timeout: the store is tried until then (and at
 * least this long after the capture), and past that the image is announced before it is stored.
 */
const MIN_STORE_TRY_MS = 2000;

/** A render's caller answered with the image before it was stored; `tell` informs the render actor. */
interface EarlyAnswer {
  answered: boolean;
  tell: () => void;
}

/** A monitor's capture is the baseline of its next tick: kept two intervals at least (docs/monitors.md). */
const monitorFileLifetime = (request: RenderRequest) =>
  request.monitor ? Math.max(DEFAULT_FILE_LIFETIME_SECONDS, 2 * request.monitor.interval + 86_400) : undefined;

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

/** The handlers of the render stream (`handle`) and of its max-deliveries advisories (`giveUp`). */
export function renderMessages(deps: RenderMessageDeps) {
  const { log, nc, records, store } = deps;
  const worker = `${hostname()}:${process.pid}`;

  const announce = (record: RenderRecord, image?: Buffer, unstored = false) =>
    nc.publish(names.renderDone(record.render_id), ...renderDoneMessage(record, image, unstored));

  // Until when a render waits out an outage: its caller's deadline, or a few minutes when nobody waits.
  const patience = (answerBy: number | undefined) => (answerBy ?? Date.now() + OUTAGE_PATIENCE_MS) - 1000;
  const throughNatsOutage = <T>(answerBy: number | undefined, step: () => Promise<T>) =>
    retryWhile(step, isNatsUnavailable, patience(answerBy));

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
    // Both are idempotent and independent of each other: they wait for NATS side by side.
    await Promise.all([
      throughNatsOutage(options.answerBy, () => deps.settle(record)),
      record.abandoned ? undefined : throughNatsOutage(options.answerBy, async () => deps.enqueueWebhook?.(record)),
    ]);
    // Only the render that made this record has its image in hand.
    announce(record, changed ? options.image : undefined);
    return record;
  };

  const failed =
    (fields: Pick<RenderRecord, 'error_code' | 'error_message' | 'error_details'>) =>
    (current: RenderRecord): RenderRecord => ({
      ...current,
      status: 'failed',
      finished_at: new Date().toISOString(),
      ...fields,
    });

  const ended = (output: Exclude<RenderOutput, { status: 'retryLater' }>) =>
    output.status === 'succeeded'
      ? (current: RenderRecord): RenderRecord => ({
          ...current,
          status: 'succeeded',
          finished_at: new Date().toISOString(),
          file_name: output.stored.file_name,
          size_bytes: output.stored.size_bytes,
          ...(output.stored.metadata ? { metadata: output.stored.metadata } : {}),
          ...(output.stored.slices ? { slices: output.stored.slices } : {}),
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
          // A refused upload keeps the service's own copy (docs/storage.md).
          ...(output.stored ? { file_name: output.stored.file_name, size_bytes: output.stored.size_bytes } : {}),
        });

  // The machine's steps, on this worker's records, browser and bucket. `version` holds the record
  // as this delivery last read or wrote it.
  const renderActors = (
    answerBy: number | undefined,
    version: { known?: Versioned<RenderRecord> },
    early: EarlyAnswer,
  ) => ({
    recordStart: fromPromise<void, RecordStartInput>(async ({ input }) => {
      // A synchronous caller learns the render id with its answer, so nobody can look at the record
      // while it renders: it goes from pending to its end in one write. Others may poll for `rendering`.
      if (input.request.answer_by !== undefined) return;
      const steps = currentSteps();
      const started = await records.transition(
        input.request,
        (current) => withSteps({ ...current, status: 'rendering', started_at: new Date().toISOString() }, steps),
        version.known,
      );
      version.known = started.version;
    }),
    capturePage: fromPromise<PageObservation, CapturePageInput>(({ input, signal }) => deps.capturePage(input, signal)),
    storeImage: fromPromise<StoredImage, StoreImageInput>(({ input, signal }) =>
      traced('store', async () => {
        // A cached file lives as long as its cache entry; any other as long as the render records.
        const lifetime =
          input.request.cache?.ttl ?? monitorFileLifetime(input.request) ?? DEFAULT_FILE_LIFETIME_SECONDS;
        const expiresAt = new Date(Date.now() + lifetime * 1000);
        const { image, metadata, warnings } = input.observation;
        const { options } = input.request;
        // The output is in hand: an outage of the store is waited out rather than rendering again. A
        // caller waiting is not kept past its own timeout for it: then the image is announced unstored
        // (its ingress answers with it, or refuses and abandons the render), and the store is tried on
        // as for an asynchronous render, nobody waiting (docs/operations.md, "Outages").
        const promptBy =
          answerBy === undefined
            ? undefined
            : Math.min(
                patience(answerBy),
                Math.max(Date.parse(input.request.created_at) + options.timeout * 1000, Date.now() + MIN_STORE_TRY_MS),
              );
        let until = promptBy ?? patience(undefined);
        const answerEarly = () => {
          if (early.answered) return;
          early.answered = true;
          until = patience(undefined);
          const unstored: RenderRecord = {
            ...(version.known?.value ?? pendingRecord(input.request)),
            status: 'succeeded',
            finished_at: new Date().toISOString(),
            size_bytes: image.length,
            ...(warnings && warnings.length > 0 ? { warnings } : {}),
          };
          announce(unstored, image, true);
          early.tell();
        };
        // Once its caller was answered, a render whose caller refused the unstored image (and so
        // abandoned it) stops trying: its end is recorded already.
        const putUnlessAbandoned = async (fileName: string, bytes: Buffer, format: OutputFormat) => {
          const current = early.answered ? await records.get(input.request.render_id).catch(() => null) : null;
          if (current && isFinal(current))
            throw new ServiceError('temporary_unavailable', {}, { message: LATE.message });
          await store.put(fileName, bytes, format);
        };
        const put = async (format: OutputFormat, bytes: Buffer) => {
          const fileName = newFileName(format, expiresAt);
          const attempt = (): Promise<void> => {
            const deadline = until;
            return retryWhile(
              () => putUnlessAbandoned(fileName, bytes, format),
              isStoreUnavailable,
              deadline,
              signal,
            ).catch((err) => {
              if (!isStoreUnavailable(err) || deadline !== promptBy || signal.aborted) throw err;
              answerEarly();
              return attempt();
            });
          };
          await attempt().catch((err) => {
            throw isStoreUnavailable(err) ? new ServiceError('temporary_unavailable', {}, { cause: err }) : err;
          });
          return fileName;
        };
        const fileName = await put(options.format, image);
        // full_page_slices: the capture cut into slices, each a file of its own beside the whole.
        const slices = options.full_page_slices
          ? await Promise.all(
              (await sliceImage(image, options)).map(async ({ bytes, ...slice }) => ({
                ...slice,
                file_name: await put(options.format, bytes),
              })),
            )
          : undefined;
        const said = { ...(warnings && warnings.length > 0 ? { warnings } : {}), ...(slices ? { slices } : {}) };
        if (!metadata) {
          markStep('stored');
          return { file_name: fileName, size_bytes: image.length, ...said };
        }
        // metadata_content is a file of its own, beside the output: records and messages stay small.
        const { content, ...fields } = metadata;
        const recorded: RecordedMetadata = content
          ? {
              ...fields,
              content: {
                file_name: await put(content.format, Buffer.from(content.text, 'utf8')),
                format: content.format,
              },
            }
          : fields;
        markStep('stored');
        return { file_name: fileName, size_bytes: image.length, metadata: recorded, ...said };
      }),
    ),
    uploadOutput: fromPromise<StoreResult, UploadOutputInput>(async ({ input, signal }) => {
      const { store: target, options } = input.request;
      if (!target || !deps.customerBuckets)
        throw new Error('uploadOutput: no store target or no customer bucket policy');
      const until =
        answerBy === undefined
          ? Date.now() + UPLOAD_PATIENCE_MS
          : Math.min(answerBy - 1000, Date.now() + SYNC_UPLOAD_PATIENCE_MS);
      const deadline = answerBy === undefined ? undefined : answerBy - 1000;
      return uploadOutput(target, input.observation.image, options.format, {
        ...deps.customerBuckets,
        until,
        deadline,
        signal,
      });
    }),
  });

  /**
   * Stores a failed render's capture for a day; best effort and brief (a store that is slow or out of
   * reach must not hold up the failure's answer): without it the render fails all the same.
   */
  const storeFailureCapture = async (image: Buffer, line: Record<string, unknown>): Promise<string | undefined> => {
    const fileName = newFileName('jpeg', new Date(Date.now() + FAILURE_CAPTURE_LIFETIME_SECONDS * 1000));
    const put = store.put(fileName, image, 'jpeg').then(
      () => true,
      (err: unknown) => {
        log.warn({ ...line, err }, 'failure capture not stored');
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, FAILURE_CAPTURE_STORE_LIMIT_MS, false)));
    const stored = await Promise.race([put, late]).finally(() => clearTimeout(timer));
    return stored ? fileName : undefined;
  };

  /** Runs one render actor to its verdict; the loop stopping cancels it, which still ends with an output. */
  const runRender = async (
    request: RenderRequest,
    answerBy: number | undefined,
    delivery: Delivery<RenderRequest>,
    version: { known?: Versioned<RenderRecord> },
    early: Omit<EarlyAnswer, 'tell'>,
  ): Promise<RenderOutput> => {
    const told: EarlyAnswer = Object.assign(early, { tell: () => actor.send({ type: 'render.answered' }) });
    const actor = createActor(renderMachine.provide({ actors: renderActors(answerBy, version, told) }), {
      input: { request, answerBy, deliveryCount: delivery.deliveryCount, isLastDelivery: delivery.isLastDelivery },
    });
    const output = toPromise(actor);
    const cancel = () => actor.send({ type: 'render.cancel' });
    delivery.signal.addEventListener('abort', cancel, { once: true });
    try {
      actor.start();
      if (delivery.signal.aborted && actor.getSnapshot().status === 'active') cancel();
      return await output;
    } finally {
      delivery.signal.removeEventListener('abort', cancel);
    }
  };

  const handle = async (delivery: Delivery<RenderRequest>): Promise<Disposition> => {
    // Secret options travel sealed; opened here for the render and never written back.
    const request = openRequestSecrets(delivery.message, deps.sealer);
    const replay = Boolean(delivery.header(REPLAY_HEADER));
    const read = await records.read(request.render_id);
    const known = read.value;
    if (known && isFinal(known) && !replay) {
      // A redelivery of a render that already ended (or was abandoned by its caller): settle and
      // answer again, render nothing.
      await deps.settle(known);
      if (!known.abandoned) await deps.enqueueWebhook?.(known);
      announce(known);
      return { kind: 'ack' };
    }
    const version: { known?: Versioned<RenderRecord> } = { known: read };
    if (known && isFinal(known)) {
      // An operator's replay of an ended render: render it again into the same record. The quota
      // reservation was settled the first time, so settling again charges nothing.
      await records.reopen(request.render_id);
      version.known = undefined;
    }
    // A replay has no caller waiting: the original request's deadline passed long ago.
    const answerBy = replay ? undefined : request.answer_by;
    const startedAt = performance.now();
    // The render's span continues the trace of the request that asked for it (docs/operations.md).
    const span = startSpan(
      'render',
      carrierOf(delivery.header),
      { 'shutterbus.render_id': request.render_id, 'shutterbus.delivery': delivery.deliveryCount },
      'consumer',
    );
    const steps = new StepLog();
    steps.mark('started');
    const failureCapture = new FailureCaptureSlot();
    const early = { answered: false };
    const output = await withStepLog(steps, () =>
      withFailureCaptureSlot(failureCapture, () =>
        inSpan(span, () => runRender(request, answerBy, delivery, version, early)),
      ),
    );
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
    const err = output.status === 'succeeded' ? undefined : output.cause;
    if (output.status === 'retryLater') {
      log.warn({ ...line, outcome: 'retry', error_code: output.error_code, err }, 'render will be retried');
      steps.mark('retry');
      // The timeline shows the try that failed; losing this write loses only that entry.
      await records
        .transition(request, (current) => withSteps(current, steps.steps), version.known)
        .catch((err) => log.warn({ ...line, err }, 'timeline not recorded'));
      return { kind: 'retry', delayMs: output.delayMs };
    }
    const image = output.status === 'succeeded' ? output.image : undefined;
    // Only a failed render whose page got far enough has a capture: a render that succeeds stores nothing more.
    const captured =
      output.status === 'failed' && failureCapture.image
        ? await storeFailureCapture(failureCapture.image, line)
        : undefined;
    const withCapture = (record: RenderRecord): RenderRecord =>
      captured ? { ...record, failure_capture: captured } : record;
    // A caller answered with the image before it was stored waits no more.
    const record = await finish(request, (current) => withSteps(withCapture(ended(output)(current)), steps.steps), {
      answerBy: early.answered ? undefined : answerBy,
      image,
      known: version.known,
    });
    log.info({ ...line, outcome: record.status, error_code: record.error_code, err }, 'render ended');
    return { kind: 'ack' };
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
    await finish(
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

/**
 * request_gpu_rendering on a worker whose browser renders in software: the render goes on in
 * software, or fails with gpu_rendering_failed when fail_if_gpu_rendering_fails. Asked only when requested.
 */
async function requireGpu(browser: BrowserHost, options: RenderOptions, log: Logger): Promise<void> {
  if (!options.request_gpu_rendering || (await browser.hasGpuRendering())) return;
  if (options.fail_if_gpu_rendering_fails) throw new ServiceError('gpu_rendering_failed');
  log.debug({ gpu: false }, 'GPU rendering asked for; rendering in software');
}

/** Starts pulling render requests and running them, `config.renderConcurrency` at a time. */
export async function startRenderWorker(deps: RenderWorkerDeps): Promise<RenderWorker> {
  const { config, log, js, browser } = deps;
  const { handle, giveUp } = renderMessages({
    ...deps,
    capturePage: async ({ options, workspaceId, animation }, signal) => {
      // The render kind of the message: a recording of the page, or a screenshot (the default).
      if (animation) return captureAnimation(browser, options, animation, signal, workspaceId);
      await requireGpu(browser, options, log);
      // A proxy of the customer's or a country's: a route of the egress proxy of its own, chained to it.
      const upstream = upstreamProxyOf(options, config.geoProxies);
      if (upstream && !deps.egress) throw new Error('a proxy was asked for and this worker has no egress proxy');
      const route = upstream ? await deps.egress!.route(upstream) : undefined;
      let observation: PageObservation;
      try {
        observation = await capturePage(browser, options, signal, workspaceId, undefined, route?.url);
      } finally {
        await route?.close();
      }
      if (options.vision_prompt === undefined) return observation;
      const vision = await askVision({
        apiUrl: config.visionApiUrl,
        model: config.visionModel,
        prompt: options.vision_prompt,
        maxTokens: options.vision_max_tokens,
        apiKey: options.openai_api_key,
        image: observation.image,
        format: options.format,
        signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeout * 1000)]),
      });
      return { ...observation, vision };
    },
  });

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
