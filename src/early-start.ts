// The first of the service's own modules to run when it is started (src/main.ts imports it first):
// Chromium's files are read ahead while the rest of the modules load, as a render worker launches the
// browser as soon as they have (src/render/prefetch.ts).
import { pathToFileURL } from 'node:url';
import { loadConfig } from './config.ts';
import { chromiumFiles, prefetch } from './render/prefetch.ts';

// Started as the service: in the bundle (node dist/main.js) this module's URL is the entry's. Not
// when the bundle is only imported (the build primes V8's compile cache that way), nor under tsx.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const config = loadConfig();
    if (config.roles.has('render')) void prefetch(chromiumFiles(config.chromiumPath));
  } catch {
    // A bad configuration: main() reports it.
  }
}
