// /api/monitors: create, list, show, change and remove a workspace's monitors (docs/monitors.md).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import {
  DEFAULT_MIN_CHANGED_PIXELS,
  DEFAULT_THRESHOLD,
  MAX_INTERVAL_SECONDS,
  monitorComparisons,
  monitorFormats,
  newMonitorId,
  planMonitorLimits,
  publicMonitor,
  shortestInterval,
  type Monitor,
  type MonitorComparison,
} from '../domain/monitor.ts';
import { ignoreTextProblem } from '../monitors/text.ts';
import { formatNamed } from '../domain/formats.ts';
import type { MonitorManager, MonitorPatch } from '../monitors/manage.ts';
import type { Sealer } from '../secrets/sealer.ts';
import type { Workspace } from '../workspaces/workspace.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { bodyAfterChecks, bodyRefusalOf } from './body.ts';
import { parseTakeParams, type ParamProblem, type RawParams } from './params.ts';
import { storeTargetFor } from './store.ts';
import { checkProfile, targetChecks } from './take-flow.ts';

/** What the monitor routes need beside the app's decorators. */
export interface MonitorRouteOptions {
  manager: MonitorManager;
  sealer: Sealer;
}

/**
 * /api/take parameters that shape one answer: accepted, and without effect on a monitor, whose
 * every tick renders afresh, asynchronously, and answers by webhook (docs/monitors.md).
 */
export const answerOnly = ['async', 'cache', 'cache_ttl', 'cache_key', 'response_type', 'attachment_name'];

const notFound = () => new ServiceError('not_found', {}, { message: 'No monitor with this id.' });
const notValid = (problems: ParamProblem[]) => new ServiceError('request_not_valid', { error_details: problems });

/** The fields of a POST or PATCH body that is a JSON object, else none: the access key may be among them. */
function bodyFields(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** Validates `interval` against the plan; a problem, or undefined. */
function intervalProblem(value: unknown, workspace: Workspace, minInterval: number): ParamProblem | undefined {
  const shortest = shortestInterval(workspace.plan, minInterval);
  if (typeof value !== 'number' || !Number.isInteger(value))
    return { parameter: 'interval', message: 'must be a whole number of seconds' };
  if (value < shortest)
    return { parameter: 'interval', message: `must be at least ${shortest} seconds on the ${workspace.plan} plan` };
  if (value > MAX_INTERVAL_SECONDS)
    return { parameter: 'interval', message: `must be at most ${MAX_INTERVAL_SECONDS} seconds` };
  return undefined;
}

function thresholdProblem(value: unknown): ParamProblem | undefined {
  return typeof value === 'number' && value >= 0 && value <= 1
    ? undefined
    : { parameter: 'threshold', message: 'must be a number from 0 to 1' };
}

/** The most changed pixels `min_changed_pixels` may ask for. */
const MAX_MIN_CHANGED_PIXELS = 1_000_000_000;

function minChangedPixelsProblem(value: unknown): ParamProblem | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_MIN_CHANGED_PIXELS
    ? undefined
    : { parameter: 'min_changed_pixels', message: `must be a whole number from 1 to ${MAX_MIN_CHANGED_PIXELS}` };
}

function compareProblem(value: unknown): ParamProblem | undefined {
  return monitorComparisons.includes(value as MonitorComparison)
    ? undefined
    : { parameter: 'compare', message: `must be one of ${monitorComparisons.join(', ')}` };
}

/** Validates `ignore_text` for a monitor comparing `compare`; a problem, or undefined. */
function ignoreTextIssue(value: unknown, compare: unknown): ParamProblem | undefined {
  const message = ignoreTextProblem(value);
  if (message) return { parameter: 'ignore_text', message };
  if (compare !== 'text' && compare !== 'both')
    return { parameter: 'ignore_text', message: 'applies only with compare text or both' };
  return undefined;
}

