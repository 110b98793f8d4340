// The monitor's own fields, one row each (docs/monitors.md): what POST /api/monitors takes beside the
// /api/take parameters, and what a PATCH may change. The routes' checks and the OpenAPI schemas
// (openapi-monitors.ts) both read this table, as /api/take's read src/domain/parameters.ts.
import {
  DEFAULT_MIN_CHANGED_PIXELS,
  DEFAULT_MIN_INTERVAL_SECONDS,
  DEFAULT_THRESHOLD,
  MAX_INTERVAL_SECONDS,
  monitorComparisons,
  planMonitorLimits,
  shortestInterval,
} from '../domain/monitor.ts';
import type { MonitorPatch } from '../monitors/manage.ts';
import { IGNORE_TEXT_MAX_LENGTH, IGNORE_TEXT_MAX_PATTERNS, ignoreTextProblem } from '../monitors/text.ts';
import type { Workspace } from '../workspaces/workspace.ts';

/**
 * /api/take parameters that shape one answer: accepted, and without effect on a monitor, whose
 * every tick renders afresh, asynchronously, and answers by webhook (docs/monitors.md).
 */
export const answerOnly = ['async', 'cache', 'cache_ttl', 'cache_key', 'response_type', 'attachment_name'];

/** The value a field takes; its schema, and its check unless the row has its own. */
export type MonitorFieldType =
  | { kind: 'integer' | 'number'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'url' }
  | { kind: 'patterns'; maxItems: number; maxLength: number };

/** What a check may need beside the value: the caller's plan, the operator's floor, the comparison asked for. */
export interface MonitorFieldContext {
  workspace: Workspace;
  /** MONITOR_MIN_INTERVAL, in seconds. */
  minInterval: number;
  /** The monitor's `compare`, as given or kept. */
  compare: unknown;
}

/** One field of a monitor. */
export interface MonitorField {
  name: keyof MonitorPatch | 'compare';
  type: MonitorFieldType;
  description?: string;
  /** The value of a field not given (or given as null) on create. */
  default?: unknown;
  /** Where it may be given: on create, beside the /api/take parameters, and in a PATCH. */
  in: readonly ('create' | 'patch')[];
  /** A create without it is refused. */
  required?: boolean;
  /** A check of its own, in place of its type's: a message, or undefined for a good value. */
  check?: (value: unknown, context: MonitorFieldContext) => string | undefined;
}

/** The most changed pixels `min_changed_pixels` may ask for. */
const MAX_MIN_CHANGED_PIXELS = 1_000_000_000;

const planLimits = Object.entries(planMonitorLimits)
  .map(
    ([plan, { monitors, intervalFactor }]) =>
      `${plan}: at most ${monitors} monitors${intervalFactor > 1 ? `, interval at least ${intervalFactor} × MONITOR_MIN_INTERVAL` : ''}`,
  )
  .join('; ');

/** Every field, in the order the routes check them and the schemas list them. */
export const monitorFields: readonly MonitorField[] = [
  { name: 'status', type: { kind: 'enum', values: ['active', 'paused'] }, in: ['patch'] },
  {
    name: 'interval',
    // The floor the service checks at the operator's default; the plan's is the check's.
    type: { kind: 'integer', min: DEFAULT_MIN_INTERVAL_SECONDS, max: MAX_INTERVAL_SECONDS },
    description: `Seconds between ticks: at least MONITOR_MIN_INTERVAL (${DEFAULT_MIN_INTERVAL_SECONDS} by default), at most 30 days. Per plan: ${planLimits}.`,
    in: ['create', 'patch'],
    required: true,
    check: (value, { workspace, minInterval }) => {
      const shortest = shortestInterval(workspace.plan, minInterval);
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be a whole number of seconds';
      if (value < shortest) return `must be at least ${shortest} seconds on the ${workspace.plan} plan`;
      if (value > MAX_INTERVAL_SECONDS) return `must be at most ${MAX_INTERVAL_SECONDS} seconds`;
      return undefined;
    },
  },
  {
    name: 'threshold',
    type: { kind: 'number', min: 0, max: 1 },
    description: 'A capture whose changed pixels are more than this share of it has changed.',
    default: DEFAULT_THRESHOLD,
    in: ['create', 'patch'],
  },
  {
    name: 'min_changed_pixels',
    type: { kind: 'integer', min: 1, max: MAX_MIN_CHANGED_PIXELS },
    description: `A capture with at least this many changed pixels has changed, whatever their share: one digit changed in 16 px text is about ${DEFAULT_MIN_CHANGED_PIXELS}, in 32 px text about 70.`,
    default: DEFAULT_MIN_CHANGED_PIXELS,
    in: ['create', 'patch'],
  },
  {
    name: 'compare',
    type: { kind: 'enum', values: monitorComparisons },
    description:
      "What a change is: changed pixels (threshold, min_changed_pixels), a line of the page's visible text (or the selector's) added, removed or changed, or either.",
    default: 'pixels',
    in: ['create'],
  },
  {
    name: 'ignore_text',
    type: { kind: 'patterns', maxItems: IGNORE_TEXT_MAX_PATTERNS, maxLength: IGNORE_TEXT_MAX_LENGTH },
    description:
      "With compare text or both: JavaScript regular expressions (Unicode mode) whose matches are left out of each line before the texts are compared (dates, counters). Nested quantifiers are refused; patterns slower than 250 ms on a page leave that tick's text uncompared.",
    in: ['create', 'patch'],
    check: (value, { compare }) =>
      ignoreTextProblem(value) ??
      (compare === 'text' || compare === 'both' ? undefined : 'applies only with compare text or both'),
  },
  // On create, webhook_url is an /api/take parameter, checked as /api/take checks it.
  { name: 'webhook_url', type: { kind: 'url' }, in: ['patch'] },
];

/** The fields a create takes, and those a PATCH may change. */
export const createFields = monitorFields.filter((field) => field.in.includes('create'));
export const patchFields = monitorFields.filter((field) => field.in.includes('patch'));

/** A value that is not of `type`: what is wrong with it, or undefined. */
function typeProblem(type: MonitorFieldType, value: unknown): string | undefined {
  switch (type.kind) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= type.min && value <= type.max
        ? undefined
        : `must be a whole number from ${type.min} to ${type.max}`;
    case 'number':
      return typeof value === 'number' && value >= type.min && value <= type.max
        ? undefined
        : `must be a number from ${type.min} to ${type.max}`;
    case 'enum': {
      if (type.values.includes(value as string)) return undefined;
      const [first, second, ...others] = type.values;
      return others.length === 0 ? `must be ${first} or ${second}` : `must be one of ${type.values.join(', ')}`;
    }
    case 'url':
      // Whether it is an address a webhook may go to is checkTarget's to say.
      return typeof value === 'string' && value !== '' ? undefined : 'must be an absolute http or https URL';
    case 'patterns':
      return ignoreTextProblem(value);
  }
}

/** What is wrong with `value` for `field`, or undefined when it is good. */
export function monitorFieldProblem(
  field: MonitorField,
  value: unknown,
  context: MonitorFieldContext,
): string | undefined {
  return field.check ? field.check(value, context) : typeProblem(field.type, value);
}
