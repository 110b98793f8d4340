// `make bench ARGS=tenants`: the many-workspace rows alone (bench/tenants.ts, bench/mix.ts), on a stack of their
// own, so that no earlier row's warm pages count in their memory.

import os from 'node:os';
import { chromium } from 'playwright-core';
import type { LoopResult } from './measure.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';
import { measureMix, mixLines } from './mix.ts';
import { measureRawRoundRobin, measureTenants, rawRoundRobinLine, tenantLines } from './tenants.ts';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
const row = (name: string, r: LoopResult) =>
  `${name.padEnd(34)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}`;
try {
  const tenants = await measureTenants(stack, site.light, { rounds: 5, shots: 120, maxSeconds: 15 });
  const mix = await measureMix(stack, site, { rounds: 5, shots: 120, maxSeconds: 30 });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH });
  const raw = await measureRawRoundRobin(browser, site.light, { rounds: 3, shots: 48 }).finally(() => browser.close());
  process.stdout.write(
    `Many workspaces, ${os.cpus().length} CPUs, ${new Date().toISOString()}\n\n${[...tenantLines(tenants, row), rawRoundRobinLine(raw), '', ...mixLines(mix)].join('\n')}\n`,
  );
} finally {
  await stack.stop();
  await site.close();
}
