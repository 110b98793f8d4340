// One render actor run to its verdict on this worker's steps: its record, the page capture, the stores.
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  renderMachine,
  type CapturePageInput,
  type RecordStartInput,
  type RenderOutput,
  type StoredImage,
  type StoreImageInput,
  type UploadOutputInput,
} from '../../actors/render.machine.ts';
import type { JudgedObservation } from '../domain/judgement.ts';
import type { RenderLog } from '../domain/render-log.ts';
import { withSteps, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import type { StoreResult } from '../domain/storage.ts';
import type { Delivery } from '../jetstream/consume.ts';
import type { Versioned } from '../jetstream/kv-json.ts';
import { discardRecording } from '../render/animation.ts';
import { traced } from '../tracing.ts';
import type { RenderOutcome } from './outcome.ts';
import { storeOutput, uploadToCustomer, type OutputDeps } from './output.ts';

/** What running a render actor needs; the page capture is passed in, so tests need no browser. */
export interface RunDeps extends OutputDeps {
  /** Renders one page and reports what it showed, judged; aborting `signal` ends it and closes the page. */
  capturePage: (input: CapturePageInput, signal: AbortSignal) => Promise<JudgedObservation>;
}

/** One delivery's render: its request, its caller's deadline, its record as last read or written, and its early answer. */
export interface RenderRun {
  request: RenderRequest;
  /** The caller's deadline; none for an asynchronous render or a replay. */
  answerBy: number | undefined;
  /** The record as this delivery last read or wrote it. */
  version: { known?: Versioned<RenderRecord> };
  /** Whether its caller was answered with the image before it was stored. */
  early: { answered: boolean };
}

// The machine's steps, on this worker's records, browser and stores. What one delivery's steps
// share (its record's version, its early answer, its log) each gets through its own `input`.
function renderActors(deps: RunDeps) {
  return {
    recordStart: fromPromise<void, RecordStartInput>(async ({ input }) => {
      // A synchronous caller learns the render id with its answer, so nobody can look at the record
      // while it renders: it goes from pending to its end in one write. Others may poll for `rendering`.
      if (input.request.answer_by !== undefined) return;
      const { version } = input.run;
      const started = await deps.records.transition(
        input.request,
        (current) =>
          withSteps({ ...current, status: 'rendering', started_at: new Date().toISOString() }, input.log.steps),
        version.known,
      );
      version.known = started.version;
    }),
    capturePage: fromPromise<JudgedObservation, CapturePageInput>(({ input, signal }) =>
      deps.capturePage(input, signal),
    ),
    storeImage: fromPromise<StoredImage, StoreImageInput>(({ input, signal }) => {
      const { run, parent } = input;
      const { answerBy, early } = run;
      return traced('store', () =>
        storeOutput(deps, input, signal, {
          answerBy,
          answered: () => early.answered,
          answerEarly: () => {
            early.answered = true;
            run.announceUnstored(input.observation);
            parent.send({ type: 'render.answered' });
          },
        }),
      );
    }),
    uploadOutput: fromPromise<StoreResult, UploadOutputInput>(({ input, signal }) =>
      uploadToCustomer(deps, input, input.run.answerBy, signal),
    ),
  };
}

// The machine with a worker's steps, made once per worker: providing them copies the whole machine.
const machines = new WeakMap<RunDeps, ReturnType<typeof renderMachine.provide>>();
function machineFor(deps: RunDeps) {
  let machine = machines.get(deps);
  if (!machine) machines.set(deps, (machine = renderMachine.provide({ actors: renderActors(deps) })));
  return machine;
}

/**
 * Runs one render actor to its verdict, its steps marked on `log`; the delivery's signal aborting
 * cancels it, which still ends with an output.
 */
export async function runRender(
  deps: RunDeps,
  outcome: RenderOutcome,
  run: RenderRun,
  delivery: Delivery<RenderRequest>,
  log: RenderLog,
): Promise<RenderOutput> {
  const { request, answerBy, version, early } = run;
  const actor = createActor(machineFor(deps), {
    input: {
      request,
      answerBy,
      deliveryCount: delivery.deliveryCount,
      isLastDelivery: delivery.isLastDelivery,
      log,
      run: {
        answerBy,
        version,
        early,
        announceUnstored: (observation) => outcome.announceUnstored(version.known?.value, request, observation),
      },
    },
  });
  const output = toPromise(actor);
  const cancel = () => actor.send({ type: 'render.cancel' });
  delivery.signal.addEventListener('abort', cancel, { once: true });
  // At its caller's deadline the caller is answered 503 and the render abandoned: what still runs
  // of it stops then, freeing its slot (a caller answered early with the image clears the deadline).
  const late =
    run.answerBy === undefined
      ? undefined
      : setTimeout(() => actor.send({ type: 'render.late' }), Math.max(0, run.answerBy - Date.now()) + 5);
  try {
    actor.start();
    if (delivery.signal.aborted && actor.getSnapshot().status === 'active') cancel();
    return await output;
  } finally {
    clearTimeout(late);
    delivery.signal.removeEventListener('abort', cancel);
    // A recording's file on disk lives until its render ends: stored, uploaded, or failed.
    await discardRecording(actor.getSnapshot().context.observation?.file);
  }
}
