// GET|POST /api/take: validate, admit, publish to the render stream, answer with the image or the error.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderRecord, RenderRequest } from '../jetstream/render-records.ts';
import { contentTypes } from '../render/options.ts';
import { fileUrl } from '../storage/store.ts';
import type { AppDeps } from './app.ts';
import { parseTakeParams, type RawParams, type TakeRequest } from './params.ts';

/** The raw query string exactly as sent, without the leading `?` (signatures are over it). */
export function rawQueryString(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at + 1);
}

/** The parameters of a GET or POST /api/take, before validation. */
function rawParams(request: FastifyRequest): RawParams {
  if (request.method === 'GET') {
    return { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] };
  }
  const body = request.body;
  if (request.rawBody === undefined) {
    throw new ServiceError('request_not_valid', { error_details: [{ parameter: 'Content-Type', message: 'must be application/json' }] });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServiceError('request_not_valid', { error_details: [{ parameter: 'body', message: 'must be a JSON object' }] });
  }
  return { kind: 'json', body: body as Record<string, unknown> };
}

/** Registers GET and POST /api/take. */
export const takeRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const { config, queue, store } = deps;

  const validate = async (raw: RawParams): Promise<TakeRequest> => {
    const parsed = parseTakeParams(raw);
    if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
    const { options, control } = parsed.request;
    await deps.checkTarget(options.url, 'url');
    if (control.webhook_url !== undefined) await deps.checkTarget(control.webhook_url, 'webhook_url');
    return parsed.request;
  };

  const answer = async (reply: FastifyReply, take: TakeRequest, record: RenderRecord) => {
    reply.header('X-Render-Id', record.render_id);
    if (record.status === 'failed') {
      throw new ServiceError(record.error_code ?? 'internal_application_error', record.error_details ?? {}, {
        message: record.error_message,
      });
    }
    const fileName = record.file_name!;
    if (take.control.response_type === 'json') {
      return {
        is_successful: true,
        render_id: record.render_id,
        file_url: fileUrl(config.baseUrl, fileName),
        format: record.format,
        size_bytes: record.size_bytes,
      };
    }
    const image = await store.read(fileName);
    reply.type(contentTypes[record.format]);
    return image;
  };

  const take = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = rawParams(request);
    // Seam for workspaces: the access key, email and signature checks run here, before validation.
    const workspaceId = 'default';
    const takeRequest = await validate(raw);
    const renderRequest: RenderRequest = {
      render_id: randomUUID(),
      workspace_id: workspaceId,
      created_at: new Date().toISOString(),
      options: takeRequest.options,
      ...(takeRequest.control.webhook_url ? { webhook_url: takeRequest.control.webhook_url } : {}),
      ...(takeRequest.control.external_identifier ? { external_identifier: takeRequest.control.external_identifier } : {}),
    };
    if (takeRequest.control.async) {
      await queue.submit(renderRequest);
      reply.code(202);
      return {
        is_successful: true,
        render_id: renderRequest.render_id,
        status: 'pending',
        status_url: `${config.baseUrl}/api/renders/${renderRequest.render_id}`,
      };
    }
    // Wait through every allowed delivery of the request: a worker that dies mid-render is replaced.
    const waitSeconds = (takeRequest.options.timeout + config.renderAckWaitSeconds) * config.renderMaxDeliver + 15;
    const record = await queue.submitAndWait(renderRequest, waitSeconds);
    return answer(reply, takeRequest, record);
  };

  app.get('/api/take', take);
  app.post('/api/take', take);
};
