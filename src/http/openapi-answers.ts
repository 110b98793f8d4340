// What the endpoints that render (/api/take, /api/animate, /api/pdf/merge) say in the OpenAPI document:
// their answers by format, JSON, async and a cached redirect, their signatures, and their operations.
import type { Parameter } from '../domain/parameters.ts';
import { parameterByName, parameters } from '../domain/parameters.ts';
import { WARNINGS_HEADER } from '../domain/warnings.ts';
import type { ErrorCode } from '../errors.ts';
import { apiCodes, ref, type Json, type Operation } from './operation.ts';
import { bodySchema, fileContent, outputFormats, queryParameters } from './openapi-values.ts';

/** Every code a render can answer: all the API's but not_found. */
export const renderCodes = (): ErrorCode[] => apiCodes().filter((code) => code !== 'not_found');

const renderIdHeader = { 'X-Render-Id': { description: 'The render id.', schema: { type: 'string', format: 'uuid' } } };
const storeHeaders = Object.fromEntries(
  ['X-Store-Bucket', 'X-Store-Key', 'X-ScreenshotOne-Store-Bucket', 'X-ScreenshotOne-Store-Key'].map((name) => [
    name,
    {
      description: `store=true: the ${name.endsWith('Bucket') ? 'bucket' : 'object key (percent-encoded by segment when it has characters outside printable ASCII)'} the output was uploaded to.`,
      schema: { type: 'string' },
    },
  ]),
);

/** The answers of /api/take (or of /api/animate, with its formats) but its errors: by format, JSON, async, a cached redirect. */
export function takeResponses(formats = outputFormats()): Json {
  const responseType = parameterByName.get('response_type');
  return {
    '200': {
      description: `The render. response_type: ${responseType?.description ?? ''}`,
      headers: {
        ...renderIdHeader,
        [WARNINGS_HEADER]: {
          description:
            "The codes of the render's warnings, comma-separated (full_page_cut, fonts_not_loaded, image_scaled_down); absent when there are none.",
          schema: { type: 'string' },
        },
        'X-Render-Stored': {
          description:
            'false on an image answered before it was stored (the object store was out of reach; it is stored when the store is back); absent otherwise.',
          schema: { type: 'string', enum: ['false'] },
        },
        ...(parameterByName.has('attachment_name')
          ? {
              'Content-Disposition': {
                description: 'attachment with the file name, when attachment_name is given.',
                schema: { type: 'string' },
              },
            }
          : {}),
        ...(parameterByName.has('store') ? storeHeaders : {}),
      },
      content: { ...fileContent(formats), 'application/json': { schema: ref('TakeJsonAnswer') } },
    },
    '202': {
      description: 'async=true: accepted; the result is at status_url and in the webhook.',
      headers: renderIdHeader,
      content: { 'application/json': { schema: ref('AsyncAnswer') } },
    },
    '302': {
      description: 'A cached signed GET seen before: the file, at no charge (docs/api.md).',
      headers: {
        Location: { description: 'The cached file.', schema: { type: 'string', format: 'uri' } },
        ...renderIdHeader,
      },
    },
  };
}

/** A POST's signature on /api/take and /api/animate: over its raw body. */
export const signatureHeader = {
  name: 'X-Signature',
  in: 'header',
  description: 'Lowercase hex HMAC-SHA256 of the raw body, keyed with the secret key.',
  schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
};

/** A POST's or PATCH's signature on every other endpoint: over its method, path and raw body. */
export const scopedSignatureHeader = {
  ...signatureHeader,
  description:
    'Lowercase hex HMAC-SHA256, keyed with the secret key, of `METHOD /path`, a newline, and the raw body (docs/api.md, "Signatures").',
};

/** GET and POST of an endpoint that renders (/api/take, /api/animate): its table's parameters, the answers of a render. */
export function renderOperations(
  name: 'take' | 'animate',
  summary: string,
  description: () => string,
  rows: readonly Parameter[] = parameters,
): { get: Operation; post: Operation } {
  const common = { path: `/api/${name}`, tags: ['render'], keyed: true, errors: renderCodes() };
  const responses = () => takeResponses(outputFormats(name));
  return {
    get: {
      ...common,
      method: 'get',
      operationId: `${name}Get`,
      summary: `${summary} (query parameters)`,
      detail: () => ({ description: description(), parameters: queryParameters(rows), responses: responses() }),
    },
    post: {
      ...common,
      method: 'post',
      operationId: `${name}Post`,
      summary: `${summary} (JSON body)`,
      detail: () => ({
        description: description(),
        parameters: [signatureHeader],
        requestBody: {
          required: true,
          description: 'At most 1 MiB.',
          content: { 'application/json': { schema: bodySchema(rows) } },
        },
        responses: responses(),
      }),
    },
  };
}
