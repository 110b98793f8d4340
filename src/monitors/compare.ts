// Comparing two captures: pixelmatch's perceptual diff, anti-aliasing and edges moved by
// less than a pixel left out, and an image of what changed with each changed region boxed.
import pixelmatch from 'pixelmatch';

type Sharp = typeof import('sharp').default;
let sharpModule: Promise<Sharp> | undefined;
// sharp (and libvips with it) is loaded by the first comparison, never before.
const loadSharp = () => (sharpModule ??= import('sharp').then((module) => module.default));

/** What a comparison found. */
export interface Comparison {
  /** Changed pixels over all pixels of the larger of the two captures, 0–1. */
  changedShare: number;
  /** How many pixels changed. */
  changedPixels: number;
  /** The changed regions, each a box around changed pixels near one another (pixels of the new capture). */
  regions: Box[];
  /** A PNG: the new capture faded to grey, changed pixels in red, each region boxed; made when asked for. */
  diff(): Promise<Buffer>;
}

/** A rectangle of the capture, in pixels. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * pixelmatch's threshold: the largest OKLab HyAB distance (1 is black against white) at which two
 * pixels count as the same colour. Its default, so compression and rounding shades pass.
 */
const SAME_COLOUR = 0.1;

/** How far (0–1) an edge may have moved across a pixel for the pixel to be a blend of its neighbours. */
const MOVED_AT_MOST = 0.85;

/** How far (RGB distance, 0–441) a colour may be from the blend that explains it. */
const BLEND_TOLERANCE = 24;

/** Changed pixels this close (px) belong to one region; a region's box is drawn this far outside its pixels. */
const REGION_CELL = 16;
const BOX_MARGIN = 3;
const BOX_LINE = 2;

interface Raster {
  data: Buffer;
  width: number;
  height: number;
}

async function decode(sharp: Sharp, image: Buffer): Promise<Raster> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The top left `width` × `height` of a raster (the area both captures cover). */
function cropped(raster: Raster, width: number, height: number): Buffer {
  if (raster.width === width && raster.height === height) return raster.data;
  const out = Buffer.allocUnsafe(width * height * 4);
  for (let y = 0; y < height; y++)
    raster.data.copy(out, y * width * 4, y * raster.width * 4, (y * raster.width + width) * 4);
  return out;
}

/** The first and last rows in which two rasters of one size differ at all, or null when they are the same. */
function differingRows(one: Buffer, other: Buffer, width: number, height: number) {
  const rowBytes = width * 4;
  const same = (y: number) =>
    one.compare(other, y * rowBytes, (y + 1) * rowBytes, y * rowBytes, (y + 1) * rowBytes) === 0;
  let first = 0;
  while (first < height && same(first)) first++;
  if (first === height) return null;
  let last = height - 1;
  while (last > first && same(last)) last--;
  return { first, last };
}

/**
 * True when the colour at (x, y) of `to` is the colour there in `from` blended with one of its 8
 * neighbours, by at most MOVED_AT_MOST: what an edge moved by a fraction of a pixel draws. A glyph
 * replaced by another turns pixels from one colour fully to another, which no such blend gives.
 */
function blendOfNeighbour(from: Buffer, to: Buffer, width: number, height: number, x: number, y: number): boolean {
  const at = (y * width + x) * 4;
  const r = from[at],
    g = from[at + 1],
    b = from[at + 2];
  const tr = to[at] - r,
    tg = to[at + 1] - g,
    tb = to[at + 2] - b;
  for (let ny = Math.max(0, y - 1); ny <= Math.min(height - 1, y + 1); ny++) {
    for (let nx = Math.max(0, x - 1); nx <= Math.min(width - 1, x + 1); nx++) {
      const n = (ny * width + nx) * 4;
      const dr = from[n] - r,
        dg = from[n + 1] - g,
        db = from[n + 2] - b;
      const length = dr * dr + dg * dg + db * db;
      if (length === 0) continue;
      // The share of the neighbour's colour that best explains the new one, at most MOVED_AT_MOST.
      const share = Math.min(MOVED_AT_MOST, Math.max(0, (tr * dr + tg * dg + tb * db) / length));
      const er = tr - share * dr,
        eg = tg - share * dg,
        eb = tb - share * db;
      if (er * er + eg * eg + eb * eb <= BLEND_TOLERANCE * BLEND_TOLERANCE) return true;
    }
  }
  return false;
}

