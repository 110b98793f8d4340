// In-page code run in a world of its own (a CDP isolated world) instead of the page's main world:
// the page's scripts cannot see it, nor replace the built-ins it calls (docs/security.md). It shares
// the page's DOM; what it answers is plain JSON, and the caller checks its shape in Node.
import type { CDPSession } from 'playwright-core';
import { cdp } from './cdp.ts';
import { inPage } from './in-page.ts';

/** The name Chromium lists the world under (DevTools shows it beside the page's contexts). */
const WORLD_NAME = 'shutterbus';

/**
 * Calls `fn(...args)` in a new isolated world of the page's main frame over `session`, awaits a
 * promise it returns, and gives back its value as JSON (unknown: the caller checks it). A throw in
 * the page rejects with its message. `helpers` go along as for inPage.
 */
export async function evaluateIsolated<A extends unknown[]>(
  session: CDPSession,
  fn: (...args: A) => unknown,
  args: A,
  helpers: ReadonlyArray<(...args: never[]) => unknown> = [],
): Promise<unknown> {
  const { Page, Runtime } = cdp(session);
  const { frameTree } = await Page.getFrameTree();
  const { executionContextId } = await Page.createIsolatedWorld({ frameId: frameTree.frame.id, worldName: WORLD_NAME });
  const { result, exceptionDetails } = await Runtime.callFunctionOn({
    functionDeclaration: String(inPage(fn as (...args: never[]) => unknown, helpers)),
    executionContextId,
    arguments: args.map((value) => ({ value })),
    awaitPromise: true,
    returnByValue: true,
  });
  if (exceptionDetails)
    throw new Error(`in-page code failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return result.value;
}
