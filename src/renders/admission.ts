// A render request's way from its cache entry to its outcome: the cache claim, the quota's admission,
// the queue, and the wait for a synchronous caller. The endpoints that render (/api/take, /api/bulk,
// /api/animate) all go this way (src/http/take-flow.ts builds the request and answers).
import type { RenderRequest } from '../domain/render.ts';
import type { StoreResult } from '../domain/storage.ts';
import { ServiceError } from '../errors.ts';
import { unavailable } from '../jetstream/connection.ts';
import type { Workspace } from '../workspaces/workspace.ts';
import type { RenderCache } from './cache.ts';
import type { RenderQueue } from './queue.ts';
import type { RenderResult } from './done.ts';
import type { Settlement } from './settlement.ts';

/**
 * Seconds a synchronous caller waits beyond its render's timeout: time in the queue and on the way.
 * Whatever the workers are doing (every slot busy, renders stuck on the store), the caller is
 * answered by then (docs/operations.md, "Outages").
 */
const QUEUE_GRACE_SECONDS = 4;

/** What became of a request: a cached file, an accepted asynchronous render, or a render that ended. */
export type TakeOutcome =
  | { kind: 'cached'; renderId: string; fileName: string; store?: StoreResult }
  | { kind: 'accepted'; renderId: string }
  | { kind: 'ended'; result: RenderResult; cached: boolean };

/** What admitting renders needs. */
export interface AdmissionDeps {
  renderQueue: RenderQueue;
  settlement: Settlement;
  renderCache: RenderCache;
}

/** How a request is to be waited for. */
export interface Waiting {
  /** Accepted and answered at once; the result is at its status URL and in its webhook. */
  async: boolean;
  /** The caller takes an image announced before it was stored (docs/operations.md, "Outages"). */
  takesUnstored: boolean;
}

/** Admits render requests and queues them (or serves them from their cache entry). */
export function renderAdmission(deps: AdmissionDeps) {
  const { renderQueue, settlement, renderCache } = deps;

  /** The live cache entry of `cacheKey` as an outcome, or null: a redirect, which renders and charges nothing. */
  const cached = async (cacheKey: string): Promise<TakeOutcome | null> => {
    const hit = await renderCache.lookup(cacheKey);
    return hit ? { kind: 'cached', renderId: hit.render_id, fileName: hit.file_name!, store: hit.store } : null;
  };

  /**
   * How long a synchronous caller waits: the render's own timeout and a little time in the queue.
   * Past it the caller gets a 503 and its render is abandoned: a worker that takes it later drops
   * it unrendered, and one still rendering it stops it then, failed, uncharged (`render.late`).
   * No ack wait is added for a worker lost mid-render: its redelivery answers only a caller whose
   * timeout leaves room for it.
   */
  const waitSeconds = (timeout: number) => timeout + QUEUE_GRACE_SECONDS;

  /**
   * Waits until the render holding a cache claim is under way (its record exists) or its claim is gone
   * without it: refused at admission (quota, concurrency, a full queue) or lapsed. Quick either way:
   * a claim is admitted or given up within moments.
   */
  const leaderStarted = async (cacheKey: string, renderId: string, deadline: number): Promise<boolean> => {
    for (let pauseMs = 10; ; pauseMs = Math.min(pauseMs * 2, 250)) {
      if (await renderQueue.records.get(renderId)) return true;
      // Read after the record: a claim given up after its record was written is a render that ended.
      if (!(await renderCache.holds(cacheKey, renderId))) return (await renderQueue.records.get(renderId)) !== null;
      if (Date.now() > deadline) throw unavailable();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };

  /**
   * Of concurrent first views of a cached URL, on any ingress, one renders; the others wait for it and
   * redirect, or, asynchronous, are accepted at once with its render id (docs/api.md). A view whose
   * leader was refused before rendering claims again, and goes through admission itself.
   */
  const claim = async (
    request: RenderRequest,
    cacheKey: string,
    seconds: number,
    async: boolean,
  ): Promise<TakeOutcome | null> => {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const claimed = await renderCache.claim(cacheKey, request.render_id, seconds);
      if (claimed.kind === 'redirect') {
        const { render_id, file_name, store } = claimed.entry;
        return { kind: 'cached', renderId: render_id, fileName: file_name!, store };
      }
      if (claimed.kind === 'render') return null;
      if (!(await leaderStarted(cacheKey, claimed.renderId, deadline))) continue;
      if (async) return { kind: 'accepted', renderId: claimed.renderId };
      const { record } = await renderQueue.waitFor(claimed.renderId, seconds);
      if (record.status === 'succeeded')
        return { kind: 'cached', renderId: record.render_id, fileName: record.file_name!, store: record.store };
      return { kind: 'ended', result: { record }, cached: false };
    }
  };

  /**
   * Claims `request`'s cache entry (when it has one), admits it against `workspace`'s quota, queues
   * it and, unless asynchronous, waits for its end until its `answer_by`.
   */
  const submit = async (request: RenderRequest, workspace: Workspace, waiting: Waiting): Promise<TakeOutcome> => {
    if (request.cache) {
      const settled = await claim(request, request.cache.key, waitSeconds(request.options.timeout), waiting.async);
      if (settled) return settled;
    }
    await settlement.admit(request, workspace);
    // Once published, the worker settles the render; a request answered with an error gives back what it held.
    const publish = async <T>(send: () => Promise<T>): Promise<T> =>
      send().catch((err) => {
        if (err instanceof ServiceError && err.code === 'temporary_unavailable') settlement.giveBack(request);
        throw err;
      });
    if (waiting.async) {
      await publish(() => renderQueue.submit(request));
      return { kind: 'accepted', renderId: request.render_id };
    }
    return {
      kind: 'ended',
      result: await publish(() => renderQueue.submitAndWait(request, waiting.takesUnstored)),
      cached: request.cache !== undefined,
    };
  };

  return { cached, waitSeconds, submit };
}
