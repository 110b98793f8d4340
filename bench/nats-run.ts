// `make bench ARGS=nats`: what one render costs NATS (bench/nats-ops.ts), alone on a stack of its own.

import { kvTurnsLines, measureKvTurns } from './kv-turns.ts';
import { measureNatsCost, natsCostLines, takeShots } from './nats-ops.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
try {
  // Warm: the browsers' first pages, the workspace in the ingress's cache.
  await takeShots(stack.base, stack.workspace.access_key, site.light, 10, 2);
  const costs = await measureNatsCost(stack, site.light, Number(process.env.NATS_BENCH_RENDERS || 60));
  process.stdout.write(`${natsCostLines(costs).join('\n')}\n`);
} finally {
  await stack.stop();
  await site.close();
}
process.stdout.write(`${kvTurnsLines(await measureKvTurns()).join('\n')}\n`);
