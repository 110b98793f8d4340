// The rules over the page a render loads and the request it is loaded with, shared by /api/take
// and /api/animate: each names every parameter it refuses, so a client fixes them all in one go.
import { devices, presetOptions } from './devices.ts';
import { maxImageSide } from './formats.ts';
import { canonicalTimeZone, localeOf } from './locale.ts';
import { MAX_CAPTURE_PIXELS } from './options.ts';
import { FORBIDDEN_HEADERS, isPublicSuffix, parseHeaderLine, parseSetCookie } from './page-request.ts';
import { ASYNC_MAX_DELAY, ASYNC_MAX_TIMEOUT, SYNC_MAX_DELAY, SYNC_MAX_TIMEOUT } from './parameters.ts';
import { BYPASS_HOST, parseProxyUrl } from './proxy-url.ts';
import { given, type Refusal, type Rule, unmet, type Values } from './refusal.ts';
import { storageEndpointProblem, storagePathProblem } from './storage.ts';

const hostOf = (url: unknown) => {
  try {
    return new URL(String(url)).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/** The viewport a request renders in: the options given, over its device preset's, over the defaults. */
function viewportOf(values: Values): { width: number; height: number; scale: number } {
  const device = given(values, 'viewport_device') ? devices.find(String(values.viewport_device)) : undefined;
  const preset = device ? presetOptions(String(values.viewport_device)) : undefined;
  return {
    width: Number(values.viewport_width ?? preset?.viewport_width ?? 1280),
    height: Number(values.viewport_height ?? preset?.viewport_height ?? 720),
    scale: Number(values.device_scale_factor ?? preset?.device_scale_factor ?? 1),
  };
}
/**
 * The rules over the page, the request to it, its traffic (proxy, Accept-Language) and where its
 * file goes (the customer's bucket): shared by /api/take and /api/animate.
 */
export const pageRules: Rule[] = [
  // Exactly one page to render.
  (values) => {
    const pages = ['url', 'html', 'markdown'].filter((name) => given(values, name));
    if (pages.length === 1) return [];
    if (pages.length === 0) return [{ parameter: 'url', message: 'is required (or html, or markdown)' }];
    return pages
      .slice(1)
      .map((parameter) => ({ parameter, message: `not with ${pages[0]}: give exactly one of url, html and markdown` }));
  },
  (values) =>
    given(values, 'viewport_device') && devices.find(String(values.viewport_device)) === undefined
      ? [{ parameter: 'viewport_device', message: 'is not a known device (e.g. iphone_13, pixel_7, ipad_mini)' }]
      : [],
  (values) => {
    const { width, height, scale } = viewportOf(values);
    if (width * height * scale * scale <= 3840 * 2160 * 4) return [];
    // The scale (or size) may come from the device preset: then the preset is what to name.
    const parameter = given(values, 'device_scale_factor') ? 'device_scale_factor' : 'viewport_device';
    return [
      {
        parameter,
        message: `makes the image too large: width × height × scale² (${width} × ${height} × ${scale}²) must be at most 3840 × 2160 × 4`,
      },
    ];
  },
  // A clip's rectangle is an image of its own size: within the capture budget (docs/browser.md).
  (values) => {
    const { scale } = viewportOf(values);
    const area = Number(values.clip_width ?? 0) * Number(values.clip_height ?? 0) * scale * scale;
    return area > MAX_CAPTURE_PIXELS
      ? [
          {
            parameter: 'clip_height',
            message: 'makes the image too large: clip_width × clip_height × scale² must be at most 3840 × 16384',
          },
        ]
      : [];
  },
  // And within the format's own longest side (WebP's 16383 px), at the scale the page renders at:
  // a device preset's included.
  (values) => {
    const { scale } = viewportOf(values);
    const side = maxImageSide(String(values.format ?? 'png'));
    return ['clip_width', 'clip_height']
      .filter((name) => Number(values[name] ?? 0) * scale > side)
      .map((parameter) => ({
        parameter,
        message: `makes the image too large for format=${values.format}: each side × scale must be at most ${side} px`,
      }));
  },
  (values) =>
    given(values, 'time_zone') && canonicalTimeZone(String(values.time_zone)) === undefined
      ? [{ parameter: 'time_zone', message: 'is not a known IANA time zone (e.g. Europe/Paris)' }]
      : [],
  (values) => {
    const latitude = given(values, 'geolocation_latitude');
    const longitude = given(values, 'geolocation_longitude');
    if (latitude && !longitude)
      return [{ parameter: 'geolocation_longitude', message: 'is required with geolocation_latitude' }];
    if (longitude && !latitude)
      return [{ parameter: 'geolocation_latitude', message: 'is required with geolocation_longitude' }];
    if (given(values, 'geolocation_accuracy') && !latitude)
      return [{ parameter: 'geolocation_accuracy', message: 'needs geolocation_latitude and geolocation_longitude' }];
    return [];
  },
  (values) =>
    ((values.headers as string[] | undefined) ?? []).flatMap((line): Refusal[] => {
      const header = parseHeaderLine(line);
      if (!header) return [{ parameter: 'headers', message: `"${line.slice(0, 60)}" is not a "Name: value" line` }];
      if (FORBIDDEN_HEADERS.test(header.name))
        return [
          {
            parameter: 'headers',
            message: `${header.name} cannot be set (the browser owns it; use cookies for cookies)`,
          },
        ];
      if (/^authorization$/i.test(header.name) && given(values, 'authorization'))
        return [{ parameter: 'headers', message: 'Authorization is given twice: use the authorization parameter' }];
      return [];
    }),
  (values) => {
    const needsUrl = ['headers', 'authorization', 'cookies'].filter(
      (name) => given(values, name) && (!Array.isArray(values[name]) || (values[name] as unknown[]).length > 0),
    );
    return given(values, 'url')
      ? []
      : needsUrl.map((parameter) => ({ parameter, message: "goes to the target URL's origin: it needs url" }));
  },
  (values) => {
    const host = hostOf(values.url);
    return ((values.cookies as string[] | undefined) ?? []).flatMap((text): Refusal[] => {
      const cookie = parseSetCookie(text);
      if (!cookie)
        return [
          {
            parameter: 'cookies',
            message: `"${text.slice(0, 60)}" is not a Set-Cookie string (name=value; attributes)`,
          },
        ];
      if (cookie.domain && host && host !== cookie.domain && !host.endsWith(`.${cookie.domain}`)) {
        return [
          { parameter: 'cookies', message: `${cookie.name}: Domain ${cookie.domain} is not ${host} or a parent of it` },
        ];
      }
      if (cookie.domain && host !== cookie.domain && isPublicSuffix(cookie.domain)) {
        return [
          {
            parameter: 'cookies',
            message: `${cookie.name}: Domain ${cookie.domain} is a public suffix, which browsers refuse; leave Domain out for the page's own host`,
          },
        ];
      }
      return [];
    });
  },
  (values) =>
    Number(values.navigation_timeout ?? 0) > Number(values.timeout ?? 30)
      ? [{ parameter: 'navigation_timeout', message: 'must not be more than timeout' }]
      : [],
  // A caller waiting on the connection gets the shorter limits; an asynchronous render the longer ones.
  (values) => {
    if (values.async === true) return [];
    const over: Refusal[] = [];
    if (Number(values.timeout ?? 0) > SYNC_MAX_TIMEOUT)
      over.push({
        parameter: 'timeout',
        message: `must be at most ${SYNC_MAX_TIMEOUT} for a synchronous render (up to ${ASYNC_MAX_TIMEOUT} with async=true)`,
      });
    if (Number(values.delay ?? 0) > SYNC_MAX_DELAY)
      over.push({
        parameter: 'delay',
        message: `must be at most ${SYNC_MAX_DELAY} for a synchronous render (up to ${ASYNC_MAX_DELAY} with async=true)`,
      });
    return over;
  },
  (values) =>
    unmet(values, [
      ['proxy_bypass_hosts', 'proxy or ip_country_code', given(values, 'proxy') || given(values, 'ip_country_code')],
      ['metadata_content_format', 'metadata_content=true', values.metadata_content === true],
      // An html or markdown document has no HTTP response of its own to report.
      ['metadata_http_response_status_code', 'url', given(values, 'url')],
      ['metadata_http_response_headers', 'url', given(values, 'url')],
    ]),
  // A request with cache=false is not cached: a cache key or lifetime for it would mean nothing.
  (values) =>
    values.cache === false
      ? ['cache_key', 'cache_ttl']
          .filter((name) => given(values, name))
          .map((parameter) => ({ parameter, message: 'not with cache=false' }))
      : [],
  (values) => (given(values, 'proxy') ? proxyRefusals(String(values.proxy)) : []),
  (values) =>
    given(values, 'proxy') && given(values, 'ip_country_code')
      ? [{ parameter: 'ip_country_code', message: 'not with proxy: give one of them' }]
      : [],
  (values) =>
    ((values.proxy_bypass_hosts as string[] | undefined) ?? [])
      .filter((host) => !BYPASS_HOST.test(host))
      .map((host) => ({
        parameter: 'proxy_bypass_hosts',
        message: `"${host.slice(0, 60)}" is not a host name (example.com, or *.example.com)`,
      })),
  // An Accept-Language header also sets the page's locale (docs/options.md), so it must name one.
  (values) => {
    const line = ((values.headers as string[] | undefined) ?? [])
      .map(parseHeaderLine)
      .find((header) => header?.name.toLowerCase() === 'accept-language');
    if (!line || localeOf(line.value) !== undefined) return [];
    return [
      {
        parameter: 'headers',
        message: `Accept-Language: "${line.value.slice(0, 60)}" names no language tag (e.g. de-DE,de;q=0.9)`,
      },
    ];
  },
  // An option that refines another does nothing without it: refused, not ignored.
  (values) =>
    unmet(values, [
      ['scripts_wait_until', 'scripts', given(values, 'scripts')],
      ['wait_for_selector_algorithm', 'wait_for_selector', given(values, 'wait_for_selector')],
      ['scroll_into_view_adjust_top', 'scroll_into_view', given(values, 'scroll_into_view')],
      ['fail_if_gpu_rendering_fails', 'request_gpu_rendering=true', values.request_gpu_rendering === true],
    ]),
  // The customer's bucket (docs/storage.md): store=true needs a path, and a path needs store=true;
  // the other storage_* are ignored without it, as ScreenshotOne does (a client may send its bucket
  // settings with every request).
  (values) => {
    if (values.store !== true)
      return given(values, 'storage_path') ? [{ parameter: 'storage_path', message: 'needs store=true' }] : [];
    if (!given(values, 'storage_path')) return [{ parameter: 'storage_path', message: 'is required with store=true' }];
    const problem = storagePathProblem(String(values.storage_path));
    const refused: Refusal[] = problem ? [{ parameter: 'storage_path', message: problem }] : [];
    const endpoint = given(values, 'storage_endpoint')
      ? storageEndpointProblem(String(values.storage_endpoint))
      : undefined;
    if (endpoint) refused.push({ parameter: 'storage_endpoint', message: endpoint });
    const keys = ['storage_access_key_id', 'storage_secret_access_key'];
    const keysGiven = keys.filter((name) => given(values, name));
    if (keysGiven.length === 1)
      refused.push({
        parameter: keys.find((name) => !keysGiven.includes(name))!,
        message: `is required with ${keysGiven[0]}: give both keys or neither`,
      });
    return refused;
  },
];

function proxyRefusals(text: string): Refusal[] {
  return parseProxyUrl(text)
    ? []
    : [{ parameter: 'proxy', message: 'must be http://[user:password@]host:port or https://…, with no path' }];
}
