// Every /api/take parameter in one declarative table: the parser, the defaults, the validation
// messages and the API reference are all derived from it.

/** What one value of a parameter is. */
export type ValueType =
  | { kind: 'string'; maxLength: number; pattern?: RegExp; patternText?: string }
  | { kind: 'boolean' }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] };

/** What values a parameter takes: one value, or a list (repeated keys in a GET, a JSON array in a POST). */
export type ParameterType = ValueType | { kind: 'list'; item: ValueType; maxItems: number };

/** Where a parameter belongs in the API reference. */
export type ParameterGroup = 'target' | 'access' | 'viewport' | 'emulation' | 'request' | 'wait' | 'page' | 'capture' | 'output' | 'failure' | 'cache' | 'async';

/** One row of the table. */
export interface Parameter {
  name: string;
  type: ParameterType;
  group: ParameterGroup;
  /** One line for the API reference. */
  description: string;
  /** The value when the parameter is absent (for a render option: what the render uses). */
  default?: string | number | boolean | readonly string[];
  /** Words for a default that depends on other parameters ("viewport height", "true with full_page"). */
  defaultText?: string;
  /** A render option (what to render) or how the request is handled and answered. */
  role: 'option' | 'control';
  /** Only in a GET query (e.g. `signature`, which a POST sends in a header). */
  only?: 'GET';
}

const text = (maxLength: number, pattern?: RegExp, patternText?: string): ValueType => ({ kind: 'string', maxLength, pattern, patternText });
const flag: ValueType = { kind: 'boolean' };
const integer = (min: number, max: number): ValueType => ({ kind: 'integer', min, max });
const number = (min: number, max: number): ValueType => ({ kind: 'number', min, max });
const oneOf = (...values: string[]): ValueType => ({ kind: 'enum', values });
const listOf = (item: ValueType, maxItems = 50): ParameterType => ({ kind: 'list', item, maxItems });

/** The table, in the order the API reference lists it. */
export const parameters: readonly Parameter[] = [
  { name: 'url', type: text(8192), group: 'target', role: 'option', description: 'The page to capture: an absolute http or https URL.' },
  { name: 'access_key', type: text(256), group: 'access', role: 'control', description: 'The access key, when not sent in the X-Access-Key header.' },
  { name: 'signature', type: text(256), group: 'access', role: 'control', only: 'GET', description: 'Lowercase hex HMAC-SHA256 of the query string before it, keyed with the secret key; must be the last parameter.' },

  { name: 'viewport_width', type: integer(100, 3840), default: 1280, group: 'viewport', role: 'option', description: 'Viewport width in CSS pixels.' },
  { name: 'viewport_height', type: integer(100, 2160), default: 720, group: 'viewport', role: 'option', description: 'Viewport height in CSS pixels.' },
  { name: 'device_scale_factor', type: number(1, 3), default: 1, group: 'viewport', role: 'option', description: 'Device pixel ratio: the image is this many times wider and taller.' },

  { name: 'wait_until', type: oneOf('load', 'domcontentloaded', 'networkidle'), default: 'load', group: 'wait', role: 'option', description: 'When navigation counts as done.' },
  { name: 'delay', type: number(0, 30), default: 0, group: 'wait', role: 'option', description: 'Seconds to wait after navigation, before capturing.' },
  { name: 'timeout', type: number(1, 90), default: 30, group: 'wait', role: 'option', description: 'Seconds the whole render may take; a render that outlives it fails with timeout_error.' },

  { name: 'selector', type: text(1000), group: 'capture', role: 'option', description: 'Capture only the first element matching this CSS selector.' },
  { name: 'scroll_into_view', type: text(1000), group: 'capture', role: 'option', description: 'Scroll the first element matching this CSS selector to the top before capturing.' },
  { name: 'full_page', type: flag, default: false, group: 'capture', role: 'option', description: 'Capture the whole scrollable page (at most 16,384 pixels tall).' },

  { name: 'format', type: oneOf('png', 'jpeg', 'jpg', 'webp'), default: 'png', group: 'output', role: 'option', description: 'Image format; jpg is jpeg.' },
  { name: 'image_quality', type: integer(1, 100), default: 80, group: 'output', role: 'option', description: 'Quality of jpeg and webp images.' },
  { name: 'response_type', type: oneOf('by_format', 'json'), default: 'by_format', group: 'output', role: 'control', description: 'by_format: the image bytes; json: a JSON description with the file URL.' },

  { name: 'ignore_host_errors', type: flag, default: false, group: 'failure', role: 'option', description: 'Capture the page even when its main document answered 4xx or 5xx.' },
  { name: 'error_on_selector_not_found', type: flag, default: false, group: 'failure', role: 'option', description: 'Fail with selector_not_found when selector or scroll_into_view matches nothing.' },
  { name: 'fail_if_request_failed', type: listOf(text(1000)), default: [], group: 'failure', role: 'option', description: 'Wildcard patterns (* and ?) of sub-request URLs; a matching one that fails or answers 4xx/5xx fails the render.' },
  { name: 'fail_if_content_missing', type: listOf(text(1000)), default: [], group: 'failure', role: 'option', description: 'Fail when any of these texts is absent from the visible text (case-insensitive).' },
  { name: 'fail_if_content_contains', type: listOf(text(1000)), default: [], group: 'failure', role: 'option', description: 'Fail when any of these texts is present in the visible text (case-insensitive).' },

  { name: 'cache', type: flag, defaultText: 'true for a signed GET', group: 'cache', role: 'control', description: 'Cache a signed GET: later views redirect to the file at no charge.' },
  { name: 'cache_ttl', type: integer(60, 2_592_000), default: 14_400, group: 'cache', role: 'control', description: 'Seconds a cached file is served, counted from the first view.' },

  { name: 'async', type: flag, default: false, group: 'async', role: 'control', description: 'Answer 202 at once with a render id; the result is at the status URL and in the webhook.' },
  { name: 'webhook_url', type: text(8192), group: 'async', role: 'control', description: 'Where the signed webhook announcing the end of the render is POSTed.' },
  { name: 'external_identifier', type: text(128), group: 'async', role: 'control', description: 'Your own id, echoed in the webhook and the status.' },
];

/** The table by name. */
export const parameterByName: ReadonlyMap<string, Parameter> = new Map(parameters.map((parameter) => [parameter.name, parameter]));

/** The defaults of every render option that has one. */
export function optionDefaults(): Record<string, unknown> {
  return Object.fromEntries(parameters.filter((p) => p.role === 'option' && p.default !== undefined).map((p) => [p.name, Array.isArray(p.default) ? [...p.default] : p.default]));
}
