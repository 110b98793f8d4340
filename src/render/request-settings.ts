// Per-render request settings on a warm page: extra headers and Authorization for the target's origin only, cookies, CSP bypass.
import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';

/** Sets what `options` asks of the page's requests before navigation; the returned undo restores the page. */
export async function applyRequestSettings(_page: Page, _session: CDPSession, _options: RenderOptions, _deadline: AbortSignal): Promise<() => Promise<void>> {
  return async () => {};
}
