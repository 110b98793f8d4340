// Closing a Chromium page in a test without the risk of waiting forever.
import type { Page } from 'playwright-core';

/** How long a close may take before it is sent again. */
const CLOSE_AGAIN_AFTER_MS = 1000;
/** How long a page may take to close at all before the test fails saying so. */
const CLOSE_LIMIT_MS = 15_000;

/**
 * Closes `page`. Chromium can answer a close that races a navigation's commit (a page closed right
 * after a form's redirect landed) with success and then drop it (crbug.com/536385539); Playwright's
 * page.close() has no time limit and would then wait for good. So a close still pending after a
 * second is sent again, from a browser session, every second until the page is gone; after 15 s
 * the test fails saying so instead of hanging.
 */
export async function closePage(page: Page): Promise<void> {
  const closed = page.close().then(() => true);
  const deadline = Date.now() + CLOSE_LIMIT_MS;
  let targetId: string | undefined;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => (timer = setTimeout(resolve, CLOSE_AGAIN_AFTER_MS, false)));
    if (await Promise.race([closed, waited]).finally(() => clearTimeout(timer))) return;
    if (Date.now() > deadline) throw new Error(`page ${page.url()} did not close within ${CLOSE_LIMIT_MS} ms`);
    targetId ??= await targetIdOf(page).catch(() => undefined);
    const browser = page.context().browser();
    if (!targetId || !browser) continue;
    const session = await browser.newBrowserCDPSession();
    await session.send('Target.closeTarget', { targetId }).catch(() => undefined);
    await session.detach().catch(() => undefined);
  }
}

async function targetIdOf(page: Page): Promise<string> {
  const session = await page.context().newCDPSession(page);
  try {
    return (await session.send('Target.getTargetInfo')).targetInfo.targetId;
  } finally {
    await session.detach().catch(() => undefined);
  }
}
