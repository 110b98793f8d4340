// GET /openapi.json and the API reference at /docs: Swagger UI over the generated document,
// its assets served from node_modules (no CDN), no sign-in.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import { openApiDocument } from './openapi.ts';

/** Where the reference page lives; its document is also at `${DOCS_PREFIX}/json`. */
export const DOCS_PREFIX = '/docs';

// The page loads only its own scripts, styles and images, and talks only to this origin ("Try it out");
// Swagger UI adds one inline style element of its own.
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** Registers the document and the reference page; encapsulated, so the Swagger decorators stay inside. */
export const docsRoutes: FastifyPluginAsync<{ baseUrl: string }> = async (app, { baseUrl }) => {
  const document = openApiDocument(baseUrl);
  app.get('/openapi.json', async (_request, reply) => reply.header('cache-control', 'no-cache').send(document));
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    staticCSP: contentSecurityPolicy,
    theme: { title: 'Shutterbus API reference' },
    // BaseLayout: no top bar (Swagger's logo and a box to load other documents).
    uiConfig: {
      layout: 'BaseLayout',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      tryItOutEnabled: false,
    },
  });
};
