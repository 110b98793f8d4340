// The test runner behind `make test`: every test/**/*.test.ts in its own process, TEST_JOBS of them
// at once (2 by default, 1 on a one-CPU machine). A file's output is printed whole when it ends, so
// files running side by side never interleave.
// Usage: node --import tsx test/run.ts [substring ...]   (only files whose path contains one)
// The last line printed is always "N passed, N failed"; the exit code is 1 when anything failed.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
/**
 * Files run at once. Most of a file's time is spent waiting (on Chromium, NATS, a timer), so two
 * files share two CPUs well; more than two would push the tests that bound a wait in seconds.
 */
const jobs = Math.max(1, Number(process.env.TEST_JOBS) || Math.min(2, availableParallelism()));
const fileTimeoutMs = 5 * 60_000;
/**
 * Work some files need done first, once, outside any file's time limit, before the files run: the
 * production image (a cold build on a new machine takes minutes; an unchanged one, seconds).
 */
const setups: { for: (file: string) => boolean; what: string; command: string[] }[] = [
  { for: (file) => file.startsWith('test/image/'), what: 'the production image', command: ['infra/image.sh', 'build'] },
];
/** After uvu printed its summary, how long a file may keep running (open handles) before it is killed. */
const lingerAfterSummaryMs = 10_000;
/** Shows an error thrown in a suite's `before` hook (uvu hides it) and, on SIGUSR2, where the file is. */
const preload = './test/helpers/uvu-preload.ts';
/** How long a file that timed out is given to say where it hangs ("hung in: ..." on SIGUSR2). */
const askWhereMs = 2_000;

/** What one test file did. */
interface FileResult {
  file: string;
  /** Everything it printed, stdout and stderr in the order they came. */
  output: string;
  passed: number;
  failed: number;
  seconds: number;
  note?: string;
}

function findTestFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') found.push(...findTestFiles(full));
    } else if (entry.name.endsWith('.test.ts')) {
      found.push(path.relative(root, full));
    }
  }
  return found.sort();
}

