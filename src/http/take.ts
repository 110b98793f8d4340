// GET|POST /api/take: authenticate, validate, serve from the cache or admit, render, answer.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderResult } from '../renders/records.ts';
import { contentTypes } from '../domain/options.ts';
import { fileUrl } from '../domain/files.ts';
import { authenticate, rawQueryString } from './auth.ts';
import type { RawParams, TakeRequest } from './params.ts';
import { cacheKeyFor, parseTake, takeFlow, type RenderEndpoint } from './take-flow.ts';
import { serveAsUserContent } from './files.ts';
import { traceCarrier } from '../tracing.ts';
import { WARNINGS_HEADER } from '../domain/warnings.ts';
import type { StoreResult } from '../domain/storage.ts';
import { storeHeaders } from './store.ts';

/** Says `false` on an image answered before it was stored; the render stores it when the store is back. */
export const UNSTORED_ANSWER_HEADER = 'X-Render-Stored';

/** The parameters of a GET (or HEAD) or POST render request, before validation. */
export function rawParams(request: FastifyRequest): RawParams {
  if (request.method !== 'POST') {
    return { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] };
  }
  if (request.rawBody === undefined) {
    throw new ServiceError('request_not_valid', {
      error_details: [{ parameter: 'Content-Type', message: 'must be application/json' }],
    });
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServiceError('request_not_valid', {
      error_details: [{ parameter: 'body', message: 'must be a JSON object' }],
    });
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

/** A render endpoint's handler: how it reads its parameters, and what it adds to take's way (take-flow.ts). */
export interface RenderRoute<R extends TakeRequest> extends RenderEndpoint<R> {
  /** Validates the raw parameters: the request, or a 400 request_not_valid naming every offending one. */
  parse(raw: RawParams): R;
  /** A file the render did not hand over inline is streamed from the store, not read into memory (a video). */
  streamsFiles?: boolean;
}

/** The handler of GET and POST of a render endpoint (/api/take, /api/animate), on the app's decorators (services.ts). */
export function renderHandler<R extends TakeRequest>(app: FastifyInstance, route: RenderRoute<R>) {
  const { config, fileStore, workspaces, repeatViews } = app;
  const flow = takeFlow(app);

  /**
   * A cached file: a redirect, which renders nothing and charges nothing. With response_type=empty
   * the first view's answer again (200, no body): what ScreenshotOne's SDK's client.store() reads
   * its X-ScreenshotOne-Store-* headers from, which a followed redirect would lose.
   */
  const redirect = (
    reply: FastifyReply,
    take: TakeRequest,
    renderId: string,
    fileName: string,
    store?: StoreResult,
  ) => {
    reply.header('X-Render-Id', renderId);
    // The first view's upload, said again: a repeat view uploads nothing.
    if (store) reply.headers(storeHeaders(store));
    if (take.control.response_type === 'empty') return reply.code(200).send();
    return reply.redirect(fileUrl(config.filesBaseUrl, fileName), 302);
  };

  const answer = async (
    reply: FastifyReply,
    take: TakeRequest,
    { record, image, unstored }: RenderResult,
    cached: boolean,
  ) => {
    reply.header('X-Render-Id', record.render_id);
    if (record.status === 'failed') throw flow.failure(record);
    // The store was out of reach: the image answers before it is stored (docs/operations.md, "Outages").
    if (unstored) reply.header(UNSTORED_ANSWER_HEADER, 'false');
    const fileName = record.file_name!;
    // Never silent: a cut capture or fonts that did not load are said in every kind of answer.
    if (record.warnings) reply.header(WARNINGS_HEADER, record.warnings.map((w) => w.code).join(','));
    if (record.store) reply.headers(storeHeaders(record.store));
    if (take.control.response_type === 'empty') return reply.code(200).send();
    if (take.control.response_type === 'json') return flow.succeeded(record, cached);
    serveAsUserContent(reply);
    reply.type(contentTypes[record.format]);
    if (take.control.attachment_name)
      reply.header('Content-Disposition', attachmentDisposition(take.control.attachment_name));
    if (image === undefined && route.streamsFiles && record.size_bytes !== undefined) {
      reply.header('Content-Length', record.size_bytes);
      return reply.send(await fileStore.open(fileName));
    }
    return image ?? (await fileStore.read(fileName));
  };

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = rawParams(request);
    const caller = await authenticate(request, raw, workspaces);
    const takeRequest = route.parse(raw);
    const cacheKey = cacheKeyFor(caller, takeRequest, route.cacheScope);
    // Repeat views answered from memory know take's cache keys only.
    if (cacheKey && route.cacheScope === undefined) {
      const { workspace_id, secret_key, access_key } = caller.workspace;
      const viaHeader = Boolean(request.headers['x-access-key']);
      repeatViews.remember(rawQueryString(request), {
        accessKey: access_key,
        viaHeader,
        workspaceId: workspace_id,
        secretKey: secret_key,
        cacheKey,
        empty: takeRequest.control.response_type === 'empty',
      });
    }
    const outcome = await flow.run(
      caller,
      takeRequest,
      (renderId) => reply.header('X-Render-Id', renderId),
      traceCarrier(request.span),
      route,
    );
    switch (outcome.kind) {
      case 'cached':
        return redirect(reply, takeRequest, outcome.renderId, outcome.fileName, outcome.store);
      case 'accepted':
        reply.code(202);
        return flow.accepted(outcome.renderId);
      case 'ended':
        return answer(reply, takeRequest, outcome.result, outcome.cached);
    }
  };
}

/** Registers GET and POST /api/take; its collaborators are the app's decorators (services.ts). */
export const takeRoutes: FastifyPluginAsync = async (app) => {
  const take = renderHandler(app, { parse: parseTake });
  app.get('/api/take', take);
  app.post('/api/take', take);
};
