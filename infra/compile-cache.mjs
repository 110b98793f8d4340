// The last step of `npm run build`. It fills dist/compile-cache with V8's compiled code of the
// service's bundle (dist/service.js) and of every package it imports, so that a first start (a new
// machine, a new container) reuses it instead of compiling ≈ 4 MB of JavaScript; `make run` and the
// image point NODE_COMPILE_CACHE here. Importing the bundle loads its modules without starting the
// service (src/main.ts starts only when run itself). Entries are keyed by Node's version and each
// file's path and contents, so a rebuild starts the directory afresh. It also lists, in
// dist/start-files.txt, the files that loading read (the bundle, each package file, the compiled
// code), in the order they were read: the entry reads them ahead of a start (src/read-ahead.ts).
// It loads them as a start does: the entry first, then the V8 flags the entry sets, then the
// bundle. V8 rejects code cached under other flags, and a first start would compile it all afresh.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.join(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const cache = path.join(dist, 'compile-cache');
rmSync(cache, { recursive: true, force: true });
module.enableCompileCache(cache);
const loaded = [];
module.registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) loaded.push(fileURLToPath(url));
    return nextLoad(url, context);
  },
});
const cached = () => {
  module.flushCompileCache();
  return readdirSync(cache, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
};
// The entry and its compiled code are read before it starts reading ahead: not listed.
const { tuneHeap } = await import(pathToFileURL(path.join(dist, 'main.js')).href);
tuneHeap();
loaded.length = 0;
const entryCode = new Set(cached());
await import(pathToFileURL(path.join(dist, 'service.js')).href);
const compiled = cached().filter((file) => !entryCode.has(file));
const files = [...new Set([...loaded, ...compiled])].map((file) => path.relative(root, file));
writeFileSync(path.join(dist, 'start-files.txt'), `${files.join('\n')}\n`);
