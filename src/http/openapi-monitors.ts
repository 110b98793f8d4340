// The monitors' part of the OpenAPI document (docs/monitors.md): paths, schemas and the two webhook events.
import {
  DEFAULT_MIN_CHANGED_PIXELS,
  DEFAULT_MIN_INTERVAL_SECONDS,
  DEFAULT_THRESHOLD,
  monitorComparisons,
  MAX_INTERVAL_SECONDS,
  monitorFormats,
  planMonitorLimits,
} from '../domain/monitor.ts';
import {
  IGNORE_TEXT_MAX_LENGTH,
  IGNORE_TEXT_MAX_PATTERNS,
  TEXT_DIFF_MAX_BYTES,
  TEXT_DIFF_MAX_LINES,
} from '../monitors/text.ts';
import { answerOnly } from './monitors.ts';

/** A JSON Schema or any other part of the document. */
type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const monitorIdParameter = {
  name: 'monitorId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^mon_[0-9a-f]{16}$' },
};
const limits = Object.entries(planMonitorLimits)
  .map(
    ([plan, { monitors, intervalFactor }]) =>
      `${plan}: at most ${monitors} monitors${intervalFactor > 1 ? `, interval at least ${intervalFactor} × MONITOR_MIN_INTERVAL` : ''}`,
  )
  .join('; ');
/** The interval as the service checks it, at the operator's default floor. */
const intervalSchema = { type: 'integer', minimum: DEFAULT_MIN_INTERVAL_SECONDS, maximum: MAX_INTERVAL_SECONDS };

const minChangedPixels = {
  type: 'integer',
  minimum: 1,
  maximum: 1_000_000_000,
  description: `A capture with at least this many changed pixels has changed, whatever their share: one digit changed in 16 px text is about ${DEFAULT_MIN_CHANGED_PIXELS}, in 32 px text about 70.`,
};
const ignoreText = {
  type: 'array',
  maxItems: IGNORE_TEXT_MAX_PATTERNS,
  items: { type: 'string', minLength: 1, maxLength: IGNORE_TEXT_MAX_LENGTH },
  description:
    "With compare text or both: JavaScript regular expressions (Unicode mode) whose matches are left out of each line before the texts are compared (dates, counters). Nested quantifiers are refused; patterns slower than 250 ms on a page leave that tick's text uncompared.",
};
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

/** The schemas the monitor paths and events refer to. */
export function monitorSchemas(takeBody: Json): Json {
  const nullableUri = { type: ['string', 'null'], format: 'uri' };
  return {
    MonitorCreate: {
      type: 'object',
      description: `Every /api/take body parameter (validated as /api/take validates it; format one of ${monitorFormats.join(', ')}; ${answerOnly.join(', ')} accepted without effect: every tick renders afresh and answers by webhook; external_identifier, webhook_sign and webhook_errors apply to the monitor's webhooks; store uploads every tick's capture to the same key); plus interval, threshold, min_changed_pixels, compare and ignore_text. webhook_url is required.`,
      required: ['interval', 'webhook_url'],
      properties: {
        ...(takeBody.properties as Json),
        interval: {
          ...intervalSchema,
          description: `Seconds between ticks: at least MONITOR_MIN_INTERVAL (${DEFAULT_MIN_INTERVAL_SECONDS} by default), at most 30 days. Per plan: ${limits}.`,
        },
        threshold: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: DEFAULT_THRESHOLD,
          description: 'A capture whose changed pixels are more than this share of it has changed.',
        },
        min_changed_pixels: { ...minChangedPixels, default: DEFAULT_MIN_CHANGED_PIXELS },
        compare: {
          type: 'string',
          enum: [...monitorComparisons],
          default: 'pixels',
          description:
            "What a change is: changed pixels (threshold, min_changed_pixels), a line of the page's visible text (or the selector's) added, removed or changed, or either.",
        },
        ignore_text: ignoreText,
      },
      additionalProperties: false,
    },
    MonitorPatch: {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['active', 'paused'] },
        interval: intervalSchema,
        threshold: { type: 'number', minimum: 0, maximum: 1 },
        min_changed_pixels: minChangedPixels,
        ignore_text: ignoreText,
        webhook_url: { type: 'string', format: 'uri' },
        access_key: { type: 'string' },
      },
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

/** The monitor paths; `errors(codes)` makes the error responses as every other path has them. */
export function monitorPaths(security: Json[], errors: (codes: string[]) => Json): Json {
  const common = [
    'access_key_invalid',
    'email_not_verified',
    'signature_is_not_valid',
    'signature_is_required',
    'temporary_unavailable',
    'request_not_valid',
    'request_header_too_large',
    'request_timeout',
    'internal_application_error',
  ];
  const json = (schema: Json) => ({ 'application/json': { schema } });
  return {
    '/api/monitors': {
      post: {
        tags: ['monitors'],
        operationId: 'createMonitor',
        summary: 'Create a monitor',
        description:
          'Renders the page now (the baseline) and then every interval; a tick whose capture changed (more than threshold of its pixels, at least min_changed_pixels of them, or a line of its text, as compare asks) sends monitor.changed, a failed tick monitor.failed. Each tick is charged as a screenshot.',
        security,
        requestBody: { required: true, content: json(ref('MonitorCreate')) },
        responses: {
          '201': { description: 'The monitor.', content: json(ref('Monitor')) },
          ...errors([...common, 'request_body_too_large', 'url_not_allowed', 'name_not_resolved']),
        },
      },
      get: {
        tags: ['monitors'],
        operationId: 'listMonitors',
        summary: "The workspace's monitors",
        security,
        responses: {
          '200': {
            description: 'Every monitor, oldest first, without their changes.',
            content: json({
              type: 'object',
              required: ['monitors'],
              properties: { monitors: { type: 'array', items: ref('Monitor') } },
            }),
          },
          ...errors(common),
        },
      },
    },
    '/api/monitors/{monitorId}': {
      parameters: [monitorIdParameter],
      get: {
        tags: ['monitors'],
        operationId: 'getMonitor',
        summary: 'A monitor, with its changes',
        description: "Another workspace's monitor answers like an unknown one.",
        security,
        responses: {
          '200': { description: 'The monitor.', content: json(ref('Monitor')) },
          ...errors([...common, 'not_found']),
        },
      },
      patch: {
        tags: ['monitors'],
        operationId: 'changeMonitor',
        summary: 'Pause, resume or change a monitor',
        security,
        requestBody: { required: true, content: json(ref('MonitorPatch')) },
        responses: {
          '200': { description: 'The monitor.', content: json(ref('Monitor')) },
          ...errors([...common, 'request_body_too_large', 'not_found', 'url_not_allowed', 'name_not_resolved']),
        },
      },
      delete: {
        tags: ['monitors'],
        operationId: 'deleteMonitor',
        summary: 'Remove a monitor',
        security,
        responses: { '204': { description: 'Removed; no tick runs after.' }, ...errors([...common, 'not_found']) },
      },
    },
  };
}

/** The monitor events, delivered and signed like render.ended (`delivery` is its operation, whose headers and answers they share). */
export function monitorWebhooks(delivery: Json): Json {
  const event = (summary: string) => ({
    post: {
      ...delivery,
      summary,
      requestBody: { required: true, content: { 'application/json': { schema: ref('MonitorEvent') } } },
    },
  });
  return {
    'monitor.changed': event(
      "A monitor's capture changed since the last one (its pixels or its text, as compare asks)",
    ),
    'monitor.failed': event("A monitor's tick failed to render"),
  };
}
