// One delivery of a render request, start to verdict:
//
//   admitting  → failed when its caller's deadline passed, else starting
//   starting   recordStart: the record says `rendering` (where a caller can look) → capturing
//   capturing  capturePage: what the page showed, judged there once → judging
//   judging    the judge's verdict, one named guard per rule       → storing
//   storing    storeImage: the file in the bucket                  → uploading (store asked), succeeded, or failed when the deadline passed meanwhile
//   uploading  uploadOutput: the output in the customer's bucket   → succeeded, or failed (the service's own file kept)
//   deciding   an error or a broken rule on the way                → retryLater (retryable, deliveries left, before the deadline) | failed
//
// Every end is a final state whose output is the whole verdict: the stored file and its image, the
// failure, or `retryLater` with the delay the broker is to wait before delivering the request
// again (the machine keeps no timer of its own). `render.cancel` (the worker is stopping) ends any
// state in `retryLater` at once, aborting what is under way. `render.late` (the worker's clock
// reached the caller's deadline, who was answered with a 503 then) ends any state in `failed` as
// late, aborting what is under way, unless the caller was answered meanwhile. `render.answered` (its caller was
// answered with the image before it was stored: the store was out of reach) leaves the render with
// nobody waiting, so no deadline of a caller's ends it any more.
//
// The failure rules are judged once per render: the machine hands its `judge` (render.rules.ts)
// to the capture, which calls it while the page is still at hand (to keep a failure capture of
// it) and returns the verdict with the observation; `judging` reads that verdict. What the
// worker's actors share of a delivery (the record's version, the early answer, the render's
// log) comes in with the input and goes to each invoked actor through its `input`.

import { and, assign, fromPromise, not, setup } from 'xstate';
import { errorTable, type ErrorCode, type ErrorDetails } from '../src/errors.ts';
import type { CapturePageInput } from '../src/domain/capture.ts';
import { RULE_ORDER, type JudgedObservation, type RenderRuleName } from '../src/domain/judgement.ts';
import type { OutputFormat, PageObservation } from '../src/domain/options.ts';
import type { RecordedMetadata } from '../src/domain/metadata.ts';
import type { RenderLog } from '../src/domain/render-log.ts';
import type { RecordedSlice, RenderRecord, RenderRequest, SavedFiles } from '../src/domain/render.ts';
import type { RenderWarning } from '../src/domain/warnings.ts';
import type { StoreResult } from '../src/domain/storage.ts';
import { failureFromError, judge, type RenderFailure } from './render.rules.ts';

export type { CapturePageInput };

/**
 * What the actors the worker provides share of one delivery, handed to each through its `input`;
 * the machine itself reads none of it.
 */
export interface RenderRunState {
  /** The caller's deadline as the delivery began (the context's is cleared once the caller is answered). */
  answerBy: number | undefined;
  /** The record as this delivery last read or wrote it, and its revision. */
  version: { known?: { value: RenderRecord | null; revision: number } };
  /** Whether its caller was answered with the image before it was stored. */
  early: { answered: boolean };
  /** Tells the caller waiting the image before it is stored (the store is out of reach). */
  announceUnstored(observation: PageObservation): void;
}

/** Where an invoked actor sends an event back to its render actor (`render.answered`). */
export interface RenderParent {
  send(event: RenderEvent): void;
}

/** What a render actor is created with: the request and where this delivery of it stands. */
export interface RenderInput {
  request: RenderRequest;
  /** Until when (ms since the epoch) a caller waits for the render; undefined when nobody does. */
  answerBy?: number;
  /** Which delivery of the request this is, 1 for the first; later ones wait longer before a retry. */
  deliveryCount: number;
  /** True when the broker will not deliver the request again: any failure now is final. */
  isLastDelivery: boolean;
  /** The render's log (timeline steps, failure capture), which the worker records when it ends. */
  log: RenderLog;
  /** What the worker's actors share of this delivery. */
  run: RenderRunState;
}

/** Input of the `recordStart` promise actor. */
export interface RecordStartInput {
  request: RenderRequest;
  log: RenderLog;
  run: RenderRunState;
}

/** Input of the `storeImage` promise actor; `parent` hears `render.answered` when the caller is answered early. */
export interface StoreImageInput {
  request: RenderRequest;
  observation: PageObservation;
  log: RenderLog;
  run: RenderRunState;
  parent: RenderParent;
}

/** Input of the `uploadOutput` promise actor: the request (its `store` target) and the output. */
export interface UploadOutputInput {
  request: RenderRequest;
  observation: PageObservation;
  run: RenderRunState;
}

