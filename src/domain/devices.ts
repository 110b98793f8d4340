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
