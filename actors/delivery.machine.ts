// One webhook delivery's life: sending → backingOff → sending … → delivered | dead.
//
// The sender runs it from the attempt count recorded in KV and parks it when it enters
// `backingOff`: the delay goes to JetStream (nak with delay) instead of a timer in memory,
// and the next delivery of the job restores the actor at the next attempt.

import { assign, fromPromise, setup } from 'xstate';
import type { AttemptResult } from '../src/delivery/send.ts';

/** What a delivery actor is created with. */
export interface DeliveryInput {
  deliveryId: string;
  /** Attempts already made (in earlier deliveries of the job). */
  attempts: number;
  /** Seconds to wait before each retry: n delays allow n + 1 attempts. */
  schedule: readonly number[];
}

/** Input of the `sendWebhook` promise actor: which attempt this is (1-based). */
export interface SendWebhookInput {
  deliveryId: string;
  attempt: number;
}

/** The delivery actor's memory. */
export interface DeliveryContext extends DeliveryInput {
  lastResult?: AttemptResult;
  /** Set on entering `backingOff`: how long to wait before the next attempt. */
  delayMs?: number;
}

/** Events a delivery actor accepts: none from outside; it is driven by its `sendWebhook` actor. */
export type DeliveryEvent = { type: 'delivery.noop' };

/** What a delivery actor ends with. */
export interface DeliveryOutput {
  status: 'delivered' | 'dead';
  attempts: number;
  last_error?: string;
}

const errorOf = (result: AttemptResult | undefined): string | undefined =>
  result && result.outcome !== 'delivered' ? result.error : undefined;

/** The delivery actor: invoke `sendWebhook`, judge its answer with named guards, back off by the schedule. */
export const deliveryMachine = setup({
  types: {
    input: {} as DeliveryInput,
    context: {} as DeliveryContext,
    events: {} as DeliveryEvent,
    output: {} as DeliveryOutput,
  },
  actors: {
    sendWebhook: fromPromise<AttemptResult, SendWebhookInput>(async () => {
      throw new Error('sendWebhook actor not provided');
    }),
  },
  guards: {
    answered2xx: ({ context }) => context.lastResult?.outcome === 'delivered',
    // 410 Gone and an address the rules now refuse end the delivery: retrying cannot help.
    mustStop: ({ context }) => context.lastResult?.outcome === 'gone' || context.lastResult?.outcome === 'refused',
    attemptsLeft: ({ context }) => context.attempts <= context.schedule.length,
  },
  delays: {
    backoff: ({ context }) => context.delayMs ?? 0,
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
  initial: 'sending',
  states: {
    sending: {
      invoke: {
        src: 'sendWebhook',
        input: ({ context }) => ({ deliveryId: context.deliveryId, attempt: context.attempts + 1 }),
        onDone: {
          target: 'judging',
          actions: assign({ attempts: ({ context }) => context.attempts + 1, lastResult: ({ event }) => event.output }),
        },
        onError: {
          target: 'judging',
          actions: assign({
            attempts: ({ context }) => context.attempts + 1,
            lastResult: ({ event }) => ({ outcome: 'failed' as const, error: String((event.error as Error)?.message ?? event.error) }),
          }),
        },
      },
    },
    judging: {
      always: [
        { guard: 'answered2xx', target: 'delivered' },
        { guard: 'mustStop', target: 'dead' },
        { guard: 'attemptsLeft', target: 'backingOff' },
        { target: 'dead' },
      ],
    },
    backingOff: {
      entry: 'planBackoff',
      after: { backoff: 'sending' },
    },
    delivered: { type: 'final' },
    dead: { type: 'final' },
  },
  output: ({ context }): DeliveryOutput => ({
    status: context.lastResult?.outcome === 'delivered' ? 'delivered' : 'dead',
    attempts: context.attempts,
    last_error: errorOf(context.lastResult),
  }),
});
