// The production image: its size, and start → first screenshot of a container of it (all roles in
// one container, as the image test runs it: read-only, the seccomp profile, not root) against a
// NATS, the s3rver store and the fixture site on loopback. `make bench` builds the image first with
// infra/image.sh (seconds when nothing changed); `make bench ARGS=image` runs these rows alone.

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { median } from './measure.ts';
import { IMAGE, podman, startContainer } from '../test/helpers/containers.ts';
import { createWorkspace, startStack } from '../test/helpers/service.ts';
import { freePort } from '../test/helpers/stack.ts';

const ROUNDS = 3;
const project = path.join(import.meta.dirname, '..');

/** The image's size and its starts. */
export interface ImageFigures {
  sizeMb: number;
  /** Seconds from `podman run` to the first screenshot answered, each round. */
  firstShotSeconds: number[];
  median: number;
}

/** Builds the image (cached), then starts a container of it ROUNDS times, each to its first screenshot. */
export async function measureImage(): Promise<ImageFigures> {
  execFileSync(path.join(project, 'infra/image.sh'), ['build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const sizeMb = Math.round(Number(await podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE])) / 1e6);
  const stack = await startStack();
  const firstShotSeconds: number[] = [];
  try {
    const workspace = await createWorkspace(stack);
    const { DATA_DIR: _hostDir, ...env } = stack.env;
    for (let round = 0; round < ROUNDS; round++) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const started = performance.now();
      const container = await startContainer(`shutterbus-bench-${process.pid}-${round}`, {
        ...env,
        HOST: '127.0.0.1',
        PORT: String(port),
        BASE_URL: base,
      });
      try {
        const url = `${base}/api/take?url=${encodeURIComponent(`${stack.site.url}/`)}`;
        for (;;) {
          const answer = await fetch(url, { headers: { 'x-access-key': workspace.access_key } }).catch(() => null);
          if (answer?.ok) break;
          await answer?.arrayBuffer();
          if (performance.now() - started > 120_000) throw new Error(`no screenshot:\n${await container.logs()}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        firstShotSeconds.push((performance.now() - started) / 1000);
      } finally {
        await container.remove();
      }
    }
  } finally {
    await stack.stop();
  }
  return { sizeMb, firstShotSeconds, median: median(firstShotSeconds) };
}

/** The rows `make bench` prints. */
export function imageLines(figures: ImageFigures): string[] {
  return [
    `image ${IMAGE}: ${figures.sizeMb} MB`,
    `image start → first screenshot (podman run, every role in one container): ${figures.median.toFixed(2)} s median of ${figures.firstShotSeconds.map((s) => s.toFixed(2)).join(' ')}`,
  ];
}
