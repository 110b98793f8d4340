// GET|POST /api/take: authenticate, validate, serve from the cache or admit, render, answer.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import type { RenderResult } from '../renders/done.ts';
import type { TakeOutcome } from '../renders/admission.ts';
import { contentTypes } from '../domain/options.ts';
import { authenticate, rawQueryString, type SignatureScope } from './auth.ts';
import type { RawParams, TakeRequest } from './params.ts';
import { openUrlSecrets } from './url-secrets.ts';
import { cacheKeyFor, parseTake, refuseUncachedCacheOptions, takeFlow, type RenderEndpoint } from './take-flow.ts';
import { attachmentDisposition, fileLocation, serveAsUserContent } from './files.ts';
import { traceCarrier } from '../tracing.ts';
import { WARNINGS_HEADER } from '../domain/warnings.ts';
import type { StoreResult } from '../domain/storage.ts';
import { storeHeaders } from './store.ts';
import { bodyAfterChecks, bodyRefusalOf } from './body.ts';
import { parameterGroups } from './openapi-values.ts';
import { renderOperations } from './openapi-answers.ts';
import { routeUrl, type ApiPart } from './operation.ts';

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

/** A request answered from the cache: its render's id and file. */
type CachedOutcome = Extract<TakeOutcome, { kind: 'cached' }>;

/** A render endpoint's handler: how it reads its parameters, and what it adds to take's way (take-flow.ts). */
export interface RenderRoute<R extends TakeRequest> extends RenderEndpoint<R> {
  /** Validates the raw parameters: the request, or a 400 request_not_valid naming every offending one. */
  parse(raw: RawParams): R;
  /** A file the render did not hand over inline is streamed from the store, not read into memory (a video). */
  streamsFiles?: boolean;
  /**
   * What a signature signs (docs/api.md, "Signatures"): `query`, ScreenshotOne's scheme, for
   * /api/take and /api/animate alone; every other endpoint binds its method and path (the default).
   */
  signatures?: SignatureScope;
}

/**
 * A POST's parameters come from its body, which X-Signature covers: any in its query string but
 * the access key would be silently unread, so each is named, with the body's own problems.
 */
function parseWithQuery<R extends TakeRequest>(route: RenderRoute<R>, raw: RawParams, request: FastifyRequest): R {
  const stray =
    raw.kind === 'json'
      ? [...new Set(new URLSearchParams(rawQueryString(request)).keys())]
          .filter((name) => name !== 'access_key')
          .map((parameter) => ({ parameter, message: 'is read from the JSON body of a POST, not its query string' }))
      : [];
  if (stray.length === 0) return route.parse(raw);
  let problems: unknown[] = [];
  try {
    route.parse(raw);
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'request_not_valid') throw err;
    problems = (err.details.error_details as unknown[] | undefined) ?? [];
  }
  throw new ServiceError('request_not_valid', { error_details: [...stray, ...problems] });
}

