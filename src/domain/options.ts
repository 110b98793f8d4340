// What one render is asked to do and what it observed: shared by the ingress, the stream and the workers.
import { optionDefaults } from './parameters.ts';

/** Output formats; `jpg` from the request is normalised to `jpeg`. */
export type ImageFormat = 'png' | 'jpeg' | 'webp';

/** When navigation counts as done. */
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle';

/** Render options after validation, with defaults applied; names as in the public API. */
export interface RenderOptions {
  url: string;
  format: ImageFormat;
  selector?: string;
  scroll_into_view?: string;
  viewport_width: number;
  viewport_height: number;
  device_scale_factor: number;
  full_page: boolean;
  image_quality: number;
  wait_until: WaitUntil;
  /** Seconds to wait after navigation. */
  delay: number;
  /** Seconds the whole render may take. */
  timeout: number;
  ignore_host_errors: boolean;
  error_on_selector_not_found: boolean;
  fail_if_request_failed: string[];
  fail_if_content_missing: string[];
  fail_if_content_contains: string[];
}

/** Every option's default, from the parameter table; only `url` has none. */
export const renderDefaults = optionDefaults() as Omit<RenderOptions, 'url'>;

/** The tallest full-page capture, in CSS pixels (contract §9). */
export const FULL_PAGE_MAX_HEIGHT = 16384;

/** Content-Type of each output format. */
export const contentTypes: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

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
  /** The captured image. */
  image: Buffer;
}
