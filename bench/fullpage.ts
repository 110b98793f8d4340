// The full-page rows of `make bench`: a 1280 × 5,000 px page (bench/site.ts, tall) through
// /api/take with and without full_page_scroll, beside a raw Playwright full-page loop on the same
// page (one page reused, `page.screenshot({ fullPage: true })`, which does not scroll), in
// interleaved rounds; and what a capture costs by part, in raw Chromium over CDP, CPU from /proc.

import type { Browser } from 'playwright-core';
import { CpuMeter, labelTree, loop, median, medianLoop, perShot, turned, type LoopResult } from './measure.ts';
import type { BenchSite } from './site.ts';
import type { BenchStack } from './stack.ts';

export interface FullPageRows {
  loops: Record<string, LoopResult>;
  /** Each service loop's rate ÷ the raw loop's in the same round, and p50 ÷ the raw p50: the medians. */
  vsRaw: Record<string, { perSecond: number; p50: number }>;
  /** Each loop's file, in bytes (the page is the same each time): what the encoding's speed costs in size. */
  bytes: Record<string, number>;
  /** CPU ms a shot by process group, for each part of a raw capture (see measureParts). */
  parts: Record<string, Record<string, number>>;
}

const RAW = 'raw Playwright, fullPage, c=1';

/** The rows, `rounds` rounds of `shots` a loop. */
export async function measureFullPage(
  stack: BenchStack,
  site: BenchSite,
  browser: Browser,
  options: { rounds: number; shots: number; maxSeconds: number },
): Promise<FullPageRows> {
  const bytes: Record<string, number> = {};
  const take = async (name: string, params: Record<string, string>) => {
    const search = new URLSearchParams({ url: site.tall, full_page: 'true', ...params });
    const response = await fetch(`${stack.base}/api/take?${search}`, {
      headers: { 'x-access-key': stack.workspace.access_key },
    });
    const image = await response.arrayBuffer();
    if (response.status !== 200 || image.byteLength < 1000) throw new Error(`take answered ${response.status}`);
    bytes[name] = image.byteLength;
  };
  // A service loop: its name, and its shot with full_page_scroll as named.
  const service = (scroll: boolean, concurrency: number) => {
    const name = `full page, scroll ${scroll ? 'on' : 'off'}, c=${concurrency}`;
    return [name, { shot: () => take(name, scroll ? {} : { full_page_scroll: 'false' }), concurrency }] as const;
  };
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const sides: Record<string, { shot: () => Promise<void>; concurrency: number }> = {
    [RAW]: {
      shot: async () => {
        await page.goto(site.tall, { waitUntil: 'load' });
        bytes[RAW] = (await page.screenshot({ type: 'png', fullPage: true })).length;
      },
      concurrency: 1,
    },
    ...Object.fromEntries([service(true, 1), service(true, 2), service(false, 1), service(false, 2)]),
  };
  const rounds: Record<string, LoopResult[]> = Object.fromEntries(Object.keys(sides).map((name) => [name, []]));
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const name of turned(Object.keys(sides), round)) {
        const { shot, concurrency } = sides[name];
        rounds[name].push(
          await loop(shot, { concurrency, count: options.shots * concurrency, maxSeconds: options.maxSeconds }),
        );
      }
    }
  } finally {
    await context.close();
  }
  const vsRaw = (loops: LoopResult[], of: (l: LoopResult) => number) =>
    median(loops.map((l, round) => of(l) / of(rounds[RAW][round])));
  return {
    loops: Object.fromEntries(Object.entries(rounds).map(([name, loops]) => [name, medianLoop(loops)])),
    vsRaw: Object.fromEntries(
      Object.entries(rounds).map(([name, loops]) => [
        name,
        { perSecond: vsRaw(loops, (l) => l.perSecond), p50: vsRaw(loops, (l) => l.p50) },
      ]),
    ),
    bytes,
    parts: await measureParts(browser, site.tall, Math.max(4, Math.round(options.shots / 2))),
  };
}

/**
 * What a full-page capture of `url` costs by part, in raw Chromium over one CDP session, `shots`
 * each: the navigation alone; the navigation and a capture of the whole page as png (Chromium's
 * default zlib level), as png with optimizeForSpeed (its fastest zlib level), and as jpeg (quality
 * 80, no zlib at all). The captures less the navigation are the raster, readback and encoding;
 * png less fast png is zlib's extra work; jpeg bounds what is not png encoding.
 */
async function measureParts(
  browser: Browser,
  url: string,
  shots: number,
): Promise<Record<string, Record<string, number>>> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const session = await context.newCDPSession(page);
  const labels = () =>
    new Map([...labelTree([process.pid])].map(([pid, label]) => [pid, label === 'service' ? 'client' : label]));
  const capture = async (params: Record<string, unknown>) => {
    const { cssContentSize } = (await session.send('Page.getLayoutMetrics')) as {
      cssContentSize: { width: number; height: number };
    };
    await session.send('Page.captureScreenshot', {
      ...params,
      clip: { x: 0, y: 0, width: cssContentSize.width, height: cssContentSize.height, scale: 1 },
      captureBeyondViewport: true,
    });
  };
  const parts: Record<string, () => Promise<void>> = {
    'navigation only': async () => void (await page.goto(url, { waitUntil: 'load' })),
    'navigation + png': async () => {
      await page.goto(url, { waitUntil: 'load' });
      await capture({ format: 'png' });
    },
    'navigation + png, optimizeForSpeed': async () => {
      await page.goto(url, { waitUntil: 'load' });
      await capture({ format: 'png', optimizeForSpeed: true });
    },
    'navigation + jpeg q80': async () => {
      await page.goto(url, { waitUntil: 'load' });
      await capture({ format: 'jpeg', quality: 80 });
    },
  };
  const result: Record<string, Record<string, number>> = {};
  try {
    for (const [name, shot] of Object.entries(parts)) {
      await shot();
      const meter = new CpuMeter(labels).start();
      for (let i = 0; i < shots; i++) await shot();
      result[name] = perShot({}, meter.stop(), shots);
    }
  } finally {
    await context.close();
  }
  return result;
}

/** The rows as printed. */
export function fullPageLines(rows: FullPageRows, row: (name: string, r: LoopResult) => string): string[] {
  const ratio = (value: number) => (Math.round(value * 100) / 100).toFixed(2);
  const kb = (bytes: number | undefined) => String(Math.round((bytes ?? 0) / 1024));
  const kinds = ['client', 'chromium browser', 'chromium renderer', 'chromium gpu', 'total'];
  return [
    `${'full page 1280×5,000 png (rounds)'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  ÷ raw: shots/s  p50   KB`,
    ...Object.entries(rows.loops).map(
      ([name, r]) =>
        `${row(name, r)}  ${ratio(rows.vsRaw[name].perSecond).padStart(14)} ${ratio(rows.vsRaw[name].p50).padStart(5)} ${kb(rows.bytes[name]).padStart(5)}`,
    ),
    `${'a raw capture by part, CPU ms/shot'.padEnd(34)} ${kinds.map((kind) => kind.replace('chromium ', '').padStart(9)).join('')}`,
    ...Object.entries(rows.parts).map(
      ([name, cpu]) => `${name.padEnd(34)} ${kinds.map((kind) => (cpu[kind] ?? 0).toFixed(1).padStart(9)).join('')}`,
    ),
  ];
}
