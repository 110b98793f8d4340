// JSON documents in JetStream KV, changed only by compare-and-set.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../bounded-cache.ts';
import { isApiError, JetStreamApiCodes } from './errors.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The error KV answers when a compare-and-set lost a race (or a create found the key). */
export function isRevisionConflict(err: unknown): boolean {
  return isApiError(err, JetStreamApiCodes.StreamWrongLastSequence, JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/** How to write a replicated bucket's stream directly. */
export interface ReplicatedBucket {
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The bucket's name (its stream is KV_<name>, its keys the subjects $KV.<name>.<key>). */
  name: string;
}

const replicated = new WeakMap<KV, ReplicatedBucket>();

/**
 * Makes every compare-and-set on `bucket` expect the whole stream's last sequence instead of the
 * key's revision. nats-server 2.9 checks a key's expected revision on a replicated stream against
 * what it has applied, not against writes still being replicated, so of concurrent writers to one
 * key several could win (60 concurrent increments on 3 replicas left 5). The stream-wide check
 * counts writes in flight; the price is that writers to any key of the bucket take turns.
 */
export function guardReplicatedBucket(bucket: KV, stream: ReplicatedBucket): void {
  replicated.set(bucket, stream);
}

/** A document and the revision it was read at (0: absent). */
export interface Versioned<T> {
  value: T | null;
  revision: number;
}

/** Reads one JSON document. */
export async function readJson<T>(bucket: KV, key: string): Promise<Versioned<T>> {
  const entry = await bucket.get(key);
  if (entry?.operation !== 'PUT' || entry.length === 0) return { value: null, revision: entry?.revision ?? 0 };
  return { value: JSON.parse(decoder.decode(entry.value)) as T, revision: entry.revision };
}

/** A read to write after: the document, and on a replicated bucket the stream's last sequence before it. */
interface ReadForWrite<T> extends Versioned<T> {
  streamSeq?: number;
}

async function readForWrite<T>(bucket: KV, key: string): Promise<ReadForWrite<T>> {
  const stream = replicated.get(bucket);
  // Read first: any write after this sequence, to any key, makes the write below fail and try again.
  const streamSeq = stream ? (await stream.jsm.streams.info(`KV_${stream.name}`)).state.last_seq : undefined;
  return { ...(await readJson<T>(bucket, key)), streamSeq };
}

/**
 * Writes `payload` (or a delete marker) if nothing changed since `read`; throws a revision conflict
 * otherwise. Returns the entry's new revision.
 */
async function writeAfter(
  bucket: KV,
  key: string,
  read: ReadForWrite<unknown>,
  payload: Uint8Array | 'delete',
): Promise<number> {
  const stream = replicated.get(bucket);
  if (stream) {
    const marker = payload === 'delete' ? headers() : undefined;
    marker?.set('KV-Operation', 'DEL');
    const data = payload === 'delete' ? new Uint8Array() : payload;
    return (
      await stream.js.publish(`$KV.${stream.name}.${key}`, data, {
        expect: { lastSequence: read.streamSeq },
        headers: marker,
      })
    ).seq;
  } else if (payload === 'delete') {
    await bucket.delete(key, { previousSeq: read.revision });
    return 0;
  } else if (read.value === null) {
    return bucket.create(key, payload);
  } else {
    return bucket.update(key, payload, read.revision);
  }
}

// Writers that lost a race on a replicated bucket pause a moment, so they do not all come back at once.
const backOff = (bucket: KV, attempt: number) =>
  replicated.has(bucket)
    ? new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)))
    : undefined;

