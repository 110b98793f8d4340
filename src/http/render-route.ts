// What every render endpoint (/api/take, /api/animate) does with a request: authenticate, validate,
// serve from the cache or admit, queue, and answer by format, as JSON, empty or at once (async).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderRequest } from '../domain/render.ts';
import type { RenderResult } from '../jetstream/render-records.ts';
import { contentTypes } from '../domain/options.ts';
import { cacheKeyOf } from '../workspaces/render-cache.ts';
import { fileUrl } from '../domain/files.ts';
import { publicMetadata } from '../domain/metadata.ts';
import { authenticate, rawQueryString, type Caller } from './auth.ts';
import type { ParamProblem, RawParams, TakeRequest } from './params.ts';

/** Seconds a synchronous request may wait in the queue beyond its timeout and one ack wait. */
const QUEUE_GRACE_SECONDS = 5;

/** The parameters of a GET (or HEAD) or POST render request, before validation. */
export function rawParams(request: FastifyRequest): RawParams {
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

/** One render endpoint: how it reads its parameters and what its requests add to a render request. */
export interface RenderEndpoint<R extends TakeRequest> {
  /** Parses and validates the parameters: the request, or every problem. */
  parse(raw: RawParams): { request: R } | { problems: ParamProblem[] };
  /** Addresses besides url and webhook_url that must obey the address rules, with their parameter names. */
  targets?(request: R): [string, string][];
  /**
   * Keeps the cache entries of signed GETs of this endpoint apart from another's with the same
   * query string; none for /api/take, whose repeat views are answered from memory by that key.
   */
  cacheScope?: string;
  /** What the render request carries besides the page options (an animation's kind and options). */
  renderFields?(request: R): Partial<RenderRequest>;
  /**
   * Answers a file the render did not hand over inline straight from the store as a stream, not
   * read into memory first: for outputs that can be large (a video).
   */
  streamsFiles?: boolean;
}

/** The handler of GET and POST for `endpoint`, on the app's decorators (services.ts). */
export function renderHandler<R extends TakeRequest>(app: FastifyInstance, endpoint: RenderEndpoint<R>) {
  const { config, renderQueue, fileStore, workspaces, settlement, renderCache, repeatViews, checkTarget } = app;

  const parse = (raw: RawParams): R => {
    const parsed = endpoint.parse(raw);
    if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
    return parsed.request;
  };

  const checkTargets = async (request: R) => {
    const { options, control } = request;
    if (options.url !== undefined) await checkTarget(options.url, 'url');
    if (control.webhook_url !== undefined) await checkTarget(control.webhook_url, 'webhook_url');
    for (const [address, parameter] of endpoint.targets?.(request) ?? []) await checkTarget(address, parameter);
  };

  /** Only a signed GET with `cache` not false is cached (contract §6). */
  const cacheKeyFor = (caller: Caller, request: R): string | undefined => {
    if (caller.signedQuery === undefined || request.control.cache === false) return undefined;
    const scope = endpoint.cacheScope === undefined ? '' : `${endpoint.cacheScope}?`;
    return cacheKeyOf(caller.workspace.workspace_id, scope + caller.signedQuery);
  };

  /** A cached file: a redirect, which renders nothing and charges nothing. */
  const redirect = (reply: FastifyReply, renderId: string, fileName: string) => {
    reply.header('X-Render-Id', renderId);
    return reply.redirect(fileUrl(config.baseUrl, fileName), 302);
  };

  const answer = async (reply: FastifyReply, request: R, { record, image }: RenderResult) => {
    reply.header('X-Render-Id', record.render_id);
    if (record.status === 'failed') {
      throw new ServiceError(record.error_code ?? 'internal_application_error', record.error_details ?? {}, {
        message: record.error_message,
      });
    }
    const fileName = record.file_name!;
    if (request.control.response_type === 'empty') return reply.code(200).send();
    if (request.control.response_type === 'json') {
      return {
        is_successful: true,
        render_id: record.render_id,
        file_url: fileUrl(config.baseUrl, fileName),
        format: record.format,
        size_bytes: record.size_bytes,
        ...(record.metadata ? { metadata: publicMetadata(record.metadata, (name) => fileUrl(config.baseUrl, name)) } : {}),
      };
    }
    reply.type(contentTypes[record.format]);
    if (request.control.attachment_name) reply.header('Content-Disposition', attachmentDisposition(request.control.attachment_name));
    if (image === undefined && endpoint.streamsFiles && record.size_bytes !== undefined) {
      reply.header('Content-Length', record.size_bytes);
      return reply.send(await fileStore.open(fileName));
    }
    return image ?? (await fileStore.read(fileName));
  };

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = rawParams(request);
    const caller = await authenticate(request, raw, workspaces);
    const parsed = parse(raw);
    const cacheKey = cacheKeyFor(caller, parsed);
    if (cacheKey) {
      if (endpoint.cacheScope === undefined) {
        const { workspace_id, secret_key, access_key } = caller.workspace;
        const viaHeader = Boolean(request.headers['x-access-key']);
        repeatViews.remember(rawQueryString(request), { accessKey: access_key, viaHeader, workspaceId: workspace_id, secretKey: secret_key, cacheKey });
      }
      const hit = await renderCache.lookup(cacheKey);
      if (hit) return redirect(reply, hit.render_id, hit.file_name!);
    }
    await checkTargets(parsed);

    const { workspace } = caller;
    const createdAt = new Date();
    const renderRequest: RenderRequest = {
      render_id: randomUUID(),
      workspace_id: workspace.workspace_id,
      created_at: createdAt.toISOString(),
      options: parsed.options,
      ...endpoint.renderFields?.(parsed),
      ...(parsed.control.webhook_url ? { webhook_url: parsed.control.webhook_url } : {}),
      ...(parsed.control.external_identifier ? { external_identifier: parsed.control.external_identifier } : {}),
      ...(cacheKey ? { cache: { key: cacheKey, ttl: parsed.control.cache_ttl } } : {}),
    };
    // A synchronous caller waits for the render's own timeout, plus one ack wait (a worker that dies
    // mid-render is replaced) and a little time in the queue; an outage longer than that is a 503.
    const waitSeconds = parsed.options.timeout + config.renderAckWaitSeconds + QUEUE_GRACE_SECONDS;
    const answerBy = parsed.control.async ? undefined : createdAt.getTime() + waitSeconds * 1000;
    reply.header('X-Render-Id', renderRequest.render_id);
    if (answerBy) renderRequest.answer_by = answerBy;

    if (cacheKey) {
      // Of concurrent first views, on any ingress, one renders; the others wait for it and redirect.
      const claim = await renderCache.claim(cacheKey, renderRequest.render_id, waitSeconds);
      if (claim.kind === 'redirect') return redirect(reply, claim.entry.render_id, claim.entry.file_name!);
      if (claim.kind === 'follow') {
        const { record } = await renderQueue.waitFor(claim.renderId, waitSeconds);
        if (record.status === 'succeeded') return redirect(reply, record.render_id, record.file_name!);
        return answer(reply, parsed, { record });
      }
    }

    await settlement.admit(renderRequest, workspace);
    // Once published, the worker settles the render; a request answered with an error gives back what it held.
    const publish = async <T>(send: () => Promise<T>): Promise<T> =>
      send().catch((err) => {
        if (err instanceof ServiceError && err.code === 'temporary_unavailable') settlement.giveBack(renderRequest);
        throw err;
      });

    if (parsed.control.async) {
      await publish(() => renderQueue.submit(renderRequest));
      reply.code(202);
      return {
        is_successful: true,
        render_id: renderRequest.render_id,
        status: 'pending',
        status_url: `${config.baseUrl}/api/renders/${renderRequest.render_id}`,
      };
    }
    return answer(reply, parsed, await publish(() => renderQueue.submitAndWait(renderRequest)));
  };
}