const ansi = /\u001b\[[0-9;]*[A-Za-z]/g;

/** Reads uvu's closing summary ("Total:", "Passed:", "Skipped:"); the last one printed wins. */
export function parseUvuSummary(output: string): { passed: number; failed: number } | undefined {
  const text = output.replace(ansi, '');
  const last = (label: string) => {
    const all = [...text.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)\\s*$`, 'gm'))];
    return all.length > 0 ? Number(all[all.length - 1][1]) : undefined;
  };
  const total = last('Total');
  const passed = last('Passed');
  if (total === undefined || passed === undefined) return undefined;
  // uvu's Total counts the tests that ran; skipped ones are outside it.
  return { passed, failed: Math.max(0, total - passed) };
}

const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

// The children run in their own process groups, so a Ctrl-C must be passed on by hand.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) killGroup(child, 'SIGKILL');
    process.exit(130);
  });
}

function runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // Own process group: on a timeout the file and everything it started (servers, browsers) go together.
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', preload, file], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
    });
    running.add(child);
    let output = '';
    let note: string | undefined;
    let lingerTimer: NodeJS.Timeout | undefined;

    const onOutput = (chunk: Buffer) => {
      output += chunk.toString();
      if (!lingerTimer && /Duration:/.test(output.replace(ansi, ''))) {
        lingerTimer = setTimeout(() => {
          note = `still running ${lingerAfterSummaryMs / 1000}s after its summary (open handles?), killed`;
          killGroup(child, 'SIGKILL');
        }, lingerAfterSummaryMs);
      }
    };
    child.stdout!.on('data', onOutput);
    child.stderr!.on('data', onOutput);

    // A file out of time is first asked where it is, so the summary names the test that hung.
    let askTimer: NodeJS.Timeout | undefined;
    const timeout = setTimeout(() => {
      note = `timed out after ${fileTimeoutMs / 1000}s, killed`;
      child.kill('SIGUSR2');
      askTimer = setTimeout(() => {
        const at = [...output.replace(ansi, '').matchAll(/^hung in: (.*)$/gm)].at(-1)?.[1];
        if (at) note = `timed out after ${fileTimeoutMs / 1000}s in "${at}", killed`;
        killGroup(child, 'SIGKILL');
      }, askWhereMs);
    }, fileTimeoutMs);

    child.once('error', (error) => {
      note = `could not start: ${error.message}`;
    });
    child.once('close', (code, signal) => {
      clearTimeout(timeout);
      clearTimeout(askTimer);
      clearTimeout(lingerTimer);
      running.delete(child);
      // Leftovers of a file that exited on its own (a server it forgot to stop) go as well.
      killGroup(child, 'SIGKILL');
      const summary = parseUvuSummary(output);
      const seconds = (Date.now() - started) / 1000;
      const passed = summary?.passed ?? 0;
      let failed = summary?.failed ?? 0;
      const lingered = note?.startsWith('still running') ?? false;
      if (!summary && code !== 0) {
        failed = 1;
        note ??= `exited with ${signal ?? `code ${code}`} before a uvu summary`;
      } else if (code !== 0 && failed === 0 && !lingered) {
        // A hook failed, or the file crashed after its tests: never let that pass silently.
        failed = 1;
        note ??= `exited with ${signal ?? `code ${code}`} although its tests passed`;
      } else if (!summary) {
        note ??= 'no uvu summary (no tests?)';
      }
      if (note?.startsWith('timed out')) failed = Math.max(failed, 1);
      resolve({ file, output, passed, failed, seconds, note });
    });
  });
}

/** Runs a set-up step, its output kept in a log file; null when it worked, else the note its files fail with. */
async function runSetup(what: string, command: string[]): Promise<string | null> {
  const started = Date.now();
  const log = path.join(root, '.data', `setup-${path.basename(command[0]).replace(/\W+/g, '-')}.log`);
  mkdirSync(path.dirname(log), { recursive: true });
  const out = openSync(log, 'w');
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(command[0], command.slice(1), { cwd: root, stdio: ['ignore', out, out] });
    child.once('error', () => resolve(null));
    child.once('close', resolve);
  });
  closeSync(out);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (code === 0) {
    console.log(`set-up: ${what} (${command.join(' ')}): ${seconds}s, log in ${path.relative(root, log)}`);
    return null;
  }
  const tail = readFileSync(log, 'utf8').split('\n').slice(-30).join('\n');
  console.log(`set-up: ${what} (${command.join(' ')}) failed after ${seconds}s:\n${tail}`);
  return `set-up failed: ${what}, see ${path.relative(root, log)}`;
}

async function main(): Promise<number> {
  const filters = process.argv.slice(2);
  const files = findTestFiles(path.join(root, 'test')).filter(
    (file) => filters.length === 0 || filters.some((filter) => file.includes(filter)),
  );
  const started = Date.now();
  const results: FileResult[] = [];
  const failedSetups = new Map<string, string>();
  for (const setup of setups.filter((setup) => files.some(setup.for))) {
    const note = await runSetup(setup.what, setup.command);
    if (note) for (const file of files.filter(setup.for)) failedSetups.set(file, note);
  }
  for (const [file, note] of failedSetups) results.push({ file, output: '', passed: 0, failed: 1, seconds: 0, note });
  const queue = files.filter((file) => !failedSetups.has(file));
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      // A file that hangs until its time limit is killed and counted as failed: a hang is a bug to
      // find (the note names the file), never run again until it happens to pass.
      const result = await runFile(file);
      process.stdout.write(`\n━━ ${file}\n${result.output}`);
      results.push(result);
    }
  };
  const lanes = Math.max(1, Math.min(jobs, files.length));
  await Promise.all(Array.from({ length: lanes }, worker));
  results.sort((a, b) => files.indexOf(a.file) - files.indexOf(b.file));

  const passed = results.reduce((sum, r) => sum + r.passed, 0);
  const failed = results.reduce((sum, r) => sum + r.failed, 0);
  console.log(`\nSummary (${lanes} at a time, ${((Date.now() - started) / 1000).toFixed(0)}s in all)`);
  for (const r of results) {
    const mark = r.failed > 0 ? 'FAIL' : 'ok  ';
    const note = r.note ? `  (${r.note})` : '';
    console.log(`  ${mark} ${r.file}  ${r.passed} passed, ${r.failed} failed, ${r.seconds.toFixed(1)}s${note}`);
  }
  if (files.length === 0) console.log(`  no test files${filters.length ? ` matching ${filters.join(', ')}` : ''}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 || passed === 0 ? 1 : 0;
}

process.exitCode = await main();
