// Start → first screenshot on a machine whose file cache is cold. Before each start the page cache
// drops every page it holds of the files a start reads: the shared libraries and Chromium under
// /usr/lib, the fonts and their cache, the project's Node, node_modules, the bundle and V8's
// compiled code of it (NODE_COMPILE_CACHE, as `make run` sets it). Node has no call for that, so
// python3 asks the kernel (posix_fadvise DONTNEED, no privilege needed; dropping the whole cache
// through /proc/sys/vm/drop_caches would need one). A page mapped by a running process stays, so
// nothing else may run Chromium meanwhile: the row says how much of Chromium's binary was still
// cached when the service started.

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { percentile } from './measure.ts';
import type { BenchStack } from './stack.ts';
import { cachedBytes } from '../test/helpers/file-cache.ts';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const ROUNDS = 3;
const project = path.join(import.meta.dirname, '..');
const ROOTS = [
  '/usr/lib',
  '/usr/share/fonts',
  '/var/cache/fontconfig',
  path.join(project, '.tools'),
  path.join(project, 'node_modules'),
  path.join(project, 'dist'),
];

const EVICT = `
import os, stat, sys
count = 0
for root in sys.argv[1:]:
    for folder, _, names in os.walk(root):
        for name in names:
            file = os.path.join(folder, name)
            try:
                if not stat.S_ISREG(os.lstat(file).st_mode):
                    continue
                fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
print(count)
`;

/** Drops the page cache's copy of every file under `roots`; how many files it was asked of, or null without python3. */
function evictFileCache(roots: string[]): number | null {
  const run = spawnSync('python3', ['-c', EVICT, ...roots], { encoding: 'utf8' });
  return run.status === 0 ? Number(run.stdout.trim()) : null;
}

/** MB of `file` in the page cache, or null without fincore. */
function cachedMb(file: string): number | null {
  const bytes = cachedBytes(file);
  return bytes === null ? null : Math.round(bytes / 1024 / 1024);
}

/** The cold starts: seconds from spawn to the first screenshot, each round, and their median. */
export interface ColdStarts {
  seconds: number[];
  median: number | null;
  filesEvicted: number | null;
  /** MB of Chromium's binary still cached as each service started (pages mapped elsewhere stay). */
  chromiumCachedMb: (number | null)[];
}

/**
 * Stops the stack's service and starts another ROUNDS times, each on an evicted file cache, timing
 * each start to its first screenshot of `url`. Call it last: the stack's own service stays stopped.
 */
export async function measureColdStarts(stack: BenchStack, url: string): Promise<ColdStarts> {
  const seconds: number[] = [];
  const chromiumCachedMb: (number | null)[] = [];
  let filesEvicted: number | null = null;
  for (let round = 0; round < ROUNDS; round++) {
    const service = await stack.spawnAnother(async () => {
      filesEvicted = evictFileCache([...ROOTS, stack.compileCache]);
      chromiumCachedMb.push(cachedMb(CHROMIUM));
    });
    try {
      if (filesEvicted === null) break;
      const response = await fetch(`${service.base}/api/take?url=${encodeURIComponent(url)}`, {
        headers: { 'x-access-key': stack.workspace.access_key },
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`the first take answered ${response.status}`);
      seconds.push((performance.now() - service.spawnedAt) / 1000);
    } finally {
      await service.stop();
    }
  }
  const median = seconds.length > 0 ? Math.round(percentile(seconds, 50) * 100) / 100 : null;
  return { seconds, median, filesEvicted, chromiumCachedMb };
}

/** The table's line for the cold starts. */
export function coldStartLine(cold: ColdStarts): string {
  if (cold.median === null) return 'start → first screenshot, file cache cold: n/a (python3 is needed to evict it)';
  const cached = cold.chromiumCachedMb.map((mb) => mb ?? '?').join(' ');
  return `start → first screenshot, file cache cold: ${cold.median.toFixed(2)} s (median; rounds ${cold.seconds.map((s) => s.toFixed(2)).join(' ')}; ${cold.filesEvicted} files evicted; Chromium's binary still cached: ${cached} MB)`;
}
