// Runs the real `shutterbus` CLI against a test stack.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestStack } from './service.ts';

const bin = fileURLToPath(new URL('../../bin/shutterbus.js', import.meta.url));

/** One CLI run: exit code and parsed JSON output (stdout on success, stderr on failure). */
export interface CliResult {
  code: number;
  json: Record<string, any>;
  stdout: string;
  stderr: string;
}

/** The longest one CLI command may take in a test before it is killed and the test fails. */
const commandTimeoutMs = 120_000;

/** Runs `shutterbus ...args` with the stack's environment (or any environment: `{ env }`). */
export function shutterbus(stack: Pick<TestStack, 'env'>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ...stack.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    // A command that never ends fails the test naming itself, not the whole file at its time limit.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`shutterbus ${args.join(' ')}: not done within ${commandTimeoutMs / 1000} s\n${stderr}`));
    }, commandTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // A failure is one JSON line on stderr, the last one (docs/operations.md).
      const text = code === 0 ? stdout : (stderr.trim().split('\n').at(-1) ?? '');
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(text);
      } catch {
        json = { unparsed: text };
      }
      resolve({ code: code ?? -1, json, stdout, stderr });
    });
  });
}