/** Where `storeImage` put the output: its file name in the object store, its size, and the metadata asked for. */
export interface StoredImage {
  file_name: string;
  size_bytes: number;
  /** The page's metadata (its content stored as a file of its own), when any was asked for. */
  metadata?: RecordedMetadata;
  /** full_page_slices: each slice stored as a file of its own. */
  slices?: RecordedSlice[];
  /** save_formats: each file's name, by format. */
  saved?: SavedFiles;
  /** The render's warnings, when it has any. */
  warnings?: RenderWarning[];
  /** A monitor's tick that compares text: the file of the page's visible text. */
  monitor_text_file_name?: string;
}

/**
 * Events a render actor accepts: cancel it (the worker is stopping; the request is delivered again),
 * or its caller was answered already (with the image, before it was stored).
 */
export type RenderEvent = { type: 'render.cancel' } | { type: 'render.late' } | { type: 'render.answered' };

/** A failure as the output carries it; `cause` is for logs only, never recorded or returned. */
interface FailureVerdict {
  error_code: ErrorCode;
  error_message: string;
  details: ErrorDetails;
  cause?: unknown;
}

/**
 * What a render actor ends with, one member per final state: `succeeded` (the file stored and the
 * image in hand), `failed` (final: record it), `retryLater` (hand the wait to the broker).
 */
export type RenderOutput =
  | {
      status: 'succeeded';
      stored: StoredImage;
      image: Buffer;
      format: OutputFormat;
      size_bytes: number;
      vision?: string;
      uploaded?: StoreResult;
    }
  | ({ status: 'failed' } & FailureVerdict)
  | ({ status: 'retryLater'; delayMs: number } & FailureVerdict);

/** The render actor's memory. */
export interface RenderContext extends RenderInput {
  /** What the page showed, with the judge's verdict on it (`broken`). */
  observation?: JudgedObservation;
  stored?: StoredImage;
  /** Where the output went in the customer's bucket, when the request asked for it. */
  uploaded?: StoreResult;
  failure?: RenderFailure;
  /** Set on the way to `retryLater`: how long the broker waits before the next delivery. */
  retryDelayMs?: number;
}

/** A render whose caller was answered (its deadline passed) before it could end: never retried. */
export const LATE: RenderFailure = {
  code: 'temporary_unavailable',
  message: 'The render could not finish before its caller was answered; retry shortly.',
  details: {},
  retryable: false,
};

const CANCELLED: RenderFailure = {
  code: 'temporary_unavailable',
  message: errorTable.temporary_unavailable.message,
  details: {},
  retryable: true,
};

// A guard and its failure-recording transition for each rule, in the order the rules are checked:
// each reads the verdict the capture brought back, so no rule runs twice.
const ruleFailed =
  (rule: RenderRuleName) =>
  ({ context }: { context: RenderContext }) =>
    context.observation?.broken?.rule === rule;

const notProvided = (name: string) => async (): Promise<never> => {
  throw new Error(`${name} actor not provided`);
};

