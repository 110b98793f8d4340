// Every output format in one table: its content type, file extension and aliases, what kind of file
// it is, which endpoint makes it and how, and what the options mean with it. The parser, the capture,
// the store, the file route, OpenAPI and the playground all read it (docs/architecture.md).

/** What a format's file is: an image, a printed document, text, or a video. */
export type FormatKind = 'image' | 'document' | 'text' | 'animation';

/** What makes a format's output on /api/take: a screenshot, the printed PDF, the serialised DOM or the Markdown of the main content. */
export type TakeCapture = 'screenshot' | 'pdf' | 'html' | 'markdown' | 'mhtml';

/** The formats Chromium encodes a screenshot in itself. */
export type ChromiumImageFormat = 'png' | 'jpeg' | 'webp';

/** How /api/take makes a format. */
export interface TakeFacts {
  capture: TakeCapture;
  /**
   * A screenshot: the format Chromium captures in. When it is not the format itself, the image
   * library (sharp) writes the output from Chromium's capture (src/render/outputs/image.ts).
   */
  chromium?: ChromiumImageFormat;
  /** image_quality sets the encoder's quality. */
  quality?: boolean;
  /** The image can be transparent, so omit_background is possible. */
  transparency?: boolean;
  /** The longest side in pixels the format can hold, where it is shorter than the capture limits. */
  maxSide?: number;
  /** The image library's options when it writes this format, beside quality. */
  sharpOptions?: Readonly<Record<string, string | number>>;
  /**
   * The 400 when this machine's image library cannot write the format (the prebuilt sharp has no
   * encoder for it): the render is refused before it is queued, when a probe at first use fails.
   */
  unwritable?: string;
}

/** How /api/animate makes a format: ffmpeg encodes the recorded frames (src/render/outputs/recorder.ts). */
export interface AnimateFacts {
  /** The video keeps an alpha channel, so omit_background is possible. */
  transparency?: boolean;
}

/** One row of the table. */
export interface FormatFacts {
  /** The Content-Type of the answer, the stored object and the file route. */
  contentType: string;
  /** The file name extension, without the dot. */
  extension: string;
  /** Other names a request may use for it; a render record carries the format's own name. */
  aliases?: readonly string[];
  kind: FormatKind;
  /** Present when /api/take makes it. */
  take?: TakeFacts;
  /** Present when /api/animate makes it. */
  animate?: AnimateFacts;
  /** A browser shows it inline (the dashboard's render page shows it as an image). */
  inline?: boolean;
  /** Vision APIs read it as it is; any other output is sent to them as a png. */
  vision?: boolean;
  /** A monitor can compare two of its captures pixel by pixel (docs/monitors.md). */
  monitor?: boolean;
  /** save_formats may store it beside an image or PDF render's output (docs/capture.md). */
  saved?: boolean;
}

/** The table, in the order the API reference lists the formats. */
export const formatTable = {
  png: {
    contentType: 'image/png',
    extension: 'png',
    kind: 'image',
    take: { capture: 'screenshot', chromium: 'png', transparency: true },
    inline: true,
    vision: true,
    monitor: true,
  },
  jpeg: {
    contentType: 'image/jpeg',
    extension: 'jpg',
    aliases: ['jpg'],
    kind: 'image',
    take: { capture: 'screenshot', chromium: 'jpeg', quality: true },
    inline: true,
    vision: true,
    monitor: true,
  },
  webp: {
    contentType: 'image/webp',
    extension: 'webp',
    kind: 'image',
    // WebP holds at most 16383 px a side: Chromium answers an empty image beyond that.
    take: { capture: 'screenshot', chromium: 'webp', quality: true, transparency: true, maxSide: 16383 },
    inline: true,
    vision: true,
    monitor: true,
  },
  gif: {
    contentType: 'image/gif',
    extension: 'gif',
    kind: 'image',
    take: { capture: 'screenshot', chromium: 'png' },
    animate: {},
    inline: true,
    vision: true,
  },
  avif: {
    contentType: 'image/avif',
    extension: 'avif',
    kind: 'image',
    // Effort 2 (sharp's default is 4): about a quarter of the CPU for files some 8% larger.
    take: { capture: 'screenshot', chromium: 'png', quality: true, sharpOptions: { effort: 2 } },
    inline: true,
  },
  tiff: {
    contentType: 'image/tiff',
    extension: 'tiff',
    kind: 'image',
    // Compressed losslessly (LZW), as readers expect.
    take: { capture: 'screenshot', chromium: 'png', sharpOptions: { compression: 'lzw' } },
  },
  jp2: {
    contentType: 'image/jp2',
    extension: 'jp2',
    kind: 'image',
    take: {
      capture: 'screenshot',
      chromium: 'png',
      quality: true,
      unwritable: 'JPEG 2000 cannot be written here: the image library (libvips in sharp) is built without OpenJPEG',
    },
  },
  heif: {
    contentType: 'image/heif',
    extension: 'heic',
    kind: 'image',
    take: {
      capture: 'screenshot',
      chromium: 'png',
      quality: true,
      sharpOptions: { compression: 'hevc' },
      unwritable:
        "HEIF cannot be written here: the image library (libheif in sharp) has no HEVC encoder (use avif, HEIF's AV1 form)",
    },
  },
  pdf: { contentType: 'application/pdf', extension: 'pdf', kind: 'document', take: { capture: 'pdf' } },
  html: {
    contentType: 'text/html; charset=utf-8',
    extension: 'html',
    kind: 'text',
    take: { capture: 'html' },
    saved: true,
  },
  markdown: {
    contentType: 'text/markdown; charset=utf-8',
    extension: 'md',
    kind: 'text',
    take: { capture: 'markdown' },
    saved: true,
  },
  // Chromium's single-file archive of the page as rendered (Page.captureSnapshot).
  mhtml: {
    contentType: 'multipart/related',
    extension: 'mhtml',
    kind: 'text',
    take: { capture: 'mhtml' },
    saved: true,
  },
  mp4: { contentType: 'video/mp4', extension: 'mp4', kind: 'animation', animate: {} },
  webm: { contentType: 'video/webm', extension: 'webm', kind: 'animation', animate: {} },
  mov: { contentType: 'video/quicktime', extension: 'mov', kind: 'animation', animate: { transparency: true } },
  avi: { contentType: 'video/x-msvideo', extension: 'avi', kind: 'animation', animate: {} },
} as const satisfies Record<string, FormatFacts>;

