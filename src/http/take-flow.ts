// The HTTP side of a render request, shared by /api/take, /api/bulk and /api/animate: from validated
// parameters to a render request (target checks, its store, its cache key), handed to the renders'
// admission (src/renders/admission.ts), and the JSON answer of its outcome.
import { unknownProfile } from '../domain/profile.ts';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { errorBody, ServiceError, statusOf, type ErrorCode } from '../errors.ts';
import type { RenderRecord, RenderRequest } from '../domain/render.ts';
import { renderAdmission, type TakeOutcome } from '../renders/admission.ts';
import { cacheKeyOf } from '../renders/cache.ts';
import { fileUrl } from '../domain/files.ts';
import { renderView } from '../renders/view.ts';
import type { Caller } from './auth.ts';
import { asOutage } from './errors/outage.ts';
import { parseTakeParams, type RawParams, type TakeRequest } from './params.ts';
import { parseProxyUrl } from '../domain/proxy-url.ts';
import { unwritableFormat } from '../render/outputs/image.ts';
import type { TraceCarrier } from '../tracing.ts';
import type { StoreTarget } from '../domain/storage.ts';
import { storeTargetFor } from './store.ts';

/** What a render endpoint adds to the way of a request (/api/animate: docs/animate.md). */
export interface RenderEndpoint<R extends TakeRequest = TakeRequest> {
  /** Addresses besides url and webhook_url that must obey the address rules, with their parameter names. */
  targets?(request: R): [string, string][];
  /**
   * Keeps the cache entries of signed GETs of this endpoint apart from another's with the same
   * query string; none for /api/take, whose repeat views are answered from memory by that key.
   */
  cacheScope?: string;
  /** What the render request carries besides the page options (an animation's kind and options). */
  renderFields?(request: R): Partial<RenderRequest>;
}

/**
 * A signed GET is cached unless `cache=false`, a GET without a signature only with `cache=true`,
 * a POST never; the key comes from the raw query string (less the signature), and `scope` keeps
 * an endpoint's entries apart.
 */
export function cacheKeyFor(caller: Caller, take: TakeRequest, scope?: string): string | undefined {
  const query = caller.signedQuery ?? (take.control.cache === true ? caller.unsignedQuery : undefined);
  if (query === undefined || take.control.cache === false) return undefined;
  return cacheKeyOf(caller.workspace.workspace_id, (scope === undefined ? '' : `${scope}?`) + query);
}

/**
 * `cache=true`, `cache_key` and `cache_ttl` on a request that is not cached (a POST, or a GET
 * without a signature and without `cache=true`) would mean nothing: a 400 naming each.
 */
export function refuseUncachedCacheOptions(raw: RawParams, take: TakeRequest, cacheKey: string | undefined): void {
  if (cacheKey !== undefined) return;
  const given =
    raw.kind === 'query'
      ? new Set(raw.entries.map(([name]) => name))
      : new Set(Object.keys(raw.body).filter((name) => raw.body[name] !== null));
  const names = [
    ...(take.control.cache === true ? ['cache'] : []),
    ...['cache_key', 'cache_ttl'].filter((name) => given.has(name)),
  ];
  if (names.length === 0) return;
  const message =
    raw.kind === 'query'
      ? 'applies only to a cached GET: a signed one, or one with cache=true'
      : 'a POST is never cached: send a GET to cache';
  throw new ServiceError('request_not_valid', {
    error_details: names.map((parameter) => ({ parameter, message })),
  });
}

/** Validates raw parameters as /api/take does: 400 request_not_valid naming every offending one. */
export function parseTake(raw: RawParams): TakeRequest {
  const parsed = parseTakeParams(raw);
  if ('problems' in parsed) throw new ServiceError('request_not_valid', { error_details: parsed.problems });
  return parsed.request;
}

/** A failure as the body and status the API answers it with (a 5xx never says more than the table). */
export function failureAnswer(raw: unknown): { status: number; body: ReturnType<typeof errorBody> } {
  const err = asOutage(raw);
  if (!(err instanceof ServiceError)) return { status: 500, body: errorBody('internal_application_error') };
  const body =
    err.code === 'internal_application_error' ? errorBody(err.code) : errorBody(err.code, err.details, err.message);
  return { status: statusOf(err.code), body };
}

/**
 * The checks of a render request beyond its parameters' own rules: every address it names obeys the
 * address rules of url, `ip_country_code` names a configured proxy, the format can be written. One
 * path for every endpoint that renders or keeps a request to render later (/api/monitors).
 */
export function targetChecks(app: FastifyInstance) {
  const { config, checkTarget } = app;
  return async (
    { options, control }: Pick<TakeRequest, 'options' | 'control'>,
    store: StoreTarget | undefined,
    others: [string, string][] = [],
  ) => {
    for (const [address, parameter] of others) await checkTarget(address, parameter);
    if (options.url !== undefined) await checkTarget(options.url, 'url');
    if (control.webhook_url !== undefined) await checkTarget(control.webhook_url, 'webhook_url');
    if (store) await checkTarget(store.endpoint, 'storage_endpoint');
    // The customer's proxy obeys the address rules of url (its credentials are not part of the check).
    const proxy = options.proxy === undefined ? null : parseProxyUrl(options.proxy);
    if (proxy) await checkTarget(`${proxy.url.protocol}//${proxy.url.host}/`, 'proxy');
    const refuse = (parameter: string, message: string) =>
      new ServiceError('request_not_valid', { error_details: [{ parameter, message }] });
    if (options.ip_country_code !== undefined && config.geoProxies[options.ip_country_code] === undefined) {
      const known = Object.keys(config.geoProxies);
      throw refuse(
        'ip_country_code',
        `no proxy for ${options.ip_country_code} here (${known.length > 0 ? `configured: ${known.join(', ')}` : 'none is configured'})`,
      );
    }
    const unwritable = await unwritableFormat(options.format);
    if (unwritable) throw refuse('format', unwritable);
  };
}

