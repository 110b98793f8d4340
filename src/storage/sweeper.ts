// Keeps the bucket from growing without bound: expired files go a whole day at a time.
import type { Logger } from '../log.ts';
import type { FileStore } from './store.ts';

const SWEEP_EVERY_MS = 15 * 60 * 1000;

/** Sweeps expired files now and every 15 minutes; returns the function that stops it. */
export function startFileSweeper(store: FileStore, log: Logger): () => void {
  const sweep = async () => {
    try {
      const removed = await store.sweep(new Date());
      if (removed > 0) log.info({ removed }, 'expired files swept');
    } catch (err) {
      log.warn({ err }, 'file sweep failed; will try again');
    }
  };
  void sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
