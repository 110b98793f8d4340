// What this machine (or its container) gives a worker, and the render settings' defaults sized
// from it: read by the loader (src/config.ts) when a variable is unset.
import os from 'node:os';

/** The CPUs this process may run on. */
function machineCpus(): number {
  return Math.max(1, os.availableParallelism());
}

/** The machine's memory, or the container's limit where that is lower (cgroups), in bytes. */
function machineMemoryBytes(): number {
  const limit = process.constrainedMemory();
  return limit > 0 ? Math.min(limit, os.totalmem()) : os.totalmem();
}

/**
 * RENDER_CONCURRENCY's default: one render more than the machine has CPUs, so that a render's
 * waits (its page's requests, the store, NATS) leave no CPU idle (docs/performance.md), but no
 * more than one per GB of memory, what a render of a heavy page may hold; never under 2.
 */
export function defaultRenderConcurrency(): number {
  const perGb = Math.floor(machineMemoryBytes() / 1024 ** 3);
  return Math.max(2, Math.min(machineCpus() + 1, perGb));
}

/**
 * RENDER_MEMORY_BUDGET's default, in MB: a quarter of the machine's memory (or of the container's
 * limit where that is lower, cgroups), but no more than 512 MB per CPU, since a worker serves only
 * as many workspaces as its CPUs render for: at 1,024 MB the headless shell keeps 24 workspaces
 * warm as fast as one (docs/performance.md, "Many workspaces"); never under 512 MB.
 */
export function defaultRenderMemoryBudgetMb(): number {
  const bytes = machineMemoryBytes();
  return Math.max(512, Math.min(Math.floor(bytes / 4 / 1024 / 1024), 512 * machineCpus()));
}

/**
 * RENDER_BROWSERS' default: one browser per CPU, so that no browser's main thread holds up
 * renders the CPUs could run (docs/performance.md, "Browsers per worker"), but no more than one
 * per 512 MB of the memory budget, as each costs ≈ 100 MB before its first page.
 */
export function defaultRenderBrowsers(memoryBudgetMb: number): number {
  return Math.max(1, Math.min(machineCpus(), Math.floor(memoryBudgetMb / 512)));
}
