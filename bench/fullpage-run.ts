// `make bench ARGS=fullpage`: the full-page rows alone (bench/fullpage.ts) on a stack of their own.
// BENCH_SHOTS and BENCH_ROUNDS make a shorter run.

import os from 'node:os';
import { chromium } from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';
import { fullPageLines, measureFullPage } from './fullpage.ts';
import type { LoopResult } from './measure.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH });
const row = (name: string, r: LoopResult) =>
  `${name.padEnd(34)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}`;
try {
  const rows = await measureFullPage(stack, site, browser, {
    rounds: Number(process.env.BENCH_ROUNDS) || 3,
    shots: Number(process.env.BENCH_SHOTS) || 8,
    maxSeconds: 30,
  });
  process.stdout.write(
    `Full pages, ${os.cpus().length} CPUs, ${new Date().toISOString()}\n\n${fullPageLines(rows, row).join('\n')}\n`,
  );
} finally {
  await browser.close();
  await stack.stop();
  await site.close();
}
process.exit(0);