/** Registers the monitor routes; the access key is checked as on /api/take. */
export const monitorsRoutes: FastifyPluginAsync<MonitorRouteOptions> = async (app, { manager, sealer }) => {
  const { config, workspaces, checkTarget } = app;
  const { store } = manager;
  const checkTakeTargets = targetChecks(app);

  const caller = async (request: FastifyRequest, raw?: RawParams) =>
    (
      await authenticate(
        request,
        raw ?? { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] },
        workspaces,
      )
    ).workspace;

  // The access key is checked before an unreadable body is refused, as on /api/take.
  app.post('/api/monitors', bodyAfterChecks, async (request, reply) => {
    const body = bodyFields(request);
    const workspace = await caller(request, { kind: 'json', body });
    const refusal = bodyRefusalOf(request);
    if (refusal) throw refusal;
    // A JSON null is a parameter not given, as on /api/take.
    const {
      interval,
      threshold: givenThreshold,
      min_changed_pixels: givenMinChangedPixels,
      compare: givenCompare,
      ignore_text: givenIgnoreText,
      ...take
    } = body;
    const threshold = givenThreshold ?? DEFAULT_THRESHOLD;
    const minChangedPixels = givenMinChangedPixels ?? DEFAULT_MIN_CHANGED_PIXELS;
    const compare = givenCompare ?? 'pixels';
    const problems: ParamProblem[] = [];
    const parsed = parseTakeParams({ kind: 'json', body: take });
    if ('problems' in parsed) problems.push(...parsed.problems);
    const intervalIssue =
      interval === undefined || interval === null
        ? { parameter: 'interval', message: 'is required' }
        : intervalProblem(interval, workspace, config.monitorMinInterval);
    if (intervalIssue) problems.push(intervalIssue);
    const thresholdIssue = thresholdProblem(threshold);
    if (thresholdIssue) problems.push(thresholdIssue);
    const minChangedPixelsIssue = minChangedPixelsProblem(minChangedPixels);
    if (minChangedPixelsIssue) problems.push(minChangedPixelsIssue);
    const compareIssue = compareProblem(compare);
    if (compareIssue) problems.push(compareIssue);
    const ignoreIssue =
      givenIgnoreText === undefined || givenIgnoreText === null ? undefined : ignoreTextIssue(givenIgnoreText, compare);
    if (ignoreIssue) problems.push(ignoreIssue);
    if (take.webhook_url === undefined || take.webhook_url === null)
      problems.push({ parameter: 'webhook_url', message: 'is required' });
    if (
      take.format !== undefined &&
      take.format !== null &&
      // The parser's reading of the format (any case, jpg for jpeg) when it accepted one.
      !monitorFormats.includes(
        'request' in parsed ? parsed.request.options.format : formatNamed(String(take.format))!,
      ) &&
      !problems.some((p) => p.parameter === 'format')
    ) {
      problems.push({ parameter: 'format', message: `must be one of ${monitorFormats.join(', ')} for a monitor` });
    }
    if (problems.length > 0 || !('request' in parsed)) throw notValid(problems);
    const { options, control } = parsed.request;
    const storeTarget = storeTargetFor(control, options.format, workspace, sealer);
    // The checks of /api/take past its parameters, the same path: addresses, proxy, country, format.
    await checkTakeTargets(parsed.request, storeTarget);
    await checkProfile(app, workspace.workspace_id, options.profile);

    const now = new Date().toISOString();
    const monitor: Monitor = {
      monitor_id: newMonitorId(),
      workspace_id: workspace.workspace_id,
      status: 'active',
      interval: interval as number,
      threshold: threshold as number,
      min_changed_pixels: minChangedPixels as number,
      compare: compare as MonitorComparison,
      ...(Array.isArray(givenIgnoreText) && givenIgnoreText.length > 0
        ? { ignore_text: givenIgnoreText as string[] }
        : {}),
      webhook_url: control.webhook_url!,
      ...(control.external_identifier !== undefined ? { external_identifier: control.external_identifier } : {}),
      ...(control.webhook_sign === false ? { webhook_sign: false as const } : {}),
      ...(control.webhook_errors === false ? { webhook_errors: false as const } : {}),
      target: options.url ?? (options.html !== undefined ? 'html' : 'markdown'),
      format: options.format,
      sealed_options: sealer.seal(JSON.stringify(options)),
      ...(storeTarget ? { store: storeTarget } : {}),
      created_at: now,
      updated_at: now,
      generation: 1,
      // The first tick runs at once: its capture is the baseline later ticks are compared with.
      next_run_at: now,
      changes: [],
    };
    // The plan's count is claimed atomically with the write: concurrent creates never pass it.
    const limit = planMonitorLimits[workspace.plan].monitors;
    if ((await manager.create(monitor, limit)) === 'full') {
      throw notValid([
        { parameter: 'monitors', message: `the ${workspace.plan} plan allows at most ${limit} monitors` },
      ]);
    }
    reply.code(201);
    return publicMonitor(monitor, config.filesBaseUrl);
  });

  app.get('/api/monitors', async (request) => {
    const workspace = await caller(request);
    const monitors = await store.list(workspace.workspace_id);
    return { monitors: monitors.map((monitor) => publicMonitor(monitor, config.filesBaseUrl, false)) };
  });

  app.get<{ Params: { monitorId: string } }>('/api/monitors/:monitorId', async (request) => {
    const workspace = await caller(request);
    const monitor = await store.get(workspace.workspace_id, request.params.monitorId);
    if (!monitor) throw notFound();
    return publicMonitor(monitor, config.filesBaseUrl);
  });

  app.patch<{ Params: { monitorId: string } }>('/api/monitors/:monitorId', bodyAfterChecks, async (request) => {
    const body = bodyFields(request);
    const workspace = await caller(request, { kind: 'json', body });
    const refusal = bodyRefusalOf(request);
    if (refusal) throw refusal;
    // Another workspace's monitor is not found, whatever the body asks of it.
    const existing = await store.get(workspace.workspace_id, request.params.monitorId);
    if (!existing) throw notFound();
    const problems: ParamProblem[] = [];
    const patch: MonitorPatch = {};
    for (const [name, value] of Object.entries(body)) {
      if (name === 'access_key') continue;
      if (name === 'status') {
        if (value === 'active' || value === 'paused') patch.status = value;
        else problems.push({ parameter: name, message: 'must be active or paused' });
      } else if (name === 'interval') {
        const issue = intervalProblem(value, workspace, config.monitorMinInterval);
        if (issue) problems.push(issue);
        else patch.interval = value as number;
      } else if (name === 'threshold') {
        const issue = thresholdProblem(value);
        if (issue) problems.push(issue);
        else patch.threshold = value as number;
      } else if (name === 'min_changed_pixels') {
        const issue = minChangedPixelsProblem(value);
        if (issue) problems.push(issue);
        else patch.min_changed_pixels = value as number;
      } else if (name === 'ignore_text') {
        const issue = ignoreTextIssue(value, existing.compare ?? 'pixels');
        if (issue) problems.push(issue);
        else patch.ignore_text = value as string[];
      } else if (name === 'webhook_url') {
        if (typeof value === 'string' && value !== '') patch.webhook_url = value;
        else problems.push({ parameter: name, message: 'must be an absolute http or https URL' });
      } else {
        problems.push({
          parameter: name,
          message:
            'cannot be changed (status, interval, threshold, min_changed_pixels, ignore_text and webhook_url can)',
        });
      }
    }
    if (problems.length > 0) throw notValid(problems);
    if (patch.webhook_url !== undefined) await checkTarget(patch.webhook_url, 'webhook_url');
    const monitor = await manager.change(workspace.workspace_id, request.params.monitorId, patch);
    if (!monitor) throw notFound();
    return publicMonitor(monitor, config.filesBaseUrl);
  });

  app.delete<{ Params: { monitorId: string } }>('/api/monitors/:monitorId', async (request, reply) => {
    const workspace = await caller(request);
    if (!(await store.get(workspace.workspace_id, request.params.monitorId))) throw notFound();
    await manager.remove(workspace.workspace_id, request.params.monitorId);
    return reply.code(204).send();
  });
};
