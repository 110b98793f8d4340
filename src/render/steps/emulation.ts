// Per-render emulation on a warm page: device, viewport, media, time zone, geolocation, user agent.
//
// Viewport size and device scale factor stay with the design of the pool: pages are pooled per
// workspace and scale (src/render/browser/pool.ts), and withPage sets the viewport size through Playwright
// (src/render/browser/browser.ts); both use `pageMetrics` (src/domain/devices.ts), so a device preset or landscape picks the
// right page and size. Everything else is CDP calls over the render's session, made only for the
// options a render sets: a render that sets none makes no call at all, and defers no undo.
import type { CDPSession } from 'playwright-core';
import type { RenderOptions } from '../../domain/options.ts';
import { pageMetrics, type PageMetrics } from '../../domain/devices.ts';
import { localeOf } from '../../domain/locale.ts';
import { parseHeaderLine } from '../../domain/page-request.ts';
import { cdp } from '../browser/cdp.ts';
import type { PageStep } from './page-step.ts';

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
  // Unset, the page shows screen media and Chromium prints a pdf with print media; a pdf asked for
  // as the screen shows it is printed with screen media emulated.
  const media =
    options.media_type === 'print' || (options.media_type === 'screen' && options.format === 'pdf')
      ? options.media_type
      : '';
  const { geolocation_latitude: latitude, geolocation_longitude: longitude } = options;
  return {
    mobile: options.viewport_mobile,
    touch: options.viewport_has_touch,
    userAgent: options.user_agent,
    media: features.length > 0 || media ? { media, features } : undefined,
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
    id = cdp(session)
      .Target.getTargetInfo()
      .then(({ targetInfo }) => targetInfo.browserContextId);
    id.catch(() => contextIds.delete(session));
    contextIds.set(session, id);
  }
  return id;
}

/** `options` with the viewport and scale the page has once emulated (`pageMetrics`), for the later steps. */
export function withMetrics(options: RenderOptions, metrics: PageMetrics): RenderOptions {
  return {
    ...options,
    viewport_width: metrics.width,
    viewport_height: metrics.height,
    device_scale_factor: metrics.scale,
  };
}

/**
 * Sets what `options` asks of the page's emulation before navigation, deferring to `progress` the
 * undo of each setting as it is made. Returns the render's effective viewport and scale
 * (`pageMetrics`): the capture measures the viewport the page has (`withMetrics`).
 */
export async function applyEmulation({ page, session, options, progress }: PageStep): Promise<PageMetrics> {
  const metrics = pageMetrics(options);
  const wanted = emulationOf(options);
  const { Browser, Emulation } = cdp(session);
  if (wanted.mobile) {
    // Mobile metrics over Playwright's own override (same size and scale), on the capture's
    // session: a capture is composed with its own session's metrics, so only there does a page
    // laid out wider than the screen (its meta viewport) come out zoomed out, as a phone shows
    // it. The undo clears the override and has Playwright apply its own again, as the pool
    // keeps the page.
    progress.defer(async () => {
      await Emulation.clearDeviceMetricsOverride();
      const size = page.viewportSize();
      if (size) await page.setViewportSize(size);
    });
    const landscape = metrics.width > metrics.height;
    await progress.race(
      Emulation.setDeviceMetricsOverride({
        width: metrics.width,
        height: metrics.height,
        deviceScaleFactor: metrics.scale,
        mobile: true,
        screenWidth: metrics.width,
        screenHeight: metrics.height,
        screenOrientation: landscape ? { type: 'landscapePrimary', angle: 90 } : { type: 'portraitPrimary', angle: 0 },
      }),
    );
  }
  if (wanted.touch) {
    await progress.race(Emulation.setTouchEmulationEnabled({ enabled: true, maxTouchPoints: 5 }));
    progress.defer(() => Emulation.setTouchEmulationEnabled({ enabled: false }));
  }
  if (wanted.userAgent !== undefined || wanted.locale) {
    // The browser's languages (navigator.language, Accept-Language) ride the user agent override;
    // with a locale alone, the browser's own user agent is kept.
    const userAgent = wanted.userAgent ?? (await progress.race(Browser.getVersion())).userAgent;
    await progress.race(
      Emulation.setUserAgentOverride({
        userAgent,
        ...(wanted.locale ? { acceptLanguage: wanted.locale.languages.join(',') } : {}),
      }),
    );
    // An empty user agent ends the override.
    progress.defer(() => Emulation.setUserAgentOverride({ userAgent: '' }));
  }
  if (wanted.locale) {
    // Intl's default locale (dates, numbers) of the page; an empty override ends it.
    await progress.race(Emulation.setLocaleOverride({ locale: wanted.locale.locale }));
    progress.defer(() => Emulation.setLocaleOverride({}));
  }
  if (wanted.media) {
    await progress.race(Emulation.setEmulatedMedia(wanted.media));
    progress.defer(() => Emulation.setEmulatedMedia({ media: '', features: [] }));
  }
  if (wanted.timeZone !== undefined) {
    await progress.race(Emulation.setTimezoneOverride({ timezoneId: wanted.timeZone }));
    // An empty zone ends the override: the machine's zone again.
    progress.defer(() => Emulation.setTimezoneOverride({ timezoneId: '' }));
  }
  if (wanted.geolocation) {
    // The pool holds every permission of a warm context at "prompt" (pool.ts); geolocation is
    // granted for this render and put back to "prompt" by the undo, the hold of the others kept.
    const browserContextId = await progress.race(browserContextOf(session));
    const setGeolocation = (setting: 'granted' | 'prompt') =>
      Browser.setPermission({ permission: { name: 'geolocation' }, setting, browserContextId });
    await progress.race(Emulation.setGeolocationOverride(wanted.geolocation));
    progress.defer(() => Emulation.clearGeolocationOverride());
    progress.defer(() => setGeolocation('prompt'));
    await progress.race(setGeolocation('granted'));
  }
  return metrics;
}
