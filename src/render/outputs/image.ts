// The captured image made into what was asked for: converted to gif, avif or tiff, scaled to
// image_width / image_height.
import {
  chromiumFormat,
  formatFacts,
  maxImageSide,
  writtenBySharp,
  type ChromiumImageFormat,
} from '../../domain/formats.ts';
import { MAX_CAPTURE_PIXELS, type OutputFormat, type RenderOptions } from '../../domain/options.ts';
import { warning, type RenderWarning } from '../../domain/warnings.ts';

type Sharp = typeof import('sharp').default;
let sharpModule: Promise<Sharp> | undefined;

// sharp (and libvips with it) is loaded on the first render that needs it, never before.
function loadSharp(): Promise<Sharp> {
  sharpModule ??= import('sharp').then((module) => module.default);
  return sharpModule;
}

/** `image` scaled down to fit `maxSide` px a side (never up), as a JPEG of `quality`: a thumbnail. */
export async function thumbnail(image: Buffer, maxSide: number, quality: number): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(image)
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality })
    .toBuffer();
}

/** The format Chromium captures in: png, jpeg and webp directly, the other images from a png (src/domain/formats.ts). */
export function captureFormat(format: OutputFormat): ChromiumImageFormat {
  return chromiumFormat(format);
}

/**
 * True when Chromium's png is not the output itself but the input of finishImage (converted to
 * another format or scaled): then its size does not matter and Chromium's fast PNG encoding
 * (optimizeForSpeed: about half the encoding CPU, files 1.3–2× larger; docs/performance.md) is used.
 */
export function pngIsIntermediate(options: Pick<RenderOptions, 'format' | 'image_width' | 'image_height'>): boolean {
  return (
    captureFormat(options.format) === 'png' &&
    (writtenBySharp(options.format) || options.image_width !== undefined || options.image_height !== undefined)
  );
}

/** The longest side any image is scaled to: what JPEG and GIF hold at most. */
const MAX_SCALED_SIDE = 65535;

/**
 * The image as `options` asks for it; unchanged (and no work done) when Chromium's capture is it
 * already. A size asked for that would make the image larger than a capture may be (a full page
 * scaled up by image_width alone) is scaled down to fit, aspect kept, and `warnings` says so.
 */
export async function finishImage(
  image: Buffer,
  options: RenderOptions,
  warnings: RenderWarning[] = [],
): Promise<Buffer> {
  const { image_width: width, image_height: height, format } = options;
  const resize = width !== undefined || height !== undefined;
  if (!resize && !writtenBySharp(format)) return image;
  const sharp = await loadSharp();
  // The input is our own screenshot, so sharp's pixel limit for untrusted input does not apply.
  let pipeline = sharp(image, { limitInputPixels: false });
  if (resize) {
    const { width: fromWidth = 1, height: fromHeight = 1 } = await pipeline.metadata();
    // Both sides given: exactly that size (ScreenshotOne's reading); one side scales the other with it.
    const asked = {
      width: width ?? Math.max(1, Math.round((fromWidth * height!) / fromHeight)),
      height: height ?? Math.max(1, Math.round((fromHeight * width!) / fromWidth)),
    };
    const side = Math.min(maxImageSide(format), MAX_SCALED_SIDE);
    const shrink = Math.min(
      1,
      Math.sqrt(MAX_CAPTURE_PIXELS / (asked.width * asked.height)),
      side / asked.width,
      side / asked.height,
    );
    if (shrink < 1) {
      // The height from the width made, so the aspect is the one asked for.
      const madeWidth = Math.max(1, Math.floor(asked.width * shrink));
      const made = {
        width: madeWidth,
        height: Math.max(
          1,
          Math.min(Math.floor(asked.height * shrink), Math.floor((madeWidth * asked.height) / asked.width)),
        ),
      };
      warnings.push(
        warning('image_scaled_down', `Asked for ${asked.width}×${asked.height}; made ${made.width}×${made.height}.`),
      );
      pipeline = pipeline.resize({ ...made, fit: 'fill' });
    } else
      pipeline = pipeline.resize({
        width,
        height,
        fit: width !== undefined && height !== undefined ? 'fill' : 'inside',
      });
  }
  return pipeline.toFormat(format as keyof import('sharp').FormatEnum, encoderOptions(options)).toBuffer();
}

// image_quality where the format has one, and the format's own encoder options (src/domain/formats.ts).
function encoderOptions(options: Pick<RenderOptions, 'format' | 'image_quality'>): Record<string, unknown> {
  const take = formatFacts(options.format).take;
  return { ...(take?.quality ? { quality: options.image_quality } : {}), ...take?.sharpOptions };
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
      .toFormat(options.format as keyof import('sharp').FormatEnum, encoderOptions(options))
      .toBuffer();
    slices.push({ index, offset_y: top, width, height, bytes });
  }
  return slices;
}

/**
 * Why this machine's image library cannot write `format`, or undefined when it can: jp2 needs
 * libvips built with OpenJPEG, heif an HEVC encoder, and the prebuilt sharp has neither. Only the
 * formats the registry gives a reason for are probed, once each.
 */
export async function unwritableFormat(format: OutputFormat): Promise<string | undefined> {
  const reason = formatFacts(format).take?.unwritable;
  if (reason === undefined) return undefined;
  formatChecks[format] ??= probe(format, reason);
  return formatChecks[format];
}

const formatChecks: Partial<Record<OutputFormat, Promise<string | undefined>>> = {};

async function probe(format: OutputFormat, reason: string): Promise<string | undefined> {
  const sharp = await loadSharp();
  const pixel = sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } });
  try {
    await pixel
      .toFormat(format as keyof import('sharp').FormatEnum, encoderOptions({ format, image_quality: 80 }))
      .toBuffer();
    return undefined;
  } catch {
    return reason;
  }
}

/** The pixel size of an image, read from its header (metadata_image_size). */
export async function imageSize(image: Buffer): Promise<{ width: number; height: number }> {
  const { width, height } = await (await loadSharp())(image).metadata();
  return { width: width ?? 0, height: height ?? 0 };
}
