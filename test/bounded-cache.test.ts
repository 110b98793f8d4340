// The in-memory caches' bound: a count of entries, least recently used out first, and nothing
// allocated up front for entries the cache does not hold.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { boundedCache } from '../src/bounded-cache.ts';

const caches = suite('bounded caches');

caches('hold at most their count, the least recently used evicted first', () => {
  const cache = boundedCache<string, number>(3);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  cache.get('a');
  cache.set('d', 4);
  assert.equal([...cache.keys()].sort(), ['a', 'c', 'd']);
  for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i);
  assert.is(cache.size, 3);
  assert.equal([...cache.keys()].sort(), ['k997', 'k998', 'k999']);
});

caches('an entry past its TTL is gone', async () => {
  const cache = boundedCache<string, number>(10, { ttl: 20 });
  cache.set('a', 1);
  assert.is(cache.get('a'), 1);
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.is(cache.get('a'), undefined);
});

caches('a large bound costs no memory until entries arrive', () => {
  global.gc?.();
  const before = process.memoryUsage();
  // Preallocated, this bound alone would take ≈ 3 GB (eight arrays of 50 million slots).
  const cache = boundedCache<string, number>(50_000_000, { ttl: 60_000 });
  cache.set('a', 1);
  const after = process.memoryUsage();
  const grownMb = (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 1024 / 1024;
  assert.ok(grownMb < 5, `grew ${grownMb.toFixed(1)} MB`);
  assert.is(cache.get('a'), 1);
});

caches.run();
