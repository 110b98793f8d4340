// A render's money, from admission to settlement: the one owner of its quota reservation's whole life.
import type { Config } from '../config.ts';
import { rendersCharged, type RenderRecord, type RenderRequest } from '../domain/render.ts';
import type { RenderRecords } from './records.ts';
import type { Logger } from '../log.ts';
import type { RecentRenders } from './recent.ts';
import type { RenderCache } from './cache.ts';
import type { QuotaLedger } from '../workspaces/usage.ts';
import { planConcurrency, type Workspace } from '../workspaces/workspace.ts';

/** How long a give-back keeps trying while NATS is away, and how often. */
const GIVE_BACK_PATIENCE_MS = 5 * 60_000;
const GIVE_BACK_EVERY_MS = 2000;

/**
 * Admits renders against the quota, gives back what an answered-with-error request held, and
 * settles ended renders: a succeeded render is charged exactly once, a failed one never.
 */
export class Settlement {
  constructor(
    readonly ledger: QuotaLedger,
    private readonly cache: RenderCache,
    private readonly records: RenderRecords,
    private readonly recentRenders: RecentRenders,
    private readonly config: Pick<Config, 'renderAckWaitSeconds' | 'renderMaxDeliver'>,
    private readonly log: Logger,
  ) {}

  /**
   * Reserves a quota slot for `request` (402 when the quota is used up, 429 past the plan's renders
   * in flight), or gives up its cache claim and throws. The slot lapses when the render can no
   * longer be running: a synchronous one at its caller's deadline, an asynchronous one after every
   * delivery's timeout and ack wait, and a minute more.
   */
  async admit(request: RenderRequest, workspace: Workspace): Promise<void> {
    const createdAt = new Date(request.created_at);
    const { renderAckWaitSeconds, renderMaxDeliver } = this.config;
    const lapsesAt =
      request.answer_by ??
      createdAt.getTime() + ((request.options.timeout + renderAckWaitSeconds) * renderMaxDeliver + 60) * 1000;
    const allowance = {
      workspaceId: workspace.workspace_id,
      quota: workspace.quota,
      concurrency: planConcurrency[workspace.plan],
    };
    try {
      await this.ledger.reserve(allowance, request.render_id, createdAt, lapsesAt, rendersCharged(request));
    } catch (err) {
      if (request.cache) await this.cache.abandon(request.cache.key, request.render_id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * A request answered with an error gives back its quota slot and cache claim, and its record is
   * ended, so a render of it that still comes (its publish was stored after all) charges nothing.
   * Runs in the background, trying again while NATS is out of reach.
   */
  giveBack(request: RenderRequest): void {
    const steps = [
      () => this.ledger.release(request.workspace_id, request.render_id, request.created_at),
      ...(request.cache ? [() => this.cache.abandon(request.cache!.key, request.render_id)] : []),
      () => this.records.abandon(request, 'temporary_unavailable'),
    ];
    for (const step of steps) this.untilDone(step, Date.now() + GIVE_BACK_PATIENCE_MS);
  }

  /**
   * Settles an ended render: charges or releases its slot, fills or frees its cache entry and lists
   * it among the workspace's recent renders. Idempotent, as it runs again on redelivery, replay and
   * a retried write: the ledger settles a render id once.
   */
  async settle(record: RenderRecord): Promise<void> {
    const { workspace_id, render_id, created_at } = record;
    const settling =
      record.status === 'succeeded'
        ? this.ledger.commit(workspace_id, render_id, created_at)
        : this.ledger.release(workspace_id, render_id, created_at);
    // Three documents of their own, each changed idempotently: written side by side.
    const [outcome] = await Promise.all([settling, this.cache.settle(record), this.recentRenders.note(record)]);
    // Never silent: a render that outlived its reservation is settled all the same, and said so.
    if (outcome === 'settled_after_lapse')
      this.log.warn(
        { render_id, workspace_id, status: record.status, outcome },
        'render settled after its reservation lapsed',
      );
  }

  private untilDone(step: () => Promise<unknown>, deadline: number): void {
    step().catch((err) => {
      if (Date.now() > deadline) return void this.log.warn({ err }, 'giving back an answered request failed');
      setTimeout(() => this.untilDone(step, deadline), GIVE_BACK_EVERY_MS).unref();
    });
  }
}
