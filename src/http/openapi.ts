// The OpenAPI 3.1 document of the public HTTP API, generated from the parameter table, the
// output formats and the error table: never a hand-kept copy of any of them (docs/operations.md).
import packageJson from '../../package.json' with { type: 'json' };
import { contentTypes, formatFacts, formatNames, savedFormats } from '../domain/formats.ts';
import { animateParameters } from '../domain/animation.ts';
import { MERGE_MAX_SOURCES } from '../domain/merge.ts';
import {
  parameterByName,
  parameters,
  type Parameter,
  type ParameterType,
  type ValueType,
} from '../domain/parameters.ts';
import type { RenderStatus } from '../domain/render.ts';
import { warningTable, WARNINGS_HEADER } from '../domain/warnings.ts';
import { errorTable, type ErrorCode } from '../errors.ts';
import { renderViewFields, type RenderViewField, type RenderViewUse } from '../renders/view.ts';
import { BULK_MAX_REQUESTS } from './bulk.ts';
import { monitorPaths, monitorSchemas, monitorWebhooks } from './openapi-monitors.ts';
import { profilePaths, profileSchemas } from './openapi-profiles.ts';

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or any other part of the document. */
type Json = Record<string, unknown>;

/** The render states a status answer reports; the check below fails to compile when one is added. */
const renderStatuses = ['pending', 'rendering', 'succeeded', 'failed'] as const;
const everyStatus: Exclude<RenderStatus, (typeof renderStatuses)[number]> extends never ? true : never = true;
void everyStatus;

