// GET|POST /api/take: authenticate, validate, serve from the cache or admit, render, answer.
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderRequest } from '../domain/render.ts';
import type { RenderResult } from '../jetstream/render-records.ts';
import { contentTypes } from '../domain/options.ts';
import { cacheKeyOf } from '../workspaces/render-cache.ts';
import { fileUrl } from '../domain/files.ts';
import { publicMetadata } from '../domain/metadata.ts';
import type { StoreResult, StoreTarget } from '../domain/storage.ts';
import { authenticate, rawQueryString, type Caller } from './auth.ts';
import { parseTakeParams, type RawParams, type TakeRequest } from './params.ts';
import { storeHeaders, storeTargetFor } from './store.ts';

/** Seconds a synchronous request may wait in the queue beyond its timeout and one ack wait. */
const QUEUE_GRACE_SECONDS = 5;

/** The parameters of a GET (or HEAD) or POST /api/take, before validation. */
function rawParams(request: FastifyRequest): RawParams {
  if (request.method !== 'POST') {
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

/**
 * `Content-Disposition: attachment` naming `name`: a plain ASCII fallback (quotes, backslashes,
 * control and non-ASCII characters replaced) and the exact name in UTF-8 (RFC 6266, RFC 8187).
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%/]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/** Only a signed GET with `cache` not false is cached (contract §6). */
function cacheKeyFor(caller: Caller, take: TakeRequest): string | undefined {
  if (caller.signedQuery === undefined || take.control.cache === false) return undefined;
  return cacheKeyOf(caller.workspace.workspace_id, caller.signedQuery);
}

/** Registers GET and POST /api/take; its collaborators are the app's decorators (services.ts). */
export const takeRoutes: FastifyPluginAsync = async (app) => {
  const { config, renderQueue, fileStore, workspaces, settlement, renderCache, repeatViews, checkTarget, sealer } = app;

  const parse = (raw: RawParams): TakeRequest => {
    const parsed = parseTakeParams(raw);
    if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
    return parsed.request;
  };

  const checkTargets = async ({ options, control }: TakeRequest, store: StoreTarget | undefined) => {
    if (options.url !== undefined) await checkTarget(options.url, 'url');
    if (control.webhook_url !== undefined) await checkTarget(control.webhook_url, 'webhook_url');
    if (store) await checkTarget(store.endpoint, 'storage_endpoint');
  };

  /** A cached file: a redirect, which renders nothing and charges nothing. */
  const redirect = (reply: FastifyReply, renderId: string, fileName: string, store?: StoreResult) => {
    reply.header('X-Render-Id', renderId);
    // The first view's upload, said again: a repeat view uploads nothing.
    if (store) reply.headers(storeHeaders(store));
    return reply.redirect(fileUrl(config.baseUrl, fileName), 302);
  };

  const answer = async (reply: FastifyReply, take: TakeRequest, { record, image }: RenderResult) => {
    reply.header('X-Render-Id', record.render_id);
    if (record.status === 'failed') {
      // A refused upload keeps the service's own copy, and says where it is.
      const kept = record.error_code === 'storage_upload_failed' && record.file_name ? { file_url: fileUrl(config.baseUrl, record.file_name) } : {};
      throw new ServiceError(record.error_code ?? 'internal_application_error', { ...record.error_details, ...kept }, {
        message: record.error_message,
      });
    }
    const fileName = record.file_name!;
    if (record.store) reply.headers(storeHeaders(record.store));
    if (take.control.response_type === 'empty') return reply.code(200).send();
    if (take.control.response_type === 'json') {
      return {
        is_successful: true,
        render_id: record.render_id,
        file_url: fileUrl(config.baseUrl, fileName),
        format: record.format,
        size_bytes: record.size_bytes,
        ...(record.store ? { store: record.store } : {}),
        ...(record.metadata ? { metadata: publicMetadata(record.metadata, (name) => fileUrl(config.baseUrl, name)) } : {}),
      };
    }
    reply.type(contentTypes[record.format]);
    if (take.control.attachment_name) reply.header('Content-Disposition', attachmentDisposition(take.control.attachment_name));
    return image ?? (await fileStore.read(fileName));
  };

  const take = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = rawParams(request);
    const caller = await authenticate(request, raw, workspaces);
    const takeRequest = parse(raw);
    const cacheKey = cacheKeyFor(caller, takeRequest);
    if (cacheKey) {
      const { workspace_id, secret_key, access_key } = caller.workspace;
      const viaHeader = Boolean(request.headers['x-access-key']);
      repeatViews.remember(rawQueryString(request), { accessKey: access_key, viaHeader, workspaceId: workspace_id, secretKey: secret_key, cacheKey });
      const hit = await renderCache.lookup(cacheKey);
      if (hit) return redirect(reply, hit.render_id, hit.file_name!, hit.store);
    }
    const { workspace } = caller;
    const store = storeTargetFor(takeRequest.control, takeRequest.options.format, workspace, sealer);
    await checkTargets(takeRequest, store);

    const createdAt = new Date();
    const renderRequest: RenderRequest = {
      render_id: randomUUID(),
      workspace_id: workspace.workspace_id,
      created_at: createdAt.toISOString(),
      options: takeRequest.options,
      ...(takeRequest.control.webhook_url ? { webhook_url: takeRequest.control.webhook_url } : {}),
      ...(takeRequest.control.external_identifier ? { external_identifier: takeRequest.control.external_identifier } : {}),
      ...(cacheKey ? { cache: { key: cacheKey, ttl: takeRequest.control.cache_ttl } } : {}),
      ...(store ? { store } : {}),
    };
    // A synchronous caller waits for the render's own timeout, plus one ack wait (a worker that dies
    // mid-render is replaced) and a little time in the queue; an outage longer than that is a 503.
    const waitSeconds = takeRequest.options.timeout + config.renderAckWaitSeconds + QUEUE_GRACE_SECONDS;
    const answerBy = takeRequest.control.async ? undefined : createdAt.getTime() + waitSeconds * 1000;
    reply.header('X-Render-Id', renderRequest.render_id);
    if (answerBy) renderRequest.answer_by = answerBy;

    if (cacheKey) {
      // Of concurrent first views, on any ingress, one renders; the others wait for it and redirect.
      const claim = await renderCache.claim(cacheKey, renderRequest.render_id, waitSeconds);
      if (claim.kind === 'redirect') return redirect(reply, claim.entry.render_id, claim.entry.file_name!, claim.entry.store);
      if (claim.kind === 'follow') {
        const { record } = await renderQueue.waitFor(claim.renderId, waitSeconds);
        if (record.status === 'succeeded') return redirect(reply, record.render_id, record.file_name!, record.store);
        return answer(reply, takeRequest, { record });
      }
    }

    await settlement.admit(renderRequest, workspace);
    // Once published, the worker settles the render; a request answered with an error gives back what it held.
    const publish = async <T>(send: () => Promise<T>): Promise<T> =>
      send().catch((err) => {
        if (err instanceof ServiceError && err.code === 'temporary_unavailable') settlement.giveBack(renderRequest);
        throw err;
      });

    if (takeRequest.control.async) {
      await publish(() => renderQueue.submit(renderRequest));
      reply.code(202);
      return {
        is_successful: true,
        render_id: renderRequest.render_id,
        status: 'pending',
        status_url: `${config.baseUrl}/api/renders/${renderRequest.render_id}`,
      };
    }
    return answer(reply, takeRequest, await publish(() => renderQueue.submitAndWait(renderRequest)));
  };

  app.get('/api/take', take);
  app.post('/api/take', take);
};
