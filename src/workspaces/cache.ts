// Workspace lookups for the ingress: lru-cache in front of KV, kept fresh by watching the buckets.
import { KvWatchInclude, type KV } from '@nats-io/kv';
import { boundedCache } from '../bounded-cache.ts';
import type { Logger } from '../log.ts';
import type { Workspace, WorkspaceStore } from './workspace.ts';

/** A change reaches every ingress through the watch within moments; this TTL bounds staleness if the watch breaks. */
const CACHE_TTL_MS = 30_000;
const WATCH_RESTART_MS = 1_000;

/** Finds workspaces by access key, caching answers (also "no such key") until a change is seen. */
export class WorkspaceCache {
  private readonly byKey = boundedCache<string, { workspace: Workspace | null }>(50_000, { ttl: CACHE_TTL_MS });
  private stopped = false;
  private readonly watches: { stop(): void }[] = [];

  constructor(
    private readonly store: WorkspaceStore,
    private readonly buckets: { workspaces: KV; accessKeys: KV },
    private readonly log: Logger,
  ) {}

  /** Starts watching both buckets; resolves once the watches are in place. */
  async start(): Promise<void> {
    await Promise.all([
      this.watch(this.buckets.accessKeys, (accessKey) => this.byKey.delete(accessKey)),
      this.watch(this.buckets.workspaces, (workspaceId) => {
        const stale = [...this.byKey.entries()].filter(([, cached]) => cached.workspace?.workspace_id === workspaceId);
        for (const [accessKey] of stale) this.byKey.delete(accessKey);
      }),
    ]);
  }

  /** Stops the watches. */
  stop(): void {
    this.stopped = true;
    for (const watch of this.watches) watch.stop();
  }

  /** The cached workspace of `accessKey`, without reading KV: null when unknown or not cached. */
  peek(accessKey: string): Workspace | null {
    return this.byKey.get(accessKey)?.workspace ?? null;
  }

  /** True when this cache holds a fresh "no such key" answer for `accessKey` (KV is not read). */
  knownUnknown(accessKey: string): boolean {
    const cached = this.byKey.get(accessKey);
    return cached !== undefined && cached.workspace === null;
  }

  /** The workspace whose current access key is `accessKey`, or null. */
  async byAccessKey(accessKey: string): Promise<Workspace | null> {
    const cached = this.byKey.get(accessKey);
    if (cached) return cached.workspace;
    const workspaceId = await this.store.workspaceIdOf(accessKey);
    const workspace = workspaceId ? await this.store.get(workspaceId) : null;
    // A key mapping left over from a rotation does not match the workspace's current key.
    const current = workspace && workspace.access_key === accessKey ? workspace : null;
    this.byKey.set(accessKey, { workspace: current });
    return current;
  }

  private async watch(bucket: KV, onChange: (key: string) => void): Promise<void> {
    const iterator = await bucket.watch({ include: KvWatchInclude.UpdatesOnly });
    this.watches.push(iterator);
    void (async () => {
      try {
        for await (const entry of iterator) onChange(entry.key);
      } catch (err) {
        this.log.warn({ err, bucket: bucket.toString() }, 'workspace watch broke');
      }
      if (this.stopped) return;
      // Anything changed while the watch was down is unknown: start afresh.
      this.byKey.clear();
      this.restart(bucket, onChange);
    })();
  }

  // Tries again every WATCH_RESTART_MS until the watch is back (NATS may still be away).
  private restart(bucket: KV, onChange: (key: string) => void): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.watch(bucket, onChange).catch((err) => {
        this.log.warn({ err }, 'workspace watch restart failed');
        this.restart(bucket, onChange);
      });
    }, WATCH_RESTART_MS);
  }
}
