// `npm run build`: the service's bundle (dist/service.js, from src/main.ts), its entry (dist/main.js,
// from src/boot.ts), then V8's compiled code of them (infra/compile-cache.mjs).
//
// The service's bundle holds the packages it loads as it starts, so a start reads and resolves one
// file where it read ≈ 390 (docs/performance.md, "Starting"). Left in node_modules: the packages it
// loads only when a feature asks (the API reference, tracing, mail, blocking, markdown, image
// conversion, PDF documents: bundled, their source would add to every start's parse), and those
// that find files beside their own code at run time: Playwright (its browsers.json and its
// in-process server), pino (its transports run worker threads from its files), the Swagger UI (its
// static pages).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.join(import.meta.dirname, '..');
const dist = path.join(root, 'dist');

const LOADED_WHEN_ASKED = [
  '@fastify/swagger',
  '@opentelemetry/*',
  'nodemailer',
  '@ghostery/adblocker',
  'node-html-markdown',
  'sharp',
  'pdf-lib',
  '@pdf-lib/fontkit',
];
const FINDS_ITS_FILES = ['playwright-core', 'pino', '@fastify/swagger-ui'];

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node26',
  sourcemap: true,
  logLevel: 'warning',
};

await build({
  ...common,
  entryPoints: [path.join(root, 'src/main.ts')],
  outfile: path.join(dist, 'service.js'),
  external: [...LOADED_WHEN_ASKED, ...FINDS_ITS_FILES],
  // The CommonJS packages inside call require() for Node's modules and for the packages left outside.
  banner: {
    js: "import { createRequire as createBundleRequire } from 'node:module';\nconst require = createBundleRequire(import.meta.url);",
  },
});
// The entry imports only Node's modules and src/config.ts (src/boot.ts says why).
await build({
  ...common,
  entryPoints: [path.join(root, 'src/boot.ts')],
  outfile: path.join(dist, 'main.js'),
  packages: 'external',
});
execFileSync(process.execPath, [path.join(root, 'infra/compile-cache.mjs')], { stdio: 'inherit' });
