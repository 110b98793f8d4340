// The parameters of /api/take, parsed by the one table (src/domain/parameters.ts) the same way for GET and POST.
import { formatNamed } from '../domain/formats.ts';
import { optionRows, renderDefaults, type RenderOptions } from '../domain/options.ts';
import { refusals } from '../domain/combinations.ts';
import { canonicalTimeZone } from '../domain/locale.ts';
import { presetOptions } from '../domain/devices.ts';
import {
  defaultsOf,
  givenOf,
  parameterByName,
  parameters,
  rowsOfRole,
  type GivenValues,
  type Parameter,
  type ParameterType,
  type TakeParameter,
  type ValueType,
  type ValuesOf,
} from '../domain/parameters.ts';

/** A GET query as repeated keys, or a POST body as JSON: both become this. */
export type RawParams =
  | { kind: 'query'; entries: [string, string][] }
  | { kind: 'json'; body: Record<string, unknown> };

/** One offending parameter, as listed in `error_details`. */
export interface ParamProblem {
  parameter: string;
  message: string;
}

/** How the request wants to be answered, apart from what to render: the control rows of the table, typed by them. */
export type TakeControl = ValuesOf<Extract<TakeParameter, { role: 'control' }>>;

/** A validated /api/take request. */
export interface TakeRequest {
  options: RenderOptions;
  control: TakeControl;
}

type Parsed<T> = { value: T } | { problem: string };

/** Parses one value of `type` as a GET gives it (text) or a POST does (JSON). */
function parseValue(type: ValueType, value: unknown): Parsed<unknown> {
  switch (type.kind) {
    case 'string':
      if (typeof value !== 'string' || value.length === 0) return { problem: 'must be a non-empty string' };
      if (type.inBytes ? Buffer.byteLength(value) > type.maxLength : value.length > type.maxLength)
        return { problem: `must be at most ${type.maxLength} ${type.inBytes ? 'bytes of UTF-8' : 'characters'}` };
      if (type.pattern && !type.pattern.test(value))
        return { problem: `must be ${type.patternText ?? `like ${type.pattern}`}` };
      return { value };
    case 'boolean': {
      // Any case, as ScreenshotOne takes them: a client serialising True (Python's str) is understood.
      const word = typeof value === 'string' ? value.toLowerCase() : value;
      if (word === true || word === 'true' || word === '1' || word === 1) return { value: true };
      if (word === false || word === 'false' || word === '0' || word === 0) return { value: false };
      return { problem: 'must be true, false, 1 or 0' };
    }
    case 'integer':
    case 'number': {
      const { min, max } = type;
      // Decimal notation as clients write it: `35.` (ScreenshotOne's SDK writes whole coordinates
      // so), `.5`, `-0.25`, `1e3`; never hex, Infinity or an empty string.
      const parsed =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(value)
            ? Number(value)
            : NaN;
      if (!Number.isFinite(parsed)) return { problem: `must be a number from ${min} to ${max}` };
      if (type.kind === 'integer' && !Number.isInteger(parsed))
        return { problem: `must be a whole number from ${min} to ${max}` };
      if (parsed < min || parsed > max) return { problem: `must be from ${min} to ${max}` };
      return { value: parsed };
    }
    case 'enum': {
      // Matched ignoring case and surrounding spaces (format=PNG, pdf_paper_format=A4), as
      // ScreenshotOne does; the value is the table's own spelling.
      const wanted = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
      const match = type.values.find((name) => name.toLowerCase() === wanted);
      return match !== undefined && (match !== '' || value === '')
        ? { value: match }
        : { problem: `must be one of ${type.values.map((v) => (v === '' ? '"" (empty)' : v)).join(', ')}` };
    }
  }
}

/** Parses every value given for one parameter: one for a single value, the items of a list. */
function parseParameter(type: ParameterType, given: unknown[], kind: RawParams['kind']): Parsed<unknown> {
  if (type.kind !== 'list') return given.length > 1 ? { problem: 'must be given once' } : parseValue(type, given[0]);
  // GET repeats the key; POST sends one JSON array, or one string for a list of one
  // ("wait_until": "networkidle0", as a single value is written).
  const items =
    kind !== 'json' ? given : Array.isArray(given[0]) ? given[0] : typeof given[0] === 'string' ? [given[0]] : null;
  if (!items) return { problem: 'must be a string or an array of strings' };
  if (items.length > type.maxItems) return { problem: `must have at most ${type.maxItems} entries` };
  const parsed: unknown[] = [];
  for (const item of items) {
    const one = parseValue(type.item, item);
    if ('problem' in one)
      return {
        problem:
          type.item.kind === 'string'
            ? `must contain non-empty strings of at most ${type.item.maxLength} characters`
            : `entries ${one.problem}`,
      };
    parsed.push(one.value);
  }
  return { value: parsed };
}

