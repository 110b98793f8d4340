// JSON documents in JetStream KV, changed only by compare-and-set on the entry's revision.
import type { KV } from '@nats-io/kv';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The error KV answers when a compare-and-set lost a race (or a create found the key). */
export function isRevisionConflict(err: unknown): boolean {
  return /wrong last sequence|key exists/i.test(String((err as Error)?.message));
}

/** A document and the revision it was read at (0: absent). */
export interface Versioned<T> {
  value: T | null;
  revision: number;
}

/** Reads one JSON document. */
export async function readJson<T>(bucket: KV, key: string): Promise<Versioned<T>> {
  const entry = await bucket.get(key);
  if (!entry || entry.operation !== 'PUT' || entry.length === 0) return { value: null, revision: entry?.revision ?? 0 };
  return { value: JSON.parse(decoder.decode(entry.value)) as T, revision: entry.revision };
}

/** Creates a document; false when the key already holds one. */
export async function createJson<T>(bucket: KV, key: string, value: T): Promise<boolean> {
  try {
    await bucket.create(key, encoder.encode(JSON.stringify(value)));
    return true;
  } catch (err) {
    if (isRevisionConflict(err)) return false;
    throw err;
  }
}

/**
 * Read-modify-write with compare-and-set: `change` sees the current document (null when absent)
 * and returns the next one, or `undefined` to leave it as it is. A concurrent writer makes it
 * read and try again, so no change is ever lost. Returns the document as it stands afterwards.
 */
export async function updateJson<T>(
  bucket: KV,
  key: string,
  change: (current: T | null) => T | undefined,
): Promise<{ value: T | null; changed: boolean }> {
  for (;;) {
    const current = await readJson<T>(bucket, key);
    const next = change(current.value);
    if (next === undefined) return { value: current.value, changed: false };
    try {
      const payload = encoder.encode(JSON.stringify(next));
      if (current.value === null) await bucket.create(key, payload);
      else await bucket.update(key, payload, current.revision);
      return { value: next, changed: true };
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
    }
  }
}
