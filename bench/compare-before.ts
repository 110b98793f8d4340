// The monitors' comparator before pixelmatch, kept for `make bench ARGS=compare`'s before figure:
// src/monitors/compare.ts as it was, a pixel a blend when within its 3 × 3 neighbourhood's range.
type Sharp = typeof import('sharp').default;
let sharpModule: Promise<Sharp> | undefined;
// sharp (and libvips with it) is loaded by the first comparison, never before.
const loadSharp = () => (sharpModule ??= import('sharp').then((module) => module.default));

/** What a comparison found. */
export interface Comparison {
  /** Changed pixels over all pixels of the larger of the two captures, 0–1. */
  changedShare: number;
  /** A PNG: the new capture faded to grey, changed pixels in red. */
  diff: Buffer;
}

/**
 * Colour distance (YIQ, as the eye weighs it; 0–35215) under which two pixels count as the same:
 * 10 % of the largest distance, squared, so compression and anti-aliasing shades pass.
 */
const SAME_COLOUR = 35215 * 0.1 * 0.1;

interface Raster {
  data: Buffer;
  width: number;
  height: number;
}

async function decode(sharp: Sharp, image: Buffer): Promise<Raster> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Perceptual distance between the pixel at `a` of one raster and at `b` of another (RGB, 3 bytes each). */
function distance(one: Buffer, a: number, other: Buffer, b: number): number {
  const r1 = one[a],
    g1 = one[a + 1],
    b1 = one[a + 2];
  const r2 = other[b],
    g2 = other[b + 1],
    b2 = other[b + 2];
  const y = (r1 - r2) * 0.29889531 + (g1 - g2) * 0.58662247 + (b1 - b2) * 0.11448223;
  const i = (r1 - r2) * 0.59597799 - (g1 - g2) * 0.2741761 - (b1 - b2) * 0.32180189;
  const q = (r1 - r2) * 0.21147017 - (g1 - g2) * 0.52261711 + (b1 - b2) * 0.31114694;
  return 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
}

/** How far (0–255, per channel) a colour may stray outside its neighbours' and still count as a blend of them. */
const BLEND_TOLERANCE = 24;

/**
 * True when the pixel at (x, y) of `one` could be drawn from the pixels around (x, y) in `other`:
 * each channel within the range of the 3 × 3 neighbourhood there. An edge drawn a fraction of a
 * pixel elsewhere, or shaded differently, mixes the colours on either side of it; new content does not.
 */
function blendOfNeighbours(one: Raster, other: Raster, x: number, y: number): boolean {
  const at = (y * one.width + x) * 3;
  for (let channel = 0; channel < 3; channel++) {
    let low = 255;
    let high = 0;
    for (let ny = Math.max(0, y - 1); ny <= Math.min(other.height - 1, y + 1); ny++) {
      for (let nx = Math.max(0, x - 1); nx <= Math.min(other.width - 1, x + 1); nx++) {
        const value = other.data[(ny * other.width + nx) * 3 + channel];
        if (value < low) low = value;
        if (value > high) high = value;
      }
    }
    const value = one.data[at + channel];
    if (value < low - BLEND_TOLERANCE || value > high + BLEND_TOLERANCE) return false;
  }
  return true;
}

/**
 * Compares the previous capture with the current one. A pixel has changed when its colour differs
 * visibly and it is not, in either capture, a blend of the other capture's pixels around it: an edge
 * moved by a pixel or shaded differently (anti-aliasing, compression) is not a change, new content is.
 * Where the captures' sizes differ, the area only one of them covers has changed.
 */
export async function compareCaptures(previous: Buffer, current: Buffer): Promise<Comparison> {
  const sharp = await loadSharp();
  const [before, after] = await Promise.all([decode(sharp, previous), decode(sharp, current)]);
  const width = Math.max(before.width, after.width);
  const height = Math.max(before.height, after.height);
  const diff = Buffer.alloc(width * height * 3, 255);
  let changed = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const out = (y * width + x) * 3;
      const inBefore = x < before.width && y < before.height;
      const inAfter = x < after.width && y < after.height;
      let isChanged = !inBefore || !inAfter;
      if (!isChanged) {
        const a = (y * before.width + x) * 3;
        const b = (y * after.width + x) * 3;
        isChanged =
          distance(before.data, a, after.data, b) > SAME_COLOUR &&
          (!blendOfNeighbours(before, after, x, y) || !blendOfNeighbours(after, before, x, y));
      }
      if (isChanged) {
        changed++;
        diff[out] = 255;
        diff[out + 1] = 0;
        diff[out + 2] = 0;
      } else if (inAfter) {
        // The unchanged page, faded to a light grey, so the red reads at a glance.
        const b = (y * after.width + x) * 3;
        const grey = 0.299 * after.data[b] + 0.587 * after.data[b + 1] + 0.114 * after.data[b + 2];
        diff[out] = diff[out + 1] = diff[out + 2] = Math.round(180 + grey * 0.29);
      }
    }
  }
  const image = await sharp(diff, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
  return { changedShare: changed / (width * height), diff: image };
}