/** The render actor; the worker provides `recordStart`, `capturePage` and `storeImage` through `.provide()`. */
export const renderMachine = setup({
  types: {
    input: {} as RenderInput,
    context: {} as RenderContext,
    events: {} as RenderEvent,
    output: {} as RenderOutput,
  },
  actors: {
    recordStart: fromPromise<void, RecordStartInput>(notProvided('recordStart')),
    capturePage: fromPromise<JudgedObservation, CapturePageInput>(notProvided('capturePage')),
    storeImage: fromPromise<StoredImage, StoreImageInput>(notProvided('storeImage')),
    uploadOutput: fromPromise<StoreResult, UploadOutputInput>(notProvided('uploadOutput')),
  },
  guards: {
    pastAnswerBy: ({ context }) => context.answerBy !== undefined && Date.now() >= context.answerBy,
    hostReturnedError: ruleFailed('hostReturnedError'),
    selectorNotFound: ruleFailed('selectorNotFound'),
    requestFailedMatched: ruleFailed('requestFailedMatched'),
    contentMissing: ruleFailed('contentMissing'),
    contentContains: ruleFailed('contentContains'),
    failureRetryable: ({ context }) => context.failure?.retryable === true,
    lastDelivery: ({ context }) => context.isLastDelivery,
    wantsUpload: ({ context }) => context.request.store !== undefined,
  },
  actions: {
    recordRuleFailure: assign(({ context }) => ({ failure: context.observation?.broken?.failure })),
    recordError: assign({ failure: (_, params: { error: unknown }) => failureFromError(params.error) }),
    recordLate: assign({ failure: LATE }),
    recordCancel: assign({ failure: CANCELLED, retryDelayMs: 0 }),
    // Each later delivery waits a second longer.
    planRetry: assign({ retryDelayMs: ({ context }) => 1000 * context.deliveryCount }),
  },
}).createMachine({
  id: 'render',
  context: ({ input }) => ({ ...input }),
  initial: 'admitting',
  on: {
    'render.cancel': { target: '.retryLater', actions: 'recordCancel' },
    // Its caller got a 503 at the deadline: nothing of this render will be answered or charged.
    'render.late': { guard: 'pastAnswerBy', target: '.failed', actions: 'recordLate' },
    'render.answered': { actions: assign({ answerBy: undefined }) },
  },
  states: {
    admitting: {
      always: [{ guard: 'pastAnswerBy', target: 'failed', actions: 'recordLate' }, { target: 'starting' }],
    },
    starting: {
      invoke: {
        src: 'recordStart',
        input: ({ context }) => ({ request: context.request, log: context.log, run: context.run }),
        onDone: 'capturing',
        onError: {
          target: 'deciding',
          actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    capturing: {
      invoke: {
        src: 'capturePage',
        input: ({ context }) => ({
          renderId: context.request.render_id,
          options: context.request.options,
          workspaceId: context.request.workspace_id,
          ...(context.request.kind === 'animation' && context.request.animation
            ? { animation: context.request.animation }
            : {}),
          ...(context.request.monitor?.text ? { monitorText: true as const } : {}),
          ...(context.request.kind === 'merge' && context.request.sources ? { sources: context.request.sources } : {}),
          log: context.log,
          judge,
        }),
        onDone: { target: 'judging', actions: assign({ observation: ({ event }) => event.output }) },
        onError: {
          target: 'deciding',
          actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    judging: {
      always: [
        ...RULE_ORDER.map((rule) => ({
          guard: rule,
          target: 'deciding',
          actions: 'recordRuleFailure' as const,
        })),
        { target: 'storing' },
      ],
    },
    storing: {
      invoke: {
        src: 'storeImage',
        input: ({ context, self }) => ({
          request: context.request,
          observation: context.observation!,
          log: context.log,
          run: context.run,
          parent: self,
        }),
        onDone: [
          // Its caller was answered with an error meanwhile: the image is not handed out, nor charged.
          { guard: 'pastAnswerBy', target: 'failed', actions: 'recordLate' },
          { guard: 'wantsUpload', target: 'uploading', actions: assign({ stored: ({ event }) => event.output }) },
          { target: 'succeeded', actions: assign({ stored: ({ event }) => event.output }) },
        ],
        onError: {
          target: 'deciding',
          actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    uploading: {
      invoke: {
        src: 'uploadOutput',
        input: ({ context }) => ({ request: context.request, observation: context.observation!, run: context.run }),
        onDone: [
          { guard: 'pastAnswerBy', target: 'failed', actions: 'recordLate' },
          { target: 'succeeded', actions: assign({ uploaded: ({ event }) => event.output }) },
        ],
        // The upload retries what may pass itself; what reaches here is final, and the own file stays.
        onError: {
          target: 'deciding',
          actions: { type: 'recordError', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    deciding: {
      always: [
        {
          guard: and(['failureRetryable', not('lastDelivery'), not('pastAnswerBy')]),
          target: 'retryLater',
          actions: 'planRetry',
        },
        { target: 'failed' },
      ],
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
    retryLater: {
      type: 'final',
      description: 'The wait is handed to the broker: the request is delivered again after the output delayMs.',
    },
  },
  output: ({ context }): RenderOutput => {
    const { failure, stored, observation, uploaded } = context;
    if (failure || !stored || !observation) {
      const { code, message, details, cause } = failure ?? failureFromError(new Error('render ended without a result'));
      const verdict: FailureVerdict = {
        error_code: code,
        error_message: message,
        details,
        ...(cause === undefined ? {} : { cause }),
      };
      if (context.retryDelayMs !== undefined)
        return { status: 'retryLater', delayMs: context.retryDelayMs, ...verdict };
      // A failed render hands out nothing it made, a refused upload's own copy included (docs/storage.md).
      return { status: 'failed', ...verdict };
    }
    return {
      status: 'succeeded',
      stored,
      image: observation.image,
      format: context.request.options.format,
      size_bytes: stored.size_bytes,
      ...(observation.vision !== undefined ? { vision: observation.vision } : {}),
      ...(uploaded ? { uploaded } : {}),
    };
  },
});
