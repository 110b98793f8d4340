// The Fastify app factory: body parsing, the error handler, the ingress's collaborators as
// decorators, and the route plugins, built from passed-in collaborators.
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { unavailable, type NatsLink } from '../jetstream/connection.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import { dashboardRoutes, type DashboardDeps } from './dashboard/plugin.ts';
import { docsRoutes } from './docs.ts';
import { answerError, answerNotFound } from './errors/answer.ts';
import { filesRoutes } from './files.ts';
import { healthRoutes, type ReadinessCheck } from './health.ts';
import { homeRoutes } from './home.ts';
import { KeyRefusals } from './key-refusals.ts';
import { monitorsRoutes, type MonitorRouteOptions } from './monitors.ts';
import { profilesRoutes } from './profiles.ts';
import { rendersRoutes } from './renders.ts';
import { RepeatViews } from './repeat-views.ts';
import { createHttpServer } from './server.ts';
import { ingressServices, type IngressServices } from './services.ts';
import { takeRoutes } from './take.ts';
import { contentTypeRefusal, refuseBody } from './body.ts';
import type { Span } from '@opentelemetry/api';
import { endSpan, startSpan, tracingOn, type TraceCarrier } from '../tracing.ts';
import { bulkRoutes } from './bulk.ts';
import { accountRoutes } from './account.ts';
import { animateRoutes } from './animate.ts';
import { pdfMergeRoutes } from './pdf-merge.ts';

/** Largest accepted request body (docs/api.md). */
export const BODY_LIMIT = 1024 * 1024;

/** What the ingress needs from the rest of the system; `buildApp` makes the repeat views itself. */
export interface AppDeps extends Omit<IngressServices, 'repeatViews'> {
  log: Logger;
  readiness: ReadinessCheck[];
  /** Whether NATS is connected: requests that need it are refused with a 503 at once while it is not. */
  natsLink?: NatsLink;
  /** The web dashboard's collaborators; without them there is no /dashboard. */
  dashboard?: DashboardDeps;
  /** The monitors' collaborators; without them there is no /api/monitors. */
  monitors?: MonitorRouteOptions;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The POST body exactly as received, for signature checks. */
    rawBody?: Buffer;
    /** This request's span, when tracing is on. */
    span?: Span;
  }
}

/**
 * One access-log line per request, written when it completes. The path is logged without its
 * query string, which carries access keys and signatures.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(_error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const url = request.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    request.log.info(
      {
        method: request.method,
        path,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        error_code: reply.errorCode,
      },
      'request',
    );
  }
}

type ResponseSeries = {
  responses: ReturnType<typeof metrics.httpResponses.labels>;
  duration: ReturnType<typeof metrics.httpDuration.labels>;
};
// The metric series of each route and status, found once rather than per response.
const responseSeries = new Map<string, ResponseSeries>();
function seriesOf(route: string, status: number): ResponseSeries {
  const key = `${status} ${route}`;
  let series = responseSeries.get(key);
  if (!series) {
    series = {
      responses: metrics.httpResponses.labels({ route, status: String(status) }),
      duration: metrics.httpDuration.labels({ route }),
    };
    responseSeries.set(key, series);
  }
  return series;
}

/** True when the path of `url` (its query aside) holds `..`, as sent or percent-encoded. */
export function hasDotSegment(url: string): boolean {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path.includes('..')) return true;
  return path.includes('%') && /\.(%2e)|%2e(\.|%2e)/i.test(path);
}

/** TRUST_PROXY as Fastify's `trustProxy` option (a list as a fresh mutable array). */
function trustProxyOption(trust: Config['trustProxy']): boolean | string[] {
  return typeof trust === 'boolean' ? trust : [...trust];
}

