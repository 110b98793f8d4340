// Rules over several parameters, or over a value's meaning, that the table's types cannot say:
// each names every parameter it refuses, so a client fixes them all in one go.
import { parse as parseDomain } from 'tldts';
import { devices, presetOptions } from './devices.ts';
import {
  formatFacts,
  formatNamed,
  isImageFormat,
  maxImageSide,
  transparentOn,
  transparentTakeFormats,
} from './formats.ts';
import { MAX_CAPTURE_PIXELS } from './options.ts';
import { ASYNC_MAX_DELAY, ASYNC_MAX_TIMEOUT, SYNC_MAX_DELAY, SYNC_MAX_TIMEOUT } from './parameters.ts';
import { storageEndpointProblem, storagePathProblem } from './storage.ts';

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
const FORBIDDEN_HEADERS =
  /^(host|content-length|cookie|connection|proxy-.*|transfer-encoding|upgrade|keep-alive|te|trailer)$/i;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*)$/;

/** A `Name: value` line split in two, or null when it is not one. */
export function parseHeaderLine(line: string): { name: string; value: string } | null {
  const match = HEADER_LINE.exec(line);
  return match ? { name: match[1], value: match[2].trim() } : null;
}

/** The attributes of a Set-Cookie string this service honours, or null when it has no name=value. */
export function parseSetCookie(text: string): {
  name: string;
  value: string;
  domain?: string;
  path?: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  expires?: number;
} | null {
  const [pair, ...attributes] = text.split(';').map((part) => part.trim());
  const eq = pair.indexOf('=');
  if (eq <= 0) return null;
  const cookie: ReturnType<typeof parseSetCookie> & object = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    secure: false,
    httpOnly: false,
  };
  for (const attribute of attributes) {
    const [key, ...rest] = attribute.split('=');
    const value = rest.join('=').trim();
    switch (key.trim().toLowerCase()) {
      case 'domain':
        cookie.domain = value.replace(/^\./, '').toLowerCase();
        break;
      case 'path':
        cookie.path = value;
        break;
      case 'secure':
        cookie.secure = true;
        break;
      case 'httponly':
        cookie.httpOnly = true;
        break;
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
  return canonicalTimeZone(zone) !== undefined;
}

/**
 * The IANA name of `zone` as the browser takes it (`asia/tokyo` is `Asia/Tokyo`: the runtime
 * matches zones ignoring case, Chromium does not), or undefined for an unknown zone. An offset
 * (`+05:00`) is a time zone to the runtime but not to Chromium, which refuses it mid-render:
 * unknown here (`Etc/GMT-5` names the same offset).
 */
export function canonicalTimeZone(zone: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return /^[+-]/.test(resolved) ? undefined : resolved;
}

/**
 * A domain no site may set a cookie for (`co.uk`, `github.io`): a rule of the Public Suffix List,
 * its private part included, as Chromium reads it for cookies. A name the list does not know
 * (`localhost`) is not one.
 */
function isPublicSuffix(domain: string): boolean {
  const parsed = parseDomain(domain, { allowPrivateDomains: true });
  return parsed.publicSuffix === domain && (parsed.isIcann === true || parsed.isPrivate === true);
}

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
 * Options that refine another one mean nothing without it (docs/options.md): each of `needs` is the
 * option, what it needs, and whether that is given.
 */
function unmet(values: Values, needs: [name: string, what: string, met: boolean][]): Refusal[] {
  return needs
    .filter(([name, , met]) => given(values, name) && values[name] !== false && !met)
    .map(([parameter, what]) => ({ parameter, message: `needs ${what}` }));
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
    given(values, 'time_zone') && !knownTimeZone(String(values.time_zone))
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

// The rules over a screenshot's capture and output.
const captureRules: Rule[] = [
  // A delay that takes the whole timeout given with it could only end in timeout_error (without
  // one, the timeout leaves room for the delay: src/http/params.ts); an animation has a longer
  // default timeout, and rules of its own (src/domain/animation.ts).
  (values) => {
    if (!given(values, 'timeout')) return [];
    const delay = Number(values.delay ?? 0);
    const timeout = Number(values.timeout);
    const overSyncLimit = values.async !== true && delay > SYNC_MAX_DELAY;
    return delay > 0 && delay >= timeout && !overSyncLimit
      ? [{ parameter: 'delay', message: `must be less than timeout (${timeout} s): give a longer timeout with it` }]
      : [];
  },
  (values) => {
    const clip = ['clip_x', 'clip_y', 'clip_width', 'clip_height'];
    const set = clip.filter((name) => given(values, name));
    if (set.length === 0) return [];
    if (set.length < clip.length)
      return clip
        .filter((name) => !set.includes(name))
        .map((parameter) => ({
          parameter,
          message: 'is required: give all four of clip_x, clip_y, clip_width and clip_height',
        }));
    return ['selector', 'full_page']
      .filter((name) => values[name] !== undefined && values[name] !== false)
      .map((name) => ({ parameter: 'clip_x', message: `not with ${name}` }));
  },
  (values) =>
    values.omit_background === true && !transparentOn('take', String(values.format ?? 'png'))
      ? [
          {
            parameter: 'omit_background',
            message: `needs a format with transparency: ${transparentTakeFormats.join(' or ')}`,
          },
        ]
      : [],
  // A PDF, HTML or Markdown is the whole document: no rectangle to cut, no image to scale.
  (values) => {
    const format = String(values.format ?? 'png');
    if (isImageFormat(format)) return [];
    const imageOnly = [
      'selector',
      'clip_x',
      'clip_y',
      'clip_width',
      'clip_height',
      'image_width',
      'image_height',
      'image_quality',
      'metadata_image_size',
      'mask_selectors',
      'mask_color',
    ];
    return imageOnly
      .filter((name) => given(values, name) && values[name] !== false)
      .map((parameter) => ({ parameter, message: `not with format=${format}: it needs an image format` }));
  },
  (values) =>
    unmet(values, [
      ['full_page_algorithm', 'full_page=true', values.full_page === true],
      ['full_page_slices', 'full_page=true', values.full_page === true],
      ['full_page_scroll', 'full_page=true', values.full_page === true],
      [
        'full_page_scroll_delay',
        'full_page=true and full_page_scroll not false',
        values.full_page === true && values.full_page_scroll !== false,
      ],
      [
        'full_page_scroll_by',
        'full_page=true and full_page_scroll not false',
        values.full_page === true && values.full_page_scroll !== false,
      ],
      ['selector_algorithm', 'selector', given(values, 'selector')],
      ['selector_scroll_into_view', 'selector', given(values, 'selector')],
      ['full_page_slice_height', 'full_page_slices=true', values.full_page_slices === true],
      ['full_page_slice_overlap_height', 'full_page_slices=true', values.full_page_slices === true],
    ]),
  (values) => {
    const format = String(values.format ?? 'png');
    const image = isImageFormat(format);
    return ['full_page_slices', 'vision_prompt']
      .filter((name) => given(values, name) && values[name] !== false && !image)
      .map((parameter) => ({ parameter, message: `not with format=${format}: it needs an image format` }));
  },
  // The page kept beside a picture or a print of it: a document format is the page already.
  (values) => {
    const format = String(values.format ?? 'png');
    const named = formatNamed(format);
    const pictured = named !== undefined && ['image', 'document'].includes(formatFacts(named).kind);
    return given(values, 'save_formats') && !pictured
      ? [{ parameter: 'save_formats', message: `not with format=${format}: it needs an image format or pdf` }]
      : [];
  },
  (values) =>
    unmet(values, [
      ['mask_color', 'mask_selectors', given(values, 'mask_selectors')],
      ['save_profile', 'url (a page with an origin)', given(values, 'url')],
    ]),
  (values) => {
    if (values.full_page_slices !== true) return [];
    const height = Number(values.full_page_slice_height ?? 4000);
    const overlap = Number(values.full_page_slice_overlap_height ?? 0);
    return height - overlap < 100
      ? [
          {
            parameter: 'full_page_slice_overlap_height',
            message: 'full_page_slice_height minus full_page_slice_overlap_height must be at least 100',
          },
        ]
      : [];
  },
  // A custom paper: both sides, and not beside a named paper or a page cut to the document.
  (values) => {
    const sides = ['pdf_width', 'pdf_height'].filter((name) => given(values, name));
    if (sides.length === 0) return [];
    if (sides.length === 1)
      return [
        {
          parameter: sides[0] === 'pdf_width' ? 'pdf_height' : 'pdf_width',
          message: 'is required: give both pdf_width and pdf_height',
        },
      ];
    const sizes = sides
      .filter((name) => {
        const inches = inchesOf(String(values[name]));
        return inches <= 0 || inches > MAX_PAPER_INCHES;
      })
      .map((name) => ({ parameter: name, message: `must be more than 0 and at most ${MAX_PAPER_INCHES}in` }));
    return [
      ...sizes,
      ...['pdf_paper_format', 'pdf_fit_one_page']
        .filter((name) => given(values, name) && values[name] !== false)
        .map((name) => ({ parameter: 'pdf_width', message: `not with ${name}` })),
    ];
  },
  // Pages count from 1 and a range runs forwards: known before the page is loaded, unlike a page past the end.
  (values) => {
    if (!given(values, 'pdf_page_ranges')) return [];
    const wrong = String(values.pdf_page_ranges)
      .replace(/\s+/g, '')
      .split(',')
      .find((range) => {
        const [first, last = first] = range.split('-').map(Number);
        return first < 1 || last < first;
      });
    return wrong === undefined
      ? []
      : [
          {
            parameter: 'pdf_page_ranges',
            message: `"${wrong}": pages count from 1 and a range runs from first to last`,
          },
        ];
  },
  (values) =>
    given(values, 'pdf_page_ranges') && values.pdf_fit_one_page === true
      ? [{ parameter: 'pdf_page_ranges', message: 'not with pdf_fit_one_page (one page)' }]
      : [],
  (values) =>
    (['pdf_header', 'pdf_footer'] as const).flatMap((name) => {
      const reference = given(values, name) ? fetchedByTemplate(String(values[name])) : undefined;
      return reference === undefined
        ? []
        : [
            {
              parameter: name,
              message: `"${reference.slice(0, 60)}": a template's images, styles and fonts must be inline (data: URLs); nothing is fetched for a template`,
            },
          ];
    }),
  // The document operations make a PDF's file (docs/capture.md, "PDF for archives and documents").
  (values) => {
    const format = String(values.format ?? 'png');
    if (format === 'pdf') return [];
    return pdfDocumentOptions
      .filter((name) => given(values, name) && values[name] !== false)
      .map((parameter) => ({ parameter, message: `only with format=pdf (it is set on the PDF file)` }));
  },
  (values) =>
    unmet(values, [
      ['pdf_watermark_opacity', 'pdf_watermark', given(values, 'pdf_watermark')],
      ['pdf_watermark_layer', 'pdf_watermark', given(values, 'pdf_watermark')],
    ]),
  // PDF/A forbids encryption; and its converter, Ghostscript, does not keep a tagged PDF's structure.
  (values) => {
    if (!given(values, 'pdf_archive')) return [];
    return [
      ...['pdf_password', 'pdf_owner_password', 'pdf_permissions']
        .filter((name) => given(values, name))
        .map((parameter) => ({ parameter, message: 'not with pdf_archive: PDF/A forbids encryption' })),
      ...(values.pdf_accessible === true
        ? [
            {
              parameter: 'pdf_accessible',
              message:
                'not with pdf_archive: the PDF/A conversion does not keep the tags (a-1b, a-2b, a-3b are not tagged)',
            },
          ]
        : []),
    ];
  },
];

/** The options that act on the PDF file rather than on the print (src/render/pdf-finish.ts). */
export const pdfDocumentOptions = [
  'pdf_archive',
  'pdf_accessible',
  'pdf_title',
  'pdf_author',
  'pdf_subject',
  'pdf_keywords',
  'pdf_watermark',
  'pdf_watermark_opacity',
  'pdf_watermark_layer',
  'pdf_password',
  'pdf_owner_password',
  'pdf_permissions',
] as const;

// A PDF page is at most 14,400 units (200 in) a side; past a few hundred inches Chromium's print fails.
const MAX_PAPER_INCHES = 200;
const INCHES_PER_UNIT: Record<string, number> = { px: 1 / 96, in: 1, cm: 1 / 2.54, mm: 1 / 25.4 };

/** A CSS length of the parameter table (`0`, or a number in px, in, cm or mm) in inches. */
function inchesOf(length: string): number {
  const match = /^([\d.]+)(px|in|cm|mm)?$/i.exec(length);
  return match ? Number(match[1]) * (INCHES_PER_UNIT[match[2]?.toLowerCase() ?? 'px'] ?? 0) : 0;
}

const BYPASS_HOST = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/i;

/** The customer's proxy URL, split; null when it is not `http(s)://[user:password@]host[:port]`. */
export function parseProxyUrl(text: string): { url: URL; username: string; password: string } | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.hostname === '' ||
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== ''
  )
    return null;
  return { url, username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

function proxyRefusals(text: string): Refusal[] {
  return parseProxyUrl(text)
    ? []
    : [{ parameter: 'proxy', message: 'must be http://[user:password@]host:port or https://…, with no path' }];
}

/**
 * The locale an Accept-Language value asks for first (`de-DE,de;q=0.9` → `de-DE`), and every tag
 * of it in order of preference; undefined when it names none.
 */
export function localeOf(acceptLanguage: string): { locale: string; languages: string[] } | undefined {
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)).find(Boolean);
      return { tag: tag.trim(), q: q ? Number(q[1]) : 1, index };
    })
    .filter(({ tag, q }) => tag !== '' && tag !== '*' && q > 0);
  const languages: string[] = [];
  for (const { tag } of ranked.sort((a, b) => b.q - a.q || a.index - b.index)) {
    try {
      languages.push(Intl.getCanonicalLocales(tag)[0]);
    } catch {
      return undefined;
    }
  }
  return languages.length > 0 ? { locale: languages[0], languages } : undefined;
}

