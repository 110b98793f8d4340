// Reading ahead what a start is about to load. On a machine whose file cache is cold (a new
// container, a machine just booted) a start waits on the disk a page at a time: Node faults in its
// own binary and each package file as it loads them, Chromium its executable and its data files as
// it launches, each a small read. The same files read ahead by other processes, several at a time
// and in the order they are needed, are in the cache before they are asked for
// (docs/performance.md, "Starting"). Where they are already cached, the reading costs `cat`s of the
// lowest priority copying them once.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The bundle's list of the files its start loads, one path a line relative to the project's root; the build writes it (infra/compile-cache.mjs). */
export const START_FILES = 'start-files.txt';

/** Chromium's own data files beside its executable: resources, ICU's data, V8's snapshots, its bundled libraries. */
const CHROMIUM_DATA = /\.(pak|dat|bin|so)$/;

/**
 * The files a start of the bundle in `dist` reads, as lists to read side by side: the files the
 * build listed, Node's binary and, for a process that renders, Chromium's executable and its data
 * files. A file that cannot be listed is left out.
 */
export function startFiles(dist: string, chromiumPath?: string): string[][] {
  const root = path.dirname(dist);
  let listed: string[] = [];
  try {
    listed = readFileSync(path.join(dist, START_FILES), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => path.resolve(root, line));
  } catch {
    // No list (a bundle built by hand): Node's binary is still worth reading.
  }
  const lists = [listed, [process.execPath]];
  if (chromiumPath) {
    const folder = path.dirname(chromiumPath);
    let data: string[] = [];
    try {
      data = readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile() && CHROMIUM_DATA.test(entry.name))
        .map((entry) => path.join(folder, entry.name));
    } catch {
      // The launch reports a missing browser.
    }
    lists.push([chromiumPath, ...data]);
  }
  return lists;
}

/** `cat`s reading one list at once: a start's files are mostly small, each a wait on the disk, so several are asked for together. */
const READERS = 8;
/** Files a reader takes at a time, in the list's order: what is needed first is read first. */
const FILES_A_READER = 24;

/**
 * Reads each list of `files` in order, READERS files at a time, in `cat`s of the lowest priority
 * whose output is discarded (`xargs` starts them), and returns at once. Nothing waits for it and
 * nothing it meets is an error: it only warms the file cache.
 */
export function readAhead(lists: string[][]): void {
  for (const files of lists) {
    if (files.length === 0) continue;
    try {
      const reader = spawn(
        'nice',
        ['-n', '19', 'xargs', '-0', '-P', String(READERS), '-n', String(FILES_A_READER), 'cat', '--'],
        { stdio: ['pipe', 'ignore', 'ignore'] },
      );
      reader.on('error', () => undefined);
      reader.stdin.on('error', () => undefined);
      reader.stdin.end(`${files.join('\0')}\0`);
      reader.unref();
    } catch {
      // No process could be started: the start reads its files itself, as it would anyway.
    }
  }
}
