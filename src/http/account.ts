// GET /api/usage and GET /api/devices: a workspace's month and the viewport_device presets, in
// ScreenshotOne's shapes (docs/screenshotone.md).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { deviceIdOf, devices } from '../domain/devices.ts';
import { monthOf } from '../workspaces/usage.ts';
import { planConcurrency } from '../workspaces/workspace.ts';
import { authenticate, rawQueryString } from './auth.ts';
import { jsonContent, keyCodes, ref, routeUrl, transportCodes, type ApiPart, type Operation } from './operation.ts';

/** Nanoseconds since the epoch, as ScreenshotOne's `concurrency.reset` is given. */
const nanoseconds = (ms: number) => Math.round(ms) * 1_000_000;

/** The device list answered by /api/devices, built once. */
let deviceList: { devices: unknown[] } | undefined;
function listDevices() {
  deviceList ??= {
    devices: devices.all().map((preset) => ({
      id: deviceIdOf(preset.name),
      name: preset.name,
      viewport: { width: preset.viewport.width, height: preset.viewport.height },
      device_scale_factor: preset.deviceScaleFactor,
      is_mobile: preset.isMobile,
      has_touch: preset.hasTouch,
      user_agent: preset.userAgent,
    })),
  };
  return deviceList;
}

/** GET /api/usage in the OpenAPI document. */
const usageOperation: Operation = {
  method: 'get',
  path: '/api/usage',
  operationId: 'usage',
  summary: "This month's usage and the renders that may start now",
  tags: ['account'],
  keyed: true,
  errors: [...keyCodes, 'temporary_unavailable', ...transportCodes],
  detail: () => ({
    responses: { '200': { description: 'The current UTC month.', content: jsonContent(ref('Usage')) } },
  }),
};

/** GET /api/devices in the OpenAPI document: public, as the presets are. */
const devicesOperation: Operation = {
  method: 'get',
  path: '/api/devices',
  operationId: 'devices',
  summary: 'Every viewport_device preset',
  tags: ['account'],
  keyed: false,
  errors: ['temporary_unavailable', ...transportCodes],
  detail: () => ({ responses: { '200': { description: 'The presets.', content: jsonContent(ref('Devices')) } } }),
};

/** What /api/usage and /api/devices add to the API's description. */
export const accountApi: ApiPart = {
  operations: [usageOperation, devicesOperation],
  schemas: () => ({
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
  }),
};

/** Registers /api/usage and /api/devices; their collaborators are the app's decorators (services.ts). */
export const accountRoutes: FastifyPluginAsync = async (app) => {
  const { workspaces, settlement } = app;

  const caller = (request: FastifyRequest) =>
    authenticate(request, { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] }, workspaces);

  app.get(routeUrl(usageOperation), async (request) => {
    const { workspace } = await caller(request);
    const now = Date.now();
    const month = await settlement.ledger.standing(workspace.workspace_id, monthOf(new Date(now)));
    const limit = planConcurrency[workspace.plan];
    const remaining = Math.max(0, limit - month.inFlight);
    return {
      total: workspace.quota,
      // Renders in flight hold their slots until they end: they are not available, nor used yet.
      available: Math.max(0, workspace.quota - month.used - month.inFlight),
      used: month.used,
      // The limit is on renders in flight: a slot frees when a render ends, at the latest when its reservation lapses.
      concurrency: {
        limit,
        remaining,
        reset: nanoseconds(remaining > 0 || month.firstLapse === undefined ? now : month.firstLapse),
      },
    };
  });

  app.get(routeUrl(devicesOperation), async () => listDevices());
};
