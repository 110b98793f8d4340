// Reading ahead what a start loads (src/read-ahead.ts): which files, and that reading them does put
// them in the file cache.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  existsSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_FILES, readAhead, START_FILES, startFiles } from '../src/read-ahead.ts';
import { cachedBytes } from './helpers/file-cache.ts';
import { CHROMIUM, startRenderRig } from './helpers/render.ts';
import { waitFor } from './helpers/wait.ts';

const test = suite('reading a start ahead');
let folder: string;
test.before(() => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-read-ahead-'));
});
test.after(() => {
  rmSync(folder, { recursive: true, force: true });
});

test("lists the build's files, then Chromium's executable and its data files", () => {
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
    'libvk_swiftshader.so',
    'libVkLayer_khronos_validation.so',
  ])
    writeFileSync(path.join(browser, name), '');
  chmodSync(path.join(browser, 'full-browser'), 0o755);

  const executablePath = path.join(browser, 'headless-shell');
  const [listed, chromium] = startFiles(path.join(root, 'dist'), { executablePath, dataDir: folder });
  assert.equal(listed, [path.join(root, 'dist/service.js'), path.join(root, 'node_modules/fastify/fastify.js')]);
  assert.is(chromium[0], executablePath, 'the executable first');
  assert.equal(
    chromium.slice(1).sort(),
    ['icudtl.dat', 'libEGL.so', 'resources.pak', 'v8_context_snapshot.bin'].map((name) => path.join(browser, name)),
    'its data files, not the Vulkan ones, the other browser beside it nor a folder',
  );
});

test('without a list, nothing; without Chromium, nothing of it', () => {
  assert.equal(startFiles(path.join(folder, 'nowhere')), [[]]);
});

test('what Chromium mapped at the last start is read instead of its folder, when it is of the same executable', () => {
  const dataDir = path.join(folder, 'data');
  mkdirSync(dataDir);
  const record = ['/usr/lib/chromium/headless_shell', '/usr/lib/x86_64-linux-gnu/libnss3.so'];
  writeFileSync(path.join(dataDir, CHROMIUM_FILES), `${record.join('\n')}\n`);
  const dist = path.join(folder, 'nowhere');
  assert.equal(startFiles(dist, { executablePath: record[0], dataDir })[1], record);
  assert.equal(
    startFiles(dist, { executablePath: path.join(folder, 'another-chromium'), dataDir })[1],
    [path.join(folder, 'another-chromium')],
    "another executable's record is not read",
  );
});

test('after its first render, a host records what its Chromium mapped: libraries, fonts, no shared memory', async () => {
  const dataDir = path.join(folder, 'recorded');
  mkdirSync(dataDir);
  const rig = await startRenderRig({ workspaceId: 'ws_read_ahead', host: { dataDir } });
  try {
    await rig.render('/');
    const record = path.join(dataDir, CHROMIUM_FILES);
    await waitFor(() => existsSync(record), 'the record written', 10_000);
    const files = readFileSync(record, 'utf8').trim().split('\n');
    assert.is(files[0], CHROMIUM, 'the executable first');
    assert.equal(startFiles(path.join(folder, 'nowhere'), { executablePath: CHROMIUM, dataDir })[1], files);
    assert.ok(
      files.some((file) => /\/lib[^/]*\.so[.\d]*$/.test(file) && !file.startsWith(path.dirname(CHROMIUM))),
      "the machine's shared libraries",
    );
    assert.ok(
      files.some((file) => /\.(ttf|otf|ttc)$/i.test(file)),
      'the fonts the page was drawn with',
    );
    assert.equal(
      files.filter(
        (file) => /^\/(dev|proc|sys)\//.test(file) || file.startsWith(os.tmpdir()) || !statSync(file).isFile(),
      ),
      [],
      'only files that outlive the browser',
    );
    assert.is(new Set(files).size, files.length, 'each once');
  } finally {
    await rig.stop();
  }
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
