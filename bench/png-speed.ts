// `make bench ARGS=png`: Chromium's PNG encoding with and without its fast path
// (Page.captureScreenshot's optimizeForSpeed), on the bench pages, captures alternated one by one:
// wall time per capture, the browser's CPU per capture, and the file's size.

import os from 'node:os';
import { chromium } from 'playwright-core';
import { chromiumArgs } from '../src/render/browser/chromium.ts';
import { randomUUID } from 'node:crypto';
import { cpuMs, findProcess, percentile, processTree } from './measure.ts';
import { startBenchSite } from './site.ts';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const SHOTS = 40;

const site = await startBenchSite();
const marker = `--shutterbus-bench=${randomUUID()}`;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...chromiumArgs(), marker] });
const root = findProcess([marker]);
const chromiumPids = () => (root === null ? [] : processTree([root]));
const cases: Array<{ name: string; url: string; width: number; height: number; fullPage?: boolean }> = [
  { name: 'light, 1280×720', url: site.light, width: 1280, height: 720 },
  { name: 'heavy, 1280×720', url: site.heavy, width: 1280, height: 720 },
  { name: 'heavy, full page', url: site.heavy, width: 1280, height: 720, fullPage: true },
  { name: 'light, 1920×1080', url: site.light, width: 1920, height: 1080 },
];
const lines = [
  `PNG capture, ${os.cpus().length} CPUs: optimizeForSpeed off / on (${SHOTS} captures each, alternated)`,
  '',
];
lines.push(
  `${'page'.padEnd(20)} ${'ms p50 off'.padStart(10)} ${'on'.padStart(6)}  ${'CPU ms off'.padStart(10)} ${'on'.padStart(6)}  ${'KB off'.padStart(8)} ${'on'.padStart(8)}  size ×`,
);
const results: Record<string, unknown> = {};
for (const c of cases) {
  const context = await browser.newContext({ viewport: { width: c.width, height: c.height } });
  const page = await context.newPage();
  const session = await context.newCDPSession(page);
  await page.goto(c.url, { waitUntil: 'load' });
  const clip = c.fullPage
    ? await page.evaluate(() => ({
        x: 0,
        y: 0,
        width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight,
        scale: 1,
      }))
    : undefined;
  const pids = chromiumPids();
  const side = { off: { ms: [] as number[], cpu: 0, bytes: 0 }, on: { ms: [] as number[], cpu: 0, bytes: 0 } };
  for (let i = 0; i < SHOTS * 2; i++) {
    const fast = i % 2 === 1;
    const cpuBefore = pids.reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);
    const started = performance.now();
    const shot = await session.send('Page.captureScreenshot', {
      format: 'png',
      ...(fast ? { optimizeForSpeed: true } : {}),
      ...(clip ? { clip, captureBeyondViewport: true } : {}),
    });
    const ms = performance.now() - started;
    const cpuAfter = pids.reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);
    const s = fast ? side.on : side.off;
    s.ms.push(ms);
    s.cpu += cpuAfter - cpuBefore;
    s.bytes = Buffer.from(shot.data, 'base64').length;
  }
  await context.close();
  const p50 = (values: number[]) => percentile(values, 50);
  results[c.name] = {
    off: { p50: p50(side.off.ms), cpuMs: side.off.cpu / SHOTS, bytes: side.off.bytes },
    on: { p50: p50(side.on.ms), cpuMs: side.on.cpu / SHOTS, bytes: side.on.bytes },
  };
  lines.push(
    `${c.name.padEnd(20)} ${p50(side.off.ms).toFixed(1).padStart(10)} ${p50(side.on.ms).toFixed(1).padStart(6)}  ${(side.off.cpu / SHOTS).toFixed(1).padStart(10)} ${(side.on.cpu / SHOTS).toFixed(1).padStart(6)}  ${(side.off.bytes / 1024).toFixed(0).padStart(8)} ${(side.on.bytes / 1024).toFixed(0).padStart(8)}  ${(side.on.bytes / side.off.bytes).toFixed(2)}`,
  );
}
await browser.close();
await site.close();
process.stdout.write(`${lines.join('\n')}\n`);
process.stdout.write(`${JSON.stringify(results)}\n`);