/** The handler of GET and POST of a render endpoint (/api/take, /api/animate), on the app's decorators (services.ts). */
export function renderHandler<R extends TakeRequest>(app: FastifyInstance, route: RenderRoute<R>) {
  const { config, fileStore, workspaces, repeatViews } = app;
  const flow = takeFlow(app);

  /** A cached file: a redirect, which renders nothing and charges nothing. */
  const redirect = (
    reply: FastifyReply,
    renderId: string,
    fileName: string,
    store: StoreResult | undefined,
    attachmentName: string | undefined,
  ) => {
    reply.header('X-Render-Id', renderId);
    // The first view's upload, said again: a repeat view uploads nothing.
    if (store) reply.headers(storeHeaders(store));
    return reply.redirect(fileLocation(config.filesBaseUrl, fileName, attachmentName), 302);
  };

  /**
   * A cached file in the kind `response_type` asks for, like the first view's answer: by_format
   * redirects to it, json is the first view's JSON description (with cache_url), empty is empty
   * (200, no body: what ScreenshotOne's SDK's client.store() reads its X-ScreenshotOne-Store-*
   * headers from, which a followed redirect would lose).
   */
  const cachedAnswer = async (reply: FastifyReply, take: TakeRequest, outcome: CachedOutcome) => {
    if (take.control.response_type === 'by_format')
      return redirect(reply, outcome.renderId, outcome.fileName, outcome.store, take.control.attachment_name);
    reply.header('X-Render-Id', outcome.renderId);
    if (outcome.store) reply.headers(storeHeaders(outcome.store));
    if (take.control.response_type === 'empty') return reply.code(200).send();
    return flow.cachedJson(outcome);
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
    // A POST body that cannot be read is refused after the caller's checks (docs/api.md, "Errors").
    const refusal = request.method === 'POST' ? bodyRefusalOf(request) : undefined;
    const raw: RawParams = refusal ? { kind: 'json', body: {} } : rawParams(request);
    const caller = await authenticate(request, raw, workspaces, route.signatures ?? 'request');
    if (refusal) throw refusal;
    // A bulk request's URL carries the customer's credentials sealed for this workspace.
    const takeRequest = parseWithQuery(route, openUrlSecrets(raw, caller.workspace.workspace_id, app.sealer), request);
    const cacheKey = cacheKeyFor(caller, takeRequest, route.cacheScope);
    refuseUncachedCacheOptions(raw, takeRequest, cacheKey);
    if (request.method === 'HEAD') {
      // What a GET of a cached URL answers, or 405: a HEAD never renders and is never charged.
      const hit = cacheKey ? await flow.cached(cacheKey) : null;
      if (hit?.kind === 'cached') return cachedAnswer(reply, takeRequest, hit);
      return reply.code(405).header('Allow', 'GET, POST').send();
    }
    // Repeat views answered from memory know take's cache keys only, and answer with a redirect
    // (or, for response_type=empty, an empty 200); a json view reads its first view's record.
    if (cacheKey && route.cacheScope === undefined && takeRequest.control.response_type !== 'json') {
      const { workspace_id, secret_key, access_key } = caller.workspace;
      const viaHeader = Boolean(request.headers['x-access-key']);
      repeatViews.remember(rawQueryString(request), {
        accessKey: access_key,
        viaHeader,
        workspaceId: workspace_id,
        secretKey: secret_key,
        signed: caller.signedQuery !== undefined,
        cacheKey,
        empty: takeRequest.control.response_type === 'empty',
        ...(takeRequest.control.attachment_name ? { attachmentName: takeRequest.control.attachment_name } : {}),
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
        return cachedAnswer(reply, takeRequest, outcome);
      case 'accepted':
        // The render accepted may be another view's, under way for the same cached URL.
        reply.header('X-Render-Id', outcome.renderId).code(202);
        return flow.accepted(outcome.renderId);
      case 'ended':
        return answer(reply, takeRequest, outcome.result, outcome.cached);
    }
  };
}

/**
 * Registers GET, HEAD and POST of a render endpoint. A HEAD renders nothing and charges nothing
 * (Fastify would otherwise render for it and drop the body): after every check a GET passes, a
 * cached URL answers as its GET would (its redirect), anything else `405` with `Allow`, as a link
 * checker or a crawler probing an `<img>` URL is told.
 */
export function registerRenderEndpoint(
  app: FastifyInstance,
  path: string,
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
): void {
  app.get(path, { exposeHeadRoute: false }, handler);
  app.head(path, handler);
  app.post(path, bodyAfterChecks, handler);
}

/** GET and POST /api/take in the OpenAPI document, with the parameter table's groups. */
const takeOperations = renderOperations(
  'take',
  'Render a page',
  () =>
    `Renders a page. Exactly one of \`url\`, \`html\` and \`markdown\`. A bad or unknown parameter, or a refused combination, is \`400 request_not_valid\` naming each offending parameter.\n\n${parameterGroups()}`,
);

/** What /api/take adds to the API's description. */
export const takeApi: ApiPart = { operations: [takeOperations.get, takeOperations.post] };

/** Registers GET, HEAD and POST /api/take; its collaborators are the app's decorators (services.ts). */
export const takeRoutes: FastifyPluginAsync = async (app) => {
  // ScreenshotOne's scheme: the query string or body alone is signed.
  registerRenderEndpoint(
    app,
    routeUrl(takeOperations.get),
    renderHandler(app, { parse: parseTake, signatures: 'query' }),
  );
};
