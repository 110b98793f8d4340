// playwright-core's values, loaded with require: the package is one large CommonJS bundle, and
// importing it from ESM makes Node scan the whole file for export names first (≈ 0.2 s of every
// start). Types still come from `import type ... from 'playwright-core'`.
import { createRequire } from 'node:module';
import type * as PlaywrightCore from 'playwright-core';

export const { chromium, errors } = createRequire(import.meta.url)('playwright-core') as typeof PlaywrightCore;

// ChannelOwner._wrapApiCall, on every object of playwright-core's client: not public, so looked up
// and used only where present.
type ApiCallWrapper = <T>(body: () => Promise<T>, options: { internal: boolean }) => Promise<T>;

/**
 * Runs `work` as one internal Playwright API call. Playwright's client starts every API call that
 * is not inside another by capturing and parsing its caller's stack (50 frames, to name the call
 * and locate it for traces) and running it in a zone of its own; calls made inside one reuse its
 * zone. A plain render and its wipe make about ten calls: this spares that work for all but one.
 * Internal calls are not reported to Playwright's tracing and inspector, which the service does
 * not use. What `work` throws passes through untouched (an API call would prefix its message with
 * the call's name).
 */
export async function asOneApiCall<T>(work: () => Promise<T>): Promise<T> {
  const wrap = (chromium as unknown as { _wrapApiCall?: ApiCallWrapper })._wrapApiCall?.bind(chromium);
  if (!wrap) return work();
  const outcome = await wrap<{ value: T } | { error: unknown }>(
    async () => {
      try {
        return { value: await work() };
      } catch (error) {
        return { error };
      }
    },
    { internal: true },
  );
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}
