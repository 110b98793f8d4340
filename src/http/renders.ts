// GET /api/renders/:renderId: the recorded state of an asynchronous render.
import type { FastifyPluginAsync } from 'fastify';
import { ServiceError } from '../errors.ts';
import { fileUrl } from '../domain/files.ts';
import { renderView } from '../renders/view.ts';
import { authenticate, rawQueryString } from './auth.ts';

/** Registers the render status route; its collaborators are the app's decorators (services.ts). */
export const rendersRoutes: FastifyPluginAsync = async (app) => {
  const { renderQueue, config, workspaces } = app;
  app.get<{ Params: { renderId: string } }>('/api/renders/:renderId', async (request) => {
    // The checks of every request (docs/api.md): key, email rule, a sent or required signature.
    const { workspace } = await authenticate(
      request,
      { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] },
      workspaces,
    );
    const record = /^[0-9a-f-]{36}$/.test(request.params.renderId)
      ? await renderQueue.records.get(request.params.renderId)
      : null;
    // Another workspace's render answers exactly like an unknown one.
    if (!record || record.workspace_id !== workspace.workspace_id)
      throw new ServiceError('not_found', {}, { message: 'No render with this id.' });
    return renderView(record, (name) => fileUrl(config.filesBaseUrl, name), 'status');
  });
};
