// The monitors' schemas in the OpenAPI document (docs/monitors.md): the create and change bodies from the
// field table (monitor-fields.ts), a monitor as answered, its changes and its events.
import { monitorComparisons, monitorFormats } from '../domain/monitor.ts';
import { TEXT_DIFF_MAX_BYTES, TEXT_DIFF_MAX_LINES } from '../monitors/text.ts';
import { answerOnly, createFields, patchFields, type MonitorField, type MonitorFieldType } from './monitor-fields.ts';
import { bodySchema } from './openapi-values.ts';
import { ref, type Json } from './operation.ts';

/** The schema of a field's type. */
function typeSchema(type: MonitorFieldType): Json {
  switch (type.kind) {
    case 'integer':
    case 'number':
      return { type: type.kind, minimum: type.min, maximum: type.max };
    case 'enum':
      return { type: 'string', enum: [...type.values] };
    case 'url':
      return { type: 'string', format: 'uri' };
    case 'patterns':
      return {
        type: 'array',
        maxItems: type.maxItems,
        items: { type: 'string', minLength: 1, maxLength: type.maxLength },
      };
  }
}

/** A field's schema: its type and range, its description, and on create its default. */
function fieldSchema(field: MonitorField, use: 'create' | 'patch'): Json {
  return {
    ...typeSchema(field.type),
    // A field a PATCH leaves out keeps its value: only a create has defaults.
    ...(use === 'create' && field.default !== undefined ? { default: field.default } : {}),
    ...(field.description ? { description: field.description } : {}),
  };
}

/** The fields of `use`'s body, by name. */
const fieldSchemas = (fields: readonly MonitorField[], use: 'create' | 'patch') =>
  Object.fromEntries(fields.map((field) => [field.name, fieldSchema(field, use)]));

const textDiff = {
  type: 'array',
  maxItems: TEXT_DIFF_MAX_LINES,
  description: `With compare text or both: the changed lines of the visible text, in page order, at most ${TEXT_DIFF_MAX_LINES} and ${TEXT_DIFF_MAX_BYTES / 1024} KB; empty when only pixels changed.`,
  items: {
    type: 'object',
    required: ['before', 'after'],
    properties: {
      before: { type: ['string', 'null'], description: 'Null for an added line.' },
      after: { type: ['string', 'null'], description: 'Null for a removed line.' },
    },
  },
};

/** The schemas the monitor operations and events refer to. */
export function monitorSchemas(): Record<string, Json> {
  const nullableUri = { type: ['string', 'null'], format: 'uri' };
  return {
    MonitorCreate: {
      type: 'object',
      description: `Every /api/take body parameter (validated as /api/take validates it; format one of ${monitorFormats.join(', ')}; ${answerOnly.join(', ')} accepted without effect: every tick renders afresh and answers by webhook; external_identifier, webhook_sign and webhook_errors apply to the monitor's webhooks; store uploads every tick's capture to the same key); plus ${createFields
        .map((field) => field.name)
        .join(', ')
        .replace(/, ([^,]+)$/, ' and $1')}. webhook_url is required.`,
      required: [...createFields.filter((field) => field.required).map((field) => field.name), 'webhook_url'],
      properties: { ...(bodySchema().properties as Json), ...fieldSchemas(createFields, 'create') },
      additionalProperties: false,
    },
    MonitorPatch: {
      type: 'object',
      additionalProperties: false,
      // The access key may come in the body, as on every POST and PATCH.
      properties: { ...fieldSchemas(patchFields, 'patch'), access_key: { type: 'string' } },
    },
    MonitorChange: {
      type: 'object',
      required: ['at', 'render_id', 'changed_share', 'file_url', 'previous_file_url', 'diff_url'],
      properties: {
        at: { type: 'string', format: 'date-time' },
        render_id: { type: 'string', format: 'uuid' },
        changed_share: { type: 'number', minimum: 0, maximum: 1 },
        changed_pixels: { type: 'integer', minimum: 0 },
        file_url: { type: 'string', format: 'uri' },
        previous_file_url: { type: 'string', format: 'uri' },
        diff_url: {
          type: 'string',
          format: 'uri',
          description: 'A PNG: the new capture in grey, changed pixels in red, each changed region boxed in red.',
        },
        text_diff: textDiff,
      },
    },
    Monitor: {
      type: 'object',
      required: ['monitor_id', 'status', 'interval', 'threshold', 'webhook_url', 'next_run_at'],
      properties: {
        monitor_id: { type: 'string', pattern: '^mon_[0-9a-f]{16}$' },
        status: { type: 'string', enum: ['active', 'paused'] },
        target: { type: 'string', description: 'The URL rendered, or html / markdown for a document.' },
        format: { type: 'string', enum: [...monitorFormats] },
        interval: { type: 'integer' },
        threshold: { type: 'number' },
        min_changed_pixels: { type: 'integer' },
        compare: { type: 'string', enum: [...monitorComparisons] },
        ignore_text: { type: 'array', items: { type: 'string' } },
        webhook_url: { type: 'string', format: 'uri' },
        store: {
          type: 'object',
          description: "With store=true: where every tick's capture is uploaded, replacing the last.",
          properties: { bucket: { type: 'string' }, key: { type: 'string' } },
        },
        external_identifier: { type: 'string', description: 'As given; echoed in every tick and webhook.' },
        webhook_sign: { type: 'boolean', enum: [false], description: 'Present when the webhooks go unsigned.' },
        webhook_errors: { type: 'boolean', enum: [false], description: 'Present when failed ticks are not announced.' },
        created_at: { type: 'string', format: 'date-time' },
        next_run_at: { type: ['string', 'null'], format: 'date-time', description: 'Null while paused.' },
        last_run_at: { type: ['string', 'null'], format: 'date-time' },
        last_status: { type: ['string', 'null'], enum: ['succeeded', 'failed', null] },
        last_error_code: { type: 'string' },
        last_file_url: nullableUri,
        changes: {
          type: 'array',
          items: ref('MonitorChange'),
          description: 'Latest first (the last 50); in the answer for one monitor.',
        },
      },
    },
    MonitorEvent: {
      type: 'object',
      required: ['id', 'type', 'created_at', 'data'],
      properties: {
        id: { type: 'string', description: 'The delivery id, the same on every attempt (= webhook-id).' },
        type: { type: 'string', enum: ['monitor.changed', 'monitor.failed'] },
        created_at: { type: 'string', format: 'date-time' },
        data: {
          type: 'object',
          required: ['monitor_id', 'render_id'],
          properties: {
            monitor_id: { type: 'string' },
            render_id: { type: 'string', format: 'uuid' },
            changed_share: { type: 'number', description: 'monitor.changed only.' },
            changed_pixels: { type: 'integer', description: 'monitor.changed only.' },
            text_diff: { ...textDiff, description: `monitor.changed only. ${textDiff.description}` },
            file_url: { type: 'string', format: 'uri', description: 'monitor.changed only: the new capture.' },
            previous_file_url: {
              type: 'string',
              format: 'uri',
              description: 'monitor.changed only: the capture it was compared with.',
            },
            diff_url: { type: 'string', format: 'uri', description: 'monitor.changed only.' },
            error_code: { type: 'string', description: 'monitor.failed only.' },
            error_message: { type: 'string', description: 'monitor.failed only.' },
            external_identifier: { type: 'string', description: "The monitor's, when it has one." },
          },
        },
      },
    },
  };
}
