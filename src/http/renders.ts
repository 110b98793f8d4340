// GET /api/renders/:renderId: the recorded state of an asynchronous render.
import type { FastifyPluginAsync } from 'fastify';
import { ServiceError } from '../errors.ts';
import { fileUrl } from '../domain/files.ts';
import { publicMetadata } from '../domain/metadata.ts';
import { publicExtras } from '../domain/render.ts';
import { identify } from './auth.ts';

/** Registers the render status route; its collaborators are the app's decorators (services.ts). */
export const rendersRoutes: FastifyPluginAsync = async (app) => {
  const { renderQueue, config, workspaces } = app;
  app.get<{ Params: { renderId: string } }>('/api/renders/:renderId', async (request) => {
    const workspace = await identify(request, workspaces);
    const record = /^[0-9a-f-]{36}$/.test(request.params.renderId)
      ? await renderQueue.records.get(request.params.renderId)
      : null;
    // Another workspace's render answers exactly like an unknown one.
    if (!record || record.workspace_id !== workspace.workspace_id)
      throw new ServiceError('not_found', {}, { message: 'No render with this id.' });
    return {
      render_id: record.render_id,
      status: record.status,
      ...(record.file_name ? { file_url: fileUrl(config.filesBaseUrl, record.file_name) } : {}),
      ...(record.metadata
        ? { metadata: publicMetadata(record.metadata, (name) => fileUrl(config.filesBaseUrl, name)) }
        : {}),
      ...publicExtras(record, (name) => fileUrl(config.filesBaseUrl, name)),
      ...(record.warnings ? { warnings: record.warnings } : {}),
      ...(record.store ? { store: record.store } : {}),
      ...(record.error_code ? { error_code: record.error_code, error_message: record.error_message } : {}),
      ...(record.failure_capture ? { failure_capture_url: fileUrl(config.filesBaseUrl, record.failure_capture) } : {}),
      ...(record.external_identifier ? { external_identifier: record.external_identifier } : {}),
      created_at: record.created_at,
      ...(record.finished_at ? { finished_at: record.finished_at } : {}),
      timeline: record.timeline ?? [],
    };
  });
};