/** Creates a document; false when the key already holds one. */
export async function createJson<T>(bucket: KV, key: string, value: T): Promise<boolean> {
  if (replicated.has(bucket))
    return (await updateJson<T>(bucket, key, (current) => (current === null ? value : undefined))).changed;
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
 * read and try again, so no change is ever lost. Returns the document as it stands afterwards, and
 * its revision when this call wrote it. `known`, a version this process read or wrote itself,
 * spares the first read: if anything wrote since, the write fails and the loop reads as usual
 * (not on a replicated bucket, whose check needs the stream's sequence read before). A known
 * version may be stale, so what `change` decides from it (no change, or an error it throws) only
 * stands once a fresh read says the same; `stale` says the known version was not the latest.
 */
export async function updateJson<T>(
  bucket: KV,
  key: string,
  change: (current: T | null) => T | undefined,
  known?: Versioned<T>,
): Promise<{ value: T | null; changed: boolean; revision?: number; stale: boolean }> {
  const trusted = known && !replicated.has(bucket) ? known : undefined;
  for (let attempt = 1; ; attempt++) {
    const current = attempt === 1 && trusted ? trusted : await readForWrite<T>(bucket, key);
    const stale = trusted !== undefined && current !== trusted;
    let next: T | undefined;
    try {
      next = change(current.value);
    } catch (err) {
      if (current === trusted) continue;
      throw err;
    }
    if (next === undefined) {
      if (current === trusted) continue;
      return { value: current.value, changed: false, stale };
    }
    try {
      const revision = await writeAfter(bucket, key, current, encoder.encode(JSON.stringify(next)));
      return { value: next, changed: true, revision, stale };
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
      await backOff(bucket, attempt);
    }
  }
}

/** How many writes of a key go without a remembered version once one was found stale. */
const STALE_PAUSE_WRITES = 16;

/** How long a write of a key waits for this process's write of it before, at most (ms). */
const TURN_WAIT_MS = 100;

/** Resolves once `before` settles, or after `ms` if it has not by then. */
function settledOrAfter(before: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([before, late]).finally(() => clearTimeout(timer));
}

/**
 * A bucket's documents as this process last wrote them, to spare the read before its next write of
 * the same key (updateJson's `known`). Worth it where one process does most of a key's writes,
 * such as the usage and recent-renders documents in a stack that runs every role in one process.
 * A version found stale (another process wrote since) costs a failed write; the key then goes
 * STALE_PAUSE_WRITES writes reading first, so a key that several processes write costs little
 * more than reading before every write. This process's writes of one key take turns: each starts
 * from the version the one before it wrote, where two at once would both read, and one of them
 * fail and read again. A write waits at most TURN_WAIT_MS for its turn (a write held up by an
 * outage does not hold up every write queued behind it); one that starts without it reads afresh,
 * and only a later revision replaces a remembered one.
 */
export class RememberedWrites<T> {
  readonly #entries: LRUCache<string, Versioned<T> | { pause: number }>;
  /** Per key, the last write of it this process started, settled or not. */
  readonly #last = new Map<string, Promise<unknown>>();

  constructor(
    private readonly bucket: KV,
    entries = 10_000,
  ) {
    this.#entries = boundedCache(entries);
  }

  /** updateJson on `key`, after this process's write of it before, from its last write when remembered. */
  async update(
    key: string,
    change: (current: T | null) => T | undefined,
  ): Promise<{ value: T | null; changed: boolean; revision?: number; stale: boolean }> {
    const before = this.#last.get(key);
    const write = before
      ? settledOrAfter(before, TURN_WAIT_MS).then(() => this.#update(key, change))
      : this.#update(key, change);
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.#last.set(key, settled);
    try {
      return await write;
    } finally {
      if (this.#last.get(key) === settled) this.#last.delete(key);
    }
  }

  async #update(
    key: string,
    change: (current: T | null) => T | undefined,
  ): Promise<{ value: T | null; changed: boolean; revision?: number; stale: boolean }> {
    const entry = this.#entries.get(key);
    const known = entry && 'revision' in entry ? entry : undefined;
    if (known) this.#entries.delete(key);
    const result = await updateJson(this.bucket, key, change, known);
    const latest = this.#entries.get(key);
    if (result.stale) this.#entries.set(key, { pause: STALE_PAUSE_WRITES });
    else if (latest && 'pause' in latest) {
      if (latest.pause > 1) this.#entries.set(key, { pause: latest.pause - 1 });
      else this.#entries.delete(key);
    } else if (result.revision !== undefined && !(latest && latest.revision > result.revision))
      this.#entries.set(key, { value: result.value, revision: result.revision });
    return result;
  }
}

/** Deletes a document when `remove` says so of what it holds now; true when this call deleted it. */
export async function deleteJson<T>(bucket: KV, key: string, remove: (current: T) => boolean): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const current = await readForWrite<T>(bucket, key);
    if (current.value === null || !remove(current.value)) return false;
    try {
      await writeAfter(bucket, key, current, 'delete');
      return true;
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
      await backOff(bucket, attempt);
    }
  }
}
