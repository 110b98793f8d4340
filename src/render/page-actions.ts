// What a render does on the loaded page before capturing: styles, scripts, hidden elements, waits, clicks, hovers.
import type { Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';

/** Runs the page actions `options` asks for, in the contract's order; the returned undo removes what they added. */
export async function runPageActions(_page: Page, _options: RenderOptions, _deadline: AbortSignal): Promise<() => Promise<void>> {
  return async () => {};
}
