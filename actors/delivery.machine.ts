// One attempt of a webhook delivery, as each delivery of its job makes it:
//
//   checking   → dead when the attempts are used up (the last was recorded, its end was not), else sending
//   sending    sendWebhook: one signed POST                        → recording
//   recording  recordAttempt: the attempt count in KV, before any verdict is acted on → judging
//   judging    → delivered (2xx) | dead (410, an address now refused, no attempts left) | retryLater
//
// The wait between attempts is the broker's, not the machine's: `retryLater` ends the run with the
// delay, the sender naks the job with it, and the job's next delivery runs the machine again from
// the attempt count recorded in KV. A sender that dies between two attempts loses nothing.

import { assign, fromPromise, not, setup } from 'xstate';

/**
 * What one attempt came to, as far as the machine judges it: `refused` is an address the rules now
 * forbid. The sender's AttemptResult (src/delivery/send.ts) is one, with more fields.
 */
export type AttemptOutcome =
  | { outcome: 'delivered' }
  | { outcome: 'failed'; error: string; retryAfterSeconds?: number }
  | { outcome: 'gone'; error: string }
  | { outcome: 'refused'; error: string };

/** What a delivery actor is created with: the delivery as its KV record left it. */
export interface DeliveryInput {
  deliveryId: string;
  /** Attempts already made and recorded (in earlier deliveries of the job). */
  attempts: number;
  /** Seconds to wait before each retry: n delays allow n + 1 attempts. */
  schedule: readonly number[];
  /** The recorded error of the last attempt, if it failed. */
  lastError?: string;
}

/** Input of the `sendWebhook` promise actor: which attempt this is (1-based). */
export interface SendWebhookInput {
  deliveryId: string;
  attempt: number;
}

/** Input of the `recordAttempt` promise actor: the attempt just made and what it came to. */
export interface RecordAttemptInput {
  deliveryId: string;
  attempt: number;
  result: AttemptOutcome;
}

/** The delivery actor's memory. */
export interface DeliveryContext extends DeliveryInput {
  lastResult?: AttemptOutcome;
  /** Set on the way to `retryLater`: how long the broker waits before the next attempt. */
  delayMs?: number;
}

/** What a delivery actor ends with, one member per final state. */
export type DeliveryOutput =
  | { status: 'delivered'; attempts: number }
  | { status: 'dead'; attempts: number; last_error?: string }
  | { status: 'retryLater'; attempts: number; delayMs: number; last_error?: string };

const notProvided = (name: string) => async (): Promise<never> => {
  throw new Error(`${name} actor not provided`);
};

const lastErrorOf = (context: DeliveryContext): string | undefined =>
  context.lastResult
    ? context.lastResult.outcome === 'delivered'
      ? undefined
      : context.lastResult.error
    : context.lastError;

/** The delivery actor; the sender provides `sendWebhook` and `recordAttempt` through `.provide()`. */
export const deliveryMachine = setup({
  types: {
    input: {} as DeliveryInput,
    context: {} as DeliveryContext,
    // No events: the actor is driven by what its invoked actors answer.
    output: {} as DeliveryOutput,
  },
  actors: {
    sendWebhook: fromPromise<AttemptOutcome, SendWebhookInput>(notProvided('sendWebhook')),
    recordAttempt: fromPromise<void, RecordAttemptInput>(notProvided('recordAttempt')),
  },
  guards: {
    answered2xx: ({ context }) => context.lastResult?.outcome === 'delivered',
    // 410 Gone and an address the rules now refuse end the delivery: retrying cannot help.
    mustStop: ({ context }) => context.lastResult?.outcome === 'gone' || context.lastResult?.outcome === 'refused',
    attemptsLeft: ({ context }) => context.attempts <= context.schedule.length,
  },
  actions: {
    planBackoff: assign({
      delayMs: ({ context }) => {
        const scheduled = context.schedule[Math.min(context.attempts, context.schedule.length) - 1] ?? 0;
        const asked = context.lastResult?.outcome === 'failed' ? (context.lastResult.retryAfterSeconds ?? 0) : 0;
        // Retry-After is honoured when it asks for longer than the schedule would wait.
        return Math.round(Math.max(scheduled, asked) * 1000);
      },
    }),
  },
}).createMachine({
  id: 'delivery',
  context: ({ input }) => ({ ...input }),
  initial: 'checking',
  states: {
    checking: {
      always: [{ guard: not('attemptsLeft'), target: 'dead' }, { target: 'sending' }],
    },
    sending: {
      invoke: {
        src: 'sendWebhook',
        input: ({ context }) => ({ deliveryId: context.deliveryId, attempt: context.attempts + 1 }),
        onDone: {
          target: 'recording',
          actions: assign({ attempts: ({ context }) => context.attempts + 1, lastResult: ({ event }) => event.output }),
        },
        onError: {
          target: 'recording',
          actions: assign({
            attempts: ({ context }) => context.attempts + 1,
            lastResult: ({ event }) => ({
              outcome: 'failed' as const,
              error: String((event.error as Error)?.message ?? event.error),
            }),
          }),
        },
      },
    },
    recording: {
      // No onError: an attempt that cannot be recorded fails the run, and the job's next delivery
      // makes the same attempt again (the count did not move) rather than skip one.
      invoke: {
        src: 'recordAttempt',
        input: ({ context }) => ({
          deliveryId: context.deliveryId,
          attempt: context.attempts,
          result: context.lastResult!,
        }),
        onDone: 'judging',
      },
    },
    judging: {
      always: [
        { guard: 'answered2xx', target: 'delivered' },
        { guard: 'mustStop', target: 'dead' },
        { guard: 'attemptsLeft', target: 'retryLater', actions: 'planBackoff' },
        { target: 'dead' },
      ],
    },
    delivered: { type: 'final' },
    dead: { type: 'final' },
    retryLater: {
      type: 'final',
      description: 'The wait is handed to the broker: the job is delivered again after the output delayMs.',
    },
  },
  output: ({ context }): DeliveryOutput => {
    const last_error = lastErrorOf(context);
    if (context.lastResult?.outcome === 'delivered') return { status: 'delivered', attempts: context.attempts };
    if (context.delayMs !== undefined)
      return { status: 'retryLater', attempts: context.attempts, delayMs: context.delayMs, last_error };
    return { status: 'dead', attempts: context.attempts, ...(last_error === undefined ? {} : { last_error }) };
  },
});
