// GET /openapi.json and the API reference at /docs: Swagger UI over the generated document,
// its assets served from node_modules (no CDN), no sign-in. The reference is built at its first
// visit, in a Fastify instance of its own that the /docs routes ask: Swagger UI's plugins and the
// packages they load (YAML, the static file server, glob, mime) cost a start ≈ 80 ms of CPU,
// beside the launch of Chromium, for a page a render never needs.
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import Fastify from 'fastify';
import { openApiDocument } from './openapi.ts';

/** Where the reference page lives; its document is also at `${DOCS_PREFIX}/json`. */
export const DOCS_PREFIX = '/docs';

// The page loads only its own scripts, styles and images, and talks only to this origin ("Try it out");
// Swagger UI adds one inline style element of its own.
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/** The reference page's own server: Swagger's document and Swagger UI, answering under DOCS_PREFIX. */
async function referenceServer(document: object): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  const server = Fastify();
  await server.register(swagger, { mode: 'static', specification: { document: document as never } });
  await server.register(swaggerUi, {
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
  await server.ready();
  return server;
}

// What belongs to the inner answer's connection, not to the page: the outer reply sets its own.
const CONNECTION_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding']);

/** Registers the document and the reference page. */
export const docsRoutes: FastifyPluginAsync<{ baseUrl: string }> = async (app, { baseUrl }) => {
  let document: object | undefined;
  const documentNow = () => (document ??= openApiDocument(baseUrl));
  app.get('/openapi.json', async (_request, reply) => reply.header('cache-control', 'no-cache').send(documentNow()));

  let reference: Promise<FastifyInstance> | undefined;
  app.addHook('onClose', async () => void (await reference?.catch(() => undefined))?.close());
  const onReference = async (request: FastifyRequest, reply: FastifyReply) => {
    reference ??= referenceServer(documentNow()).catch((err) => {
      reference = undefined;
      throw err;
    });
    const { 'content-length': _length, ...headers } = request.headers;
    const answer = await (await reference).inject({ method: 'GET', url: request.url, headers });
    // Its 404s and failures are answered as the API's are.
    if (answer.statusCode === 404) return reply.callNotFound();
    if (answer.statusCode >= 500) throw new Error(`the API reference answered ${answer.statusCode}: ${answer.body}`);
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !CONNECTION_HEADERS.has(name)) reply.header(name, value);
    reply.code(answer.statusCode);
    // A 304 has no body, and no type of its own.
    return answer.rawPayload.length > 0 ? reply.send(answer.rawPayload) : reply.send();
  };
  app.get(DOCS_PREFIX, onReference);
  app.get(`${DOCS_PREFIX}/*`, onReference);
};
