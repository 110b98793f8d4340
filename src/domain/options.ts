// What one render is asked to do and what it observed: shared by the ingress, the stream and the workers.
import type { PageMetadata } from './metadata.ts';
import type { RenderWarning } from './warnings.ts';
import {
  defaultsOf,
  parameters,
  rowsOfRole,
  type DefaultValues,
  type Flat,
  type TakeParameter,
  type ValuesOf,
} from './parameters.ts';
import type { OutputFormat, SavedFormat } from './formats.ts';

// The formats, with their content types, are the format registry's (src/domain/formats.ts).
export {
  animationFormats,
  contentTypes,
  imageFormats,
  type AnimationFormat,
  type OutputFormat,
} from './formats.ts';

/**
 * Render options after validation, with defaults applied; names as in the public API (docs/api.md).
 * One field per option row of the parameter table (src/domain/parameters.ts), typed by the row: a
 * row with a default is always there. Exactly one of url, html and markdown is set.
 */
export type RenderOptions = Flat<Omit<ValuesOf<OptionRow>, keyof Normalised> & Normalised>;

/** Options the parser normalises, so their type is not their row's (the rest are typed by the table). */
interface Normalised {
  /** `jpg` from the request is `jpeg`; an animation's formats come from its own row (src/domain/animation.ts). */
  format: OutputFormat;
}

type OptionRow = Extract<TakeParameter, { role: 'option' }>;

/** The option rows of /api/take's table. */
export const optionRows = rowsOfRole(parameters, 'option');

/** Paper sizes of `pdf_paper_format`. */
export type PaperFormat = RenderOptions['pdf_paper_format'];

/** A condition navigation (or a script) waits for; `networkidle` is `networkidle0`. */
export type WaitUntil = RenderOptions['wait_until'][number];

/** A resource type block_resources names. */
export type BlockedResource = RenderOptions['block_resources'][number];

const { format, ...tableDefaults } = defaultsOf(optionRows);

/** Every option's default, from the parameter table; url, html and markdown have none. */
export const renderDefaults: Pick<RenderOptions, keyof DefaultValues<OptionRow>> = {
  ...tableDefaults,
  format: format === 'jpg' ? 'jpeg' : format,
};

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
  /** A monitor's tick that compares text: the visible text of the page (or of `selector`), read apart from the page's scripts. */
  monitorText?: string;
  /** Selectors (selector / scroll_into_view) that matched nothing. */
  missingSelectors: string[];
  /** The output in its format: the image, the PDF, the HTML or the Markdown. */
  image: Buffer;
  /** The output on disk instead of in `image` (then empty): a recording, streamed into the store. */
  file?: { path: string; size: number };
  /** save_formats: the page in each format asked, from the same visit as the output; absent when none. */
  saved?: { format: SavedFormat; bytes: Buffer }[];
  /** What the metadata_* options asked for, gathered in the same page visit; absent when none. */
  metadata?: PageMetadata;
  /** The vision API's answer about the capture (vision_prompt). */
  vision?: string;
  /** What the caller should know about the output (a cut capture, fonts not loaded); absent when nothing. */
  warnings?: RenderWarning[];
}
