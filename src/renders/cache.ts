// Cached signed GET URLs: the first view renders and fills an entry; later views redirect to its file.
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { boundedCache } from '../bounded-cache.ts';
import { deleteJson, readJson, updateJson } from '../jetstream/kv-json.ts';
import type { RenderRecord } from '../domain/render.ts';
import type { OutputFormat } from '../domain/options.ts';
import type { StoreResult } from '../domain/storage.ts';

/** One cache entry: a claim while its render runs, then the file until it expires. */
export interface CacheEntry {
  render_id: string;
  status: 'rendering' | 'succeeded';
  /** While rendering: when the claim lapses if its holder vanished (ms). */
  claimed_until?: number;
  file_name?: string;
  format?: OutputFormat;
  /** Once succeeded: when the entry stops answering (ms). */
  expires_at?: number;
  /** Where the first view uploaded the output (store=true): a redirect says it again. */
  store?: StoreResult;
}

/** What claiming an entry gave: the right to render, a file to redirect to, or a render to wait for. */
export type Claim = { kind: 'render' } | { kind: 'redirect'; entry: CacheEntry } | { kind: 'follow'; renderId: string };

/** The cache key of a signed GET: the workspace and the raw query string without the signature. */
export function cacheKeyOf(workspaceId: string, signedQuery: string): string {
  return createHash('sha256').update(workspaceId).update('\n').update(signedQuery).digest('hex');
}

const isFresh = (entry: CacheEntry, now: number) =>
  entry.status === 'succeeded' ? (entry.expires_at ?? 0) > now : (entry.claimed_until ?? 0) > now;

/** Cache entries in the `render_cache` bucket; a KV create (or compare-and-set over a stale entry) is the lock. */
export class RenderCache {
  // A filled entry never changes until it expires, so each ingress may keep it in memory until then.
  private readonly filled = boundedCache<string, CacheEntry>(100_000);

  constructor(private readonly bucket: KV) {}

  /** The file of a live entry, or null: the redirect path, which renders and charges nothing. */
  async lookup(key: string): Promise<CacheEntry | null> {
    const now = Date.now();
    const remembered = this.peek(key, now);
    if (remembered) return remembered;
    const { value } = await readJson<CacheEntry>(this.bucket, key);
    if (value?.status !== 'succeeded' || !isFresh(value, now)) return null;
    this.filled.set(key, value, { ttl: value.expires_at! - now });
    return value;
  }

  /** The live entry of `key` if this ingress holds it in memory, else null (KV is not read). */
  peek(key: string, now = Date.now()): CacheEntry | null {
    const remembered = this.filled.get(key);
    return remembered && isFresh(remembered, now) ? remembered : null;
  }

  /**
   * Takes the entry for `renderId` unless a live one exists. Only one of any number of concurrent
   * callers, on any ingress, gets `render`; the others redirect or follow the render under way.
   */
  async claim(key: string, renderId: string, claimSeconds: number): Promise<Claim> {
    const now = Date.now();
    const { value, changed } = await updateJson<CacheEntry>(this.bucket, key, (current) =>
      current && isFresh(current, now)
        ? undefined
        : { render_id: renderId, status: 'rendering', claimed_until: now + claimSeconds * 1000 },
    );
    if (changed) return { kind: 'render' };
    return value!.status === 'succeeded'
      ? { kind: 'redirect', entry: value! }
      : { kind: 'follow', renderId: value!.render_id };
  }

  /** Whether the live entry of `key` is still `renderId`'s (claimed or filled); false once its claim is given up or lapsed. */
  async holds(key: string, renderId: string): Promise<boolean> {
    const { value } = await readJson<CacheEntry>(this.bucket, key);
    return value?.render_id === renderId && isFresh(value, Date.now());
  }

  /** Gives up a claim whose render never started (quota, queue full). */
  async abandon(key: string, renderId: string): Promise<void> {
    await this.release(key, renderId);
  }

  /** Fills or frees the entry of an ended render; running it again changes nothing. */
  async settle(record: RenderRecord): Promise<void> {
    if (!record.cache) return;
    if (record.status !== 'succeeded') {
      // A failed first view leaves no entry: the next view tries again.
      await this.release(record.cache.key, record.render_id);
      return;
    }
    // The TTL runs from the first view, as the caller who chose it would count.
    const requestedAt = Date.parse(record.created_at);
    await updateJson<CacheEntry>(this.bucket, record.cache.key, (current) =>
      current && current.render_id === record.render_id && current.status === 'rendering'
        ? {
            render_id: record.render_id,
            status: 'succeeded',
            file_name: record.file_name,
            format: record.format,
            expires_at: requestedAt + record.cache!.ttl * 1000,
            ...(record.store ? { store: record.store } : {}),
          }
        : undefined,
    );
  }

  private async release(key: string, renderId: string): Promise<void> {
    // Only this claim is deleted, never a newer writer's entry.
    await deleteJson<CacheEntry>(
      this.bucket,
      key,
      (entry) => entry.render_id === renderId && entry.status === 'rendering',
    );
  }
}