/** True when the 3 × 3 pixels around (x, y) of `to` are those of `from` one pixel away in one direction. */
function movedByOnePixel(from: Buffer, to: Buffer, width: number, height: number, x: number, y: number): boolean {
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) {
      if (dx === 0 && dy === 0) continue;
      let same = true;
      for (let py = y - 1; py <= y + 1 && same; py++) {
        for (let px = x - 1; px <= x + 1 && same; px++) {
          const fx = px + dx,
            fy = py + dy;
          if (px < 0 || py < 0 || px >= width || py >= height || fx < 0 || fy < 0 || fx >= width || fy >= height)
            continue;
          const a = (py * width + px) * 4,
            b = (fy * width + fx) * 4;
          const dr = to[a] - from[b],
            dg = to[a + 1] - from[b + 1],
            db = to[a + 2] - from[b + 2];
          same = dr * dr + dg * dg + db * db <= BLEND_TOLERANCE * BLEND_TOLERANCE;
        }
      }
      if (same) return true;
    }
  }
  return false;
}

/**
 * The changed regions: changed pixels grouped by REGION_CELL-sized cells, cells that touch (or
 * nearly) joined, each group's changed pixels boxed. Only rows `from` to `to` (excluded) are looked at.
 */
function regionsOf(changed: Uint8Array, width: number, height: number, from: number, to: number): Box[] {
  const columns = Math.ceil(width / REGION_CELL);
  const rows = Math.ceil(height / REGION_CELL);
  // Per cell: the bounds of its changed pixels (left, top, right, bottom), or none.
  const bounds = new Int32Array(columns * rows * 4).fill(-1);
  for (let y = from; y < to; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      if (!changed[row + x]) continue;
      const cell = (((y / REGION_CELL) | 0) * columns + ((x / REGION_CELL) | 0)) * 4;
      if (bounds[cell] < 0) {
        bounds[cell] = bounds[cell + 2] = x;
        bounds[cell + 1] = bounds[cell + 3] = y;
      } else {
        if (x < bounds[cell]) bounds[cell] = x;
        if (x > bounds[cell + 2]) bounds[cell + 2] = x;
        bounds[cell + 3] = y;
      }
    }
  }
  const seen = new Uint8Array(columns * rows);
  const regions: Box[] = [];
  for (let start = 0; start < columns * rows; start++) {
    if (seen[start] || bounds[start * 4] < 0) continue;
    let [left, top, right, bottom] = [width, height, 0, 0];
    const stack = [start];
    seen[start] = 1;
    while (stack.length > 0) {
      const cell = stack.pop()!;
      left = Math.min(left, bounds[cell * 4]);
      top = Math.min(top, bounds[cell * 4 + 1]);
      right = Math.max(right, bounds[cell * 4 + 2]);
      bottom = Math.max(bottom, bounds[cell * 4 + 3]);
      const cx = cell % columns,
        cy = (cell / columns) | 0;
      // Cells up to two apart join: a changed word is one region, not one per letter.
      for (let ny = Math.max(0, cy - 2); ny <= Math.min(rows - 1, cy + 2); ny++) {
        for (let nx = Math.max(0, cx - 2); nx <= Math.min(columns - 1, cx + 2); nx++) {
          const next = ny * columns + nx;
          if (seen[next] || bounds[next * 4] < 0) continue;
          seen[next] = 1;
          stack.push(next);
        }
      }
    }
    regions.push({ x: left, y: top, width: right - left + 1, height: bottom - top + 1 });
  }
  return regions;
}

/** The share of the page's grey kept in the diff image, over a light grey, so the red reads at a glance. */
const FADE = 0.29;
const FADE_FLOOR = 180;

/**
 * The diff image, a PNG: `after` faded to grey, the changed pixels in rows `from` to
 * `to` (excluded) and the area only one capture covers red, each region boxed in red.
 */
