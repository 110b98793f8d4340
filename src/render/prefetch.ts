// Chromium's own files read into the kernel's page cache ahead of its launch, so that a start on a
// machine whose file cache is cold (a new container, a node after a reboot) does not wait for the
// disk at the launch: the launch reads almost all of the executable (docs/performance.md, "Starting").
import { open } from 'node:fs/promises';
import path from 'node:path';

/** How much one read takes: a few large reads, through one buffer. */
const CHUNK_BYTES = 4 << 20;

/** The files of the browser at `executable` that its launch reads whole: the binary, ICU's data, V8's snapshot. */
export function chromiumFiles(executable: string): string[] {
  const dir = path.dirname(executable);
  return [executable, path.join(dir, 'icudtl.dat'), path.join(dir, 'v8_context_snapshot.bin')];
}

/**
 * Reads `files` one after another and throws the bytes away; resolves with how many were read. A
 * file that is missing or cannot be read is skipped: the launch reports what is wrong with it.
 */
export async function prefetch(files: string[]): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let total = 0;
  for (const file of files) {
    const handle = await open(file, 'r').catch(() => null);
    if (!handle) continue;
    try {
      for (let read = 1; read > 0; total += read)
        ({ bytesRead: read } = await handle.read(buffer, 0, CHUNK_BYTES, null));
    } catch {
      // Unreadable from here on: nothing to read ahead.
    } finally {
      await handle.close();
    }
  }
  return total;
}
