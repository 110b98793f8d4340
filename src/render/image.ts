// The captured image made into what was asked for: converted to gif, avif or tiff, scaled to
// image_width / image_height.
import type { OutputFormat, RenderOptions } from '../domain/options.ts';

type Sharp = typeof import('sharp').default;
let sharpModule: Promise<Sharp> | undefined;

// sharp (and libvips with it) is loaded on the first render that needs it, never before.
function loadSharp(): Promise<Sharp> {
  sharpModule ??= import('sharp').then((module) => module.default);
  return sharpModule;
}

/** The format Chromium captures in: png, jpeg and webp directly, the other images from a png. */
export function captureFormat(format: OutputFormat): 'png' | 'jpeg' | 'webp' {
  return format === 'jpeg' || format === 'webp' ? format : 'png';
}

/**
 * True when Chromium's png is not the output itself but the input of finishImage (converted to
 * another format or scaled): then its size does not matter and Chromium's fast PNG encoding
 * (optimizeForSpeed: about half the encoding CPU, files 1.3–2× larger; docs/performance.md) is used.
 */
export function pngIsIntermediate(options: Pick<RenderOptions, 'format' | 'image_width' | 'image_height'>): boolean {
  return (
    captureFormat(options.format) === 'png' &&
    (options.format !== 'png' || options.image_width !== undefined || options.image_height !== undefined)
  );
}

/** The image as `options` asks for it; unchanged (and no work done) when Chromium's capture is it already. */
export async function finishImage(image: Buffer, options: RenderOptions): Promise<Buffer> {
  const { image_width: width, image_height: height, format } = options;
  const resize = width !== undefined || height !== undefined;
  if (!resize && captureFormat(format) === format) return image;
  const sharp = await loadSharp();
  // The input is our own screenshot, so sharp's pixel limit for untrusted input does not apply.
  let pipeline = sharp(image, { limitInputPixels: false });
  // Both sides given: exactly that size (ScreenshotOne's reading); one side scales the other with it.
  if (resize)
    pipeline = pipeline.resize({ width, height, fit: width !== undefined && height !== undefined ? 'fill' : 'inside' });
  return pipeline.toFormat(format as keyof import('sharp').FormatEnum, encoderOptions(options)).toBuffer();
}

// image_quality where the format has one; tiff is compressed losslessly (LZW), as readers expect.
// avif at effort 2 (sharp's default is 4): about a quarter of the CPU for files some 8% larger.
function encoderOptions(options: RenderOptions): Record<string, unknown> {
  switch (options.format) {
    case 'jpeg':
    case 'webp':
      return { quality: options.image_quality };
    case 'avif':
      return { quality: options.image_quality, effort: 2 };
    case 'tiff':
      return { compression: 'lzw' };
    case 'jp2':
      return { quality: options.image_quality };
    case 'heif':
      return { quality: options.image_quality, compression: 'hevc' };
    default:
      return {};
  }
}

/** One slice of a full-page image (full_page_slices), in the output's format. */
export interface ImageSlice {
  index: number;
  offset_y: number;
  width: number;
  height: number;
  bytes: Buffer;
}

/**
 * Cuts `image` into slices `height` px tall from the top, each starting `height - overlap` px below
 * the one before; the last is what remains. A slice that would only repeat the one before it (the
 * image ends inside the overlap) is not made.
 */
export async function sliceImage(
  image: Buffer,
  options: Pick<
    RenderOptions,
    'format' | 'image_quality' | 'full_page_slice_height' | 'full_page_slice_overlap_height'
  >,
): Promise<ImageSlice[]> {
  const sharp = await loadSharp();
  const { width = 0, height: total = 0 } = await sharp(image, { limitInputPixels: false }).metadata();
  const step = options.full_page_slice_height - options.full_page_slice_overlap_height;
  const slices: ImageSlice[] = [];
  for (let top = 0, index = 0; top < total; top += step, index++) {
    if (index > 0 && top + options.full_page_slice_overlap_height >= total) break;
    const height = Math.min(options.full_page_slice_height, total - top);
    const bytes = await sharp(image, { limitInputPixels: false })
      .extract({ left: 0, top, width, height })
      .toFormat(options.format as keyof import('sharp').FormatEnum, encoderOptions(options as RenderOptions))
      .toBuffer();
    slices.push({ index, offset_y: top, width, height, bytes });
  }
  return slices;
}

/**
 * Why this machine's image library cannot write `format`, or undefined when it can: jp2 needs
 * libvips built with OpenJPEG, heif an HEVC encoder, and the prebuilt sharp has neither.
 */
export async function unwritableFormat(format: OutputFormat): Promise<string | undefined> {
  if (format !== 'jp2' && format !== 'heif') return undefined;
  formatChecks[format] ??= probe(format);
  return formatChecks[format];
}

const formatChecks: Partial<Record<OutputFormat, Promise<string | undefined>>> = {};

async function probe(format: 'jp2' | 'heif'): Promise<string | undefined> {
  const sharp = await loadSharp();
  const pixel = sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } });
  try {
    await pixel.toFormat(format, encoderOptions({ format, image_quality: 80 } as RenderOptions)).toBuffer();
    return undefined;
  } catch {
    return format === 'jp2'
      ? 'JPEG 2000 cannot be written here: the image library (libvips in sharp) is built without OpenJPEG'
      : "HEIF cannot be written here: the image library (libheif in sharp) has no HEVC encoder (use avif, HEIF's AV1 form)";
  }
}

/** The pixel size of an image, read from its header (metadata_image_size). */
export async function imageSize(image: Buffer): Promise<{ width: number; height: number }> {
  const { width, height } = await (await loadSharp())(image).metadata();
  return { width: width ?? 0, height: height ?? 0 };
}
