// GET /api/usage and GET /api/devices: a workspace's month and the viewport_device presets, in
// ScreenshotOne's shapes (docs/screenshotone.md).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { deviceIdOf, devices } from '../domain/devices.ts';
import { monthOf } from '../workspaces/usage.ts';
import { planConcurrency } from '../workspaces/workspace.ts';
import { authenticate, rawQueryString } from './auth.ts';

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

/** Registers /api/usage and /api/devices; their collaborators are the app's decorators (services.ts). */
export const accountRoutes: FastifyPluginAsync = async (app) => {
  const { workspaces, settlement } = app;

  const caller = (request: FastifyRequest) =>
    authenticate(request, { kind: 'query', entries: [...new URLSearchParams(rawQueryString(request))] }, workspaces);

  app.get('/api/usage', async (request) => {
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

  app.get('/api/devices', async () => listDevices());
};
