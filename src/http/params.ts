// The parameters of /api/take: one table of every known parameter, parsed the same way for GET and POST.
import { renderDefaults, type ImageFormat, type RenderOptions } from '../domain/options.ts';

/** A GET query as repeated keys, or a POST body as JSON: both become this. */
export type RawParams = { kind: 'query'; entries: [string, string][] } | { kind: 'json'; body: Record<string, unknown> };

/** One offending parameter, as listed in `error_details`. */
export interface ParamProblem {
  parameter: string;
  message: string;
}

/** How the request wants to be answered, apart from what to render. */
export interface TakeControl {
  access_key?: string;
  signature?: string;
  cache?: boolean;
  cache_ttl: number;
  async: boolean;
  webhook_url?: string;
  external_identifier?: string;
  response_type: 'by_format' | 'json';
}

/** A validated /api/take request. */
export interface TakeRequest {
  options: RenderOptions;
  control: TakeControl;
}

type Parsed<T> = { value: T } | { problem: string };
type Parser = (values: unknown[], kind: RawParams['kind']) => Parsed<unknown>;

const single = (parse: (value: unknown) => Parsed<unknown>): Parser => (values) =>
  values.length > 1 ? { problem: 'must be given once' } : parse(values[0]);

const text = (maxLength: number) =>
  single((value) =>
    typeof value !== 'string' || value.length === 0
      ? { problem: 'must be a non-empty string' }
      : value.length > maxLength
        ? { problem: `must be at most ${maxLength} characters` }
        : { value },
  );

const flag = single((value) => {
  if (value === true || value === 'true' || value === '1' || value === 1) return { value: true };
  if (value === false || value === 'false' || value === '0' || value === 0) return { value: false };
  return { problem: 'must be true, false, 1 or 0' };
});

const number = (min: number, max: number, integerOnly: boolean) =>
  single((value) => {
    const parsed = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(parsed)) return { problem: `must be a number from ${min} to ${max}` };
    if (integerOnly && !Number.isInteger(parsed)) return { problem: `must be a whole number from ${min} to ${max}` };
    if (parsed < min || parsed > max) return { problem: `must be from ${min} to ${max}` };
    return { value: parsed };
  });

const oneOf = (choices: string[]) =>
  single((value) => (typeof value === 'string' && choices.includes(value) ? { value } : { problem: `must be one of ${choices.join(', ')}` }));

const list: Parser = (values, kind) => {
  // GET repeats the key; POST sends one JSON array.
  const items = kind === 'json' ? (values.length === 1 && Array.isArray(values[0]) ? values[0] : null) : values;
  if (!items) return { problem: 'must be an array of strings' };
  if (items.length > 50) return { problem: 'must have at most 50 entries' };
  if (!items.every((item) => typeof item === 'string' && item.length > 0 && item.length <= 1000)) {
    return { problem: 'must contain non-empty strings of at most 1000 characters' };
  }
  return { value: items };
};

/** Every parameter /api/take knows, with its parser. */
const parameters: Record<string, Parser> = {
  url: text(8192),
  access_key: text(256),
  signature: text(256),
  format: oneOf(['png', 'jpeg', 'jpg', 'webp']),
  selector: text(1000),
  scroll_into_view: text(1000),
  viewport_width: number(100, 3840, true),
  viewport_height: number(100, 2160, true),
  device_scale_factor: number(1, 3, false),
  full_page: flag,
  image_quality: number(1, 100, true),
  wait_until: oneOf(['load', 'domcontentloaded', 'networkidle']),
  delay: number(0, 30, false),
  timeout: number(1, 90, false),
  cache: flag,
  cache_ttl: number(60, 2_592_000, true),
  async: flag,
  webhook_url: text(8192),
  external_identifier: text(128),
  response_type: oneOf(['by_format', 'json']),
  ignore_host_errors: flag,
  error_on_selector_not_found: flag,
  fail_if_request_failed: list,
  fail_if_content_missing: list,
  fail_if_content_contains: list,
};

const renderOptionNames = new Set<string>([...Object.keys(renderDefaults), 'selector', 'scroll_into_view']);

/** Parses and validates every parameter; returns all problems at once so a client fixes them in one go. */
export function parseTakeParams(raw: RawParams): { request: TakeRequest } | { problems: ParamProblem[] } {
  const grouped = new Map<string, unknown[]>();
  const pairs: [string, unknown][] = raw.kind === 'query' ? raw.entries : Object.entries(raw.body);
  for (const [name, value] of pairs) grouped.set(name, [...(grouped.get(name) ?? []), value]);

  const problems: ParamProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, given] of grouped) {
    const parse = Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    if (!parse) {
      problems.push({ parameter: name, message: 'is not a known parameter' });
      continue;
    }
    // JSON null means "not given", as a client serialising an optional field would expect.
    if (raw.kind === 'json' && given[0] === null) continue;
    const parsed = parse(given, raw.kind);
    if ('problem' in parsed) problems.push({ parameter: name, message: parsed.problem });
    else values[name] = parsed.value;
  }
  if (values.url === undefined && !problems.some((p) => p.parameter === 'url')) {
    problems.push({ parameter: 'url', message: 'is required' });
  }
  if (raw.kind === 'json' && values.signature !== undefined) {
    problems.push({ parameter: 'signature', message: 'goes in the X-Signature header for POST' });
  }
  if (problems.length > 0) return { problems };

  // Parameters that are render options override the defaults; the rest steer the answer.
  const chosen = Object.fromEntries(Object.entries(values).filter(([name]) => renderOptionNames.has(name)));
  const options: RenderOptions = {
    ...renderDefaults,
    ...chosen,
    url: values.url as string,
    format: values.format === 'jpg' ? 'jpeg' : ((values.format as ImageFormat | undefined) ?? renderDefaults.format),
  };
  const control: TakeControl = {
    ...(values.access_key !== undefined ? { access_key: values.access_key as string } : {}),
    ...(values.signature !== undefined ? { signature: values.signature as string } : {}),
    ...(values.cache !== undefined ? { cache: values.cache as boolean } : {}),
    cache_ttl: (values.cache_ttl as number) ?? 14_400,
    async: (values.async as boolean) ?? false,
    ...(values.webhook_url !== undefined ? { webhook_url: values.webhook_url as string } : {}),
    ...(values.external_identifier !== undefined ? { external_identifier: values.external_identifier as string } : {}),
    response_type: (values.response_type as TakeControl['response_type']) ?? 'by_format',
  };
  return { request: { options, control } };
}

