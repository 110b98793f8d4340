// Rules over several parameters, or over a value's meaning, that the table's types cannot say:
// each names every parameter it refuses, so a client fixes them all in one go.
import { devices } from './devices.ts';
import { imageFormats } from './options.ts';

/** One refused parameter, as `error_details` lists it. */
export interface Refusal {
  parameter: string;
  message: string;
}

type Values = Record<string, unknown>;
/** A rule over parsed values: the parameters it refuses. */
export type Rule = (values: Values) => Refusal[];

/** True when the request gave `name`. */
export const given = (values: Values, name: string) => values[name] !== undefined;

/** Headers a caller may not set: the browser and the egress proxy own them. */
const FORBIDDEN_HEADERS = /^(host|content-length|cookie|connection|proxy-.*|transfer-encoding|upgrade|keep-alive|te|trailer)$/i;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*)$/;

/** A `Name: value` line split in two, or null when it is not one. */
export function parseHeaderLine(line: string): { name: string; value: string } | null {
  const match = HEADER_LINE.exec(line);
  return match ? { name: match[1], value: match[2].trim() } : null;
}

/** The attributes of a Set-Cookie string this service honours, or null when it has no name=value. */
export function parseSetCookie(text: string): { name: string; value: string; domain?: string; path?: string; secure: boolean; httpOnly: boolean; sameSite?: 'Strict' | 'Lax' | 'None'; expires?: number } | null {
  const [pair, ...attributes] = text.split(';').map((part) => part.trim());
  const eq = pair.indexOf('=');
  if (eq <= 0) return null;
  const cookie: ReturnType<typeof parseSetCookie> & object = { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), secure: false, httpOnly: false };
  for (const attribute of attributes) {
    const [key, ...rest] = attribute.split('=');
    const value = rest.join('=').trim();
    switch (key.trim().toLowerCase()) {
      case 'domain': cookie.domain = value.replace(/^\./, '').toLowerCase(); break;
      case 'path': cookie.path = value; break;
      case 'secure': cookie.secure = true; break;
      case 'httponly': cookie.httpOnly = true; break;
      case 'samesite': {
        const same = value.toLowerCase();
        cookie.sameSite = same === 'strict' ? 'Strict' : same === 'none' ? 'None' : 'Lax';
        break;
      }
      case 'expires': {
        const at = Date.parse(value);
        if (Number.isFinite(at)) cookie.expires = Math.floor(at / 1000);
        break;
      }
      case 'max-age': {
        const seconds = Number(value);
        if (Number.isFinite(seconds)) cookie.expires = Math.floor(Date.now() / 1000 + seconds);
        break;
      }
    }
  }
  return cookie;
}

