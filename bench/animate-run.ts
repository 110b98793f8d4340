// `make bench ARGS=animate`: the animation rows alone (bench/animate.ts) on a stack of their own: a
// 5 s scrolling mp4 and gif of the heavy page, and one recording's effect on plain screenshots' p50.

import os from 'node:os';
import { animationLines, measureAnimations } from './animate.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const site = await startBenchSite();
const stack = await startBenchStack(site);
try {
  const animations = await measureAnimations(stack, site.heavy, site.light);
  process.stdout.write(
    `Animations, ${os.cpus().length} CPUs, ${new Date().toISOString()}\n\n${animationLines(animations).join('\n')}\n`,
  );
} finally {
  await stack.stop();
  await site.close();
}
