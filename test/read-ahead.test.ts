// Reading ahead what a start loads (src/read-ahead.ts): which files, and that reading them does put
// them in the file cache.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readAhead, START_FILES, startFiles } from '../src/read-ahead.ts';
import { cachedBytes } from './helpers/file-cache.ts';
import { waitFor } from './helpers/wait.ts';

const test = suite('reading a start ahead');
let folder: string;
test.before(() => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-read-ahead-'));
});
test.after(() => {
  rmSync(folder, { recursive: true, force: true });
});

test("lists the build's files, Node's binary, then Chromium's executable and its data files", () => {
  const root = path.join(folder, 'project');
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  writeFileSync(path.join(root, 'dist', START_FILES), 'dist/service.js\nnode_modules/fastify/fastify.js\n');
  const browser = path.join(folder, 'chromium');
  mkdirSync(path.join(browser, 'locales'), { recursive: true });
  for (const name of [
    'headless-shell',
    'full-browser',
    'resources.pak',
    'icudtl.dat',
    'v8_context_snapshot.bin',
    'libEGL.so',
  ])
    writeFileSync(path.join(browser, name), '');
  chmodSync(path.join(browser, 'full-browser'), 0o755);

  const [listed, node, chromium] = startFiles(path.join(root, 'dist'), path.join(browser, 'headless-shell'));
  assert.equal(listed, [path.join(root, 'dist/service.js'), path.join(root, 'node_modules/fastify/fastify.js')]);
  assert.equal(node, [process.execPath]);
  assert.is(chromium[0], path.join(browser, 'headless-shell'), 'the executable first');
  assert.equal(
    chromium.slice(1).sort(),
    ['icudtl.dat', 'libEGL.so', 'resources.pak', 'v8_context_snapshot.bin'].map((name) => path.join(browser, name)),
    'its data files, not the other browser beside it nor a folder',
  );
});

test("without a list, Node's binary; without Chromium, nothing of it", () => {
  assert.equal(startFiles(path.join(folder, 'nowhere')), [[], [process.execPath]]);
});

test('puts every listed file in the file cache, in the background', async () => {
  const files = [0, 1, 2].map((i) => path.join(folder, `part-${i}.bin`));
  for (const file of files) {
    const fd = openSync(file, 'w');
    writeSync(fd, randomBytes(8 << 20));
    fsyncSync(fd);
    closeSync(fd);
    // GNU dd's way of dropping a whole file's clean pages from the cache.
    spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  }
  assert.equal(files.map(cachedBytes), [0, 0, 0], 'evicted');
  readAhead([files.slice(0, 2), [files[2], path.join(folder, 'missing.bin')]]);
  await waitFor(() => files.every((file) => cachedBytes(file) === 8 << 20), 'every file read whole', 10_000);
});

test.run();
