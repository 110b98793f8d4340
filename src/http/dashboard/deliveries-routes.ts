// Webhook deliveries of the workspace's latest renders: where each stands, what it sends, and
// "Send again" for dead letters (owners and admins), the same redrive as `shutterbus webhooks redrive`.
import type { FastifyInstance } from 'fastify';
import type { DeliveryRecord } from '../../delivery/records.ts';
import { unsignedHeaders, webhookHeaders } from '../../delivery/send.ts';
import { ServiceError } from '../../errors.ts';
import { canManage } from '../../workspaces/workspace.ts';
import { deliveriesOf, noticesOf, type Dashboard } from './context.ts';
import { deliveriesPage, deliveryPage } from './views/deliveries.ts';

/** When the worker tries a backing-off delivery again: after the schedule's next delay (a Retry-After may move it). */
export function nextAttemptAt(record: DeliveryRecord, schedule: readonly number[]): string | undefined {
  if (record.status === 'pending') return record.updated_at;
  if (record.status !== 'backing_off' || record.attempts < 1) return undefined;
  const delaySeconds = schedule[Math.min(record.attempts, schedule.length) - 1];
  return new Date(Date.parse(record.updated_at) + delaySeconds * 1000).toISOString();
}

/** Registers the deliveries pages. */
export async function deliveriesRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { deliveries, config } = dashboard;

  /** This workspace's delivery `id`, or 404 (another workspace's delivery answers the same). */
  const ownDelivery = async (workspaceId: string, id: string): Promise<DeliveryRecord> => {
    const record = deliveries && /^wh_[0-9a-f]{32}$/.test(id) ? await deliveries.get(id) : null;
    if (!record || record.workspace_id !== workspaceId)
      throw new ServiceError('not_found', {}, { message: 'This workspace has no such delivery.' });
    return record;
  };

  app.get('/deliveries', async (request, reply) => {
    const { viewer, workspace, account } = request.signedIn;
    let rows: { record: DeliveryRecord; next_attempt_at?: string }[] | null = null;
    if (deliveries) {
      const records = await deliveriesOf(deliveries, await dashboard.recentRenders.list(workspace.workspace_id));
      rows = records.map((record) => ({ record, next_attempt_at: nextAttemptAt(record, config.webhookRetrySchedule) }));
    }
    const page = deliveriesPage({
      viewer,
      rows,
      manager: canManage(workspace, account.email),
      notices: noticesOf(request),
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  });

  app.get<{ Params: { id: string } }>('/deliveries/:id', async (request, reply) => {
    const { viewer, workspace, account } = request.signedIn;
    const record = await ownDelivery(workspace.workspace_id, request.params.id);
    // The headers as send.ts built them for the last attempt, at its recorded timestamp (before any, as one now would).
    const timestamp = record.last_attempt_at ?? Math.floor(Date.now() / 1000);
    const sent = record.unsigned
      ? unsignedHeaders(record.id, timestamp)
      : webhookHeaders(record.id, record.body, workspace.secret_key, timestamp);
    const headers = { ...sent, 'content-length': String(Buffer.byteLength(record.body)) };
    const page = deliveryPage({
      viewer,
      record,
      headers,
      attempted: record.attempts > 0,
      manager: canManage(workspace, account.email),
      next_attempt_at: nextAttemptAt(record, config.webhookRetrySchedule),
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  });

  app.post<{ Params: { id: string } }>('/deliveries/:id/resend', async (request, reply) => {
    const { workspace, account } = request.signedIn;
    if (!canManage(workspace, account.email))
      throw new ServiceError('forbidden', {}, { message: 'Only owners and admins can send a delivery again.' });
    const record = await ownDelivery(workspace.workspace_id, request.params.id);
    if (record.status !== 'dead')
      throw new ServiceError(
        'request_not_valid',
        {},
        { message: 'Only a dead letter can be sent again; this delivery is still under way or arrived.' },
      );
    await deliveries!.resend(record.id);
    return reply.redirect('/dashboard/deliveries?notice=resent', 303);
  });
}
