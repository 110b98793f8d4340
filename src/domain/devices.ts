// Device presets (viewport, scale, mobile, touch, user agent), looked up by a forgiving name:
// Playwright's list, and the devices of ScreenshotOne's list that Playwright's lacks.
import { createRequire } from 'node:module';
import type { RenderOptions } from './options.ts';

/** One device preset, as Playwright describes it. */
export interface DevicePreset {
  name: string;
  userAgent: string;
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  isMobile: boolean;
  hasTouch: boolean;
}

const IPAD_11 =
  'Mozilla/5.0 (iPad; CPU OS 11_0 like Mac OS X) AppleWebKit/604.1.34 (KHTML, like Gecko) Version/11.0 Mobile/15A5341f Safari/604.1';
const IPHONE_4 =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 7_1_2 like Mac OS X) AppleWebKit/537.51.2 (KHTML, like Gecko) Version/7.0 Mobile/11D257 Safari/9537.53';
const IPHONE_5 =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_1 like Mac OS X) AppleWebKit/603.1.30 (KHTML, like Gecko) Version/10.0 Mobile/14E304 Safari/602.1';
const JIOPHONE_2 =
  'Mozilla/5.0 (Mobile; LYF/F300B/LYF-F300B-001-01-15-130718-i;Android; rv:48.0) Gecko/48.0 Firefox/48.0 KAIOS/2.5';

/** A portrait preset and its landscape twin (width and height swapped), as both lists give them. */
const withLandscape = (
  name: string,
  width: number,
  height: number,
  deviceScaleFactor: number,
  userAgent: string,
): DevicePreset[] => [
  { name, userAgent, viewport: { width, height }, deviceScaleFactor, isMobile: true, hasTouch: true },
  {
    name: `${name} landscape`,
    userAgent,
    viewport: { width: height, height: width },
    deviceScaleFactor,
    isMobile: true,
    hasTouch: true,
  },
];

/** ScreenshotOne's devices (its public `devices` list) that Playwright's list has no preset for. */
const screenshotOneOnly: DevicePreset[] = [
  ...withLandscape('iPad', 768, 1024, 2, IPAD_11),
  ...withLandscape('iPad Pro', 1024, 1366, 2, IPAD_11),
  ...withLandscape('iPhone 4', 320, 480, 2, IPHONE_4),
  ...withLandscape('iPhone 5', 320, 568, 2, IPHONE_5),
  ...withLandscape('JioPhone 2', 240, 320, 1, JIOPHONE_2),
];

// iPhone 13, iphone_13 and IPHONE-13 are one name; so are iPad (gen 7) and ipad_gen_7.
const keyOf = (name: string) => name.toLowerCase().replace(/[\s_()-]+/g, '');

/** A preset's id as ScreenshotOne spells it: lower case, spaces as `_`, no parentheses (iphone_13, ipad_gen_7). */
export const deviceIdOf = (name: string) => name.toLowerCase().replaceAll(' ', '_').replace(/[()]/g, '');

let byKey: Map<string, DevicePreset> | undefined;

// Loaded on first use only: a process that never sees viewport_device never loads playwright-core's list.
function presets(): Map<string, DevicePreset> {
  if (!byKey) {
    const list = createRequire(import.meta.url)('playwright-core').devices as Record<
      string,
      Omit<DevicePreset, 'name'>
    >;
    const all = [...Object.entries(list).map(([name, preset]) => ({ name, ...preset })), ...screenshotOneOnly];
    byKey = new Map(all.map((preset) => [keyOf(preset.name), preset]));
  }
  return byKey;
}

/** The device presets, by forgiving name. */
export const devices = {
  /**
   * The preset called `name` (case, spaces, `_`, `-` and parentheses ignored), or undefined. A `+`
   * written as is in a query string arrives as a space (`galaxy_s9+` as `galaxy_s9 `): a name found
   * only that way is read with its `+` back.
   */
  find(name: string): DevicePreset | undefined {
    return (
      presets().get(keyOf(name)) ?? (name.includes(' ') ? presets().get(keyOf(name.replaceAll(' ', '+'))) : undefined)
    );
  },
  /** Every preset, in the lists' order. */
  all(): DevicePreset[] {
    return [...presets().values()];
  },
};

/** The render options a device preset stands for (the parser lays explicit options over them). */
export function presetOptions(name: string): {
  viewport_width: number;
  viewport_height: number;
  device_scale_factor: number;
  viewport_mobile: boolean;
  viewport_has_touch: boolean;
  user_agent: string;
} {
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

// The largest image a render may make, in device pixels (docs/api.md, device_scale_factor).
const MAX_DEVICE_PIXELS = 3840 * 2160 * 4;

/** What a page is sized by: viewport in CSS px and device scale factor. */
export type MetricsOptions = Pick<RenderOptions, 'viewport_width' | 'viewport_height' | 'device_scale_factor'> &
  Partial<Pick<RenderOptions, 'viewport_device' | 'viewport_landscape'>>;

/** The viewport and scale a render gets once its device preset and landscape are applied. */
export interface PageMetrics {
  width: number;
  height: number;
  scale: number;
}

/**
 * The viewport and scale of a render (a device preset was applied by the parser, explicit options
 * winning); landscape turns a portrait viewport on its side (width and height swapped).
 * Idempotent: applied to its own result it changes nothing. The scale never takes the image past
 * the area limit.
 */
export function pageMetrics(options: MetricsOptions): PageMetrics {
  let { viewport_width: width, viewport_height: height, device_scale_factor: scale } = options;
  if (options.viewport_landscape && width < height) [width, height] = [height, width];
  if (width * height * scale * scale > MAX_DEVICE_PIXELS)
    scale = Math.max(1, Math.floor(Math.sqrt(MAX_DEVICE_PIXELS / (width * height)) * 100) / 100);
  return { width, height, scale };
}
