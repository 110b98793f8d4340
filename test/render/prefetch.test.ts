// Chromium's files read ahead of its launch (src/render/prefetch.ts): a file the kernel had dropped
// from its page cache is in it again afterwards, as fincore(1) sees it.

import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromiumFiles, prefetch } from '../../src/render/prefetch.ts';

const test = suite('reading Chromium ahead');
const SIZE = 24 << 20;
// On the project's own disk, not on a /tmp that may live in memory, where nothing is ever dropped.
const dataDir = path.join(import.meta.dirname, '../../.data');
mkdirSync(dataDir, { recursive: true });
const dir = mkdtempSync(path.join(dataDir, 'prefetch-'));
const file = path.join(dir, 'chromium');

/** Bytes of `file` in the page cache. */
const cached = (name: string) =>
  Number(execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', name], { encoding: 'utf8' }).trim());

test.before(() => {
  const fd = openSync(file, 'w');
  for (let written = 0; written < SIZE; written += 1 << 20) writeSync(fd, randomBytes(1 << 20));
  // Written back first: the kernel drops only clean pages.
  fsyncSync(fd);
  closeSync(fd);
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('a file the page cache had dropped is in it again once read ahead', async () => {
  execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0'], { stdio: 'ignore' });
  assert.ok(cached(file) < SIZE / 8, `dropped first (${cached(file)} bytes cached)`);
  assert.is(await prefetch([file]), SIZE);
  assert.ok(cached(file) >= SIZE * 0.95, `${cached(file)} of ${SIZE} bytes cached`);
});

test('the files are the executable and the ICU and V8 data beside it; a missing one is passed over', async () => {
  const files = chromiumFiles(file);
  assert.equal(files, [file, path.join(dir, 'icudtl.dat'), path.join(dir, 'v8_context_snapshot.bin')]);
  assert.is(await prefetch(files), SIZE);
});

test.run();
