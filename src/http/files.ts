// GET /files/:fileName: rendered files, fetched without an access key because their names are unguessable.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ServiceError } from '../errors.ts';
import { fileExpiry, fileFormat, fileUrl, isFileName } from '../domain/files.ts';
import { contentTypes } from '../domain/formats.ts';
import { MAX_ATTACHMENT_NAME, parameterByName } from '../domain/parameters.ts';
import { everyFormat, fileContent, parameterSchema } from './openapi-values.ts';
import { routeUrl, transportCodes, type ApiPart, type Operation } from './operation.ts';

/**
 * A page or a customer wrote what a render produced (an HTML or Markdown document, an SVG, a PDF,
 * metadata content): a browser must run none of it as a page of this origin, where the dashboard
 * lives. `sandbox` gives the document an opaque origin with no scripts, forms, pop-ups or plugins;
 * images still display (docs/security.md).
 */
export const USER_CONTENT_POLICY = 'sandbox';

/** Marks an answer carrying rendered output as someone else's document (every file, every render's bytes). */
export function serveAsUserContent(reply: FastifyReply): void {
  reply.header('content-security-policy', USER_CONTENT_POLICY);
}

/**
 * `Content-Disposition: attachment` naming `name`: a plain ASCII fallback (quotes, backslashes,
 * control and non-ASCII characters replaced) and the exact name in UTF-8 (RFC 6266, RFC 8187).
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%/]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/**
 * Where a cached view redirects: the file, and with `attachmentName` the file as a download under
 * that name, as the first view answered it (`?attachment_name=`).
 */
export function fileLocation(filesBaseUrl: string, fileName: string, attachmentName?: string): string {
  const url = fileUrl(filesBaseUrl, fileName);
  return attachmentName ? `${url}?attachment_name=${encodeURIComponent(attachmentName)}` : url;
}

/** GET /files/{fileName} in the OpenAPI document. */
const fileOperation: Operation = {
  method: 'get',
  path: '/files/{fileName}',
  operationId: 'getFile',
  summary: 'A rendered file',
  tags: ['render'],
  keyed: false,
  errors: ['not_found', 'temporary_unavailable', ...transportCodes],
  detail: () => ({
    description: 'The unguessable name is the credential: no access key.',
    parameters: [
      { name: 'fileName', in: 'path', required: true, schema: { type: 'string' } },
      {
        name: 'attachment_name',
        in: 'query',
        required: false,
        description:
          'Answer as a download under this name (Content-Disposition: attachment), as a cached view of a request with attachment_name redirects.',
        schema: parameterSchema(parameterByName.get('attachment_name')!),
      },
    ],
    responses: {
      '200': {
        description: 'The file, cacheable until it expires.',
        headers: { ETag: { schema: { type: 'string' } } },
        content: fileContent(everyFormat()),
      },
      '304': { description: 'If-None-Match matched.' },
    },
  }),
};

/** What /files adds to the API's description. */
export const filesApi: ApiPart = { operations: [fileOperation] };

/** Registers the file route; it reads the object store decorator (services.ts). */
export const filesRoutes: FastifyPluginAsync = async (app) => {
  const { fileStore } = app;
  app.get<{ Params: { fileName: string }; Querystring: { attachment_name?: unknown } }>(
    routeUrl(fileOperation),
    async (request, reply) => {
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
      serveAsUserContent(reply);
      // The name's extension says the format, and the format registry its content type.
      reply.type(contentTypes[fileFormat(fileName)]).header('Content-Length', String(file.size));
      const { attachment_name: name } = request.query;
      if (typeof name === 'string' && name !== '' && name.length <= MAX_ATTACHMENT_NAME)
        reply.header('Content-Disposition', attachmentDisposition(name));
      return reply.send(await fileStore.open(fileName));
    },
  );
};
