// Playwright's device presets (viewport, scale, mobile, touch, user agent), looked up by a forgiving name.
import { createRequire } from 'node:module';

/** One device preset, as Playwright describes it. */
export interface DevicePreset {
  name: string;
  userAgent: string;
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  isMobile: boolean;
  hasTouch: boolean;
}

// iPhone 13, iphone_13 and IPHONE-13 are one name.
const keyOf = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

let byKey: Map<string, DevicePreset> | undefined;

// Loaded on first use only: a process that never sees viewport_device never loads playwright-core's list.
function presets(): Map<string, DevicePreset> {
  if (!byKey) {
    const list = createRequire(import.meta.url)('playwright-core').devices as Record<string, Omit<DevicePreset, 'name'>>;
    byKey = new Map(Object.entries(list).map(([name, preset]) => [keyOf(name), { name, ...preset }]));
  }
  return byKey;
}

/** The device presets, by forgiving name. */
export const devices = {
  /** The preset called `name` (case, spaces, `_` and `-` ignored), or undefined. */
  find(name: string): DevicePreset | undefined {
    return presets().get(keyOf(name));
  },
};

/** The render options a device preset stands for (the parser lays explicit options over them). */
export function presetOptions(name: string): { viewport_width: number; viewport_height: number; device_scale_factor: number; viewport_mobile: boolean; viewport_has_touch: boolean; user_agent: string } {
  const preset = devices.find(name);
  if (!preset) throw new Error(`no device preset ${name}`);
  return {
    viewport_width: preset.viewport.width,
    viewport_height: preset.viewport.height,
    device_scale_factor: preset.deviceScaleFactor,
    viewport_mobile: preset.isMobile,
    viewport_has_touch: preset.hasTouch,
    user_agent: preset.userAgent,
  };
}
