// `shutterbus webhooks dead|redrive`: dead-lettered deliveries and sending them again with the same id.
import { ServiceError } from '../errors.ts';
import { DeliveryQueue } from '../delivery/records.ts';
import type { Topology } from '../jetstream/topology.ts';
import { asGiven, command, UsageError } from './args.ts';

/** What the webhook commands need. */
export interface WebhookCommandContext {
  topology: Topology;
}

/** The delivery queue the CLI works on. */
export function deliveryQueueOf(topology: Topology): DeliveryQueue {
  return new DeliveryQueue(topology.jsm.jetstream(), topology.deliveries);
}

/** The webhook commands, keyed by their command words. */
export const webhookCommands = {
  'webhooks dead': command(
    { workspace: { type: 'string' } },
    asGiven,
    async ({ workspace }, { topology }: WebhookCommandContext) => {
      const dead = (await deliveryQueueOf(topology).all()).filter(
        (record) => record.status === 'dead' && (workspace === undefined || record.workspace_id === workspace),
      );
      return {
        deliveries: dead.map(({ id, render_id, workspace_id, webhook_url, attempts, last_error, updated_at }) => ({
          id,
          render_id,
          workspace_id,
          webhook_url,
          attempts,
          last_error: last_error ?? null,
          dead_since: updated_at,
        })),
      };
    },
    { readOnly: true },
  ),
  'webhooks redrive': command(
    { id: { type: 'string' }, all: { type: 'boolean' }, workspace: { type: 'string' } },
    ({ id, all = false, workspace }) => {
      if ((id === undefined) === !all) throw new UsageError('give either --id DELIVERY_ID or --all');
      if (id !== undefined && workspace !== undefined) throw new UsageError('--workspace goes with --all');
      return { id, workspace };
    },
    // No --id means --all.
    async ({ id, workspace }, { topology }: WebhookCommandContext) => {
      const queue = deliveryQueueOf(topology);
      if (id !== undefined) {
        if (!(await queue.resend(id))) throw new ServiceError('not_found', {}, { message: `No delivery ${id}.` });
        return { redriven: 1 };
      }
      const dead = (await queue.all()).filter(
        (r) => r.status === 'dead' && (workspace === undefined || r.workspace_id === workspace),
      );
      for (const record of dead) await queue.resend(record.id);
      return { redriven: dead.length };
    },
  ),
};