/**
 * The first thing a header or footer template refers to outside itself (an element's src, srcset,
 * poster, data or href, a CSS url() or @import), or undefined; data: URLs and #fragments are
 * inside, and a link's href is never fetched. Chromium loads nothing for a template: an image
 * stays empty and a stylesheet or font fails the print, so such a template is refused up front.
 */
export function fetchedByTemplate(template: string): string | undefined {
  if (/@import\b/i.test(template)) return '@import';
  const outside = (value: string) => value.trim() !== '' && !/^(data:|#)/i.test(value.trim());
  for (const [, tag, attributes] of template.matchAll(/<([a-z][\w:-]*)\b([^>]*)>/gi)) {
    for (const [, name, ...values] of attributes.matchAll(/([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
      const attribute = name.toLowerCase();
      if (
        !/^(src|srcset|poster|data|href|xlink:href)$/.test(attribute) ||
        (attribute === 'href' && tag.toLowerCase() === 'a')
      )
        continue;
      const value = values.find((part) => part !== undefined) ?? '';
      if (outside(value)) return value;
    }
  }
  for (const [, ...values] of template.matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\)/gi)) {
    const value = values.find((part) => part !== undefined) ?? '';
    if (outside(value)) return value;
  }
  return undefined;
}

/** Every refusal the rules find in parsed values. */
export function refusals(values: Values): Refusal[] {
  return [...pageRules, ...captureRules].flatMap((rule) => rule(values));
}
