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

/** The image as `options` asks for it; unchanged (and no work done) when Chromium's capture is it already. */
export async function finishImage(image: Buffer, options: RenderOptions): Promise<Buffer> {
  const { image_width: width, image_height: height, format } = options;
  const resize = width !== undefined || height !== undefined;
  if (!resize && captureFormat(format) === format) return image;
  const sharp = await loadSharp();
  // The input is our own screenshot, so sharp's pixel limit for untrusted input does not apply.
  let pipeline = sharp(image, { limitInputPixels: false });
  // Both sides given: exactly that size (ScreenshotOne's reading); one side scales the other with it.
  if (resize) pipeline = pipeline.resize({ width, height, fit: width !== undefined && height !== undefined ? 'fill' : 'inside' });
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
    default:
      return {};
  }
}

/** The pixel size of an image, read from its header (metadata_image_size). */
export async function imageSize(image: Buffer): Promise<{ width: number; height: number }> {
  const { width, height } = await (await loadSharp())(image).metadata();
  return { width: width ?? 0, height: height ?? 0 };
}
