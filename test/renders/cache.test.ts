// The render cache against a real NATS: of concurrent first views one renders and the rest follow,
// a success fills the entry until it expires, a failure frees it, and a claim is only its owner's to drop.
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import type { RenderRecord } from '../../src/domain/render.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { cacheKeyOf, RenderCache } from '../../src/renders/cache.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { waitFor } from '../helpers/wait.ts';

const cache = suite('RenderCache');
let nats: NatsServer;
let nc: NatsConnection;
let bucket: Awaited<ReturnType<typeof ensureTopology>>['renderCache'];
let renderCache: RenderCache;

/** A cache key of its own for each test. */
const freshKey = () => cacheKeyOf('ws_cache', `url=https://example.com/${randomUUID()}`);

/** The ended record of a render that filled (or failed to fill) `key`. */
const ended = (
  key: string,
  renderId: string,
  status: 'succeeded' | 'failed',
  options: { ttl?: number; createdAt?: number } = {},
): RenderRecord => ({
  render_id: renderId,
  workspace_id: 'ws_cache',
  status,
  url: 'https://example.com/',
  format: 'png',
  created_at: new Date(options.createdAt ?? Date.now()).toISOString(),
  finished_at: new Date().toISOString(),
  ...(status === 'succeeded'
    ? { file_name: `20250307-${renderId.replace(/-/g, '')}.png`, size_bytes: 100 }
    : { error_code: 'host_returned_error' as const }),
  cache: { key, ttl: options.ttl ?? 3600 },
});

cache.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  bucket = (await ensureTopology(nc, loadConfig({ NATS_URL: nats.url }))).renderCache;
  renderCache = new RenderCache(bucket);
});
cache.after(async () => {
  await nc?.close();
  await nats?.stop();
});

cache('of 20 concurrent claims one renders and the others follow its render', async () => {
  const key = freshKey();
  const renderIds = Array.from({ length: 20 }, () => randomUUID());
  // Each claimant is its own ingress: its own instance over the same bucket.
  const claims = await Promise.all(renderIds.map((renderId) => new RenderCache(bucket).claim(key, renderId, 60)));
  const winners = renderIds.filter((_, i) => claims[i].kind === 'render');
  assert.is(winners.length, 1, 'exactly one renders');
  for (const claim of claims.filter((claim) => claim.kind !== 'render'))
    assert.equal(claim, { kind: 'follow', renderId: winners[0] });
  assert.is(await renderCache.lookup(key), null, 'a claim is no file to redirect to');
});

cache('a succeeded render fills the entry: lookups and later claims redirect to its file', async () => {
  const key = freshKey();
  const renderId = randomUUID();
  assert.equal(await renderCache.claim(key, renderId, 60), { kind: 'render' });
  const record = ended(key, renderId, 'succeeded');
  await renderCache.settle(record);
  await renderCache.settle(record);
  const entry = await new RenderCache(bucket).lookup(key);
  assert.is(entry?.status, 'succeeded');
  assert.is(entry?.render_id, renderId);
  assert.is(entry?.file_name, record.file_name);
  assert.is(entry?.expires_at, Date.parse(record.created_at) + 3600_000, 'the TTL runs from the first view');
  const later = await renderCache.claim(key, randomUUID(), 60);
  assert.is(later.kind, 'redirect');
  assert.is(later.kind === 'redirect' && later.entry.file_name, record.file_name);
});

cache('a failed render frees its claim: the next view renders again', async () => {
  const key = freshKey();
  const failedId = randomUUID();
  assert.equal(await renderCache.claim(key, failedId, 60), { kind: 'render' });
  assert.equal(
    await renderCache.claim(key, randomUUID(), 60),
    { kind: 'follow', renderId: failedId },
    'held while it runs',
  );
  await renderCache.settle(ended(key, failedId, 'failed'));
  assert.is(await renderCache.lookup(key), null);
  assert.equal(await renderCache.claim(key, randomUUID(), 60), { kind: 'render' });
});

cache('an expired entry is looked up as null, also where it was remembered, and is claimed afresh', async () => {
  const key = freshKey();
  const renderId = randomUUID();
  await renderCache.claim(key, renderId, 60);
  // Requested 59 s ago with a 60 s TTL: the entry has a second left.
  await renderCache.settle(ended(key, renderId, 'succeeded', { ttl: 60, createdAt: Date.now() - 59_000 }));
  assert.is((await renderCache.lookup(key))?.render_id, renderId, 'live, and now remembered');
  await waitFor(async () => (await renderCache.lookup(key)) === null, 'the remembered entry expired', 5000);
  assert.is(renderCache.peek(key), null);
  assert.is(await new RenderCache(bucket).lookup(key), null, 'an ingress that never saw it reads it expired from KV');
  assert.equal(await renderCache.claim(key, randomUUID(), 60), { kind: 'render' });
});

cache("abandon removes only its own claim, never another render's nor a filled entry", async () => {
  const key = freshKey();
  const holder = randomUUID();
  await renderCache.claim(key, holder, 60);
  await renderCache.abandon(key, randomUUID());
  assert.equal(
    await renderCache.claim(key, randomUUID(), 60),
    { kind: 'follow', renderId: holder },
    "another render's abandon left the claim",
  );
  await renderCache.abandon(key, holder);
  const next = randomUUID();
  assert.equal(await renderCache.claim(key, next, 60), { kind: 'render' }, "the holder's abandon freed it");

  await renderCache.settle(ended(key, next, 'succeeded'));
  await renderCache.abandon(key, next);
  assert.is((await new RenderCache(bucket).lookup(key))?.render_id, next, 'a filled entry stays');
});

cache.run();
