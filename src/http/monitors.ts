// /api/monitors: create, list, show, change and remove a workspace's monitors (docs/monitors.md).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import {
  monitorFormats,
  newMonitorId,
  planMonitorLimits,
  publicMonitor,
  type Monitor,
  type MonitorComparison,
} from '../domain/monitor.ts';
import { formatNamed } from '../domain/formats.ts';
import type { MonitorManager, MonitorPatch } from '../monitors/manage.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { bodyAfterChecks, bodyRefusalOf } from './body.ts';
import { parseTakeParams, type ParamProblem, type RawParams } from './params.ts';
import { storeTargetFor } from './store.ts';
import { checkProfile, targetChecks } from './take-flow.ts';
import { createFields, monitorFieldProblem, patchFields } from './monitor-fields.ts';
import { monitorSchemas } from './openapi-monitors.ts';
import {
  jsonContent,
  keyCodes,
  ref,
  routeUrl,
  transportCodes,
  type ApiPart,
  type Json,
  type Operation,
} from './operation.ts';

/** What the monitor routes need beside the app's decorators. */
export interface MonitorRouteOptions {
  manager: MonitorManager;
  sealer: Sealer;
}

const notFound = () => new ServiceError('not_found', {}, { message: 'No monitor with this id.' });
const notValid = (problems: ParamProblem[]) => new ServiceError('request_not_valid', { error_details: problems });

/** The fields of a POST or PATCH body that is a JSON object, else none: the access key may be among them. */
function bodyFields(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** What a PATCH may change, as its refusal of any other field says. */
const changeable = patchFields.map((field) => field.name);
const changeableText = `${changeable.slice(0, -1).join(', ')} and ${changeable.at(-1)}`;
const patchFieldByName = new Map(patchFields.map((field) => [field.name as string, field]));
const createFieldNames = new Set<string>(createFields.map((field) => field.name));

/** The codes every monitor route can answer. */
const common = [...keyCodes, 'temporary_unavailable', ...transportCodes] as const;
/** The monitor's id in a path. */
const monitorIdParameter = () => ({
  name: 'monitorId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^mon_[0-9a-f]{16}$' },
});
const monitorAnswer = (status: string): Json => ({
  [status]: { description: 'The monitor.', content: jsonContent(ref('Monitor')) },
});

const createOperation: Operation = {
  method: 'post',
  path: '/api/monitors',
  operationId: 'createMonitor',
  summary: 'Create a monitor',
  tags: ['monitors'],
  keyed: true,
  errors: [...common, 'request_body_too_large', 'url_not_allowed', 'name_not_resolved'],
  detail: () => ({
    description:
      'Renders the page now (the baseline) and then every interval; a tick whose capture changed (more than threshold of its pixels, at least min_changed_pixels of them, or a line of its text, as compare asks) sends monitor.changed, a failed tick monitor.failed. Each tick is charged as a screenshot.',
    requestBody: { required: true, content: jsonContent(ref('MonitorCreate')) },
    responses: monitorAnswer('201'),
  }),
};

const listOperation: Operation = {
  method: 'get',
  path: '/api/monitors',
  operationId: 'listMonitors',
  summary: "The workspace's monitors",
  tags: ['monitors'],
  keyed: true,
  errors: common,
  detail: () => ({
    responses: {
      '200': {
        description: 'Every monitor, oldest first, without their changes.',
        content: jsonContent({
          type: 'object',
          required: ['monitors'],
          properties: { monitors: { type: 'array', items: ref('Monitor') } },
        }),
      },
    },
  }),
};

const getOperation: Operation = {
  method: 'get',
  path: '/api/monitors/{monitorId}',
  operationId: 'getMonitor',
  summary: 'A monitor, with its changes',
  tags: ['monitors'],
  keyed: true,
  errors: [...common, 'not_found'],
  detail: () => ({
    description: "Another workspace's monitor answers like an unknown one.",
    pathParameters: [monitorIdParameter()],
    responses: monitorAnswer('200'),
  }),
};

const changeOperation: Operation = {
  method: 'patch',
  path: '/api/monitors/{monitorId}',
  operationId: 'changeMonitor',
  summary: 'Pause, resume or change a monitor',
  tags: ['monitors'],
  keyed: true,
  errors: [...common, 'request_body_too_large', 'not_found', 'url_not_allowed', 'name_not_resolved'],
  detail: () => ({
    pathParameters: [monitorIdParameter()],
    requestBody: { required: true, content: jsonContent(ref('MonitorPatch')) },
    responses: monitorAnswer('200'),
  }),
};

