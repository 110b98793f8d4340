// In-memory LRU caches bounded by a count of entries, sized by what they hold.
import { LRUCache } from 'lru-cache';

const oneEach = () => 1;

/**
 * An LRU cache of at most `entries` entries. Given `max`, lru-cache allocates and fills arrays for
 * every entry it may ever hold when it is built (≈ 3 MB and 10 ms of a start for 50,000 with a
 * TTL, held for good, although most caches here stay small); bounded through `maxSize` with each
 * entry counted as one, its arrays grow with what it holds and evict the same way.
 */
export function boundedCache<K extends {}, V extends {}>(
  entries: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: oneEach });
}
