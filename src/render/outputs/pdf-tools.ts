// Debian's PDF tools, Ghostscript (PDF/A) and qpdf (encryption), each spawned per render: in a
// scratch folder only this process can read, under a memory limit (prlimit), killed at the
// render's deadline, with no network (neither tool fetches anything; Ghostscript runs -dSAFER).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../errors.ts';

/** The tools: Debian's, installed by infra/local.sh and the production image. */
export const GHOSTSCRIPT = '/usr/bin/gs';
export const QPDF = '/usr/bin/qpdf';
const PRLIMIT = '/usr/bin/prlimit';

/** The address space one tool may take (Ghostscript on a long document stays under 200 MB). */
export const PDF_TOOL_MEMORY_BYTES = 1024 * 1024 * 1024;

/** The last lines a tool wrote to stderr: for the log only, never for a caller. */
const STDERR_KEPT = 4096;

/**
 * Runs `binary` with `args` under the memory limit; `stdin` (arguments a tool reads from its
 * standard input, such as passwords, which a command line would show to every local user) is
 * written to it. Killed (SIGKILL) when `deadline` aborts: rejects then with the deadline's reason,
 * and on an exit code not in `success` with an internal error naming it.
 */
export function runPdfTool(
  binary: string,
  args: string[],
  deadline: AbortSignal,
  stdin = '',
  success: readonly number[] = [0],
): Promise<void> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  const child = spawn(PRLIMIT, [`--as=${PDF_TOOL_MEMORY_BYTES}`, '--', binary, ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
  });
  // A tool that exits before reading its stdin surfaces as its exit below, not as a stream error.
  child.stdin.on('error', () => {});
  child.stdin.end(stdin);
  const kill = () => child.kill('SIGKILL');
  deadline.addEventListener('abort', kill, { once: true });
  return new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new ServiceError('internal_application_error', {}, { cause: error })));
    child.once('close', (code, signal) => {
      deadline.removeEventListener('abort', kill);
      if (code !== null && success.includes(code)) return resolve();
      if (deadline.aborted) return reject(deadline.reason);
      const name = binary.slice(binary.lastIndexOf('/') + 1);
      reject(
        new ServiceError(
          'internal_application_error',
          {},
          { cause: new Error(`${name} ${signal ?? `exit ${code}`}: ${stderr.trim()}`) },
        ),
      );
    });
  });
}

/** Runs `work` in a fresh folder of its own (mode 0700), removed afterwards whatever happens. */
export async function inScratch<T>(work: (folder: string) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(join(tmpdir(), 'shutterbus-pdf-'));
  try {
    return await work(folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
