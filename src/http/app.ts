// The Fastify app factory: the error handler, body parsing and the routes, built from passed-in collaborators.
import Fastify, { LogController, type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { metrics } from '../metrics.ts';
import { errorBody, errorTable, isErrorCode, ServiceError, type ErrorCode } from '../errors.ts';
import { NATS_RETRY_AFTER_SECONDS, unavailable, type NatsLink } from '../jetstream/connection.ts';
import type { RenderQueue } from '../jetstream/render-queue.ts';
import type { Logger } from '../log.ts';
import type { RenderCache } from '../workspaces/render-cache.ts';
import type { FileStore } from '../storage/store.ts';
import type { WorkspaceCache } from '../workspaces/cache.ts';
import type { Settlement } from '../workspaces/settlement.ts';
import { dashboardRoutes, type DashboardDeps } from './dashboard/plugin.ts';
import { filesRoutes } from './files.ts';
import { healthRoutes, type ReadinessCheck } from './health.ts';
import { asOutage } from './outage.ts';
import { rendersRoutes } from './renders.ts';
import { RepeatViews } from './repeat-views.ts';
import { createHttpServer } from './server.ts';
import { takeRoutes } from './take.ts';

/** Largest accepted request body (contract §9). */
export const BODY_LIMIT = 1024 * 1024;

/** What the ingress needs from the rest of the system. */
export interface AppDeps {
  config: Config;
  log: Logger;
  queue: RenderQueue;
  store: FileStore;
  workspaces: WorkspaceCache;
  settlement: Settlement;
  cache: RenderCache;
  /** Validates a target URL against the address rules; throws url_not_allowed / name_not_resolved. */
  checkTarget: (raw: string, parameter: string) => Promise<URL>;
  readiness: ReadinessCheck[];
  /** Whether NATS is connected: requests that need it are refused with a 503 at once while it is not. */
  natsLink?: NatsLink;
  /** The web dashboard's collaborators; without them there is no /dashboard. */
  dashboard?: DashboardDeps;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The POST body exactly as received, for signature checks. */
    rawBody?: Buffer;
  }
  interface FastifyReply {
    /** The error code this reply answered with, for the access log. */
    errorCode?: ErrorCode;
  }
}

/**
 * One access-log line per request, written when it completes. The path is logged without its
 * query string, which carries access keys and signatures.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const path = request.url.split('?', 1)[0];
    const entry = { method: request.method, path, status: reply.statusCode, ms: Math.round(reply.elapsedTime), error_code: reply.errorCode };
    request.log.info(entry, 'request');
  }
}

/** Maps Fastify's own failures (parsing, limits, routing) onto the contract's codes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request_body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'request_not_valid',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request_not_valid',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request_not_valid',
  FST_ERR_CTP_INVALID_JSON_BODY: 'request_not_valid',
  FST_ERR_BAD_URL: 'request_not_valid',
  FST_ERR_MAX_PARAM_LENGTH: 'request_not_valid',
  FST_ERR_VALIDATION: 'request_not_valid',
  FST_ERR_NOT_FOUND: 'not_found',
};

/** Which part of the request a Fastify-level request_not_valid is about (the body unless listed). */
const fastifyParameters: Record<string, string> = {
  FST_ERR_BAD_URL: 'path',
  FST_ERR_MAX_PARAM_LENGTH: 'path',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length',
};

