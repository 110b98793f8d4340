// `shutterbus replay renders|deliveries`: process a stretch of the RENDERS or DELIVERIES stream again.
//
// Renders: each request of the window is published again with its render id and a replay header;
// the worker renders it again into the same record. A render already settled is not charged again
// (the quota ledger settles each render id once) and its webhook is not sent again (the delivery id
// comes from the render id); `replay deliveries` re-sends webhooks.
// Deliveries: each delivery of the window starts a new round with the same id and body.
import { headers } from '@nats-io/transport-node';
import type { RenderRequest } from '../domain/render.ts';
import { REPLAY_HEADER } from '../renders/records.ts';
import { readStreamWindow, type WindowStart } from '../jetstream/stream-window.ts';
import { names, type Topology } from '../jetstream/topology.ts';
import type { DeliveryJob } from '../delivery/records.ts';
import { command, UsageError, type FlagValues } from './args.ts';
import { deliveryQueueOf } from './webhooks.ts';

/** What the replay commands need. */
export interface ReplayCommandContext {
  topology: Topology;
}

const decoder = new TextDecoder();

const windowFlags = {
  since: { type: 'string' },
  'from-seq': { type: 'string' },
  workspace: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
} as const;

/** The `read` of both replay commands: the window to replay, and whether only to list it. */
function windowOf(flags: FlagValues<typeof windowFlags>): { start: WindowStart; workspace?: string; dryRun: boolean } {
  const { since, 'from-seq': fromSeq, workspace, 'dry-run': dryRun } = flags;
  if ((since === undefined) === (fromSeq === undefined))
    throw new UsageError('give either --since ISO_TIME or --from-seq N');
  if (workspace !== undefined && !/^ws_[0-9a-f]{16}$/.test(workspace))
    throw new UsageError('--workspace must be a workspace id');
  if (fromSeq !== undefined) {
    if (!/^\d{1,15}$/.test(fromSeq) || Number(fromSeq) < 1)
      throw new UsageError('--from-seq must be a stream sequence, 1 or more');
    return { start: { fromSeq: Number(fromSeq) }, workspace, dryRun };
  }
  const moment = new Date(since!);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(since!) || Number.isNaN(moment.getTime()))
    throw new UsageError('--since must be an ISO time like 2025-01-31T12:00:00Z');
  return { start: { since: moment }, workspace, dryRun };
}

/** Keeps the last message per key, in stream order. */
function lastPer<T>(items: T[], key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    byKey.delete(key(item));
    byKey.set(key(item), item);
  }
  return [...byKey.values()];
}

/** The replay commands, keyed by their command words. */
export const replayCommands = {
  'replay renders': command(windowFlags, windowOf, async (args, { topology }: ReplayCommandContext) => {
    const { start, workspace, dryRun } = args;
    const js = topology.jsm.jetstream();
    const filter = workspace ? names.renderSubject(workspace) : names.renderSubjects;
    const window = await readStreamWindow(js, topology.jsm, names.renderStream, filter, start);
    const requests = lastPer(
      window.map((msg) => ({ msg, request: JSON.parse(decoder.decode(msg.data)) as RenderRequest })),
      ({ request }) => request.render_id,
    );
    const replayedAt = new Date().toISOString();
    for (const { msg, request } of dryRun ? [] : requests) {
      const marked = headers();
      marked.set(REPLAY_HEADER, replayedAt);
      await js.publish(msg.subject, msg.data, { headers: marked, msgID: `${request.render_id}.replay.${replayedAt}` });
    }
    const items = requests.map(({ msg, request }) => ({
      render_id: request.render_id,
      workspace_id: request.workspace_id,
      url: request.options.url,
      stream_seq: msg.seq,
      requested_at: request.created_at,
    }));
    return { replayed: items.length, dry_run: dryRun, items };
  }),
  'replay deliveries': command(windowFlags, windowOf, async (args, { topology }: ReplayCommandContext) => {
    const { start, workspace, dryRun } = args;
    const queue = deliveryQueueOf(topology);
    const filter = workspace ? names.deliverySubject(workspace) : names.deliverySubjects;
    const window = await readStreamWindow(topology.jsm.jetstream(), topology.jsm, names.deliveryStream, filter, start);
    const jobs = lastPer(
      window.map((msg) => ({ msg, job: JSON.parse(decoder.decode(msg.data)) as DeliveryJob })),
      ({ job }) => job.id,
    );
    const items = [];
    for (const { msg, job } of jobs) {
      // A delivery whose record aged out of the bucket has nothing left to send.
      const known = dryRun ? await queue.get(job.id) : await queue.resend(job.id);
      if (!known) continue;
      items.push({
        id: job.id,
        render_id: job.render_id,
        workspace_id: job.workspace_id,
        webhook_url: job.webhook_url,
        stream_seq: msg.seq,
      });
    }
    return { replayed: items.length, dry_run: dryRun, items };
  }),
};
