// One render's life: pending → rendering → judged by the failure rules → storing → succeeded | failed.

import { assign, fromPromise, setup } from 'xstate';
import { errorTable, type ErrorCode, type ErrorDetails } from '../src/errors.ts';
import type { BrowserHost } from '../src/render/browser.ts';
import { capturePage } from '../src/render/capture.ts';
import type { ImageFormat, PageObservation, RenderOptions } from '../src/domain/options.ts';
import { failureFromError, renderRules, type RenderFailure, type RenderRuleName } from './render.rules.ts';

/** What a render actor is created with. */
export interface RenderInput {
  renderId: string;
  options: RenderOptions;
  /** The workspace the render is for: its warm pages are never lent to another workspace. */
  workspaceId?: string;
}

/** Input of the `capturePage` promise actor. */
export type CapturePageInput = RenderInput;

/** Input of the `storeImage` promise actor. */
export interface StoreImageInput extends RenderInput {
  observation: PageObservation;
}

/** Where `storeImage` put the image: its file name in the object store and its size. */
export interface StoredImage {
  file_name: string;
  size_bytes: number;
}

/** Events a render actor accepts: start it, or cancel it (e.g. the worker is shutting down). */
export type RenderEvent = { type: 'render.start' } | { type: 'render.cancel' };

/** What a render actor ends with; `retryable` tells the consume loop to nak rather than term. */
export type RenderOutput =
  | { status: 'succeeded'; stored: StoredImage; format: ImageFormat; size_bytes: number }
  | { status: 'failed'; error_code: ErrorCode; error_message: string; details: ErrorDetails; retryable: boolean };

/** The render actor's memory; `failure.cause` is for logs only. */
export interface RenderContext extends RenderInput {
  observation?: PageObservation;
  stored?: StoredImage;
  failure?: RenderFailure;
}

/** The real `capturePage` actor, rendering on `host`; the worker passes it through `.provide()`. */
export function capturePageOn(host: BrowserHost) {
  return fromPromise<PageObservation, CapturePageInput>(({ input, signal }) => capturePage(host, input.options, signal, input.workspaceId));
}

const CANCELLED: RenderFailure = {
  code: 'temporary_unavailable',
  message: errorTable.temporary_unavailable.message,
  details: {},
  retryable: true,
};

// A guard and its failure-recording transition for each rule, in the order the rules are checked.
const RULE_ORDER: RenderRuleName[] = ['hostReturnedError', 'selectorNotFound', 'requestFailedMatched', 'contentMissing', 'contentContains'];

const ruleFailed = (rule: RenderRuleName) => ({ context }: { context: RenderContext }) =>
  context.observation !== undefined && renderRules[rule](context.observation, context.options) !== null;

/** The render actor: invoke `capturePage`, judge the observation with named guards, invoke `storeImage`. */
export const renderMachine = setup({
  types: {
    input: {} as RenderInput,
    context: {} as RenderContext,
    events: {} as RenderEvent,
    output: {} as RenderOutput,
  },
  actors: {
    capturePage: fromPromise<PageObservation, CapturePageInput>(async () => {
      throw new Error('capturePage actor not provided');
    }),
    storeImage: fromPromise<StoredImage, StoreImageInput>(async () => {
      throw new Error('storeImage actor not provided');
    }),
  },
  guards: {
    hostReturnedError: ruleFailed('hostReturnedError'),
    selectorNotFound: ruleFailed('selectorNotFound'),
    requestFailedMatched: ruleFailed('requestFailedMatched'),
    contentMissing: ruleFailed('contentMissing'),
    contentContains: ruleFailed('contentContains'),
  },
  actions: {
    recordRuleFailure: assign(({ context }, params: { rule: RenderRuleName }) => ({
      failure: renderRules[params.rule](context.observation!, context.options) ?? undefined,
    })),
    recordCancel: assign({ failure: () => CANCELLED }),
  },
}).createMachine({
  id: 'render',
  context: ({ input }) => ({ renderId: input.renderId, options: input.options, workspaceId: input.workspaceId }),
  initial: 'pending',
  on: {
    'render.cancel': { target: '.failed', actions: 'recordCancel' },
  },
  states: {
    pending: {
      on: { 'render.start': 'rendering' },
    },
    rendering: {
      invoke: {
        src: 'capturePage',
        input: ({ context }) => ({ renderId: context.renderId, options: context.options, workspaceId: context.workspaceId }),
        onDone: { target: 'judging', actions: assign({ observation: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => failureFromError(event.error) }) },
      },
    },
    judging: {
      always: [
        ...RULE_ORDER.map((rule) => ({ guard: rule, target: 'failed', actions: { type: 'recordRuleFailure' as const, params: { rule } } })),
        { target: 'storing' },
      ],
    },
    storing: {
      invoke: {
        src: 'storeImage',
        input: ({ context }) => ({ renderId: context.renderId, options: context.options, observation: context.observation! }),
        onDone: { target: 'succeeded', actions: assign({ stored: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => failureFromError(event.error) }) },
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }): RenderOutput => {
    if (context.failure || !context.stored) {
      const failure = context.failure ?? failureFromError(new Error('render ended without a result'));
      return { status: 'failed', error_code: failure.code, error_message: failure.message, details: failure.details, retryable: failure.retryable };
    }
    return {
      status: 'succeeded',
      stored: context.stored,
      format: context.options.format,
      size_bytes: context.stored.size_bytes,
    };
  },
});
