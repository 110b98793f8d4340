// The captured image made into what was asked for: scaled to image_width / image_height.
import type { RenderOptions } from '../domain/options.ts';

type Sharp = typeof import('sharp').default;
let sharpModule: Promise<Sharp> | undefined;

// sharp (and libvips with it) is loaded on the first render that resizes, never before.
function loadSharp(): Promise<Sharp> {
  sharpModule ??= import('sharp').then((module) => module.default);
  return sharpModule;
}

/** The image as `options` asks for it; unchanged (and no work done) when no resizing is asked. */
export async function finishImage(image: Buffer, options: RenderOptions): Promise<Buffer> {
  const { image_width: width, image_height: height } = options;
  if (width === undefined && height === undefined) return image;
  const sharp = await loadSharp();
  // Fit inside the box asked for, aspect kept: one side given scales the other with it.
  // The input is our own screenshot, so sharp's pixel limit for untrusted input does not apply.
  return sharp(image, { limitInputPixels: false })
    .resize({ width, height, fit: 'inside' })
    .toFormat(options.format, options.format === 'png' ? {} : { quality: options.image_quality })
    .toBuffer();
}
