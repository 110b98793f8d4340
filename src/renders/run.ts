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
import type { PageObservation } from '../domain/options.ts';
import { withSteps, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import type { StoreResult } from '../domain/storage.ts';
import type { Delivery } from '../jetstream/consume.ts';
import type { Versioned } from '../jetstream/kv-json.ts';
import { discardRecording } from '../render/animation.ts';
import { currentSteps } from '../render/step-log.ts';
import { traced } from '../tracing.ts';
import type { RenderOutcome } from './outcome.ts';
import { storeOutput, uploadToCustomer, type OutputDeps } from './output.ts';

/** What running a render actor needs; the page capture is passed in, so tests need no browser. */
export interface RunDeps extends OutputDeps {
  /** Renders one page and reports what it showed; aborting `signal` ends it and closes the page. */
  capturePage: (input: CapturePageInput, signal: AbortSignal) => Promise<PageObservation>;
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

/** What a render's steps share besides their input: its outcome, its run, how to tell its actor of an early answer. */
interface RunState {
  outcome: RenderOutcome;
  run: RenderRun;
  tell: () => void;
}

/** Each running render's state, by its actor's system (every step of one render runs in that system). */
const runStates = new WeakMap<object, RunState>();
const stateOf = (system: object): RunState => runStates.get(system)!;

// The machine's steps, on this worker's records, browser and stores.
function renderActors(deps: RunDeps) {
  return {
    recordStart: fromPromise<void, RecordStartInput>(async ({ input, system }) => {
      // A synchronous caller learns the render id with its answer, so nobody can look at the record
      // while it renders: it goes from pending to its end in one write. Others may poll for `rendering`.
      if (input.request.answer_by !== undefined) return;
      const { version } = stateOf(system).run;
      const steps = currentSteps();
      const started = await deps.records.transition(
        input.request,
        (current) => withSteps({ ...current, status: 'rendering', started_at: new Date().toISOString() }, steps),
        version.known,
      );
      version.known = started.version;
    }),
    capturePage: fromPromise<PageObservation, CapturePageInput>(({ input, signal }) => deps.capturePage(input, signal)),
    storeImage: fromPromise<StoredImage, StoreImageInput>(({ input, signal, system }) => {
      const { outcome, run, tell } = stateOf(system);
      const { answerBy, version, early } = run;
      return traced('store', () =>
        storeOutput(deps, input, signal, {
          answerBy,
          answered: () => early.answered,
          answerEarly: () => {
            early.answered = true;
            outcome.announceUnstored(version.known?.value, input.request, input.observation);
            tell();
          },
        }),
      );
    }),
    uploadOutput: fromPromise<StoreResult, UploadOutputInput>(({ input, signal, system }) =>
      uploadToCustomer(deps, input, stateOf(system).run.answerBy, signal),
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

/** Runs one render actor to its verdict; the delivery's signal aborting cancels it, which still ends with an output. */
export async function runRender(
  deps: RunDeps,
  outcome: RenderOutcome,
  run: RenderRun,
  delivery: Delivery<RenderRequest>,
): Promise<RenderOutput> {
  const actor = createActor(machineFor(deps), {
    input: {
      request: run.request,
      answerBy: run.answerBy,
      deliveryCount: delivery.deliveryCount,
      isLastDelivery: delivery.isLastDelivery,
    },
  });
  runStates.set(actor.system, { outcome, run, tell: () => actor.send({ type: 'render.answered' }) });
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
