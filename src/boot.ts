// The bundle's entry (dist/main.js, what `make run` and the image start): reads ahead the files the
// start is about to load (src/read-ahead.ts), then loads the service (dist/service.js, the bundle
// of src/main.ts) and runs it. It imports only Node's modules and src/config.ts, so it runs before
// any package is loaded: the service's own imports would otherwise all load first. It also sets how
// V8 grows the heap (src/heap.ts) before the service allocates any of it.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig, type Config } from './config.ts';
import { tuneHeap } from './heap.ts';
import { readAhead, startFiles } from './read-ahead.ts';

// The build loads the bundle after the same V8 flags (infra/compile-cache.mjs): V8 takes compiled
// code only from a cache written under the flags it runs with.
export { tuneHeap };

/** The service's bundle, beside this one; a name the bundler leaves alone. */
const SERVICE = './service.js';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  tuneHeap();
  let config: Config | undefined;
  try {
    config = loadConfig();
  } catch {
    // The service loads it again and reports what is wrong with it.
  }
  const chromium = config?.roles.has('render')
    ? { executablePath: config.chromiumPath, dataDir: config.dataDir }
    : undefined;
  readAhead(startFiles(path.dirname(fileURLToPath(import.meta.url)), chromium));
  const service: typeof import('./main.ts') = await import(SERVICE);
  service.run(config);
}