const deleteOperation: Operation = {
  method: 'delete',
  path: '/api/monitors/{monitorId}',
  operationId: 'deleteMonitor',
  summary: 'Remove a monitor',
  tags: ['monitors'],
  keyed: true,
  errors: [...common, 'not_found'],
  detail: () => ({
    pathParameters: [monitorIdParameter()],
    responses: { '204': { description: 'Removed; no tick runs after.' } },
  }),
};

/** What /api/monitors adds to the API's description (docs/monitors.md); the events are openapi-webhooks.ts's. */
export const monitorsApi: ApiPart = {
  operations: [createOperation, listOperation, getOperation, changeOperation, deleteOperation],
  schemas: monitorSchemas,
};

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
  app.post(routeUrl(createOperation), bodyAfterChecks, async (request, reply) => {
    const body = bodyFields(request);
    const workspace = await caller(request, { kind: 'json', body });
    const refusal = bodyRefusalOf(request);
    if (refusal) throw refusal;
    // A JSON null is a parameter not given, as on /api/take: the field's default, if it has one.
    const own = Object.fromEntries(createFields.map((field) => [field.name, body[field.name] ?? field.default]));
    const take = Object.fromEntries(Object.entries(body).filter(([name]) => !createFieldNames.has(name)));
    const problems: ParamProblem[] = [];
    const parsed = parseTakeParams({ kind: 'json', body: take });
    if ('problems' in parsed) problems.push(...parsed.problems);
    const context = { workspace, minInterval: config.monitorMinInterval, compare: own.compare };
    for (const field of createFields) {
      const value = own[field.name];
      const message =
        value === undefined ? (field.required ? 'is required' : undefined) : monitorFieldProblem(field, value, context);
      if (message) problems.push({ parameter: field.name, message });
    }
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
      interval: own.interval as number,
      threshold: own.threshold as number,
      min_changed_pixels: own.min_changed_pixels as number,
      compare: own.compare as MonitorComparison,
      ...(Array.isArray(own.ignore_text) && own.ignore_text.length > 0
        ? { ignore_text: own.ignore_text as string[] }
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

  app.get(routeUrl(listOperation), async (request) => {
    const workspace = await caller(request);
    const monitors = await store.list(workspace.workspace_id);
    return { monitors: monitors.map((monitor) => publicMonitor(monitor, config.filesBaseUrl, false)) };
  });

  app.get<{ Params: { monitorId: string } }>(routeUrl(getOperation), async (request) => {
    const workspace = await caller(request);
    const monitor = await store.get(workspace.workspace_id, request.params.monitorId);
    if (!monitor) throw notFound();
    return publicMonitor(monitor, config.filesBaseUrl);
  });

  app.patch<{ Params: { monitorId: string } }>(routeUrl(changeOperation), bodyAfterChecks, async (request) => {
    const body = bodyFields(request);
    const workspace = await caller(request, { kind: 'json', body });
    const refusal = bodyRefusalOf(request);
    if (refusal) throw refusal;
    // Another workspace's monitor is not found, whatever the body asks of it.
    const existing = await store.get(workspace.workspace_id, request.params.monitorId);
    if (!existing) throw notFound();
    const problems: ParamProblem[] = [];
    const patch: MonitorPatch = {};
    const context = { workspace, minInterval: config.monitorMinInterval, compare: existing.compare ?? 'pixels' };
    for (const [name, value] of Object.entries(body)) {
      // The access key is the caller's, read above.
      if (name === 'access_key') continue;
      const field = patchFieldByName.get(name);
      const message = field ? monitorFieldProblem(field, value, context) : `cannot be changed (${changeableText} can)`;
      if (message) problems.push({ parameter: name, message });
      // The field's check has just given the value its type.
      else (patch as Record<string, unknown>)[name] = value;
    }
    if (problems.length > 0) throw notValid(problems);
    if (patch.webhook_url !== undefined) await checkTarget(patch.webhook_url, 'webhook_url');
    const monitor = await manager.change(workspace.workspace_id, request.params.monitorId, patch);
    if (!monitor) throw notFound();
    return publicMonitor(monitor, config.filesBaseUrl);
  });

  app.delete<{ Params: { monitorId: string } }>(routeUrl(deleteOperation), async (request, reply) => {
    const workspace = await caller(request);
    if (!(await store.get(workspace.workspace_id, request.params.monitorId))) throw notFound();
    await manager.remove(workspace.workspace_id, request.params.monitorId);
    return reply.code(204).send();
  });
};