/** True when `zone` is an IANA time zone this runtime knows. */
function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const hostOf = (url: unknown) => {
  try {
    return new URL(String(url)).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/** The rules over the page and the request to it: shared by /api/take and /api/animate. */
export const pageRules: Rule[] = [
  // Exactly one page to render.
  (values) => {
    const pages = ['url', 'html', 'markdown'].filter((name) => given(values, name));
    if (pages.length === 1) return [];
    if (pages.length === 0) return [{ parameter: 'url', message: 'is required (or html, or markdown)' }];
    return pages.slice(1).map((parameter) => ({ parameter, message: `not with ${pages[0]}: give exactly one of url, html and markdown` }));
  },
  (values) => (given(values, 'viewport_device') && devices.find(String(values.viewport_device)) === undefined
    ? [{ parameter: 'viewport_device', message: 'is not a known device (e.g. iphone_13, pixel_7, ipad_mini)' }]
    : []),
  (values) => {
    const width = Number(values.viewport_width ?? 1280);
    const height = Number(values.viewport_height ?? 720);
    const scale = Number(values.device_scale_factor ?? 1);
    return width * height * scale * scale > 3840 * 2160 * 4
      ? [{ parameter: 'device_scale_factor', message: 'makes the image too large: width × height × scale² must be at most 3840 × 2160 × 4' }]
      : [];
  },
  (values) => (given(values, 'time_zone') && !knownTimeZone(String(values.time_zone)) ? [{ parameter: 'time_zone', message: 'is not a known IANA time zone (e.g. Europe/Paris)' }] : []),
  (values) => {
    const latitude = given(values, 'geolocation_latitude');
    const longitude = given(values, 'geolocation_longitude');
    if (latitude && !longitude) return [{ parameter: 'geolocation_longitude', message: 'is required with geolocation_latitude' }];
    if (longitude && !latitude) return [{ parameter: 'geolocation_latitude', message: 'is required with geolocation_longitude' }];
    if (given(values, 'geolocation_accuracy') && !latitude) return [{ parameter: 'geolocation_accuracy', message: 'needs geolocation_latitude and geolocation_longitude' }];
    return [];
  },
  (values) => ((values.headers as string[] | undefined) ?? []).flatMap((line): Refusal[] => {
    const header = parseHeaderLine(line);
    if (!header) return [{ parameter: 'headers', message: `"${line.slice(0, 60)}" is not a "Name: value" line` }];
    if (FORBIDDEN_HEADERS.test(header.name)) return [{ parameter: 'headers', message: `${header.name} cannot be set (the browser owns it; use cookies for cookies)` }];
    if (/^authorization$/i.test(header.name) && given(values, 'authorization')) return [{ parameter: 'headers', message: 'Authorization is given twice: use the authorization parameter' }];
    return [];
  }),
  (values) => {
    const needsUrl = ['headers', 'authorization', 'cookies'].filter((name) => given(values, name) && (!Array.isArray(values[name]) || (values[name] as unknown[]).length > 0));
    return given(values, 'url') ? [] : needsUrl.map((parameter) => ({ parameter, message: 'goes to the target URL\'s origin: it needs url' }));
  },
  (values) => {
    const host = hostOf(values.url);
    return ((values.cookies as string[] | undefined) ?? []).flatMap((text): Refusal[] => {
      const cookie = parseSetCookie(text);
      if (!cookie) return [{ parameter: 'cookies', message: `"${text.slice(0, 60)}" is not a Set-Cookie string (name=value; attributes)` }];
      if (cookie.domain && host && host !== cookie.domain && !host.endsWith(`.${cookie.domain}`)) {
        return [{ parameter: 'cookies', message: `${cookie.name}: Domain ${cookie.domain} is not ${host} or a parent of it` }];
      }
      return [];
    });
  },
  (values) => (Number(values.navigation_timeout ?? 0) > Number(values.timeout ?? 30) ? [{ parameter: 'navigation_timeout', message: 'must not be more than timeout' }] : []),
];

// The rules over a screenshot's capture and output.
const captureRules: Rule[] = [
  (values) => {
    const clip = ['clip_x', 'clip_y', 'clip_width', 'clip_height'];
    const set = clip.filter((name) => given(values, name));
    if (set.length === 0) return [];
    if (set.length < clip.length) return clip.filter((name) => !set.includes(name)).map((parameter) => ({ parameter, message: 'is required: give all four of clip_x, clip_y, clip_width and clip_height' }));
    return ['selector', 'full_page'].filter((name) => values[name] !== undefined && values[name] !== false).map((name) => ({ parameter: 'clip_x', message: `not with ${name}` }));
  },
  (values) => (values.omit_background === true && !['png', 'webp', undefined].includes(values.format as string | undefined) ? [{ parameter: 'omit_background', message: 'needs a format with transparency: png or webp' }] : []),
  // A PDF, HTML or Markdown is the whole document: no rectangle to cut, no image to scale.
  (values) => {
    const format = String(values.format ?? 'png');
    if (format === 'jpg' || imageFormats.includes(format as never)) return [];
    const imageOnly = ['selector', 'clip_x', 'clip_y', 'clip_width', 'clip_height', 'image_width', 'image_height', 'metadata_image_size'];
    return imageOnly.filter((name) => given(values, name) && values[name] !== false).map((parameter) => ({ parameter, message: `not with format=${format}: it needs an image format` }));
  },
  (values) => (values.format === 'pdf' ? [] : Object.keys(values).filter((name) => name.startsWith('pdf_')).map((parameter) => ({ parameter, message: 'needs format=pdf' }))),
];

/** Every refusal the rules find in parsed values. */
export function refusals(values: Values): Refusal[] {
  return [...pageRules, ...captureRules].flatMap((rule) => rule(values));
}
