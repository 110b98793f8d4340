// The OpenAPI 3.1 document of the public HTTP API, assembled from the routes' own operations
// (operation.ts), the parameter table, the output formats and the error table: never a hand-kept
// copy of any of them (docs/operations.md).
import packageJson from '../../package.json' with { type: 'json' };
import { errorTable, type ErrorCode } from '../errors.ts';
import { accountApi } from './account.ts';
import { animateApi } from './animate.ts';
import { bulkApi } from './bulk.ts';
import { filesApi } from './files.ts';
import { monitorsApi } from './monitors.ts';
import { renderSchemas } from './openapi-render.ts';
import { webhooks } from './openapi-webhooks.ts';
import { apiCodes, ref, type ApiPart, type Json, type Operation } from './operation.ts';
import { pdfMergeApi } from './pdf-merge.ts';
import { profilesApi } from './profiles.ts';
import { rendersApi } from './renders.ts';
import { takeApi } from './take.ts';

export { metadataFieldNames } from './openapi-render.ts';

/** Every route module's part of the document, in the order its paths are listed. */
export const apiParts: readonly ApiPart[] = [
  takeApi,
  bulkApi,
  accountApi,
  animateApi,
  pdfMergeApi,
  rendersApi,
  monitorsApi,
  profilesApi,
  filesApi,
];

/** Statuses that come with a Retry-After header. */
const retryAfterStatuses = new Set([429, 503]);

/** What an access key in the header or the query string is asked for with. */
const accessKeySecurity = [{ AccessKeyHeader: [] }, { AccessKeyQuery: [] }];

/** The error body every refusal has: its code among those the API answers, and what it names. */
function errorSchema(): Json {
  return {
    type: 'object',
    required: ['is_successful', 'error_code', 'error_message'],
    properties: {
      is_successful: { const: false },
      error_code: { type: 'string', enum: apiCodes() },
      error_message: { type: 'string' },
      error_details: {
        type: 'array',
        description:
          "The offending parameters (request_not_valid), selectors (selector_not_found), the script error (script_error) or the storage's own answer (storage_upload_failed: its error code in code).",
        items: {
          type: 'object',
          properties: {
            parameter: { type: 'string' },
            message: { type: 'string' },
            selector: { type: 'string' },
            code: { type: 'string' },
          },
        },
      },
      returned_status_code: {
        type: 'integer',
        description: 'host_returned_error, matched_failed_request: the status the site answered.',
      },
      failed_request_url: { type: 'string', description: 'matched_failed_request: the sub-request that failed.' },
      matched_string: {
        type: 'string',
        description: 'content_missing_specified_string, content_contains_specified_string.',
      },
    },
  };
}

/** One response per status of `codes`, each listing its codes and what they mean. */
function errorResponses(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { status } = errorTable[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, statusCodes]) => [
        String(status),
        {
          description: statusCodes.map((code) => `\`${code}\`: ${errorTable[code].message}`).join('\n\n'),
          ...(retryAfterStatuses.has(status)
            ? {
                headers: {
                  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
                },
              }
            : {}),
          content: {
            'application/json': {
              schema: { allOf: [ref('Error')], properties: { error_code: { enum: statusCodes } } },
            },
          },
        },
      ]),
  );
}

/** An operation as the document lists it under its path and method. */
function operationEntry(operation: Operation, detail: ReturnType<Operation['detail']>): Json {
  const { pathParameters: _shared, responses, ...described } = detail;
  return {
    tags: operation.tags,
    operationId: operation.operationId,
    summary: operation.summary,
    security: operation.keyed ? accessKeySecurity : [],
    ...described,
    responses: { ...responses, ...errorResponses(operation.errors) },
  };
}

/** Every operation under its path, with the path parameters its operations share given once there. */
function paths(): Json {
  const byPath: Record<string, Json> = {};
  for (const operation of apiParts.flatMap((part) => part.operations)) {
    const detail = operation.detail();
    const item = (byPath[operation.path] ??= detail.pathParameters ? { parameters: detail.pathParameters } : {});
    if (item[operation.method]) throw new Error(`${operation.method} ${operation.path} is described twice`);
    item[operation.method] = operationEntry(operation, detail);
  }
  return byPath;
}

/** The named schemas: the error body, a render's views, and each route module's own. */
function schemas(): Json {
  const named: Json = { Error: errorSchema(), ...renderSchemas() };
  for (const part of apiParts) {
    for (const [name, schema] of Object.entries(part.schemas?.() ?? {})) {
      if (name in named) throw new Error(`the schema ${name} is named twice`);
      named[name] = schema;
    }
  }
  return named;
}

/** The OpenAPI 3.1 document of this service, addressed at `baseUrl`. */
export function openApiDocument(baseUrl: string): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shutterbus API',
      version: packageJson.version,
      summary: 'Screenshots of web pages over HTTP, with signed URLs and signed webhooks.',
      description:
        'On /api/take and /api/animate a GET is signed over its raw query string up to `&signature=`, which comes last, and a POST over its raw body, in `X-Signature` (lowercase hex HMAC-SHA256 keyed with the secret key). Every other endpoint signs `METHOD /path`, a newline, then the raw query string up to `&signature=` (GET, DELETE) or the raw body (POST, PATCH, in `X-Signature`): a signature is valid for the one endpoint and method it was made for. Checks run in this order: access key (401), email verification (403), signature (403), parameters (400), quota (402), rate (429). A failed request is never charged.',
      license: { name: packageJson.license, identifier: packageJson.license },
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: 'render', description: 'Render a page, read a render, fetch its file.' },
      { name: 'account', description: "The workspace's usage and the device presets." },
      { name: 'monitors', description: 'Render a page on a schedule and be told when it changes.' },
      { name: 'profiles', description: 'Named browser states that renders load to capture pages behind a login.' },
    ],
    paths: paths(),
    webhooks: webhooks(),
    components: {
      schemas: schemas(),
      securitySchemes: {
        AccessKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Access-Key',
          description: "The workspace's access key.",
        },
        AccessKeyQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'access_key',
          description:
            'The access key in the query string (signed URLs carry it there); a POST may also send it in the body.',
        },
      },
    },
  };
}
