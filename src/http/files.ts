// GET /files/:fileName: rendered images, fetched without an access key because their names are unguessable.
import type { FastifyPluginAsync } from 'fastify';
import { ServiceError } from '../errors.ts';
import { fileExpiry, isFileName } from '../domain/files.ts';

/** Registers the file route; it reads the object store decorator (services.ts). */
export const filesRoutes: FastifyPluginAsync = async (app) => {
  const { fileStore } = app;
  app.get<{ Params: { fileName: string } }>('/files/:fileName', async (request, reply) => {
    const { fileName } = request.params;
    const live = isFileName(fileName) && fileExpiry(fileName).getTime() > Date.now();
    const file = live ? await fileStore.stat(fileName) : null;
    if (!file) throw new ServiceError('not_found', {}, { message: 'No such file.' });
    const etag = `"${file.etag}"`;
    reply.header('ETag', etag);
    // The content behind a name never changes, so browsers and CDNs may keep it until it expires.
    const lifetime = Math.max(0, Math.floor((fileExpiry(fileName).getTime() - Date.now()) / 1000));
    reply.header('Cache-Control', `public, max-age=${lifetime}, immutable`);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    reply.type(file.contentType).header('Content-Length', String(file.size));
    return reply.send(await fileStore.open(fileName));
  });
};