/** Codes the API never answers (the CLI and the dashboard do). */
const notFromApi: ReadonlySet<ErrorCode> = new Set(['forbidden']);
/** Codes answered before any route runs: malformed, oversized or slow requests (server.ts). */
const transportCodes: ErrorCode[] = [
  'request_not_valid',
  'request_header_too_large',
  'request_timeout',
  'internal_application_error',
];
/** Statuses that come with a Retry-After header. */
const retryAfterStatuses = new Set([429, 503]);

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The schema of one value of a parameter. */
function valueSchema(type: ValueType): Json {
  switch (type.kind) {
    case 'string':
      return {
        type: 'string',
        minLength: 1,
        maxLength: type.maxLength,
        ...(type.pattern ? { pattern: type.pattern.source } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'integer':
    case 'number':
      return { type: type.kind, minimum: type.min, maximum: type.max };
    case 'enum':
      return { type: 'string', enum: [...type.values] };
  }
}

function typeSchema(type: ParameterType): Json {
  return type.kind === 'list'
    ? { type: 'array', items: valueSchema(type.item), maxItems: type.maxItems }
    : valueSchema(type);
}

/** A row's schema: its type, range and default. */
function parameterSchema(parameter: Parameter): Json {
  return {
    ...typeSchema(parameter.type),
    ...(parameter.default !== undefined ? { default: structuredClone(parameter.default) } : {}),
  };
}

/** A row's description, with a default that depends on other parameters in words. */
function describe(parameter: Parameter): string {
  const booleans = parameter.type.kind === 'boolean' ? ' Accepts true, false, 1 or 0.' : '';
  return `${parameter.description}${booleans}${parameter.defaultText ? ` Default: ${parameter.defaultText}.` : ''}`;
}

/** Every row as a GET query parameter; a list is the key repeated. */
function queryParameters(rows: readonly Parameter[] = parameters): Json[] {
  return rows.map((parameter) => ({
    name: parameter.name,
    in: 'query',
    description: describe(parameter),
    schema: parameterSchema(parameter),
    ...(parameter.type.kind === 'list' ? { style: 'form', explode: true } : {}),
  }));
}

/** The POST body: every row but the GET-only ones, as one JSON object; a list is a JSON array. */
function bodySchema(table: readonly Parameter[] = parameters): Json {
  const rows = table.filter((parameter) => parameter.only !== 'GET');
  return {
    type: 'object',
    description: 'Every parameter of the GET query, under the same name. null means not given.',
    properties: Object.fromEntries(
      rows.map((parameter) => [parameter.name, { ...parameterSchema(parameter), description: describe(parameter) }]),
    ),
    additionalProperties: false,
  };
}

/** The parameters by group, as the operation's description lists them. */
function parameterGroups(rows: readonly Parameter[] = parameters): string {
  const groups = new Map<string, string[]>();
  for (const { group, name } of rows) groups.set(group, [...(groups.get(group) ?? []), `\`${name}\``]);
  return [
    '| group | parameters |',
    '| --- | --- |',
    ...[...groups].map(([group, names]) => `| ${group} | ${names.join(', ')} |`),
  ].join('\n');
}

/** The output formats an endpoint makes, with their content type, in the format registry's order. */
function outputFormats(endpoint: 'take' | 'animate' = 'take'): { format: string; contentType: string }[] {
  return formatNames
    .filter((format) => formatFacts(format)[endpoint] !== undefined)
    .map((format) => ({ format, contentType: contentTypes[format] }));
}

/** The answer's bytes by content type. */
function fileContent(formats = outputFormats()): Json {
  const byType = new Map<string, string[]>();
  for (const { format, contentType } of formats) byType.set(contentType, [...(byType.get(contentType) ?? []), format]);
  return Object.fromEntries(
    [...byType].map(([contentType, formats]) => [
      contentType,
      {
        schema: {
          type: 'string',
          contentMediaType: contentType.split(';')[0],
          description: `format=${formats.join(' or ')}`,
        },
      },
    ]),
  );
}

/** The schemas of the metadata fields (docs/api.md), each present when its `metadata_*` row exists. */
const metadataFields: Record<string, Json> = {
  image_size: {
    type: 'object',
    properties: { width: { type: 'integer' }, height: { type: 'integer' } },
    description: 'The image in pixels.',
  },
  page_title: { type: ['string', 'null'], description: "The page's title; null when it has none." },
  open_graph: {
    type: 'object',
    description: "The page's Open Graph properties.",
    properties: Object.fromEntries(
      ['title', 'description', 'image', 'url', 'type', 'site_name'].map((name) => [name, { type: ['string', 'null'] }]),
    ),
  },
  icon: {
    type: ['object', 'null'],
    description: "The page's icon; null when it names none.",
    properties: { url: { type: 'string' }, type: { type: ['string', 'null'] } },
  },
  fonts: { type: 'array', items: { type: 'string' }, description: 'Font families the page used.' },
  http_response_status_code: {
    type: ['integer', 'null'],
    description: "The status of the main document's response; null without one (html, markdown).",
  },
  http_response_headers: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "The main document's response headers.",
  },
  content: {
    type: 'object',
    description: "The page's content, stored as a file of its own, in metadata_content_format.",
    properties: {
      url: { type: 'string', format: 'uri' },
      format: parameterByName.has('metadata_content_format')
        ? parameterSchema(parameterByName.get('metadata_content_format')!)
        : { type: 'string' },
    },
  },
};

/** The metadata fields a request can ask for: one per `metadata_*` row. */
export function metadataFieldNames(): string[] {
  return parameters
    .filter((p) => p.name.startsWith('metadata_') && p.type.kind === 'boolean')
    .map((p) => p.name.slice('metadata_'.length));
}

function metadataSchema(): Json {
  const properties = Object.fromEntries(
    metadataFieldNames().map((field) => [
      field,
      metadataFields[field] ?? { description: `With metadata_${field}=true.` },
    ]),
  );
  return { type: 'object', description: 'What the metadata_* parameters asked for, one field each.', properties };
}

/** Where an upload to the customer's bucket went (store=true, docs/storage.md). */
const storeSchema: Json = {
  type: 'object',
  required: ['bucket', 'key'],
  description: 'Where store=true uploaded the output in your bucket; location with storage_return_location.',
  properties: { bucket: { type: 'string' }, key: { type: 'string' }, location: { type: 'string', format: 'uri' } },
};

/** Every output format of /api/take and /api/animate, with its content type. */
const everyFormat = () => formatNames.map((format) => ({ format, contentType: contentTypes[format] }));

/** The formats a render record names (aliases normalised). */
const recordFormat = () => ({ type: 'string', enum: everyFormat().map(({ format }) => format) });

/** The schema of every field of a render's public view (src/renders/view.ts), whichever use shows it. */
function renderFieldSchemas(codes: ErrorCode[]): Record<RenderViewField, Json> {
  return {
    is_successful: { const: true },
    render_id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: [...renderStatuses] },
    url: { type: 'string', description: 'The page rendered; absent for an html or markdown document.' },
    format: recordFormat(),
    file_url: {
      type: 'string',
      format: 'uri',
      description:
        'The file, fetched without an access key. A succeeded render only: a failed one hands out no output.',
    },
    size_bytes: { type: 'integer' },
    screenshot_url: { type: 'string', format: 'uri', description: "The same as file_url, under ScreenshotOne's name." },
    cache_url: {
      type: 'string',
      format: 'uri',
      description: 'A cached signed GET: the file later views of the same URL redirect to.',
    },
    metadata: ref('Metadata'),
    slices: ref('Slices'),
    saved: {
      type: 'object',
      description:
        "save_formats: the page's files from the same render, each served like the output; with store=true also in your bucket under the output's key with each file's extension.",
      properties: Object.fromEntries(savedFormats.map((format) => [format, { type: 'string', format: 'uri' }])),
      additionalProperties: false,
    },
    vision: ref('Vision'),
    warnings: ref('Warnings'),
    store: ref('Store'),
    error_code: { type: 'string', enum: codes, description: 'A failed render only.' },
    error_message: { type: 'string', description: 'A failed render only.' },
    error_details: {
      type: 'array',
      description: "storage_upload_failed: your storage's own answer (its error code in code).",
      items: {
        type: 'object',
        properties: { parameter: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
    failure_capture_url: {
      type: 'string',
      format: 'uri',
      description:
        'A failed render: a JPEG of the page as it was when it failed, at most 480 px a side, kept for a day (absent when the page never loaded).',
    },
    external_identifier: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    finished_at: { type: 'string', format: 'date-time' },
    timeline: {
      type: 'array',
      description:
        'What happened when: queued, started, navigated, captured, stored, delivered, and each retry; a failed render ends with `failed` and its `error_code` (a webhook delivered after it follows).',
      items: {
        type: 'object',
        required: ['step', 'at', 'ms'],
        properties: {
          step: {
            type: 'string',
            enum: ['queued', 'started', 'navigated', 'captured', 'stored', 'retry', 'failed', 'delivered'],
          },
          error_code: { type: 'string', description: 'On the `failed` step: the error the render ended with.' },
          at: { type: 'string', format: 'date-time' },
          ms: { type: 'integer', minimum: 0, description: 'Milliseconds since the step before.' },
        },
      },
    },
  };
}

/** The schema of a render as `use` shows it: the fields renderView shows there, from one table. */
function renderSchema(fields: Record<RenderViewField, Json>, use: RenderViewUse, required: string[]): Json {
  return {
    type: 'object',
    required,
    properties: Object.fromEntries(renderViewFields[use].map((name) => [name, fields[name]])),
  };
}

function schemas(): Json {
  const codes = (Object.keys(errorTable) as ErrorCode[]).filter((code) => !notFromApi.has(code));
  const fields = renderFieldSchemas(codes);
  return {
    Error: {
      type: 'object',
      required: ['is_successful', 'error_code', 'error_message'],
      properties: {
        is_successful: { const: false },
        error_code: { type: 'string', enum: codes },
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
    },
    Store: storeSchema,
    Metadata: metadataSchema(),
    Slices: {
      type: 'array',
      description:
        'full_page_slices: the full-page image cut into slices, each a file of its own; offsets and sizes in image pixels.',
      items: {
        type: 'object',
        required: ['index', 'offset_y', 'width', 'height', 'url'],
        properties: {
          index: { type: 'integer' },
          offset_y: { type: 'integer' },
          width: { type: 'integer' },
          height: { type: 'integer' },
          url: { type: 'string', format: 'uri' },
        },
      },
    },
    Vision: { type: 'string', description: "vision_prompt: the vision API's answer about the capture." },
    Warnings: {
      type: 'array',
      description:
        'What the caller should know about a render that succeeded: a full-page capture cut shorter than the page, web fonts still loading when the capture gave up waiting. Absent when there is nothing to say.',
      items: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string', enum: Object.keys(warningTable) }, message: { type: 'string' } },
      },
    },
    TakeJsonAnswer: renderSchema(fields, 'answer', ['is_successful', 'render_id', 'file_url', 'format', 'size_bytes']),
    BulkRequest: {
      type: 'object',
      required: ['requests'],
      additionalProperties: false,
      properties: {
        access_key: {
          type: 'string',
          description: 'The access key, when not in the X-Access-Key header or the query.',
        },
        options: { type: 'object', description: '/api/take parameters every request starts from.' },
        requests: {
          type: 'array',
          minItems: 1,
          maxItems: BULK_MAX_REQUESTS,
          items: { type: 'object', description: '/api/take parameters laid over options.' },
        },
        execute: { type: 'boolean', default: false, description: 'Render every request now and answer each in place.' },
        optimize: {
          type: 'boolean',
          default: false,
          description: "Accepted for ScreenshotOne's clients; identical cached requests render once in any case.",
        },
      },
    },
    BulkAnswer: {
      type: 'object',
      required: ['responses'],
      properties: {
        responses: {
          type: 'array',
          description: 'One entry per request, in order.',
          items: {
            type: 'object',
            required: ['url'],
            properties: {
              url: {
                type: 'string',
                format: 'uri',
                description:
                  'The signed /api/take GET URL of the request: nothing is rendered or charged until it is fetched.',
              },
              response: {
                description:
                  'With execute=true (and for an invalid request in any case): the answer response_type=json gives, success or error.',
                oneOf: [ref('TakeJsonAnswer'), ref('AsyncAnswer'), ref('Error')],
              },
            },
          },
        },
      },
    },
    Usage: {
      type: 'object',
      required: ['total', 'available', 'used', 'concurrency'],
      properties: {
        total: { type: 'integer', description: 'The monthly quota.' },
        available: { type: 'integer', description: 'Screenshots left this month (renders in flight hold theirs).' },
        used: { type: 'integer', description: 'Successful screenshots this UTC month.' },
        concurrency: {
          type: 'object',
          required: ['limit', 'remaining', 'reset'],
          properties: {
            limit: { type: 'integer', description: 'Renders the plan allows in flight at once.' },
            remaining: { type: 'integer', description: 'Renders that may start now.' },
            reset: {
              type: 'integer',
              description: 'Unix time in nanoseconds by which a slot frees at the latest (now when one is free).',
            },
          },
        },
      },
    },
    Devices: {
      type: 'object',
      required: ['devices'],
      properties: {
        devices: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'viewport', 'device_scale_factor', 'is_mobile', 'has_touch', 'user_agent'],
            properties: {
              id: {
                type: 'string',
                description: 'The viewport_device value, as ScreenshotOne spells it (iphone_13, ipad_gen_7).',
              },
              name: { type: 'string' },
              viewport: {
                type: 'object',
                required: ['width', 'height'],
                properties: { width: { type: 'integer' }, height: { type: 'integer' } },
              },
              device_scale_factor: { type: 'number' },
              is_mobile: { type: 'boolean' },
              has_touch: { type: 'boolean' },
              user_agent: { type: 'string' },
            },
          },
        },
        warnings: ref('Warnings'),
        store: ref('Store'),
      },
    },
    AsyncAnswer: {
      type: 'object',
      required: ['is_successful', 'render_id', 'status', 'status_url'],
      properties: {
        is_successful: { const: true },
        render_id: { type: 'string', format: 'uuid' },
        status: { const: 'pending' },
        status_url: {
          type: 'string',
          format: 'uri',
          description: 'GET /api/renders/{renderId} with the same access key.',
        },
      },
    },
    RenderStatus: renderSchema(fields, 'status', ['render_id', 'status', 'created_at']),
    WebhookPayload: {
      type: 'object',
      required: ['id', 'type', 'created_at', 'data'],
      properties: {
        id: { type: 'string', description: 'The delivery id, the same on every attempt (= webhook-id).' },
        type: { type: 'string', enum: ['render.succeeded', 'render.failed'] },
        created_at: { type: 'string', format: 'date-time' },
        data: renderSchema(fields, 'webhook', ['render_id', 'format']),
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

/** The answers of /api/take (or of /api/animate, with its formats): by format, JSON, async, a cached redirect, and every error. */
function takeResponses(formats = outputFormats()): Json {
  const responseType = parameterByName.get('response_type');
  const takeCodes = (Object.keys(errorTable) as ErrorCode[]).filter(
    (code) => !notFromApi.has(code) && code !== 'not_found',
  );
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
    ...errorResponses(takeCodes),
  };
}

const security = [{ AccessKeyHeader: [] }, { AccessKeyQuery: [] }];

/** The webhook events with the monitors' beside render.ended, whose headers and answers they share. */
function withMonitorEvents(events: { 'render.ended': { post: Json } }): Json {
  return { ...events, ...monitorWebhooks(events['render.ended'].post) };
}

/** What /api/take says of itself, with its parameter groups. */
const takeDescription = () =>
  `Renders a page. Exactly one of \`url\`, \`html\` and \`markdown\`. A bad or unknown parameter, or a refused combination, is \`400 request_not_valid\` naming each offending parameter.\n\n${parameterGroups()}`;

/** What /api/animate says of itself, with its parameter groups. */
const animateDescription = () =>
  `Records the page as a video or a gif: as it plays (scenario=default) or scrolled down and back (scenario=scroll), at 25 frames per second, charged as one screenshot. The checks, signatures, cache, async answers and webhooks of /api/take, and its page, request and blocking parameters. A bad or unknown parameter, or a refused combination, is \`400 request_not_valid\` naming each offending parameter.\n\n${parameterGroups(animateParameters)}`;

/** What POST /api/pdf/merge says of itself. */
const mergeDescription = () =>
  `Prints 1 to ${MERGE_MAX_SOURCES} documents (each \`sources\` entry a url, html or markdown with its own /api/take options) in parallel and merges them in order into one PDF, with one outline (each source's after the one before) and, where tagged, one structure tree. The other fields of the body are shared by every source, and the merged file's: how it is answered (response_type, async, webhook_url, store…), its \`timeout\` (the whole merge's) and its document operations (pdf_archive, pdf_title, pdf_watermark, pdf_password…), which a source may not set. Charged one screenshot per source; the quota is checked for all of them up front. The first source (in order) that fails fails the merge with its error, \`error_details.source\` naming it (counted from 0). The checks, answers and webhooks of POST /api/take; its X-Signature is over \`POST /api/pdf/merge\`, a newline and the raw body.`;

/** The body of a merge: the shared /api/take parameters and the sources, each with its own. */
function mergeBodySchema(): Json {
  const shared = bodySchema();
  return {
    ...shared,
    description: 'The parameters shared by every source, and the sources. null means not given.',
    properties: {
      ...(shared.properties as Json),
      sources: {
        type: 'array',
        minItems: 1,
        maxItems: MERGE_MAX_SOURCES,
        description: 'The documents, in the order they are merged: each a url, html or markdown, with its own options.',
        items: bodySchema(),
      },
    },
    required: ['sources'],
  };
}

/** A POST's signature on /api/take and /api/animate: over its raw body. */
const signatureHeader = {
  name: 'X-Signature',
  in: 'header',
  description: 'Lowercase hex HMAC-SHA256 of the raw body, keyed with the secret key.',
  schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
};

/** A POST's or PATCH's signature on every other endpoint: over its method, path and raw body. */
const scopedSignatureHeader = {
  ...signatureHeader,
  description:
    'Lowercase hex HMAC-SHA256, keyed with the secret key, of `METHOD /path`, a newline, and the raw body (docs/api.md, "Signatures").',
};

/** GET and POST of an endpoint that renders (/api/take, /api/animate): its table's parameters, the answers of a render. */
function renderOperations(
  name: 'take' | 'animate',
  summary: string,
  description: string,
  rows: readonly Parameter[] = parameters,
): Json {
  const common = { tags: ['render'], description, security, responses: takeResponses(outputFormats(name)) };
  return {
    get: {
      ...common,
      operationId: `${name}Get`,
      summary: `${summary} (query parameters)`,
      parameters: queryParameters(rows),
    },
    post: {
      ...common,
      operationId: `${name}Post`,
      summary: `${summary} (JSON body)`,
      parameters: [signatureHeader],
      requestBody: {
        required: true,
        description: 'At most 1 MiB.',
        content: { 'application/json': { schema: bodySchema(rows) } },
      },
    },
  };
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
    paths: {
      '/api/take': renderOperations('take', 'Render a page', takeDescription()),
      '/api/bulk': {
        post: {
          tags: ['render'],
          operationId: 'bulk',
          summary: 'Up to 20 renders in one request',
          description: `Each request is \`options\` overlaid by its own parameters, validated as /api/take validates them. Without execute, each is answered with its signed GET URL only. With execute=true every request is rendered as a fetch of its URL would be (at most the plan's renders in flight at once; each charged as one screenshot) and answered in place; an invalid or failed request carries its error and stops none of the others. The access key as on POST /api/take; X-Signature over \`POST /api/bulk\`, a newline and the raw body.`,
          security,
          parameters: [scopedSignatureHeader],
          requestBody: {
            required: true,
            description: 'At most 1 MiB.',
            content: { 'application/json': { schema: ref('BulkRequest') } },
          },
          responses: {
            '200': {
              description: 'One entry per request, in order.',
              content: { 'application/json': { schema: ref('BulkAnswer') } },
            },
            ...errorResponses([
              'access_key_invalid',
              'email_not_verified',
              'signature_is_not_valid',
              'signature_is_required',
              'request_body_too_large',
              'temporary_unavailable',
              ...transportCodes,
            ]),
          },
        },
      },
      '/api/usage': {
        get: {
          tags: ['account'],
          operationId: 'usage',
          summary: "This month's usage and the renders that may start now",
          security,
          responses: {
            '200': { description: 'The current UTC month.', content: { 'application/json': { schema: ref('Usage') } } },
            ...errorResponses([
              'access_key_invalid',
              'email_not_verified',
              'signature_is_not_valid',
              'signature_is_required',
              'temporary_unavailable',
              ...transportCodes,
            ]),
          },
        },
      },
      '/api/devices': {
        get: {
          tags: ['account'],
          operationId: 'devices',
          summary: 'Every viewport_device preset',
          security: [],
          responses: {
            '200': { description: 'The presets.', content: { 'application/json': { schema: ref('Devices') } } },
            ...errorResponses(['temporary_unavailable', ...transportCodes]),
          },
        },
      },
      '/api/animate': renderOperations('animate', 'Record a page', animateDescription(), animateParameters),
      '/api/pdf/merge': {
        post: {
          tags: ['render'],
          operationId: 'pdfMerge',
          summary: 'Merge documents into one PDF',
          description: mergeDescription(),
          security,
          parameters: [scopedSignatureHeader],
          requestBody: {
            required: true,
            description: 'At most 1 MiB.',
            content: { 'application/json': { schema: mergeBodySchema() } },
          },
          responses: takeResponses(
            formatNames
              .filter((format) => formatFacts(format).take?.capture === 'pdf')
              .map((format) => ({ format, contentType: contentTypes[format] })),
          ),
        },
      },
      '/api/renders/{renderId}': {
        get: {
          tags: ['render'],
          operationId: 'getRender',
          summary: 'The state of a render',
          description: "Another workspace's render answers like an unknown one.",
          security,
          parameters: [{ name: 'renderId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: {
            '200': { description: 'The render.', content: { 'application/json': { schema: ref('RenderStatus') } } },
            ...errorResponses([
              'access_key_invalid',
              'email_not_verified',
              'signature_is_not_valid',
              'signature_is_required',
              'not_found',
              'temporary_unavailable',
              ...transportCodes,
            ]),
          },
        },
      },
      ...monitorPaths(security, (codes) => errorResponses(codes as ErrorCode[])),
      ...profilePaths(security, (codes) => errorResponses(codes as ErrorCode[])),
      '/files/{fileName}': {
        get: {
          tags: ['render'],
          operationId: 'getFile',
          summary: 'A rendered file',
          description: 'The unguessable name is the credential: no access key.',
          security: [],
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
            ...errorResponses(['not_found', 'temporary_unavailable', ...transportCodes]),
          },
        },
      },
    },
    webhooks: withMonitorEvents({
      'render.ended': {
        post: {
          summary: 'A render with webhook_url ended',
          description:
            'One delivery per render, POSTed to webhook_url. Verify the raw body before trusting it: `X-Signature`, or the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with any Standard Webhooks library. A 2xx ends the delivery; anything else is retried on the schedule (honouring Retry-After); 410 stops it.',
          parameters: [
            {
              name: 'X-Webhook-Id',
              in: 'header',
              required: true,
              description: 'The delivery id (= body id), the same on every attempt.',
              schema: { type: 'string' },
            },
            {
              name: 'X-Webhook-Timestamp',
              in: 'header',
              required: true,
              description: 'Unix seconds of this attempt.',
              schema: { type: 'string', pattern: '^[0-9]+$' },
            },
            {
              name: 'X-Signature',
              in: 'header',
              required: true,
              description:
                'Lowercase hex HMAC-SHA256, keyed with the secret key, of "{X-Webhook-Timestamp}.{raw body}".',
              schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
            },
            {
              name: 'webhook-id',
              in: 'header',
              required: true,
              description: 'Standard Webhooks: the delivery id.',
              schema: { type: 'string' },
            },
            {
              name: 'webhook-timestamp',
              in: 'header',
              required: true,
              description: 'Standard Webhooks: Unix seconds of this attempt.',
              schema: { type: 'string', pattern: '^[0-9]+$' },
            },
            {
              name: 'webhook-signature',
              in: 'header',
              required: true,
              description:
                'Standard Webhooks: "v1," + base64 HMAC-SHA256, keyed with the bytes of the secret key, of "{webhook-id}.{webhook-timestamp}.{raw body}".',
              schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}$' },
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('WebhookPayload') } } },
          responses: {
            '2XX': { description: 'Delivered: the delivery ends.' },
            '410': { description: 'Gone: the delivery stops, no retry.' },
            default: {
              description: 'Retried after the next delay of the schedule; dead-lettered after the last attempt.',
            },
          },
        },
      },
    }),
    components: {
      schemas: { ...schemas(), ...monitorSchemas(bodySchema()), ...profileSchemas() },
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
