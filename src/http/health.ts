// Liveness and readiness: /healthz says the process answers, /readyz that its dependencies do.
import Fastify, { LogController, type FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../config.ts';
import { errorBody } from '../errors.ts';
import type { Logger } from '../log.ts';
import { withTimeout } from '../retry.ts';
import { createHttpServer } from './server.ts';
import { renderMetrics } from '../metrics.ts';

/** One dependency the ready check asks; `check` throws when it is not reachable. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/** Registers /healthz, /readyz and /metrics. */
export const healthRoutes: FastifyPluginAsync<{ checks: ReadinessCheck[] }> = async (app, { checks }) => {
  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    reply.type('text/plain; version=0.0.4');
    return renderMetrics();
  });

  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    const results = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), 3000);
          return [name, 'ok'] as const;
        } catch (err) {
          request.log.warn({ err, dependency: name }, 'dependency not ready');
          // What the operator must change (a key this process lacks) is said as the start says it.
          return [name, 'unavailable', err instanceof ConfigError ? err.message : undefined] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    reply.code(ready ? 200 : 503);
    const reasons = results.filter(([, , reason]) => reason !== undefined).map(([name, , reason]) => [name, reason]);
    return {
      status: ready ? 'ready' : 'not_ready',
      dependencies: Object.fromEntries(results.map(([name, state]) => [name, state])),
      ...(reasons.length > 0 ? { reasons: Object.fromEntries(reasons) } : {}),
    };
  });
};

/** The HTTP app of a process without the ingress role: health, readiness and metrics only. */
export function buildHealthApp(log: Logger, checks: ReadinessCheck[]) {
  const app = Fastify({
    serverFactory: (handler) => createHttpServer(handler),
    clientErrorHandler: () => {},
    loggerInstance: log,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.register(healthRoutes, { checks });
  app.setNotFoundHandler((_request, reply) => void reply.code(404).send(errorBody('not_found', {}, 'No such route.')));
  return app;
}