async function drawDiff(
  sharp: Sharp,
  after: Raster,
  changed: Uint8Array,
  size: { width: number; height: number },
  rows: { from: number; to: number },
  regions: Box[],
): Promise<Buffer> {
  const { width, height } = size;
  const out = Buffer.alloc(width * height * 3, 255);
  const data = after.data;
  for (let y = 0; y < after.height; y++) {
    for (let x = 0, a = y * after.width * 4, o = y * width * 3; x < after.width; x++, a += 4, o += 3) {
      const grey = 0.299 * data[a] + 0.587 * data[a + 1] + 0.114 * data[a + 2];
      out[o] = out[o + 1] = out[o + 2] = FADE_FLOOR + grey * FADE;
    }
  }
  const paint = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const o = (y * width + x) * 3;
    out[o] = 255;
    out[o + 1] = 0;
    out[o + 2] = 0;
  };
  for (let y = rows.from; y < rows.to; y++) {
    for (let x = 0; x < width; x++) if (changed[y * width + x]) paint(x, y);
  }
  for (let y = 0; y < height; y++) {
    for (let x = y < after.height ? after.width : 0; x < width; x++) paint(x, y);
  }
  for (const box of regions) {
    const left = box.x - BOX_MARGIN - BOX_LINE;
    const top = box.y - BOX_MARGIN - BOX_LINE;
    const right = box.x + box.width - 1 + BOX_MARGIN + BOX_LINE;
    const bottom = box.y + box.height - 1 + BOX_MARGIN + BOX_LINE;
    for (let line = 0; line < BOX_LINE; line++) {
      for (let x = left; x <= right; x++) {
        paint(x, top + line);
        paint(x, bottom - line);
      }
      for (let y = top; y <= bottom; y++) {
        paint(left + line, y);
        paint(right - line, y);
      }
    }
  }
  // Mostly flat grey: a light compression is nearly as small, and several times faster on a tall capture.
  return sharp(out, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 2 })
    .toBuffer();
}

/**
 * Compares the previous capture with the current one. A pixel has changed when pixelmatch finds its
 * colour visibly different, unless, in either capture, it is a blend of the other's pixel there and
 * a neighbour's, or the pixels around it are the other's one pixel away: anti-aliasing, or an edge
 * drawn a fraction of a pixel elsewhere. (pixelmatch's own anti-aliasing detector takes a pixel
 * beside flat colour in both captures for anti-aliasing whatever the colours, so it drops much of a
 * glyph replaced by another at the same place: it is off.) Where the captures' sizes differ, the
 * area only one of them covers has changed.
 */
export async function compareCaptures(previous: Buffer, current: Buffer): Promise<Comparison> {
  const sharp = await loadSharp();
  const [before, after] = await Promise.all([decode(sharp, previous), decode(sharp, current)]);
  const width = Math.max(before.width, after.width);
  const height = Math.max(before.height, after.height);
  const common = { width: Math.min(before.width, after.width), height: Math.min(before.height, after.height) };
  const was = cropped(before, common.width, common.height);
  const is = cropped(after, common.width, common.height);
  const changed = new Uint8Array(width * height);
  let changedPixels = 0;
  const band = differingRows(was, is, common.width, common.height);
  if (band) {
    // Only the rows from the first that differs to the last, with two rows either side for the
    // neighbourhoods: a change in a tall capture is compared where it is.
    const top = Math.max(0, band.first - 2);
    const rows = Math.min(common.height, band.last + 3) - top;
    const w = common.width;
    const rowBytes = w * 4;
    const wasBand = was.subarray(top * rowBytes, (top + rows) * rowBytes);
    const isBand = is.subarray(top * rowBytes, (top + rows) * rowBytes);
    // pixelmatch draws the pixels it counts, and only those, in the mask.
    const mask = new Uint8Array(w * rows * 4);
    pixelmatch(isBand, wasBand, mask, w, rows, { threshold: SAME_COLOUR, includeAA: true, diffMask: true });
    for (let y = 0; y < rows; y++) {
      for (let x = 0; x < w; x++) {
        if (mask[(y * w + x) * 4 + 3] === 0) continue;
        const moved =
          blendOfNeighbour(wasBand, isBand, w, rows, x, y) ||
          blendOfNeighbour(isBand, wasBand, w, rows, x, y) ||
          movedByOnePixel(wasBand, isBand, w, rows, x, y) ||
          movedByOnePixel(isBand, wasBand, w, rows, x, y);
        if (moved) continue;
        changed[(top + y) * width + x] = 1;
        changedPixels++;
      }
    }
  }
  const regions = band ? regionsOf(changed, width, height, band.first, band.last + 1) : [];
  // The area only one capture covers: changed, and boxed as one region below and one beside.
  for (let y = 0; y < height; y++) {
    for (let x = y < common.height ? common.width : 0; x < width; x++) {
      changed[y * width + x] = 1;
      changedPixels++;
    }
  }
  if (height > common.height) regions.push({ x: 0, y: common.height, width, height: height - common.height });
  if (width > common.width) regions.push({ x: common.width, y: 0, width: width - common.width, height: common.height });
  return {
    changedShare: changedPixels / (width * height),
    changedPixels,
    regions,
    diff: () =>
      drawDiff(
        sharp,
        after,
        changed,
        { width, height },
        band ? { from: band.first, to: band.last + 1 } : { from: 0, to: 0 },
        regions,
      ),
  };
}
