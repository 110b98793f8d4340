// How V8 grows the service's heap. After a full collection V8 sets the next one's limit at the live
// size times a factor it derives from its own speed; for the service's heap (≈ 50 MB live, renders
// allocating ≈ 1 MB each, much of it in strings too large for the young generation) that factor
// came out near 1.8, which left less room above the live size than the young generation holds.
// V8 then starts marking again as soon as a full collection ends: in a run of 600 light shots it
// made 33–35 full collections, and its helper threads spent 4.8–5.4 ms of CPU a shot on them
// (docs/performance.md, "Why a forced collection costs so much"). A fixed factor of 2 leaves that
// room: 3 full collections in the same run, 1.8 ms a shot, for ≈ 30 MB more memory.

import v8 from 'node:v8';

/** The heap's growing factor, as V8's flag gives it: 1 + percent / 100. */
export const HEAP_GROWING_PERCENT = 100;

/** The V8 flags the service sets for itself: none that the command line already gives. */
export function heapFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const given = execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  return given ? [] : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}

/** Sets heapFlags() in this process's V8; call before the service loads, while the heap is small. */
export function tuneHeap(execArgv: readonly string[] = process.execArgv): void {
  for (const flag of heapFlags(execArgv)) v8.setFlagsFromString(flag);
}