/** Builds the HTTP app; nothing listens until the caller says so. */
export function buildApp(deps: AppDeps) {
  const repeatViews = new RepeatViews(deps.workspaces, deps.cache, deps.config.baseUrl, deps.log);
  const app = Fastify({
    // Repeat views of cached signed URLs are answered before Fastify sees them (the hot path of embeds).
    // The server sets its own client timeouts and answers malformed HTTP itself (server.ts).
    serverFactory: (handler) => createHttpServer((req, res) => repeatViews.answer(req, res) || handler(req, res)),
    // Fastify's handler would answer malformed HTTP with its own body, after server.ts already has.
    clientErrorHandler: () => {},
    // Fastify's own bad-URL answers are not the contract's; these go through the error handler below.
    frameworkErrors: (err, request, reply) => answerError(err, request, reply),
    loggerInstance: deps.log,
    bodyLimit: BODY_LIMIT,
    trustProxy: false,
    // Fastify's own 503 body is not the contract's; the onRequest hook below answers instead.
    return503OnClosing: false,
    logController: new AccessLog(),
  });
  app.decorateReply('errorCode', undefined);
  app.addHook('preClose', async () => void (repeatViews.closing = true));
  app.addHook('onRequest', (request, reply, done) => {
    // Every route but health, metrics and files needs NATS: while it is away, refuse at once.
    if (deps.natsLink && !deps.natsLink.isUp && /^\/(api|dashboard)(\/|$)/.test(request.url)) return done(unavailable());
    if (!repeatViews.closing) return done();
    // Shutting down: the client should take its request (and its connection) to another instance.
    reply.header('connection', 'close');
    done(new ServiceError('temporary_unavailable', {}, { retryAfter: 1 }));
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    request.rawBody = body as Buffer;
    try {
      done(null, JSON.parse((body as Buffer).toString('utf8')));
    } catch {
      done(new ServiceError('request_not_valid', { error_details: [{ parameter: 'body', message: 'is not valid JSON' }] }));
    }
  });
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(new ServiceError('request_not_valid', { error_details: [{ parameter: 'Content-Type', message: 'must be application/json' }] }));
  });

  app.setErrorHandler(answerError);
  app.setNotFoundHandler((_request, reply) => {
    reply.errorCode = 'not_found';
    reply.code(404).send(errorBody('not_found', {}, 'No such route.'));
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpResponses.inc({ route, status: String(reply.statusCode) });
    metrics.httpDuration.observe(reply.elapsedTime / 1000, { route });
  });

  app.register(healthRoutes, { checks: deps.readiness });
  app.register(takeRoutes, { ...deps, repeatViews });
  app.register(rendersRoutes, deps);
  app.register(filesRoutes, deps);
  if (deps.dashboard) app.register(dashboardRoutes, { ...deps.dashboard, prefix: '/dashboard' });
  return app;
}

/** Answers a failure with the contract's body: the error handler, and Fastify's own routing failures. */
function answerError(raw: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply): void {
  // An outage of NATS or of the store is the caller's 503 with Retry-After, never a 500.
  const err = asOutage(raw);
  if (err !== raw) request.log.warn({ err: raw }, 'a dependency is out of reach');
  const code: ErrorCode = err instanceof ServiceError ? err.code : (fastifyCodes[(err as FastifyError).code] ?? fallbackCode(err));
  const parameter = fastifyParameters[(err as FastifyError).code] ?? 'body';
  const details = err instanceof ServiceError ? err.details : code === 'request_not_valid' ? { error_details: [{ parameter, message: err.message }] } : {};
  const status = errorTable[code].status;
  reply.errorCode = code;
  // Only a bug is an error; anything else is in the access log line.
  if (code === 'internal_application_error') request.log.error({ err, error_code: code }, 'request failed');
  const retryAfter = (err instanceof ServiceError ? err.retryAfter : undefined) ?? (code === 'temporary_unavailable' ? NATS_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) reply.header('Retry-After', String(Math.ceil(retryAfter)));
  // A 5xx body carries the table's public message, never the internal one.
  const message = status >= 500 && code === 'internal_application_error' ? undefined : err instanceof ServiceError ? err.message : undefined;
  reply.code(status).type('application/json').send(errorBody(code, details, message));
}

function fallbackCode(err: { statusCode?: number; code?: string }): ErrorCode {
  if (isErrorCode(err.code)) return err.code;
  if (err.statusCode === 400 || err.statusCode === 415) return 'request_not_valid';
  if (err.statusCode === 413) return 'request_body_too_large';
  return 'internal_application_error';
}
