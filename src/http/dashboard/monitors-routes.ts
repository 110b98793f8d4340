// The monitors pages: the workspace's monitors with their last captures and changes, and pause or
// resume for owners and admins (the same change as PATCH /api/monitors/{id}).
import type { FastifyInstance } from 'fastify';
import { fileUrl } from '../../domain/files.ts';
import { ServiceError } from '../../errors.ts';
import { canManage } from '../../workspaces/workspace.ts';
import { field, noticesOf, type Dashboard } from './context.ts';
import { monitorPage, monitorsPage } from './views/monitors.ts';

/** Registers the monitors pages; without a monitor manager there are none. */
export async function monitorsRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { monitors, config } = dashboard;
  if (!monitors) return;
  const file = (name: string) => fileUrl(config.filesBaseUrl, name);
  const notFound = () => new ServiceError('not_found', {}, { message: 'This workspace has no such monitor.' });

  app.get('/monitors', async (request, reply) => {
    const { viewer, workspace, account } = request.signedIn;
    const list = await monitors.store.list(workspace.workspace_id);
    const page = monitorsPage({
      viewer,
      monitors: list,
      manager: canManage(workspace, account.email),
      fileUrl: file,
      notices: noticesOf(request),
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  });

  app.get<{ Params: { id: string } }>('/monitors/:id', async (request, reply) => {
    const { viewer, workspace, account } = request.signedIn;
    const monitor = await monitors.store.get(workspace.workspace_id, request.params.id);
    if (!monitor) throw notFound();
    return reply
      .type('text/html; charset=utf-8')
      .send(monitorPage({ viewer, monitor, manager: canManage(workspace, account.email), fileUrl: file }).text);
  });

  app.post<{ Params: { id: string } }>('/monitors/:id/status', async (request, reply) => {
    const { workspace, account } = request.signedIn;
    if (!canManage(workspace, account.email))
      throw new ServiceError('forbidden', {}, { message: 'Only owners and admins can pause or resume a monitor.' });
    const status = field(request, 'status');
    if (status !== 'active' && status !== 'paused')
      throw new ServiceError('request_not_valid', {}, { message: 'status must be active or paused.' });
    if (!(await monitors.change(workspace.workspace_id, request.params.id, { status }))) throw notFound();
    return reply.redirect(`/dashboard/monitors?notice=monitor-${status}`, 303);
  });
}