/** `profile` names one of the workspace's profiles, or the request is a 400 naming it. */
export async function checkProfile(app: FastifyInstance, workspaceId: string, name: string | undefined): Promise<void> {
  if (name === undefined) return;
  if (!app.profiles || !(await app.profiles.get(workspaceId, name))) throw unknownProfile();
}

/** The steps of a render request, built over the app's collaborators (services.ts). */
export function takeFlow(app: FastifyInstance) {
  const { config, sealer } = app;
  const admission = renderAdmission(app);
  const urlOf = (fileName: string) => fileUrl(config.filesBaseUrl, fileName);
  const checkTargets = targetChecks(app);

  /**
   * Serves `take` from the cache, or admits, queues and (unless asynchronous) waits for its render
   * (src/renders/admission.ts). `onRenderId` hears the render's id as soon as it has one, before any
   * refusal; `trace` is the W3C trace context of the request that asked (tracing on), carried on to the render.
   */
  const run = async <R extends TakeRequest>(
    caller: Caller,
    take: R,
    onRenderId?: (renderId: string) => void,
    trace?: TraceCarrier,
    endpoint: RenderEndpoint<R> = {},
  ): Promise<TakeOutcome> => {
    const cacheKey = cacheKeyFor(caller, take, endpoint.cacheScope);
    const hit = cacheKey ? await admission.cached(cacheKey) : null;
    if (hit) return hit;
    const { workspace } = caller;
    const store = storeTargetFor(take.control, take.options.format, workspace, sealer);
    await checkTargets(take, store, endpoint.targets?.(take) ?? []);
    await checkProfile(app, workspace.workspace_id, take.options.profile);

    const createdAt = new Date();
    const renderRequest: RenderRequest = {
      render_id: randomUUID(),
      workspace_id: workspace.workspace_id,
      created_at: createdAt.toISOString(),
      options: take.options,
      ...endpoint.renderFields?.(take),
      ...(take.control.webhook_url ? { webhook_url: take.control.webhook_url } : {}),
      ...(take.control.external_identifier ? { external_identifier: take.control.external_identifier } : {}),
      ...(take.control.webhook_sign ? {} : { webhook_sign: false as const }),
      ...(take.control.webhook_errors ? {} : { webhook_errors: false as const }),
      ...(cacheKey ? { cache: { key: cacheKey, ttl: take.control.cache_ttl } } : {}),
      ...(store ? { store } : {}),
      ...(trace ? { trace } : {}),
    };
    onRenderId?.(renderRequest.render_id);
    if (!take.control.async)
      renderRequest.answer_by = createdAt.getTime() + admission.waitSeconds(take.options.timeout) * 1000;
    // When the store is out of reach the image may come before it is stored: answered as it is
    // unless the answer needs its file (json) or its upload to the customer's bucket (docs/operations.md).
    const takesUnstored = take.control.response_type !== 'json' && store === undefined;
    return admission.submit(renderRequest, workspace, { async: take.control.async, takesUnstored });
  };

  /** A failed render's error, as the caller hears it: no file of it, whatever failed. */
  const failure = (record: RenderRecord) =>
    new ServiceError((record.error_code ?? 'internal_application_error') as ErrorCode, record.error_details ?? {}, {
      message: record.error_message,
    });

  /** The JSON answer of a succeeded render (src/renders/view.ts). */
  const succeeded = (record: RenderRecord, cached: boolean) => renderView(record, urlOf, 'answer', { cached });

  /** The 202 body of an accepted asynchronous render. */
  const accepted = (renderId: string) => ({
    is_successful: true,
    render_id: renderId,
    status: 'pending',
    status_url: `${config.baseUrl}/api/renders/${renderId}`,
  });

  /** An outcome as `response_type=json` answers it: [status, body]; a failure throws its error. */
  const json = (outcome: TakeOutcome): { status: number; body: Record<string, unknown> } => {
    switch (outcome.kind) {
      case 'accepted':
        return { status: 202, body: accepted(outcome.renderId) };
      case 'cached': {
        const url = urlOf(outcome.fileName);
        return {
          status: 200,
          body: {
            is_successful: true,
            render_id: outcome.renderId,
            file_url: url,
            screenshot_url: url,
            cache_url: url,
            ...(outcome.store ? { store: outcome.store } : {}),
          },
        };
      }
      case 'ended':
        if (outcome.result.record.status === 'failed') throw failure(outcome.result.record);
        return { status: 200, body: succeeded(outcome.result.record, outcome.cached) };
    }
  };

  /**
   * A cached file as `response_type=json` answers it: the JSON answer of the render that made it,
   * with cache_url (the first view's format, size and metadata), or its file alone should that
   * render's record be gone.
   */
  const cachedJson = async (outcome: Extract<TakeOutcome, { kind: 'cached' }>) => {
    const record = await app.renderQueue.records.get(outcome.renderId);
    return record?.status === 'succeeded' ? succeeded(record, true) : json(outcome).body;
  };

  /** The cached answer of a cache key, without admitting anything (a HEAD). */
  const cached = (cacheKey: string) => admission.cached(cacheKey);
  return { run, cached, failure, succeeded, accepted, json, cachedJson, urlOf };
}
