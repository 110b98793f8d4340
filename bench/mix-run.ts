// `make bench ARGS=mix`: the production-like mix alone (bench/mix.ts), one workspace beside 200 by
// Zipf, on a stack of its own. BENCH_SHOTS and BENCH_ROUNDS make a shorter run.

import os from 'node:os';
import { measureMix, mixLines } from './mix.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
try {
  const mix = await measureMix(stack, site, {
    rounds: Number(process.env.BENCH_ROUNDS) || 5,
    shots: Number(process.env.BENCH_SHOTS) || 160,
    maxSeconds: 40,
  });
  process.stdout.write(`Mix, ${os.cpus().length} CPUs, ${new Date().toISOString()}\n\n${mixLines(mix).join('\n')}\n`);
} finally {
  await stack.stop();
  await site.close();
}
process.exit(0);
