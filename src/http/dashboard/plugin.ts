// The web dashboard under /dashboard: an encapsulated Fastify plugin with its own form parser, CSRF check and HTML errors.
import type { FastifyError, FastifyInstance } from 'fastify';
import { errorTable, ServiceError } from '../../errors.ts';
import { asOutage } from '../errors/outage.ts';
import { copyScript, stylesheet } from './assets.ts';
import { accountRoutes } from './account-routes.ts';
import { authRoutes } from './auth-routes.ts';
import { requireSignIn, type Dashboard, type DashboardDeps } from './context.ts';
import { deliveriesRoutes } from './deliveries-routes.ts';
import { keysRoutes } from './keys-routes.ts';
import { membersRoutes } from './members-routes.ts';
import { monitorsRoutes } from './monitors-routes.ts';
import { playgroundRoutes } from './playground-routes.ts';
import { storageRoutes } from './storage-routes.ts';
import { profilesRoutes } from './profiles-routes.ts';
import { rendersRoutes } from './renders-routes.ts';
import { WindowLimiter } from './rate-limit.ts';
import { SignInGuard } from './sign-in-guard.ts';
import { sameOrigin, Sessions } from './session.ts';
import { messagePage } from './views/auth.ts';

export type { DashboardDeps } from './context.ts';

const FORM_BODY_LIMIT = 64 * 1024;
const MINUTE_MS = 60_000;

// Pages only load our own stylesheet and script (which only talks to us) and images and videos from us and
// the files origin (the playground's result); inline script and foreign form targets are refused.
const contentSecurityPolicy = (filesOrigin: string) =>
  `default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' ${filesOrigin} data:; media-src 'self' ${filesOrigin}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Registers the dashboard; meant to be registered with `{ prefix: '/dashboard' }`. */
export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  // Fastify hands the register options (prefix included) to the plugin; sub-plugins must not get the prefix again.
  const { prefix: _prefix, ...collaborators } = deps as DashboardDeps & { prefix?: string };
  const dashboard: Dashboard = {
    ...collaborators,
    sessions: new Sessions(deps.sessionSecret, deps.config.baseUrl.startsWith('https:'), deps.sessionStore),
    limits: {
      signIn: new SignInGuard(),
      signUpByIp: new WindowLimiter(10, 60 * MINUTE_MS),
      mailByEmail: new WindowLimiter(3, 15 * MINUTE_MS),
    },
  };

  // Encapsulated: only dashboard routes accept forms; /api/take keeps refusing them.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  const filesOrigin = new URL(deps.config.filesBaseUrl).origin;
  const policy = contentSecurityPolicy(filesOrigin);
  // The files origin is for other people's documents and stays cookie-less: no dashboard there (docs/security.md).
  const filesHost = filesOrigin === new URL(deps.config.baseUrl).origin ? undefined : new URL(filesOrigin).host;
  app.addHook('onRequest', async (request, reply) => {
    if (filesHost !== undefined && request.host === filesHost)
      throw new ServiceError('not_found', {}, { message: 'There is no dashboard on the files origin.' });
    reply.header('content-security-policy', policy);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    reply.header('cache-control', 'no-store');
  });

  // Every POST must come from one of our pages: same origin, and the session's CSRF token in the form.
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST') return;
    const token = (request.body as Record<string, unknown> | undefined)?._csrf;
    if (
      !sameOrigin(request, deps.config.baseUrl) ||
      !dashboard.sessions.csrfMatches(dashboard.sessions.read(request), token)
    ) {
      throw new ServiceError(
        'forbidden',
        {},
        {
          message:
            'This form did not come from a Shutterbus dashboard page (or the page is too old). Reload the page and try again.',
        },
      );
    }
  });

  app.setErrorHandler((raw: FastifyError | ServiceError, request, reply) => {
    const err = asOutage(raw);
    const known = err instanceof ServiceError;
    if (known && err.code === 'temporary_unavailable') {
      request.log.warn({ err: raw }, 'dashboard request: a dependency is out of reach');
      const page = messagePage({
        title: 'Temporarily unavailable',
        kind: 'bad',
        text: err.message,
        link: { href: request.url, label: 'Try again' },
      });
      return reply
        .code(503)
        .header('Retry-After', String(err.retryAfter ?? 5))
        .type('text/html; charset=utf-8')
        .send(page.text);
    }
    const status = known
      ? errorTable[err.code].status
      : (err as FastifyError).statusCode && (err as FastifyError).statusCode! < 500
        ? (err as FastifyError).statusCode!
        : 500;
    if (status >= 500) request.log.error({ err }, 'dashboard request failed');
    else request.log.info({ status, error_code: known ? err.code : undefined }, 'dashboard request refused');
    const text =
      status >= 500
        ? 'Something went wrong on our side. Please try again.'
        : known
          ? err.message
          : 'The request was not understood.';
    const title =
      status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status >= 500 ? 'Error' : 'Cannot do that';
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(
        messagePage({ title, kind: 'bad', text, link: { href: '/dashboard', label: 'Back to the dashboard' } }).text,
      );
  });

  app.setNotFoundHandler((_request, reply) => {
    reply
      .code(404)
      .type('text/html; charset=utf-8')
      .send(
        messagePage({
          title: 'Not found',
          kind: 'bad',
          text: 'There is no dashboard page here.',
          link: { href: '/dashboard', label: 'Back to the dashboard' },
        }).text,
      );
  });

  app.get('/assets/style.css', async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=300').send(stylesheet),
  );
  app.get('/assets/copy.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(copyScript),
  );
  app.get('/', async (request, reply) =>
    reply.redirect((await dashboard.sessions.live(request))?.email ? '/dashboard/keys' : '/dashboard/sign-in', 303),
  );

  // Filled in per request by requireSignIn; declared here so every request object has the same shape.
  app.decorateRequest('signedIn', null as never);
  await app.register(authRoutes, dashboard);
  // A workspace's pages are for its members: one hook finds the signed-in member (after the CSRF check above) or answers.
  await app.register(async (memberPages) => {
    memberPages.addHook('preHandler', requireSignIn(dashboard));
    await memberPages.register(keysRoutes, dashboard);
    await memberPages.register(membersRoutes, dashboard);
    await memberPages.register(playgroundRoutes, dashboard);
    await memberPages.register(deliveriesRoutes, dashboard);
    await memberPages.register(rendersRoutes, dashboard);
    await memberPages.register(accountRoutes, dashboard);
    await memberPages.register(storageRoutes, dashboard);
    await memberPages.register(monitorsRoutes, dashboard);
    await memberPages.register(profilesRoutes, dashboard);
  });
}