type Table = typeof formatTable;

/** Every output format, by its own name (`jpg` from a request is `jpeg`). */
export type OutputFormat = keyof Table;

/** The formats /api/take makes. */
export type TakeFormat = { [F in OutputFormat]: Table[F] extends { take: TakeFacts } ? F : never }[OutputFormat];

/** The formats /api/animate makes. */
export type AnimationFormat = {
  [F in OutputFormat]: Table[F] extends { animate: AnimateFacts } ? F : never;
}[OutputFormat];

/** A name a request may give a format of /api/take: its own or an alias (`jpg`). */
export type TakeFormatName = {
  [F in TakeFormat]: F | (Table[F] extends { aliases: readonly (infer A)[] } ? A : never);
}[TakeFormat];

/** One row of the table, typed as any row. */
export const formatFacts = (format: OutputFormat): FormatFacts => formatTable[format];

/** Every format, in the table's order. */
export const formatNames = Object.keys(formatTable) as OutputFormat[];

const where = (test: (facts: FormatFacts) => boolean | undefined) =>
  formatNames.filter((format) => test(formatFacts(format)));

/** The formats of /api/take, in the table's order. */
export const takeFormats = where((facts) => facts.take !== undefined) as TakeFormat[];

/** The formats of /api/animate: the videos first, then the images that also animate (gif). */
export const animationFormats = [
  ...where((facts) => facts.animate !== undefined && facts.kind === 'animation'),
  ...where((facts) => facts.animate !== undefined && facts.kind !== 'animation'),
] as AnimationFormat[];

/** The formats save_formats may store beside an image or PDF render's output. */
export const savedFormats = where((facts) => facts.saved) as SavedFormat[];

/** A format save_formats may name. */
export type SavedFormat = { [F in OutputFormat]: Table[F] extends { saved: true } ? F : never }[OutputFormat];

/** The output formats that are images (the others are a PDF, text or a video). */
export const imageFormats: readonly OutputFormat[] = where((facts) => facts.kind === 'image');

/** The formats whose image can be transparent on /api/take (omit_background). */
export const transparentTakeFormats: readonly OutputFormat[] = where((facts) => facts.take?.transparency);

/** The format a request's name means, its aliases resolved; undefined for a name that is none. */
export function formatNamed(name: string): OutputFormat | undefined {
  if (Object.hasOwn(formatTable, name)) return name as OutputFormat;
  return formatNames.find((format) => formatFacts(format).aliases?.includes(name));
}

/** True when `name` (a format or an alias) can be transparent as `endpoint` makes it (omit_background). */
export function transparentOn(endpoint: 'take' | 'animate', name: string): boolean {
  const format = formatNamed(name);
  return format !== undefined && formatFacts(format)[endpoint]?.transparency === true;
}

/** The names /api/take accepts for `format`: each format followed by its aliases. */
export const takeFormatNames = takeFormats.flatMap((format) => [
  format,
  ...(formatFacts(format).aliases ?? []),
]) as readonly TakeFormatName[];

/** Content-Type of each output format. */
export const contentTypes = Object.fromEntries(
  formatNames.map((format) => [format, formatTable[format].contentType]),
) as Record<OutputFormat, string>;

/** True when `name` (a format or an alias) is an image format. */
export const isImageFormat = (name: string): boolean => {
  const format = formatNamed(name);
  return format !== undefined && formatFacts(format).kind === 'image';
};

/** The format Chromium captures a screenshot of `format` in: the format itself, or a png the image library converts. */
export const chromiumFormat = (format: OutputFormat): ChromiumImageFormat =>
  formatFacts(format).take?.chromium ?? 'png';

/** The longest side in pixels a screenshot of `name` (a format or an alias) can have: its own limit, else none. */
export function maxImageSide(name: string): number {
  const format = formatNamed(name);
  return (format !== undefined && formatFacts(format).take?.maxSide) || Number.POSITIVE_INFINITY;
}

/** True when the image library (sharp) writes a screenshot of `format` from Chromium's png. */
export const writtenBySharp = (format: OutputFormat): boolean =>
  formatFacts(format).take?.capture === 'screenshot' && chromiumFormat(format) !== format;
