// The last step of `npm run build`: fills dist/compile-cache with V8's compiled code of the bundle
// and of every package it imports, so that a first start (a new machine, a new container) reuses
// it instead of compiling ≈ 4 MB of JavaScript; `make run` and the image point NODE_COMPILE_CACHE
// here. Importing the bundle loads its modules without starting the service (src/main.ts starts
// only when run itself). Entries are keyed by Node's version and each file's path and contents,
// so a rebuild starts the directory afresh.
import { rmSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = path.join(import.meta.dirname, '..', 'dist');
const cache = path.join(dist, 'compile-cache');
rmSync(cache, { recursive: true, force: true });
module.enableCompileCache(cache);
await import(pathToFileURL(path.join(dist, 'main.js')).href);
module.flushCompileCache();
