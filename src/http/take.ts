// GET|POST /api/take: authenticate, validate, admit, publish to the render stream, answer with the image or the error.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderRecord, RenderRequest } from '../jetstream/render-records.ts';
import { contentTypes } from '../render/options.ts';
import { fileUrl } from '../storage/store.ts';
import { planConcurrency } from '../workspaces/workspace.ts';
import type { AppDeps } from './app.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { parseTakeParams, type RawParams, type TakeRequest } from './params.ts';

/** The parameters of a GET or POST /api/take, before validation. */
function rawParams(request: FastifyRequest): RawParams {
  if (request.method === 'GET') {
    return { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] };
  }
  if (request.rawBody === undefined) {
    throw new ServiceError('request_not_valid', { error_details: [{ parameter: 'Content-Type', message: 'must be application/json' }] });
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServiceError('request_not_valid', { error_details: [{ parameter: 'body', message: 'must be a JSON object' }] });
  }
  return { kind: 'json', body: body as Record<string, unknown> };
}

/** Registers GET and POST /api/take. */
export const takeRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const { config, queue, store, workspaces, ledger } = deps;

  const validate = async (raw: RawParams): Promise<TakeRequest> => {
    const parsed = parseTakeParams(raw);
    if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
    const { options, control } = parsed.request;
    await deps.checkTarget(options.url, 'url');
    if (control.webhook_url !== undefined) await deps.checkTarget(control.webhook_url, 'webhook_url');
    return parsed.request;
  };

  // A request that never reached the stream gives its quota slot back.
  const submitOrRelease = async <T>(renderRequest: RenderRequest, submit: () => Promise<T>): Promise<T> => {
    try {
      return await submit();
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'temporary_unavailable') {
        await ledger.release(renderRequest.workspace_id, renderRequest.render_id, renderRequest.created_at).catch(() => undefined);
      }
      throw err;
    }
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
    const { workspace } = await authenticate(request, raw, workspaces);
    const takeRequest = await validate(raw);
    const createdAt = new Date();
    const renderRequest: RenderRequest = {
      render_id: randomUUID(),
      workspace_id: workspace.workspace_id,
      created_at: createdAt.toISOString(),
      options: takeRequest.options,
      ...(takeRequest.control.webhook_url ? { webhook_url: takeRequest.control.webhook_url } : {}),
      ...(takeRequest.control.external_identifier ? { external_identifier: takeRequest.control.external_identifier } : {}),
    };
    const allowance = { workspaceId: workspace.workspace_id, quota: workspace.quota, concurrency: planConcurrency[workspace.plan] };
    await ledger.reserve(allowance, renderRequest.render_id, createdAt);

    if (takeRequest.control.async) {
      await submitOrRelease(renderRequest, () => queue.submit(renderRequest));
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
    const record = await submitOrRelease(renderRequest, () => queue.submitAndWait(renderRequest, waitSeconds));
    return answer(reply, takeRequest, record);
  };

  app.get('/api/take', take);
  app.post('/api/take', take);
};
