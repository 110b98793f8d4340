// How long a render waits out an outage of NATS or the store (docs/operations.md, "Outages").
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { retryWhile } from '../retry.ts';

/** How long an asynchronous render waits out an outage of NATS or the store before its delivery is retried. */
const OUTAGE_PATIENCE_MS = 3 * 60_000;

/** Until when a render waits out an outage: its caller's deadline, or a few minutes when nobody waits. */
export const patience = (answerBy: number | undefined) => (answerBy ?? Date.now() + OUTAGE_PATIENCE_MS) - 1000;

/** Runs `step` again while NATS is out of reach, until the render's patience runs out. */
export const throughNatsOutage = <T>(answerBy: number | undefined, step: () => Promise<T>) =>
  retryWhile(step, isNatsUnavailable, patience(answerBy));
