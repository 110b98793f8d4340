// Per-render emulation on a warm page: device, viewport, media, time zone, geolocation, user agent.
//
// Viewport size and device scale factor stay with the design of the pool: pages are pooled per
// workspace and scale (src/render/pool.ts), and withPage sets the viewport size through Playwright
// (src/render/browser.ts); both use `pageMetrics` below, so a device preset or landscape picks the
// right page and size. Everything else is CDP calls over the render's session, made only for the
// options a render sets: a render that sets none makes no call at all, and its undo is a no-op.
import type { CDPSession, Page } from 'playwright-core';
import type { RenderOptions } from '../domain/options.ts';
import { localeOf, parseHeaderLine } from '../domain/combinations.ts';
import { untilAborted } from './steps.ts';

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

/** The per-render emulation `options` asks for beyond viewport size and scale; undefined fields are not emulated. */
interface Emulation {
  mobile: boolean;
  touch: boolean;
  userAgent?: string;
  media?: { media: string; features: { name: string; value: string }[] };
  timeZone?: string;
  geolocation?: { latitude: number; longitude: number; accuracy: number };
  /** From an Accept-Language line of `headers`: the page's locale and languages. */
  locale?: { locale: string; languages: string[] };
}

function emulationOf(options: RenderOptions): Emulation {
  const features: { name: string; value: string }[] = [];
  if (options.dark_mode !== undefined)
    features.push({ name: 'prefers-color-scheme', value: options.dark_mode ? 'dark' : 'light' });
  if (options.reduced_motion) features.push({ name: 'prefers-reduced-motion', value: 'reduce' });
  const print = options.media_type === 'print';
  const { geolocation_latitude: latitude, geolocation_longitude: longitude } = options;
  return {
    mobile: options.viewport_mobile,
    touch: options.viewport_has_touch,
    userAgent: options.user_agent,
    media: features.length > 0 || print ? { media: print ? 'print' : '', features } : undefined,
    timeZone: options.time_zone,
    geolocation:
      latitude !== undefined && longitude !== undefined
        ? { latitude, longitude, accuracy: options.geolocation_accuracy ?? 0 }
        : undefined,
    locale: acceptLanguageOf(options.headers),
  };
}

// The locale an Accept-Language line of `headers` asks for (the parameter rules refuse one naming none).
function acceptLanguageOf(headers: readonly string[]): Emulation['locale'] {
  if (headers.length === 0) return undefined;
  const line = headers.map(parseHeaderLine).find((header) => header?.name.toLowerCase() === 'accept-language');
  return line ? localeOf(line.value) : undefined;
}

// The browser context of a page's session, asked once per session (for permissions).
const contextIds = new WeakMap<CDPSession, Promise<string | undefined>>();
function browserContextOf(session: CDPSession): Promise<string | undefined> {
  let id = contextIds.get(session);
  if (!id) {
    id = session.send('Target.getTargetInfo').then(({ targetInfo }) => targetInfo.browserContextId);
    id.catch(() => contextIds.delete(session));
    contextIds.set(session, id);
  }
  return id;
}

/**
 * Sets what `options` asks of the page's emulation before navigation; the returned undo restores
 * the page. Writes the render's effective viewport and scale (`pageMetrics`) back into `options`,
 * so that the capture measures the viewport the page has. Undo steps are gathered as each setting
 * is made, so a failure half-way still undoes what was set (and the page is discarded anyway).
 */
export async function applyEmulation(
  page: Page,
  session: CDPSession,
  options: RenderOptions,
  deadline: AbortSignal,
): Promise<() => Promise<void>> {
  const metrics = pageMetrics(options);
  options.viewport_width = metrics.width;
  options.viewport_height = metrics.height;
  options.device_scale_factor = metrics.scale;

  const wanted = emulationOf(options);
  const undo: (() => Promise<unknown>)[] = [];
  const restore = async () => {
    for (const step of undo.reverse()) await step();
  };
  const send = (method: string, params?: object) =>
    untilAborted(deadline, (session.send as (method: string, params?: object) => Promise<unknown>)(method, params));
  try {
    if (wanted.mobile) {
      // Mobile metrics over Playwright's own override (same size and scale), on the capture's
      // session: a capture is composed with its own session's metrics, so only there does a page
      // laid out wider than the screen (its meta viewport) come out zoomed out, as a phone shows
      // it. The undo clears the override and has Playwright apply its own again, as the pool
      // keeps the page.
      undo.push(async () => {
        await session.send('Emulation.clearDeviceMetricsOverride');
        const size = page.viewportSize();
        if (size) await page.setViewportSize(size);
      });
      const landscape = metrics.width > metrics.height;
      await send('Emulation.setDeviceMetricsOverride', {
        width: metrics.width,
        height: metrics.height,
        deviceScaleFactor: metrics.scale,
        mobile: true,
        screenWidth: metrics.width,
        screenHeight: metrics.height,
        screenOrientation: landscape ? { type: 'landscapePrimary', angle: 90 } : { type: 'portraitPrimary', angle: 0 },
      });
    }
    if (wanted.touch) {
      await send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
      undo.push(() => session.send('Emulation.setTouchEmulationEnabled', { enabled: false }));
    }
    if (wanted.userAgent !== undefined || wanted.locale) {
      // The browser's languages (navigator.language, Accept-Language) ride the user agent override;
      // with a locale alone, the browser's own user agent is kept.
      const userAgent = wanted.userAgent ?? ((await send('Browser.getVersion')) as { userAgent: string }).userAgent;
      await send('Emulation.setUserAgentOverride', {
        userAgent,
        ...(wanted.locale ? { acceptLanguage: wanted.locale.languages.join(',') } : {}),
      });
      // An empty user agent ends the override.
      undo.push(() => session.send('Emulation.setUserAgentOverride', { userAgent: '' }));
    }
    if (wanted.locale) {
      // Intl's default locale (dates, numbers) of the page; an empty override ends it.
      await send('Emulation.setLocaleOverride', { locale: wanted.locale.locale });
      undo.push(() => session.send('Emulation.setLocaleOverride', {}));
    }
    if (wanted.media) {
      await send('Emulation.setEmulatedMedia', wanted.media);
      undo.push(() => session.send('Emulation.setEmulatedMedia', { media: '', features: [] }));
    }
    if (wanted.timeZone !== undefined) {
      await send('Emulation.setTimezoneOverride', { timezoneId: wanted.timeZone });
      // An empty zone ends the override: the machine's zone again.
      undo.push(() => session.send('Emulation.setTimezoneOverride', { timezoneId: '' }));
    }
    if (wanted.geolocation) {
      // The pool holds every permission of a warm context at "prompt" (pool.ts); geolocation is
      // granted for this render and put back to "prompt" by the undo, the hold of the others kept.
      const browserContextId = await untilAborted(deadline, browserContextOf(session));
      const setGeolocation = (setting: 'granted' | 'prompt') =>
        session.send('Browser.setPermission', { permission: { name: 'geolocation' }, setting, browserContextId });
      await send('Emulation.setGeolocationOverride', wanted.geolocation);
      undo.push(() => session.send('Emulation.clearGeolocationOverride'));
      undo.push(() => setGeolocation('prompt'));
      await untilAborted(deadline, setGeolocation('granted'));
    }
  } catch (error) {
    // Whatever was set is undone as far as it can be; the render fails and its page is discarded.
    await restore().catch(() => {});
    throw error;
  }
  return undo.length === 0 ? async () => {} : restore;
}
