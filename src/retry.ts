// Waiting out a dependency's outage: retry with backoff while the failure says "out of reach", up to a deadline.

/** Backoff between tries: 250 ms doubling to 5 s. */
const firstDelayMs = 250;
const maxDelayMs = 5000;

/**
 * Runs `step` until it succeeds. A failure for which `transient` is true is tried again after a
 * growing pause while the clock is before `until` (ms since the epoch) and `signal` is not aborted;
 * any other failure, or the last one, is thrown.
 */
export async function retryWhile<T>(
  step: () => Promise<T>,
  transient: (err: unknown) => boolean,
  until: number,
  signal?: AbortSignal,
): Promise<T> {
  for (let delay = firstDelayMs; ; delay = Math.min(maxDelayMs, delay * 2)) {
    try {
      return await step();
    } catch (err) {
      const pause = Math.min(delay, until - Date.now());
      if (!transient(err) || pause <= 0 || signal?.aborted) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** `promise`, or a rejection named `name` after `ms`: for clients that have no time-out of their own. */
export function withTimeout<T>(promise: Promise<T>, ms: number, name = 'TimeoutError'): Promise<T> {
  let timer: NodeJS.Timeout;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { name })), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
