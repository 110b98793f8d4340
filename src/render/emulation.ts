// Per-render emulation on a warm page: device, viewport, media, time zone, geolocation, user agent.
import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';

/** Sets what `options` asks of the page's emulation before navigation; the returned undo restores the page. */
export async function applyEmulation(_page: Page, _session: CDPSession, _options: RenderOptions, _deadline: AbortSignal): Promise<() => Promise<void>> {
  return async () => {};
}
