// GET|POST /api/take: authenticate, validate, serve from the cache or admit, render, answer
// (the pipeline every render endpoint shares is in render-route.ts).
import type { FastifyPluginAsync } from 'fastify';
import { parseTakeParams } from './params.ts';
import { renderHandler } from './render-route.ts';

export { attachmentDisposition } from './render-route.ts';

/** Registers GET and POST /api/take; its collaborators are the app's decorators (services.ts). */
export const takeRoutes: FastifyPluginAsync = async (app) => {
  const take = renderHandler(app, { parse: parseTakeParams });
  app.get('/api/take', take);
  app.post('/api/take', take);
};
