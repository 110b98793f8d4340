// `make bench ARGS=cold`: start → first screenshot alone (bench/cold.ts), with the file cache warm
// (the stack's own start) and then evicted before each of three more starts.

import { coldStartLine, measureColdStarts } from './cold.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
try {
  const response = await fetch(`${stack.base}/api/take?url=${encodeURIComponent(site.light)}`, {
    headers: { 'x-access-key': stack.workspace.access_key },
  });
  await response.arrayBuffer();
  const warm = (performance.now() - stack.spawnedAt) / 1000;
  const cold = await measureColdStarts(stack, site.light);
  process.stdout.write(
    `start → first screenshot: ${warm.toFixed(2)} s (the file cache warm)\n${coldStartLine(cold)}\n`,
  );
} finally {
  await stack.stop();
  await site.close();
}
