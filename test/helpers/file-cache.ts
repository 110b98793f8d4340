// How much of a file the kernel's page cache holds, for the tests and the cold-start bench.
import { spawnSync } from 'node:child_process';

/** Bytes of `file` in the page cache (util-linux's fincore), or null where fincore cannot tell. */
export function cachedBytes(file: string): number | null {
  const run = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' });
  return run.status === 0 ? Number(run.stdout.trim()) : null;
}
