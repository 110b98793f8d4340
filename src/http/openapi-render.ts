// The schemas of a render's public views in the OpenAPI document: each field's schema once, and
// each use's schema from the fields src/renders/view.ts shows there.
import { savedFormats } from '../domain/formats.ts';
import { parameterByName, parameters } from '../domain/parameters.ts';
import type { RenderStatus } from '../domain/render.ts';
import { warningTable } from '../domain/warnings.ts';
import type { ErrorCode } from '../errors.ts';
import { renderViewFields, type RenderViewField, type RenderViewUse } from '../renders/view.ts';
import { apiCodes, ref, type Json } from './operation.ts';
import { parameterSchema, recordFormat } from './openapi-values.ts';

/** The render states a status answer reports; the check below fails to compile when one is added. */
const renderStatuses = ['pending', 'rendering', 'succeeded', 'failed'] as const;
const everyStatus: Exclude<RenderStatus, (typeof renderStatuses)[number]> extends never ? true : never = true;
void everyStatus;

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

/** The schemas of a render's views and of what they refer to. */
export function renderSchemas(): Record<string, Json> {
  const fields = renderFieldSchemas(apiCodes());
  return {
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
