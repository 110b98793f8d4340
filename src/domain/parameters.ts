// Every /api/take parameter in one declarative table: the parser, the defaults, the validation
// messages, the API reference and the options' TypeScript types are all derived from it.
import { savedFormats, takeFormatNames } from './formats.ts';
import { PROFILE_NAME_PATTERN, PROFILE_NAME_TEXT } from './profile.ts';

/**
 * A text value: non-empty, at most `maxLength` characters (bytes of UTF-8 with `inBytes`: a size
 * in KiB), matching `pattern` when there is one.
 */
export interface TextType {
  kind: 'string';
  maxLength: number;
  inBytes?: true;
  pattern?: RegExp;
  patternText?: string;
}

/** One of `values`. */
export interface EnumType<Value extends string = string> {
  kind: 'enum';
  values: readonly Value[];
}

/** What one value of a parameter is. */
export type ValueType =
  | TextType
  | { kind: 'boolean' }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  | EnumType;

/** A list of values (repeated keys in a GET, a JSON array in a POST). */
export interface ListType<Item extends ValueType = ValueType> {
  kind: 'list';
  item: Item;
  maxItems: number;
}

/** What values a parameter takes: one value, or a list. */
export type ParameterType = ValueType | ListType;

/** Where a parameter belongs in the API reference. */
export type ParameterGroup =
  | 'target'
  | 'access'
  | 'viewport'
  | 'emulation'
  | 'request'
  | 'wait'
  | 'page'
  | 'blocking'
  | 'capture'
  | 'output'
  | 'pdf'
  | 'metadata'
  | 'failure'
  | 'cache'
  | 'async'
  | 'proxy'
  | 'vision'
  | 'storage'
  | 'animation';

/** One row of the table. */
export interface Parameter {
  name: string;
  type: ParameterType;
  group: ParameterGroup;
  /** One line for the API reference. */
  description: string;
  /** The value when the parameter is absent (for a render option: what the render uses). */
  default?: string | number | boolean | readonly string[];
  /** Words for a default that depends on other parameters ("viewport height", "true with full_page"). */
  defaultText?: string;
  /** A render option (what to render) or how the request is handled and answered. */
  role: 'option' | 'control';
  /** Only in a GET query (e.g. `signature`, which a POST sends in a header). */
  only?: 'GET';
}

const text = (maxLength: number, pattern?: RegExp, patternText?: string): TextType => ({
  kind: 'string',
  maxLength,
  pattern,
  patternText,
});
/** The longest attachment_name: a file URL takes the same in its query (src/http/files.ts). */
export const MAX_ATTACHMENT_NAME = 200;

/** Text whose limit is a size: at most `maxBytes` bytes of UTF-8. */
const sized = (maxBytes: number): TextType => ({ kind: 'string', maxLength: maxBytes, inBytes: true });
const flag = { kind: 'boolean' } as const;
const integer = (min: number, max: number) => ({ kind: 'integer', min, max }) as const;
const number = (min: number, max: number) => ({ kind: 'number', min, max }) as const;
const oneOf = <Value extends string>(...values: Value[]): EnumType<Value> => ({ kind: 'enum', values });
const listOf = <Item extends ValueType>(item: Item, maxItems = 50): ListType<Item> => ({
  kind: 'list',
  item,
  maxItems,
});
// What goes into an HTTP header (or a cookie) is refused with control characters in it: CR and LF would
// split the header, NUL and the rest are refused by the browser mid-render.
const headerText = (maxLength: number) =>
  text(maxLength, /^[^\x00-\x1f\x7f]*$/, 'free of control characters (CR, LF, NUL, tab, other C0 characters or DEL)');
// Units in either case, as CSS takes them (10MM); spelled out so the OpenAPI pattern says the same.
const cssLength = text(
  32,
  /^(0|\d{1,4}(\.\d{1,3})?([pP][xX]|[iI][nN]|[cC][mM]|[mM][mM]))$/,
  'a CSS length in px, in, cm or mm (e.g. 10mm)',
);

/** A PDF's metadata text (title, author, subject, keywords). */
const pdfInfo = text(
  1000,
  /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/,
  'free of control characters other than tab and line breaks',
);
/** A PDF password: AES-256 takes at most 127 bytes of UTF-8; one line, as the encrypting tool reads it. */
const pdfPassword: TextType = {
  kind: 'string',
  maxLength: 127,
  inBytes: true,
  pattern: /^[^\x00-\x1f\x7f]*$/,
  patternText: 'free of control characters',
};

/** The longest `timeout` and `delay` of a synchronous render, and of an asynchronous one (ScreenshotOne's limits). */
export const SYNC_MAX_TIMEOUT = 90;
export const ASYNC_MAX_TIMEOUT = 600;
export const SYNC_MAX_DELAY = 30;
export const ASYNC_MAX_DELAY = 300;

