// Where a render's output is written: the service's own bucket (FileStore) and a customer's
// (CustomerBucket) implement the same step, so every render path stores and uploads alike.
import type { OutputFormat } from '../domain/options.ts';

/** A place outputs are written to, one object per key, with the format's content type. */
export interface OutputStore {
  put(key: string, bytes: Buffer, format: OutputFormat): Promise<void>;
}