/** A parameter table as a parser reads it: its rows by name and its rules over several parameters. */
export interface ParameterTable {
  byName: ReadonlyMap<string, Parameter>;
  refusals: (values: Record<string, unknown>) => ParamProblem[];
}

/**
 * Levenshtein distance between two names, with an early exit: above `limit` it answers `limit + 1`.
 * Names are short (≤ 40 characters), so the two-row table is cheap.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length];
}

/**
 * The known name closest to `name`, when one is close enough to be what was meant: at most two
 * edits, and fewer than a third of the name's letters (so `a` does not suggest `url`).
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(2, Math.floor(name.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate, limit);
    if (distance <= limit && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** What an unknown parameter is told: "did you mean" the closest known name, when there is one. */
export function unknownMessage(name: string, known: Iterable<string>): string {
  const closest = closestName(name, known);
  return closest ? `is not a known parameter; did you mean \`${closest}\`?` : 'is not a known parameter';
}

/** The table of /api/take. */
const takeTable: ParameterTable = { byName: parameterByName, refusals };

/**
 * Parses and validates every parameter against `table`: the values given, by name, or every
 * problem at once so a client fixes them in one go.
 */
export function parseParameters(
  raw: RawParams,
  table: ParameterTable,
): { values: Record<string, unknown> } | { problems: ParamProblem[] } {
  const grouped = new Map<string, unknown[]>();
  const pairs: [string, unknown][] = raw.kind === 'query' ? raw.entries : Object.entries(raw.body);
  for (const [name, value] of pairs) grouped.set(name, [...(grouped.get(name) ?? []), value]);

  const problems: ParamProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, given] of grouped) {
    const parameter = table.byName.get(name);
    if (!parameter) {
      problems.push({ parameter: name, message: unknownMessage(name, table.byName.keys()) });
      continue;
    }
    // JSON null means "not given", as a client serialising an optional field would expect.
    if (raw.kind === 'json' && given[0] === null) continue;
    const parsed = parseParameter(parameter.type, given, raw.kind);
    if ('problem' in parsed) problems.push({ parameter: name, message: parsed.problem });
    // An empty list is the default, like null: wait_until=[] waits for load, not for nothing.
    else if (!(Array.isArray(parsed.value) && parsed.value.length === 0)) values[name] = parsed.value;
  }
  // Rules over several parameters or a value's meaning; a parameter already refused is not named twice.
  problems.push(
    ...table.refusals(values).filter((refusal) => !problems.some((p) => p.parameter === refusal.parameter)),
  );
  for (const name of Object.keys(values)) {
    if (raw.kind === 'json' && table.byName.get(name)!.only === 'GET')
      problems.push({ parameter: name, message: 'is for GET only (a POST is signed in the X-Signature header)' });
  }
  return problems.length > 0 ? { problems } : { values };
}

/**
 * The page options given, over the defaults and a device preset (options given explicitly win).
 * A `delay` without a `timeout` gets the default timeout after it (30 s more), as ScreenshotOne's
 * longer default timeout leaves its delays room; within the limits (a delay over 30 s needs async).
 * The vision settings without a `vision_prompt` are ignored, and dropped: no key rides along unused.
 */
export function pageOptions(given: GivenValues<(typeof optionRows)[number]>): Omit<RenderOptions, 'format'> {
  const { vision_max_tokens, openai_api_key, ...unlessVision } = given;
  const options = given.vision_prompt === undefined ? unlessVision : given;
  return {
    ...renderDefaults,
    ...(options.delay !== undefined ? { timeout: options.delay + renderDefaults.timeout } : {}),
    ...(options.viewport_device !== undefined ? presetOptions(options.viewport_device) : {}),
    ...options,
    ...(options.ip_country_code !== undefined ? { ip_country_code: options.ip_country_code.toLowerCase() } : {}),
    ...(options.time_zone !== undefined
      ? { time_zone: canonicalTimeZone(options.time_zone) ?? options.time_zone }
      : {}),
  };
}

const controlRows = rowsOfRole(parameters, 'control');
const takeControlDefaults = defaultsOf(controlRows);

/** Parses and validates every parameter; returns all problems at once so a client fixes them in one go. */
export function parseTakeParams(raw: RawParams): { request: TakeRequest } | { problems: ParamProblem[] } {
  const parsed = parseParameters(raw, takeTable);
  if ('problems' in parsed) return parsed;
  const { values } = parsed;
  // Parameters that are render options override the defaults; the rest steer the answer.
  const options: RenderOptions = {
    ...pageOptions(givenOf(values, optionRows)),
    format: formatNamed(String(values.format ?? renderDefaults.format))!,
  };
  const control: TakeControl = { ...takeControlDefaults, ...givenOf(values, controlRows) };
  return { request: { options, control } };
}
