// Reading ahead what a start is about to load. On a machine whose file cache is cold (a new
// container, a machine just booted) a start waits on the disk a page at a time: Node reads each
// package file as it loads it, Chromium faults in its executable, its libraries, its data files and
// fonts as it launches and renders, each a small read. The same files read ahead by other
// processes, several at a time and in the order they are needed, are in the cache before they are
// asked for (docs/performance.md, "Starting"). Where they are already cached, the reading costs
// `cat`s of the lowest priority copying them once.

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The bundle's list of the files its start loads, one path a line relative to the project's root; the build writes it (infra/compile-cache.mjs). */
export const START_FILES = 'start-files.txt';

/**
 * In DATA_DIR: the files the last start's Chromium had mapped after its first render (its libraries,
 * fonts and fontconfig caches, its data files), one path a line, its executable first; written by
 * recordMappedFiles.
 */
export const CHROMIUM_FILES = 'chromium-files.txt';

/** Chromium's own data files beside its executable: resources, ICU's data, V8's snapshots, its bundled libraries. */
const CHROMIUM_DATA = /\.(pak|dat|bin|so)$/;
/** Beside them, and loaded only for Vulkan, which a render does not use: the validation layer and SwiftShader's driver. */
const VULKAN = /^lib(vk|VkLayer)_/;

/** Where a rendering process's Chromium is, and where its start's record of what it mapped is kept. */
export interface ChromiumStart {
  executablePath: string;
  dataDir: string;
}

/**
 * The files a start of the bundle in `dist` reads, as lists to read side by side: the files the
 * build listed and, for a process that renders, what its Chromium mapped the last time (the
 * record in DATA_DIR) or, without a record of that executable, the executable and the data files
 * beside it. Node's own binary is not read: Node has faulted in what it runs before this begins.
 * A file that cannot be listed is left out.
 */
export function startFiles(dist: string, chromium?: ChromiumStart): string[][] {
  const root = path.dirname(dist);
  const lists = [linesOf(path.join(dist, START_FILES)).map((line) => path.resolve(root, line))];
  if (chromium) {
    const recorded = linesOf(path.join(chromium.dataDir, CHROMIUM_FILES));
    lists.push(recorded[0] === chromium.executablePath ? recorded : chromiumFolder(chromium.executablePath));
  }
  return lists;
}

// A file's lines, none when it cannot be read (a bundle built by hand has no list, a first start no record).
function linesOf(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
  } catch {
    return [];
  }
}

// Chromium's executable and the data files beside it.
function chromiumFolder(executablePath: string): string[] {
  const folder = path.dirname(executablePath);
  try {
    const data = readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile() && CHROMIUM_DATA.test(entry.name) && !VULKAN.test(entry.name))
      .map((entry) => path.join(folder, entry.name));
    return [executablePath, ...data];
  } catch {
    // The launch reports a missing browser.
    return [executablePath];
  }
}

/**
 * Writes CHROMIUM_FILES into `start.dataDir`: every file `pids` (a Chromium's processes, the browser
 * first) have mapped, in the order first met, its executable first. Shared memory, devices, deleted
 * files and the temporary profile are left out. Returns the list; nothing it meets is an error (a
 * process whose maps this one may not read, or a DATA_DIR it cannot write, records less or nothing).
 */
export function recordMappedFiles(pids: number[], start: ChromiumStart): string[] {
  const files = new Set([start.executablePath]);
  const temporary = `${os.tmpdir()}/`;
  for (const pid of pids) {
    let maps = '';
    try {
      maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
    } catch {
      continue;
    }
    for (const line of maps.split('\n')) {
      // address perms offset device inode path; a path of its own only for a file (inode not 0).
      const mapped = /^\S+ \S+ \S+ \S+ ([1-9]\d*) +(\/.*)$/.exec(line)?.[2];
      if (
        mapped &&
        !/^\/(dev|proc|sys|memfd:)\//.test(mapped) &&
        !mapped.endsWith(' (deleted)') &&
        !mapped.startsWith(temporary)
      )
        files.add(mapped);
    }
  }
  const listed = [...files].filter((file) => {
    try {
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
  try {
    mkdirSync(start.dataDir, { recursive: true });
    const record = path.join(start.dataDir, CHROMIUM_FILES);
    writeFileSync(`${record}.${process.pid}`, `${listed.join('\n')}\n`);
    renameSync(`${record}.${process.pid}`, record);
  } catch {
    // The next start reads the folder's listing instead.
  }
  return listed;
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