/** Builds the HTTP app; nothing listens until the caller says so. */
export function buildApp(deps: AppDeps) {
  const { log, readiness, natsLink, dashboard, monitors, ...services } = deps;
  const repeatViews = new RepeatViews(services.workspaces, services.renderCache, services.config.filesBaseUrl, log);
  const keyRefusals = new KeyRefusals(services.workspaces, log, natsLink);
  const app = Fastify({
    // Repeat views of cached signed URLs, and missing or known-wrong keys, are answered before Fastify
    // sees them (the hot paths of embeds and of a client retrying a bad key).
    // The server sets its own client timeouts and answers malformed HTTP itself (server.ts).
    serverFactory: (handler) =>
      createHttpServer((req, res) => repeatViews.answer(req, res) || keyRefusals.answer(req, res) || handler(req, res)),
    // Fastify's handler would answer malformed HTTP with its own body, after server.ts already has.
    clientErrorHandler: () => {},
    // Fastify's own bad-URL answers are not the API's; these go through the error handler too.
    frameworkErrors: (err, request, reply) => answerError(err, request, reply),
    loggerInstance: log,
    bodyLimit: BODY_LIMIT,
    // Which proxies' X-Forwarded-For and X-Forwarded-Proto count (TRUST_PROXY): request.ip is the client's
    // address for the sign-in limits only when the hops in front are the ones named.
    trustProxy: trustProxyOption(services.config.trustProxy),
    // Fastify's own 503 body is not the API's; the onRequest hook below answers instead.
    return503OnClosing: false,
    logController: new AccessLog(),
  });
  app.decorateReply('errorCode', undefined);
  app.addHook('preClose', async () => void (repeatViews.closing = keyRefusals.closing = true));
  app.addHook('onRequest', (request, reply, done) => {
    // No answer of ours is ever read as another type than it says (docs/security.md).
    reply.header('x-content-type-options', 'nosniff');
    // No route has `..` in its path: such a path is nobody's, before a static-file route takes it as a climb.
    if (hasDotSegment(request.url)) return done(new ServiceError('not_found', {}, { message: 'No such route.' }));
    // Every route but health, metrics and files needs NATS: while it is away, refuse at once.
    if (natsLink && !natsLink.isUp && /^\/(api|dashboard)(\/|$)/.test(request.url)) return done(unavailable());
    if (!repeatViews.closing) return done();
    // Shutting down: the client should take its request (and its connection) to another instance.
    reply.header('connection', 'close');
    done(new ServiceError('temporary_unavailable', {}, { retryAfter: 1 }));
  });

  app.removeAllContentTypeParsers();
  // A DELETE's empty body is no body, whatever Content-Type a client sends with every request.
  const noBody = (request: FastifyRequest) =>
    request.method === 'DELETE' &&
    request.headers['transfer-encoding'] === undefined &&
    (request.headers['content-length'] ?? '0') === '0';
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    if (noBody(request)) return done(null, undefined);
    request.rawBody = body as Buffer;
    try {
      done(null, JSON.parse((body as Buffer).toString('utf8')));
    } catch {
      refuseBody(
        request,
        new ServiceError('request_not_valid', { error_details: [{ parameter: 'body', message: 'is not valid JSON' }] }),
        done,
      );
    }
  });
  // Read, so that an X-Signature over these bytes is checked as sent before the Content-Type is refused.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    if (noBody(request)) return done(null, undefined);
    if (request.routeOptions.config?.bodyAfterChecks) request.rawBody = body as Buffer;
    refuseBody(request, contentTypeRefusal(), done);
  });

  app.setErrorHandler(answerError);
  app.setNotFoundHandler(answerNotFound);

  // A callback, not an async function: no promise per response.
  app.addHook('onResponse', (request, reply, done) => {
    const { responses, duration } = seriesOf(request.routeOptions.url ?? 'unmatched', reply.statusCode);
    responses.inc();
    duration.observe(reply.elapsedTime / 1000);
    done();
  });

  if (tracingOn()) {
    // A span per request, child of an incoming traceparent; routes pass it on (take.ts to the render).
    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      request.span = startSpan(
        `${request.method} ${route}`,
        request.headers as TraceCarrier,
        { 'http.request.method': request.method, 'http.route': route },
        'server',
      );
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      request.span?.setAttribute('http.response.status_code', reply.statusCode);
      endSpan(request.span, reply.statusCode >= 500 ? (reply.errorCode ?? String(reply.statusCode)) : undefined);
      done();
    });
  }

  app.register(healthRoutes, { checks: readiness });
  // The route plugins below read these as decorators (services.ts).
  app.register(ingressServices, { ...services, repeatViews });
  app.register(takeRoutes);
  app.register(bulkRoutes);
  app.register(accountRoutes);
  app.register(animateRoutes);
  app.register(pdfMergeRoutes);
  app.register(rendersRoutes);
  app.register(filesRoutes);
  if (monitors) app.register(monitorsRoutes, monitors);
  app.register(profilesRoutes);
  // The API reference: /openapi.json and /docs, public and without NATS.
  app.register(docsRoutes, { baseUrl: services.config.baseUrl });
  app.register(homeRoutes, { dashboard: dashboard !== undefined });
  if (dashboard) app.register(dashboardRoutes, { ...dashboard, prefix: '/dashboard' });
  return app;
}