/** The rows, in the order the API reference lists them; `as const` keeps each row's literal types for the options' types. */
const rows = [
  {
    name: 'url',
    type: text(8192),
    group: 'target',
    role: 'option',
    description: 'The page to capture: an absolute http or https URL. Exactly one of url, html and markdown.',
  },
  {
    name: 'html',
    type: text(1_000_000),
    group: 'target',
    role: 'option',
    description: 'An HTML document to render instead of a URL; its sub-resources obey the address rules of url.',
  },
  {
    name: 'markdown',
    type: text(1_000_000),
    group: 'target',
    role: 'option',
    description: 'A Markdown document, rendered as a plain HTML page, then like html.',
  },
  {
    name: 'access_key',
    type: text(256),
    group: 'access',
    role: 'control',
    description: 'The access key, when not sent in the X-Access-Key header.',
  },
  {
    name: 'signature',
    type: text(256),
    group: 'access',
    role: 'control',
    only: 'GET',
    description:
      'Lowercase hex HMAC-SHA256 of the query string before it, keyed with the secret key; must be the last parameter.',
  },

  {
    name: 'viewport_device',
    type: text(100),
    group: 'viewport',
    role: 'option',
    description:
      "A device preset (GET /api/devices lists them: every id of ScreenshotOne's list, Playwright's names), matched ignoring case, spaces, _, - and parentheses (iphone_13 is iPhone 13, ipad_gen_7 is iPad (gen 7)): viewport, scale, mobile, touch and user agent; explicit options override it.",
  },
  {
    name: 'viewport_width',
    type: integer(100, 3840),
    default: 1280,
    group: 'viewport',
    role: 'option',
    description: 'Viewport width in CSS pixels.',
  },
  {
    name: 'viewport_height',
    type: integer(100, 2160),
    default: 720,
    group: 'viewport',
    role: 'option',
    description: 'Viewport height in CSS pixels.',
  },
  {
    name: 'device_scale_factor',
    type: number(1, 5),
    default: 1,
    group: 'viewport',
    role: 'option',
    description: 'Device pixel ratio; width × height × scale² at most 3840 × 2160 × 4.',
  },
  {
    name: 'viewport_mobile',
    type: flag,
    default: false,
    group: 'viewport',
    role: 'option',
    description: 'Mobile metrics: the meta viewport tag is honoured.',
  },
  {
    name: 'viewport_has_touch',
    type: flag,
    default: false,
    group: 'viewport',
    role: 'option',
    description: 'Touch events are supported.',
  },
  {
    name: 'viewport_landscape',
    type: flag,
    default: false,
    group: 'viewport',
    role: 'option',
    description: 'Landscape: width and height are swapped.',
  },

  {
    name: 'dark_mode',
    type: flag,
    group: 'emulation',
    role: 'option',
    description: 'prefers-color-scheme: dark (true) or light (false); unset, the browser default.',
  },
  {
    name: 'reduced_motion',
    type: flag,
    default: false,
    group: 'emulation',
    role: 'option',
    description: 'prefers-reduced-motion: reduce.',
  },
  {
    name: 'media_type',
    type: oneOf('screen', 'print'),
    group: 'emulation',
    role: 'option',
    description: 'The CSS media type; unset, screen for an image and print for a pdf.',
  },
  {
    name: 'time_zone',
    type: text(64),
    group: 'emulation',
    role: 'option',
    description: "An IANA time zone, e.g. Asia/Tokyo; unset, the machine's.",
  },
  {
    name: 'geolocation_latitude',
    type: number(-90, 90),
    group: 'emulation',
    role: 'option',
    description: 'Latitude; with geolocation_longitude, the page is granted geolocation for this render.',
  },
  {
    name: 'geolocation_longitude',
    type: number(-180, 180),
    group: 'emulation',
    role: 'option',
    description: 'Longitude; with geolocation_latitude.',
  },
  {
    name: 'geolocation_accuracy',
    type: number(0, 100_000),
    group: 'emulation',
    role: 'option',
    description: 'Accuracy in metres of the emulated position.',
  },
  {
    name: 'user_agent',
    type: headerText(1024),
    group: 'emulation',
    role: 'option',
    description: "The User-Agent header and navigator.userAgent; unset, Chromium's.",
  },

  {
    name: 'headers',
    type: listOf(headerText(8192)),
    default: [],
    group: 'request',
    role: 'option',
    description:
      'Extra "Name: value" headers on requests to the target URL\'s origin only; Host, Content-Length, Cookie, Connection and Proxy-* are refused.',
  },
  {
    name: 'authorization',
    type: headerText(8192),
    group: 'request',
    role: 'option',
    description: "An Authorization header value, sent to the target URL's origin only.",
  },
  {
    name: 'cookies',
    type: listOf(headerText(8192)),
    default: [],
    group: 'request',
    role: 'option',
    description:
      "Set-Cookie strings set before navigation; domain and path default to the target URL's; another site's Domain is refused.",
  },
  {
    name: 'profile',
    type: text(64, PROFILE_NAME_PATTERN, PROFILE_NAME_TEXT),
    group: 'request',
    role: 'option',
    description:
      "A profile of the workspace's (POST /api/profiles): its cookies and local storage loaded into the render's page, for the profile's own origins only.",
  },
  {
    name: 'save_profile',
    type: text(64, PROFILE_NAME_PATTERN, PROFILE_NAME_TEXT),
    group: 'request',
    role: 'option',
    description:
      "Store the render's end state (cookies, local storage of the page's origin) as the workspace's profile of this name, replacing one of the same name.",
  },
  {
    name: 'bypass_csp',
    type: flag,
    default: false,
    group: 'request',
    role: 'option',
    description: "The page's Content-Security-Policy does not stop scripts and styles.",
  },

  {
    name: 'wait_until',
    type: listOf(oneOf('load', 'domcontentloaded', 'networkidle', 'networkidle0', 'networkidle2'), 4),
    default: ['load'],
    group: 'wait',
    role: 'option',
    description:
      'Every listed condition must hold: networkidle0 no request for 500 ms, networkidle2 at most two (networkidle is networkidle0).',
  },
  {
    name: 'navigation_timeout',
    type: number(1, 30),
    default: 30,
    group: 'wait',
    role: 'option',
    description: 'Seconds the main navigation alone may take; not more than timeout.',
  },
  {
    name: 'delay',
    type: number(0, ASYNC_MAX_DELAY),
    default: 0,
    group: 'wait',
    role: 'option',
    description: `Seconds to wait after navigation, before capturing: less than a timeout given with it, and at most ${SYNC_MAX_DELAY}, or ${ASYNC_MAX_DELAY} with async.`,
  },
  {
    name: 'timeout',
    type: number(1, ASYNC_MAX_TIMEOUT),
    default: 30,
    group: 'wait',
    role: 'option',
    description: `Seconds the whole render may take (at most ${SYNC_MAX_TIMEOUT}, or ${ASYNC_MAX_TIMEOUT} with async; unless given, 30 after any delay); a render that outlives it fails with timeout_error.`,
  },
  {
    name: 'wait_for_selector',
    type: text(1000),
    group: 'wait',
    role: 'option',
    description:
      'Before capturing, wait until an element matching this selector is visible; none within timeout fails with selector_not_found.',
  },
  {
    name: 'wait_for_selector_algorithm',
    type: oneOf('at_least_one', 'at_least_by_count'),
    default: 'at_least_one',
    group: 'wait',
    role: 'option',
    description:
      'at_least_one: wait_for_selector waits for one visible match; at_least_by_count: for as many visible matches as the selector matches elements.',
  },

  {
    name: 'styles',
    type: sized(65_536),
    group: 'page',
    role: 'option',
    description: 'CSS added to the page after load; at most 64 KiB of UTF-8.',
  },
  {
    name: 'scripts',
    type: sized(65_536),
    group: 'page',
    role: 'option',
    description:
      'JavaScript run in the page after load (at most 64 KiB of UTF-8); a returned promise is awaited, a throw fails with script_error.',
  },
  {
    name: 'scripts_wait_until',
    type: listOf(oneOf('load', 'domcontentloaded', 'networkidle', 'networkidle0', 'networkidle2'), 4),
    default: [],
    group: 'page',
    role: 'option',
    description: 'Conditions to wait for after scripts, like wait_until (a script that navigates).',
  },
  {
    name: 'hide_selectors',
    type: listOf(text(1000)),
    default: [],
    group: 'page',
    role: 'option',
    description: 'Elements matching these selectors get display: none !important.',
  },
  {
    name: 'remove_selectors',
    type: listOf(text(1000)),
    default: [],
    group: 'page',
    role: 'option',
    description:
      'Elements matching these selectors are removed from the document before the capture, also inside open shadow roots; the page reflows without them.',
  },
  {
    name: 'click',
    type: text(1000),
    group: 'page',
    role: 'option',
    description: 'Click the first element matching this selector before capturing.',
  },
  {
    name: 'error_on_click_selector_not_found',
    type: flag,
    default: true,
    group: 'page',
    role: 'option',
    description: 'Fail with selector_not_found when click matches nothing.',
  },
  {
    name: 'hover',
    type: text(1000),
    group: 'page',
    role: 'option',
    description: 'Hover the first element matching this selector before capturing.',
  },
  {
    name: 'error_on_hover_selector_not_found',
    type: flag,
    default: true,
    group: 'page',
    role: 'option',
    description: 'Fail with selector_not_found when hover matches nothing.',
  },

  {
    name: 'block_ads',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'Requests to ad servers are never made; ad slots are hidden (AdGuard Base and Mobile Ads filters).',
  },
  {
    name: 'block_trackers',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'Analytics and tracking requests are never made (AdGuard Tracking Protection filter).',
  },
  {
    name: 'block_cookie_banners',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description:
      'Consent banners are answered refusing optional cookies (autoconsent) or hidden (AdGuard Cookie Notices filter) before the capture.',
  },
  {
    name: 'block_banners_by_heuristics',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'Fixed or sticky overlays covering the page (newsletter pop-ups, app banners) are hidden.',
  },
  {
    name: 'block_chats',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'Chat widgets (Intercom, Drift, Zendesk, Crisp, HubSpot, Tawk and the like) never load.',
  },
  {
    name: 'block_socials',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'Social embeds and share buttons never load (AdGuard Social Media filter).',
  },
  {
    name: 'block_annoyances',
    type: flag,
    default: false,
    group: 'blocking',
    role: 'option',
    description: 'All of block_cookie_banners, block_banners_by_heuristics, block_chats and block_socials.',
  },
  {
    name: 'block_requests',
    type: listOf(text(1000)),
    default: [],
    group: 'blocking',
    role: 'option',
    description:
      'Wildcard patterns (* and ?) of whole URLs, as fail_if_request_failed; matching sub-requests are never made.',
  },
  {
    name: 'block_resources',
    type: listOf(
      oneOf(
        'document',
        'stylesheet',
        'image',
        'media',
        'font',
        'script',
        'texttrack',
        'xhr',
        'fetch',
        'eventsource',
        'websocket',
        'manifest',
        'other',
      ),
      13,
    ),
    default: [],
    group: 'blocking',
    role: 'option',
    description: 'Requests of these resource types are never made (document: frames; the page itself always loads).',
  },

  {
    name: 'selector',
    type: text(1000),
    group: 'capture',
    role: 'option',
    description: 'Capture only the first element matching this CSS selector.',
  },
  {
    name: 'scroll_into_view',
    type: text(1000),
    group: 'capture',
    role: 'option',
    description: 'Scroll the first element matching this CSS selector to the top before capturing.',
  },
  {
    name: 'scroll_into_view_adjust_top',
    type: integer(-10_000, 10_000),
    default: 0,
    group: 'capture',
    role: 'option',
    description: 'Pixels to scroll further after scroll_into_view (negative: back up).',
  },
  {
    name: 'full_page',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description: 'Capture the whole scrollable page, up to full_page_max_height.',
  },
  {
    name: 'full_page_scroll',
    type: flag,
    defaultText: 'true with full_page',
    group: 'capture',
    role: 'option',
    description:
      'Before a full-page capture, scroll down in steps so that lazy content loads, then back to the top. A step waits only while the page loads what it brought into view; at the default delay, a page with nothing that loads on scroll (no lazy image or frame, no IntersectionObserver, no scroll listener) is not scrolled.',
  },
  {
    name: 'full_page_scroll_delay',
    type: integer(100, 5000),
    default: 400,
    group: 'capture',
    role: 'option',
    description:
      'Pause per scroll step in ms. Left at its default, a step waits only while the page is still loading what it brought into view (requests, images, new content), at most 400 ms; a value given is waited in full at every step.',
  },
  {
    name: 'full_page_scroll_by',
    type: integer(1, 16_384),
    defaultText: 'the viewport height',
    group: 'capture',
    role: 'option',
    description: 'Pixels of each scroll step.',
  },
  {
    name: 'full_page_max_height',
    type: integer(100, 16_384),
    default: 16_384,
    group: 'capture',
    role: 'option',
    description: 'The tallest full-page capture in CSS pixels; a longer page is cut there.',
  },
  {
    name: 'capture_beyond_viewport',
    type: flag,
    defaultText: 'true with full_page or selector',
    group: 'capture',
    role: 'option',
    description: 'Capture content outside the viewport without resizing it.',
  },
  {
    name: 'clip_x',
    type: integer(0, 16_384),
    group: 'capture',
    role: 'option',
    description: 'Left of the rectangle to capture; with clip_y, clip_width and clip_height.',
  },
  {
    name: 'clip_y',
    type: integer(0, 16_384),
    group: 'capture',
    role: 'option',
    description: 'Top of the rectangle to capture.',
  },
  {
    name: 'clip_width',
    type: integer(1, 16_384),
    group: 'capture',
    role: 'option',
    description: 'Width of the rectangle to capture.',
  },
  {
    name: 'clip_height',
    type: integer(1, 16_384),
    group: 'capture',
    role: 'option',
    description: 'Height of the rectangle to capture.',
  },
  {
    name: 'omit_background',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description: 'Transparent where the page paints no background (png and webp).',
  },
  {
    name: 'full_page_algorithm',
    type: oneOf('default', 'by_sections'),
    default: 'default',
    group: 'capture',
    role: 'option',
    description:
      'by_sections: the full page is captured one viewport-high section at a time, each scrolled into view, and the sections stitched together; default: one capture of the whole page.',
  },
  {
    name: 'full_page_slices',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description:
      'With full_page: the capture is also cut into slices of full_page_slice_height, each stored as a file and listed in slices of the JSON answer.',
  },
  {
    name: 'full_page_slice_height',
    type: integer(100, 16_000),
    default: 4000,
    group: 'capture',
    role: 'option',
    description: 'Height of each slice in image pixels; the last one is what remains.',
  },
  {
    name: 'full_page_slice_overlap_height',
    type: integer(0, 15_900),
    default: 0,
    group: 'capture',
    role: 'option',
    description: 'Pixels each slice repeats of the one before it; full_page_slice_height minus it is at least 100.',
  },
  {
    name: 'selector_algorithm',
    type: oneOf('default', 'clip'),
    default: 'default',
    group: 'capture',
    role: 'option',
    description:
      "default: the whole box of the selector's element, also beyond the viewport; clip: the element's rectangle as the viewport paints it (as clip_* would).",
  },
  {
    name: 'selector_scroll_into_view',
    type: flag,
    default: true,
    group: 'capture',
    role: 'option',
    description: 'With selector: scroll the element into view before capturing it; false: the page stays where it is.',
  },
  {
    name: 'include_shadow_dom',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description:
      "Open and closed shadow roots are part of the page's content (format html and markdown, metadata_content), and hide_selectors reach into them.",
  },
  {
    name: 'disable_animations',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description:
      'A still capture: CSS animations, transitions and Web Animations finished (infinite ones held at their start), videos paused at their first frame, the text caret hidden.',
  },
  {
    name: 'mask_selectors',
    type: listOf(text(1000)),
    default: [],
    group: 'capture',
    role: 'option',
    description:
      'Each element matching these selectors (also inside shadow roots) is covered by a solid box of mask_color in the image; nothing outside it is covered.',
  },
  {
    name: 'mask_color',
    type: text(9, /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'a hex colour: #RGB, #RRGGBB or #RRGGBBAA'),
    default: '#FF00FF',
    group: 'capture',
    role: 'option',
    description: 'The colour of the mask_selectors boxes.',
  },
  {
    name: 'request_gpu_rendering',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description:
      'Ask for GPU rendering; a worker without a GPU renders in software (or fails, with fail_if_gpu_rendering_fails).',
  },
  {
    name: 'fail_if_gpu_rendering_fails',
    type: flag,
    default: false,
    group: 'capture',
    role: 'option',
    description: 'With request_gpu_rendering: fail with gpu_rendering_failed instead of rendering in software.',
  },

  {
    name: 'format',
    type: oneOf(...takeFormatNames),
    default: 'png',
    group: 'output',
    role: 'option',
    description:
      'Output format: an image (jpg is jpeg; jp2 and heif only where the image library can write them), pdf (the printed document), html (the DOM after scripts) or markdown (the main content).',
  },
  {
    name: 'image_quality',
    type: integer(1, 100),
    default: 80,
    group: 'output',
    role: 'option',
    description: 'Quality of jpeg, webp and avif images.',
  },
  {
    name: 'image_width',
    type: integer(1, 7680),
    group: 'output',
    role: 'option',
    description: 'Scale the image to this width (aspect kept when image_height is not given).',
  },
  {
    name: 'image_height',
    type: integer(1, 7680),
    group: 'output',
    role: 'option',
    description: 'Scale the image to this height (aspect kept when image_width is not given).',
  },
  {
    name: 'response_type',
    type: oneOf('by_format', 'json', 'empty'),
    default: 'by_format',
    group: 'output',
    role: 'control',
    description:
      "by_format: the file's bytes; json: a JSON description with the file URL and metadata; empty: 200 with no body.",
  },
  {
    name: 'attachment_name',
    type: text(MAX_ATTACHMENT_NAME),
    group: 'output',
    role: 'control',
    description: 'Answer the bytes with Content-Disposition: attachment and this file name.',
  },

  {
    name: 'save_formats',
    type: listOf(oneOf(...savedFormats), 3),
    default: [],
    group: 'output',
    role: 'option',
    description:
      "With an image or pdf format: these files of the page, from the same render, stored beside the output; their URLs under saved in the answers, and in the customer's bucket with store (same key, each its extension).",
  },

  {
    name: 'pdf_print_background',
    type: flag,
    default: true,
    group: 'pdf',
    role: 'option',
    description: 'Print backgrounds in the PDF.',
  },
  {
    name: 'pdf_fit_one_page',
    type: flag,
    default: false,
    group: 'pdf',
    role: 'option',
    description: 'One page as wide and tall as the document.',
  },
  { name: 'pdf_landscape', type: flag, default: false, group: 'pdf', role: 'option', description: 'Landscape paper.' },
  {
    name: 'pdf_paper_format',
    type: oneOf('a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'letter', 'legal', 'tabloid'),
    default: 'a4',
    group: 'pdf',
    role: 'option',
    description: 'Paper size of the PDF.',
  },
  {
    name: 'pdf_margin',
    type: cssLength,
    group: 'pdf',
    role: 'option',
    description: 'Margin of every side (10mm, 0.5in, 20px); the pdf_margin_* of a side win.',
  },
  { name: 'pdf_margin_top', type: cssLength, group: 'pdf', role: 'option', description: 'Top margin.' },
  { name: 'pdf_margin_right', type: cssLength, group: 'pdf', role: 'option', description: 'Right margin.' },
  { name: 'pdf_margin_bottom', type: cssLength, group: 'pdf', role: 'option', description: 'Bottom margin.' },
  { name: 'pdf_margin_left', type: cssLength, group: 'pdf', role: 'option', description: 'Left margin.' },
  {
    name: 'pdf_header',
    type: text(65_536),
    group: 'pdf',
    role: 'option',
    description:
      'An HTML template printed at the top of every page; elements of class pageNumber, totalPages, date, title and url get those values. Images, styles and fonts inline (data: URLs): nothing is fetched for a template.',
  },
  {
    name: 'pdf_footer',
    type: text(65_536),
    group: 'pdf',
    role: 'option',
    description: 'An HTML template printed at the bottom of every page, like pdf_header.',
  },
  {
    name: 'pdf_page_ranges',
    type: text(200, /^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/, 'pages and ranges of pages, e.g. 1-3,5'),
    group: 'pdf',
    role: 'option',
    description: 'Only these pages, e.g. 1-3,5.',
  },
  {
    name: 'pdf_scale',
    type: number(0.1, 2),
    default: 1,
    group: 'pdf',
    role: 'option',
    description: "Scale of the page's rendering on paper.",
  },
  {
    name: 'pdf_width',
    type: cssLength,
    group: 'pdf',
    role: 'option',
    description: 'Width of a custom paper (10in, 210mm); with pdf_height, not with pdf_paper_format.',
  },
  {
    name: 'pdf_height',
    type: cssLength,
    group: 'pdf',
    role: 'option',
    description: 'Height of a custom paper; with pdf_width, not with pdf_paper_format.',
  },
  {
    name: 'pdf_prefer_css_page_size',
    type: flag,
    default: false,
    group: 'pdf',
    role: 'option',
    description: "The page's CSS @page size wins over the paper size asked for.",
  },
  {
    name: 'pdf_outline',
    type: flag,
    default: false,
    group: 'pdf',
    role: 'option',
    description: "Bookmarks (the PDF outline) from the document's headings; the PDF is tagged too.",
  },
  {
    name: 'pdf_tagged',
    type: flag,
    default: false,
    group: 'pdf',
    role: 'option',
    description: "A tagged, accessible PDF (its structure from the document's).",
  },
  // The document operations of docs/capture.md, "PDF for archives and documents" (src/render/outputs/pdf-finish.ts).
  {
    name: 'pdf_archive',
    type: oneOf('a-1b', 'a-2b', 'a-3b'),
    group: 'pdf',
    role: 'option',
    description:
      'PDF/A of this part and conformance (Ghostscript): fonts embedded, an sRGB output intent, XMP pdfaid metadata; not with pdf_password, pdf_owner_password, pdf_permissions or pdf_accessible.',
  },
  {
    name: 'pdf_accessible',
    type: flag,
    default: false,
    group: 'pdf',
    role: 'option',
    description:
      "A tagged PDF whose language (the page's lang, else en) and title (pdf_title, else the page's title, else its URL) are set, the title displayed.",
  },
  { name: 'pdf_title', type: pdfInfo, group: 'pdf', role: 'option', description: "The PDF's title (its metadata)." },
  { name: 'pdf_author', type: pdfInfo, group: 'pdf', role: 'option', description: "The PDF's author." },
  { name: 'pdf_subject', type: pdfInfo, group: 'pdf', role: 'option', description: "The PDF's subject." },
  {
    name: 'pdf_keywords',
    type: pdfInfo,
    group: 'pdf',
    role: 'option',
    description: "The PDF's keywords, as one text (e.g. invoice, 2026).",
  },
  {
    name: 'pdf_watermark',
    type: text(200, /^[^\x00-\x1f\x7f]*$/, 'one line free of control characters'),
    group: 'pdf',
    role: 'option',
    description: 'A text stamped across the middle of every page, turned 45°.',
  },
  {
    name: 'pdf_watermark_opacity',
    type: number(0, 1),
    default: 0.2,
    group: 'pdf',
    role: 'option',
    description: 'Opacity of pdf_watermark, 0 (invisible) to 1.',
  },
  {
    name: 'pdf_watermark_layer',
    type: oneOf('over', 'under'),
    default: 'over',
    group: 'pdf',
    role: 'option',
    description: "pdf_watermark over the page's content, or under it (hidden where the page paints a background).",
  },
  // Plain text only in the ingress's memory and in the worker that encrypts: sealed in the stream.
  {
    name: 'pdf_password',
    type: pdfPassword,
    group: 'pdf',
    role: 'option',
    description:
      'Encrypt the PDF (AES-256): it opens only with this password. Never logged, returned or kept in plain text.',
  },
  {
    name: 'pdf_owner_password',
    type: pdfPassword,
    group: 'pdf',
    role: 'option',
    description:
      'Encrypt the PDF (AES-256) with this owner password, which lifts pdf_permissions; unset, a random one nobody learns.',
  },
  {
    name: 'pdf_permissions',
    type: listOf(oneOf('print', 'copy', 'modify'), 3),
    group: 'pdf',
    role: 'option',
    description:
      'Encrypt the PDF (AES-256) permitting only these to a reader without the owner password; with a password and without this list, everything is permitted.',
  },

  {
    name: 'metadata_image_size',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: 'Add image_size {width, height} of the output image.',
  },
  {
    name: 'metadata_page_title',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: "Add page_title, the document's title.",
  },
  {
    name: 'metadata_open_graph',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: 'Add open_graph {title, description, image, url, type, site_name}, URLs absolute.',
  },
  {
    name: 'metadata_icon',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: "Add icon {url, type}, the page's icon link, URL absolute.",
  },
  {
    name: 'metadata_fonts',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: "Add fonts, the family names the page's text is set in.",
  },
  {
    name: 'metadata_http_response_status_code',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: 'Add http_response_status_code of the main document.',
  },
  {
    name: 'metadata_http_response_headers',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: 'Add http_response_headers of the main document.',
  },
  {
    name: 'metadata_content',
    type: flag,
    default: false,
    group: 'metadata',
    role: 'option',
    description: "Add content {url, format}: the page's HTML or Markdown, stored as a file.",
  },
  {
    name: 'metadata_content_format',
    type: oneOf('html', 'markdown'),
    default: 'html',
    group: 'metadata',
    role: 'option',
    description: 'Format of metadata_content: html or markdown.',
  },

  {
    name: 'ignore_host_errors',
    type: flag,
    default: false,
    group: 'failure',
    role: 'option',
    description: 'Capture the page even when its main document answered 4xx or 5xx.',
  },
  {
    name: 'error_on_selector_not_found',
    type: flag,
    default: false,
    group: 'failure',
    role: 'option',
    description: 'Fail with selector_not_found when selector or scroll_into_view matches nothing.',
  },
  {
    name: 'fail_if_request_failed',
    type: listOf(text(1000)),
    default: [],
    group: 'failure',
    role: 'option',
    description:
      'Wildcard patterns (* and ?) of sub-request URLs; a matching one that fails or answers 4xx/5xx fails the render.',
  },
  {
    name: 'fail_if_content_missing',
    type: listOf(text(1000)),
    default: [],
    group: 'failure',
    role: 'option',
    description: 'Fail when any of these texts is absent from the visible text (case-insensitive).',
  },
  {
    name: 'fail_if_content_contains',
    type: listOf(text(1000)),
    default: [],
    group: 'failure',
    role: 'option',
    description: 'Fail when any of these texts is present in the visible text (case-insensitive).',
  },

  {
    name: 'cache',
    type: flag,
    defaultText: 'true for a signed GET',
    group: 'cache',
    role: 'control',
    description: 'Cache a signed GET: later views redirect to the file at no charge.',
  },
  {
    name: 'cache_ttl',
    type: integer(60, 2_592_000),
    default: 14_400,
    group: 'cache',
    role: 'control',
    description: 'Seconds a cached file is served, counted from the first view.',
  },
  {
    name: 'cache_key',
    type: text(250, /^[A-Za-z0-9]+$/, 'letters and digits'),
    group: 'cache',
    role: 'control',
    description: 'Part of the cache key of a signed GET: change it to render the same URL afresh.',
  },

  {
    name: 'async',
    type: flag,
    default: false,
    group: 'async',
    role: 'control',
    description: 'Answer 202 at once with a render id; the result is at the status URL and in the webhook.',
  },
  {
    name: 'webhook_url',
    type: text(8192),
    group: 'async',
    role: 'control',
    description: 'Where the signed webhook announcing the end of the render is POSTed.',
  },
  {
    name: 'external_identifier',
    type: text(128),
    group: 'async',
    role: 'control',
    description: 'Your own id, echoed in the webhook and the status.',
  },
  {
    name: 'webhook_sign',
    type: flag,
    default: true,
    group: 'async',
    role: 'control',
    description: 'false: the webhook is sent without its signature headers.',
  },
  {
    name: 'webhook_errors',
    type: flag,
    default: true,
    group: 'async',
    role: 'control',
    description: 'false: a failed render sends no webhook (only successes are announced).',
  },

  // The customer's proxy URL, credentials included: sealed in the stream message (src/secrets/request-secrets.ts).
  {
    name: 'proxy',
    type: text(2048),
    group: 'proxy',
    role: 'option',
    description:
      "http(s)://[user:password@]host:port: the page's traffic leaves through this proxy (behind the service's own checks); its address obeys the address rules of url.",
  },
  {
    name: 'proxy_bypass_hosts',
    type: listOf(text(253)),
    default: [],
    group: 'proxy',
    role: 'option',
    description: 'Host names (*.example.com for a domain and its subdomains) whose requests skip proxy.',
  },
  // A country of the operator's GEO_PROXIES; lower-cased by the parser (src/http/params.ts).
  {
    name: 'ip_country_code',
    type: text(2, /^[a-zA-Z]{2}$/, 'a two-letter country code'),
    group: 'proxy',
    role: 'option',
    description:
      "The page's traffic leaves through the operator's proxy for this country (GEO_PROXIES); not with proxy.",
  },
  {
    name: 'servers_region',
    type: oneOf('us-east'),
    default: 'us-east',
    group: 'proxy',
    role: 'control',
    description: 'Accepted for compatibility: a deployment renders in the one region it runs in.',
  },

  {
    name: 'vision_prompt',
    type: text(10_000),
    group: 'vision',
    role: 'option',
    description:
      'Send the capture with this prompt to an OpenAI-compatible chat completions API; its answer is vision in the JSON answer, the status and the webhook.',
  },
  {
    name: 'vision_max_tokens',
    type: integer(1, 16_384),
    group: 'vision',
    role: 'option',
    description: 'The most tokens the vision answer may take.',
  },
  // Sealed in the stream message, like proxy.
  {
    name: 'openai_api_key',
    type: text(512),
    group: 'vision',
    role: 'option',
    description: 'The API key the vision request is sent with (a secret: never stored in plain text, never returned).',
  },

  {
    name: 'store',
    type: flag,
    default: false,
    group: 'storage',
    role: 'control',
    description:
      "Also upload the output to your own S3-compatible bucket (the storage_* parameters, or the workspace's default storage).",
  },
  {
    name: 'storage_path',
    type: text(1024),
    group: 'storage',
    role: 'control',
    description:
      "The object key, required with store: the format's extension is appended unless the path ends with it; no leading /, no . or .. segments.",
  },
  {
    name: 'storage_endpoint',
    type: text(2048),
    group: 'storage',
    role: 'control',
    description:
      "The S3-compatible service, an absolute http(s) URL obeying the address rules of url; unset, the workspace's default.",
  },
  {
    name: 'storage_bucket',
    type: text(
      63,
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'an S3 bucket name (3–63 lowercase letters, digits, dots and dashes)',
    ),
    group: 'storage',
    role: 'control',
    description: "The bucket; unset, the workspace's default.",
  },
  {
    name: 'storage_access_key_id',
    type: text(256),
    group: 'storage',
    role: 'control',
    description:
      "The access key id of the bucket; with storage_secret_access_key, or neither (the workspace's default).",
  },
  // Plain text only in the ingress's memory: sealed before it goes anywhere.
  {
    name: 'storage_secret_access_key',
    type: text(256),
    group: 'storage',
    role: 'control',
    description: 'The secret access key of the bucket; never logged, returned or kept in plain text.',
  },
  {
    name: 'storage_acl',
    type: oneOf('public-read', ''),
    default: '',
    group: 'storage',
    role: 'control',
    description: "Sent as the object's ACL (x-amz-acl); empty, none.",
  },
  {
    name: 'storage_class',
    type: oneOf(
      'standard',
      'reduced_redundancy',
      'standard_ia',
      'onezone_ia',
      'intelligent_tiering',
      'glacier',
      'deep_archive',
      'outposts',
      'glacier_ir',
    ),
    default: 'standard',
    group: 'storage',
    role: 'control',
    description: 'Sent as x-amz-storage-class.',
  },
  {
    name: 'storage_return_location',
    type: flag,
    default: false,
    group: 'storage',
    role: 'control',
    description: "The answer, the status and the webhook carry store.location, the object's URL.",
  },
] as const satisfies readonly Parameter[];

/** One row of /api/take's table: a Parameter with its literal name, type and default (the options' types come from these). */
export type TakeParameter = (typeof rows)[number] & Parameter;

/** The table, in the order the API reference lists it. */
export const parameters: readonly TakeParameter[] = rows;

/** The table by name. */
export const parameterByName: ReadonlyMap<string, TakeParameter> = new Map(
  parameters.map((parameter) => [parameter.name, parameter]),
);

/** The TypeScript type of what the parser makes of a parameter of `type`. */
export type ValueOf<Type extends ParameterType> = Type extends ListType
  ? readonly ValueOf<Type['item']>[]
  : Type extends EnumType
    ? Type['values'][number]
    : Type extends { kind: 'boolean' }
      ? boolean
      : Type extends { kind: 'integer' | 'number' }
        ? number
        : string;

type HasDefault<Row> = Row extends { default: unknown } ? Row : never;

/** The values a request gave for `Row`s, by name: each may be absent. */
export type GivenValues<Row extends Parameter> = { -readonly [R in Row as R['name']]?: ValueOf<R['type']> };

/** The values of the `Row`s that have a default: always there once the defaults are applied. */
export type DefaultValues<Row extends Parameter> = {
  -readonly [R in HasDefault<Row> as R['name']]: ValueOf<R['type']>;
};

/** The values of `Row`s with the defaults applied: a row with a default is required, one without optional. */
export type ValuesOf<Row extends Parameter> = Flat<
  DefaultValues<Row> & Omit<GivenValues<Row>, keyof DefaultValues<Row>>
>;

/** `T` as one object type (what an editor shows for it). */
export type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The rows of `rows` that play `role`. */
export function rowsOfRole<Row extends Parameter, Role extends Parameter['role']>(
  rows: readonly Row[],
  role: Role,
): Extract<Row, { role: Role }>[] {
  return rows.filter((row): row is Extract<Row, { role: Role }> => row.role === role);
}

/** The defaults of `rows`, by name (a list's default copied). */
export function defaultsOf<Row extends Parameter>(rows: readonly Row[]): DefaultValues<Row> {
  // The object has exactly the rows with a default, each with its row's value: what the type says.
  return Object.fromEntries(
    rows
      .filter((row) => row.default !== undefined)
      .map((row) => [row.name, Array.isArray(row.default) ? [...row.default] : row.default]),
  ) as DefaultValues<Row>;
}

/** The values of `rows` among values the parser checked against them (src/http/params.ts). */
export function givenOf<Row extends Parameter>(
  values: Record<string, unknown>,
  rows: readonly Row[],
): GivenValues<Row> {
  const names = new Set<string>(rows.map((row) => row.name));
  // Each value passed its row's type in the parser, which is what ValueOf says of it.
  return Object.fromEntries(Object.entries(values).filter(([name]) => names.has(name))) as GivenValues<Row>;
}
