// `make client`: @shutterbus/client into dist/client/, a package of its own (docs/api.md, "The
// client package"): src/client compiled by tsc to ESM with declarations, its options module
// written from the parameter tables (options.ts beside this file), its package.json, README and
// LICENSE. No runtime dependencies: `npm pack` there makes a tarball that installs anywhere.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { optionsModule } from './options.ts';

const root = path.join(import.meta.dirname, '../..');
const sources = path.join(root, 'src/client');
const work = path.join(root, 'dist/client-build');
const out = path.join(root, 'dist/client');
const service = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

rmSync(work, { recursive: true, force: true });
rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(work, 'src'), { recursive: true });

// The sources as they are, but for the options: in the checkout they are derived from the domain's
// types, in the package they are written out, so that it needs nothing of the service.
const files = readdirSync(sources).filter((name) => name.endsWith('.ts'));
for (const name of files) {
  if (name !== 'options.ts') copyFileSync(path.join(sources, name), path.join(work, 'src', name));
}
writeFileSync(path.join(work, 'src/options.ts'), optionsModule());

writeFileSync(
  path.join(work, 'tsconfig.json'),
  JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        declaration: true,
        rewriteRelativeImportExtensions: true,
        rootDir: 'src',
        outDir: out,
        newLine: 'lf',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(root, 'node_modules/@types')],
      },
      include: ['src'],
    },
    null,
    2,
  ),
);
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', work], { stdio: 'inherit' });
// The bin's declarations describe nothing a user imports.
rmSync(path.join(out, 'cli.d.ts'));
// tsc rewrites the `.ts` of relative imports in the JavaScript only; the declarations name the files that ship.
for (const name of readdirSync(out).filter((file) => file.endsWith('.d.ts'))) {
  const file = path.join(out, name);
  writeFileSync(file, readFileSync(file, 'utf8').replace(/(from '\.\/[\w-]+)\.ts'/g, "$1.js'"));
}
chmodSync(path.join(out, 'cli.js'), 0o755);

const manifest = {
  name: '@shutterbus/client',
  version: service.version,
  description:
    'Client of Shutterbus, the self-hostable screenshot service: render, sign URLs, follow renders, manage monitors, verify webhooks.',
  license: 'MIT',
  type: 'module',
  exports: {
    '.': { types: './index.d.ts', default: './index.js' },
    './package.json': './package.json',
  },
  types: './index.d.ts',
  bin: { 'shutterbus-client': './cli.js' },
  files: ['*.js', '*.d.ts', 'README.md', 'LICENSE'],
  engines: { node: '>=20' },
  sideEffects: ['./cli.js'],
  keywords: ['screenshot', 'shutterbus', 'screenshotone', 'webhook', 'playwright', 'pdf'],
};
writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(path.join(sources, 'README.md'), path.join(out, 'README.md'));
copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
process.stdout.write(`@shutterbus/client ${service.version} built into ${path.relative(root, out)}/\n`);
