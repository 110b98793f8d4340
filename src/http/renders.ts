// GET /api/renders/:renderId: the recorded state of an asynchronous render.
import type { FastifyPluginAsync } from 'fastify';
import { ServiceError } from '../errors.ts';
import { fileUrl } from '../domain/files.ts';
import { renderView } from '../renders/view.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { jsonContent, keyCodes, ref, routeUrl, transportCodes, type ApiPart, type Operation } from './operation.ts';

/** GET /api/renders/{renderId} in the OpenAPI document. */
const renderOperation: Operation = {
  method: 'get',
  path: '/api/renders/{renderId}',
  operationId: 'getRender',
  summary: 'The state of a render',
  tags: ['render'],
  keyed: true,
  errors: [...keyCodes, 'not_found', 'temporary_unavailable', ...transportCodes],
  detail: () => ({
    description: "Another workspace's render answers like an unknown one.",
    parameters: [{ name: 'renderId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
    responses: { '200': { description: 'The render.', content: jsonContent(ref('RenderStatus')) } },
  }),
};

/** What /api/renders adds to the API's description. */
export const rendersApi: ApiPart = { operations: [renderOperation] };

/** Registers the render status route; its collaborators are the app's decorators (services.ts). */
export const rendersRoutes: FastifyPluginAsync = async (app) => {
  const { renderQueue, config, workspaces } = app;
  app.get<{ Params: { renderId: string } }>(routeUrl(renderOperation), async (request) => {
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
