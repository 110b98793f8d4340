// The renders pages: the workspace's latest renders, filtered by status, and one render's own page
// (its timeline, output, failure capture and webhook delivery). Nothing of another workspace.
import type { FastifyInstance } from 'fastify';
import { deliveryIdOf } from '../../delivery/records.ts';
import { fileUrl } from '../../domain/files.ts';
import { ServiceError } from '../../errors.ts';
import type { Dashboard } from './context.ts';
import { renderPage, rendersPage, type RenderFilter } from './views/renders.ts';

const renderIdPattern = /^[0-9a-f-]{36}$/;
const filters: readonly RenderFilter[] = ['all', 'succeeded', 'failed'];

/** Registers GET /renders and GET /renders/:id. */
export async function rendersRoutes(app: FastifyInstance, dashboard: Dashboard): Promise<void> {
  const { filesBaseUrl } = dashboard.config;

  app.get<{ Querystring: { status?: string } }>('/renders', async (request, reply) => {
    const { viewer, workspace } = request.signedIn;
    const filter = filters.find((known) => known === request.query.status) ?? 'all';
    const latest = await dashboard.recentRenders.list(workspace.workspace_id);
    const renders = filter === 'all' ? latest : latest.filter((render) => render.status === filter);
    return reply
      .type('text/html; charset=utf-8')
      .send(rendersPage({ viewer, filter, renders, total: latest.length }).text);
  });

  app.get<{ Params: { id: string } }>('/renders/:id', async (request, reply) => {
    const { viewer, workspace } = request.signedIn;
    const id = request.params.id;
    const record = dashboard.renders && renderIdPattern.test(id) ? await dashboard.renders.get(id) : null;
    // Another workspace's render answers exactly like an unknown one.
    if (!record || record.workspace_id !== workspace.workspace_id)
      throw new ServiceError('not_found', {}, { message: 'This workspace has no such render.' });
    const delivery =
      record.webhook_url && dashboard.deliveries
        ? await dashboard.deliveries.get(deliveryIdOf(record.render_id))
        : null;
    const page = renderPage({
      viewer,
      record,
      fileUrl: record.status === 'succeeded' && record.file_name ? fileUrl(filesBaseUrl, record.file_name) : undefined,
      failureCaptureUrl: record.failure_capture ? fileUrl(filesBaseUrl, record.failure_capture) : undefined,
      delivery: delivery && delivery.workspace_id === workspace.workspace_id ? delivery : null,
    });
    return reply.type('text/html; charset=utf-8').send(page.text);
  });
}
