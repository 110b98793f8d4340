// The service's root: a person who opens the bare address lands somewhere useful, and browsers
// asking for a favicon get one instead of a 404 in every log.
import type { FastifyPluginCallback } from 'fastify';

const favicon = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#2f5bd3"/>' +
    '<circle cx="16" cy="17" r="7" fill="none" stroke="#fff" stroke-width="3"/><rect x="9" y="7" width="6" height="3" rx="1" fill="#fff"/></svg>',
);

/** `GET /` redirects to the dashboard where there is one, else to the API reference. */
export const homeRoutes: FastifyPluginCallback<{ dashboard: boolean }> = (app, options, done) => {
  app.get('/', (_request, reply) => reply.redirect(options.dashboard ? '/dashboard' : '/docs', 302));
  app.get('/favicon.ico', (_request, reply) => {
    reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(favicon);
  });
  done();
};
