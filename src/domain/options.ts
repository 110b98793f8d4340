// What one render is asked to do and what it observed: shared by the ingress, the stream and the workers.
import type { PageMetadata } from './metadata.ts';
import type { RenderWarning } from './warnings.ts';
import { optionDefaults } from './parameters.ts';
import type { OutputFormat } from './formats.ts';

// The formats, with their content types, are the format registry's (src/domain/formats.ts).
export {
  animationFormats,
  contentTypes,
  imageFormats,
  type AnimationFormat,
  type OutputFormat,
} from './formats.ts';

/** Paper sizes of `pdf_paper_format`. */
export type PaperFormat = 'a0' | 'a1' | 'a2' | 'a3' | 'a4' | 'a5' | 'a6' | 'letter' | 'legal' | 'tabloid';

/** A condition navigation (or a script) waits for; `networkidle` is `networkidle0`. */
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle' | 'networkidle0' | 'networkidle2';

/** Render options after validation, with defaults applied; names as in the public API (docs/api.md). */
export interface RenderOptions {
  /** The page; exactly one of url, html and markdown is set. */
  url?: string;
  html?: string;
  markdown?: string;
  format: OutputFormat;
  image_quality: number;
  image_width?: number;
  image_height?: number;

  viewport_device?: string;
  viewport_width: number;
  viewport_height: number;
  device_scale_factor: number;
  viewport_mobile: boolean;
  viewport_has_touch: boolean;
  viewport_landscape: boolean;

  dark_mode?: boolean;
  reduced_motion: boolean;
  media_type: 'screen' | 'print';
  time_zone?: string;
  geolocation_latitude?: number;
  geolocation_longitude?: number;
  geolocation_accuracy?: number;
  user_agent?: string;

  headers: string[];
  authorization?: string;
  cookies: string[];
  bypass_csp: boolean;

  wait_until: WaitUntil[];
  /** Seconds the main navigation may take. */
  navigation_timeout: number;
  /** Seconds to wait after navigation. */
  delay: number;
  /** Seconds the whole render may take. */
  timeout: number;
  wait_for_selector?: string;
  wait_for_selector_algorithm: 'at_least_one' | 'at_least_by_count';

  styles?: string;
  scripts?: string;
  scripts_wait_until: WaitUntil[];
  hide_selectors: string[];
  click?: string;
  error_on_click_selector_not_found: boolean;
  hover?: string;
  error_on_hover_selector_not_found: boolean;

  /** Blocking (docs/blocking.md). */
  block_ads: boolean;
  block_trackers: boolean;
  block_cookie_banners: boolean;
  block_banners_by_heuristics: boolean;
  block_chats: boolean;
  block_socials: boolean;
  block_annoyances: boolean;
  block_requests: string[];
  block_resources: BlockedResource[];

  selector?: string;
  scroll_into_view?: string;
  scroll_into_view_adjust_top: number;
  full_page: boolean;
  full_page_scroll?: boolean;
  full_page_scroll_delay: number;
  full_page_scroll_by?: number;
  full_page_max_height: number;
  capture_beyond_viewport?: boolean;
  clip_x?: number;
  clip_y?: number;
  clip_width?: number;
  clip_height?: number;
  omit_background: boolean;
  full_page_algorithm: 'default' | 'by_sections';
  full_page_slices: boolean;
  full_page_slice_height: number;
  full_page_slice_overlap_height: number;
  selector_algorithm: 'default' | 'clip';
  selector_scroll_into_view: boolean;
  include_shadow_dom: boolean;
  request_gpu_rendering: boolean;
  fail_if_gpu_rendering_fails: boolean;

  /** The customer's proxy URL (credentials included): sealed in the stream message (src/secrets/request-secrets.ts). */
  proxy?: string;
  proxy_bypass_hosts: string[];
  /** A country of the operator's GEO_PROXIES, lower case. */
  ip_country_code?: string;

