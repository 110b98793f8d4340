// Waiting in tests: for a condition, never for a guessed time.

/**
 * Resolves once `condition` holds, checking every `everyMs`; throws naming `what` after `timeoutMs`
 * (a function: read when it throws, to say what was last seen).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`${typeof what === 'function' ? what() : what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A pause, for claims that are themselves about time ("nothing happens for N seconds"). */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
