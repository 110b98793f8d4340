// Missing and known-wrong access keys of GET /api/take are answered before Fastify: the same 401 a
// client gets from the full checks, counted the same, and never in place of a 503 or a created key.
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildApp } from '../../src/http/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { NatsLink } from '../../src/jetstream/connection.ts';
import { createLogger } from '../../src/log.ts';
import { WorkspaceCache } from '../../src/workspaces/cache.ts';
import type { Workspace, WorkspaceStore } from '../../src/workspaces/workspace.ts';

const refusals = suite('401s of missing and known-wrong keys');

const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0' });
const log = createLogger(config);
// A store that knows no key until one is added; the cache in front of it is the service's own.
const known = new Map<string, Workspace>();
const store = {
  workspaceIdOf: async (accessKey: string) => (known.has(accessKey) ? accessKey : null),
  get: async (workspaceId: string) => known.get(workspaceId) ?? null,
} as unknown as WorkspaceStore;
const workspaces = new WorkspaceCache(store, {} as never, log);
const natsLink = { isUp: true } as { isUp: boolean };
const stub = {} as never;
const app = buildApp({
  config,
  log,
  workspaces,
  natsLink: natsLink as NatsLink,
  readiness: [],
  renderQueue: stub,
  fileStore: stub,
  settlement: stub,
  renderCache: stub,
  checkTarget: async (raw: string) => new URL(raw),
});
let base = '';

refusals.before(async () => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
refusals.after(() => app.close());

const take = async (query: string, headers: Record<string, string> = {}, method = 'GET') => {
  const response = await fetch(`${base}/api/take${query}`, { method, headers });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    body: await response.text(),
  };
};
const refusedCount = async () =>
  Number(
    /shutterbus_http_responses_total\{route="\/api\/take",status="401"\} (\d+)/.exec(
      await (await fetch(`${base}/metrics`)).text(),
    )?.[1] ?? 0,
  );

refusals(
  'a repeated wrong key, in the header or the query, and a missing key get the 401 of the full checks',
  async () => {
    const before = await refusedCount();
    const first = await take('?url=https%3A%2F%2Fexample.com%2F', { 'x-access-key': 'ak_wrong_header' });
    assert.is(first.status, 401);
    assert.equal(JSON.parse(first.body), {
      is_successful: false,
      error_code: 'access_key_invalid',
      error_message: 'The access key is missing or wrong.',
    });
    for (const answer of [
      await take('?url=https%3A%2F%2Fexample.com%2F', { 'x-access-key': 'ak_wrong_header' }),
      await take('?url=https%3A%2F%2Fexample.com%2F&access_key=ak_wrong_query'),
      await take('?url=https%3A%2F%2Fexample.com%2F&access_key=ak_wrong_query'),
      await take('?url=https%3A%2F%2Fexample.com%2F'),
      await take(''),
    ]) {
      assert.equal(answer, first);
    }
    assert.is(await refusedCount(), before + 6, 'every 401 is counted');
    const head = await take('?access_key=ak_wrong_query', {}, 'HEAD');
    assert.equal([head.status, head.body], [401, '']);
  },
);

refusals('a wrong key becomes valid as soon as the cache forgets it (a key created anywhere)', async () => {
  assert.is((await take('?access_key=ak_later_created')).status, 401);
  assert.is((await take('?access_key=ak_later_created')).status, 401);
  known.set('ak_later_created', {
    workspace_id: 'ak_later_created',
    access_key: 'ak_later_created',
    plan: 'free',
    members: [],
  } as unknown as Workspace);
  // What the watch of the access-keys bucket does when the key is written.
  (workspaces as unknown as { byKey: { delete(key: string): void } }).byKey.delete('ak_later_created');
  const answer = await take('?access_key=ak_later_created&url=https%3A%2F%2Fexample.com%2F');
  assert.is(JSON.parse(answer.body).error_code, 'email_not_verified', 'the full checks ran');
});

refusals('while NATS is away a known-wrong key gets the 503 of the full path', async () => {
  assert.is((await take('?access_key=ak_wrong_outage')).status, 401);
  natsLink.isUp = false;
  try {
    const answer = await take('?access_key=ak_wrong_outage');
    assert.is(answer.status, 503);
    assert.is(JSON.parse(answer.body).error_code, 'temporary_unavailable');
  } finally {
    natsLink.isUp = true;
  }
});

refusals.run();