  vision_prompt?: string;
  vision_max_tokens?: number;
  /** Sealed in the stream message, like proxy. */
  openai_api_key?: string;

  pdf_print_background: boolean;
  pdf_fit_one_page: boolean;
  pdf_landscape: boolean;
  pdf_paper_format: PaperFormat;
  /** CSS lengths (`10mm`, `0.5in`, `20px`): all sides, then each side. */
  pdf_margin?: string;
  pdf_margin_top?: string;
  pdf_margin_right?: string;
  pdf_margin_bottom?: string;
  pdf_margin_left?: string;
  /** HTML templates printed on every page (docs/capture.md). */
  pdf_header?: string;
  pdf_footer?: string;
  /** Pages and ranges, `1-3,5`. */
  pdf_page_ranges?: string;
  pdf_scale: number;
  /** A custom paper's CSS lengths, both or neither, not with an explicit pdf_paper_format. */
  pdf_width?: string;
  pdf_height?: string;
  pdf_prefer_css_page_size: boolean;
  pdf_outline: boolean;
  pdf_tagged: boolean;

  metadata_image_size: boolean;
  metadata_page_title: boolean;
  metadata_open_graph: boolean;
  metadata_icon: boolean;
  metadata_fonts: boolean;
  metadata_http_response_status_code: boolean;
  metadata_http_response_headers: boolean;
  metadata_content: boolean;
  metadata_content_format: 'html' | 'markdown';

  ignore_host_errors: boolean;
  error_on_selector_not_found: boolean;
  fail_if_request_failed: string[];
  fail_if_content_missing: string[];
  fail_if_content_contains: string[];
}

/** A resource type block_resources names. */
export type BlockedResource =
  | 'document'
  | 'stylesheet'
  | 'image'
  | 'media'
  | 'font'
  | 'script'
  | 'texttrack'
  | 'xhr'
  | 'fetch'
  | 'eventsource'
  | 'websocket'
  | 'manifest'
  | 'other';

/** Every option's default, from the parameter table; only `url` has none. */
export const renderDefaults = optionDefaults() as unknown as Omit<RenderOptions, 'url' | 'html' | 'markdown'>;

/** The tallest full-page capture, in CSS pixels (docs/api.md). */
export const FULL_PAGE_MAX_HEIGHT = 16384;

/**
 * The most device pixels (width × height × device_scale_factor²) one capture may have, full page,
 * element and clip included: 3840 × 16384, about 63 M pixels, which keeps Chromium near 1 GB while
 * it paints and encodes them (docs/browser.md). A full page is cut at the height where it ends.
 */
export const MAX_CAPTURE_PIXELS = 3840 * 16384;

/** One sub-request the page made, as the failure rules see it. */
export interface SubRequestOutcome {
  url: string;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** Network-level failure text (e.g. net::ERR_CONNECTION_REFUSED), when no response arrived. */
  failure?: string;
}

/** Everything a render observed of the page; the failure rules are guards over this. */
export interface PageObservation {
  /** Final URL of the main document after redirects. */
  finalUrl: string;
  /** Status of the main document's final response; null when there was none (e.g. about:blank). */
  mainStatus: number | null;
  /** Sub-requests of the page (not the main document), in the order they finished. */
  subRequests: SubRequestOutcome[];
  /** document.body.innerText at capture time. */
  visibleText: string;
  /** Selectors (selector / scroll_into_view) that matched nothing. */
  missingSelectors: string[];
  /** The output in its format: the image, the PDF, the HTML or the Markdown. */
  image: Buffer;
  /** What the metadata_* options asked for, gathered in the same page visit; absent when none. */
  metadata?: PageMetadata;
  /** The vision API's answer about the capture (vision_prompt). */
  vision?: string;
  /** What the caller should know about the output (a cut capture, fonts not loaded); absent when nothing. */
  warnings?: RenderWarning[];
}
