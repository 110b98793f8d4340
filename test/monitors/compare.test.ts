// The comparison of two captures: real changes counted, anti-aliasing, sub-pixel shifts and compression ignored.
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MIN_CHANGED_PIXELS, nextRunAfter } from '../../src/domain/monitor.ts';
import { compareCaptures } from '../../src/monitors/compare.ts';

const compare = suite('comparing captures');

/** A 400 × 200 page: text (anti-aliased by the rasteriser) at `dx`, and a block of `colour`. */
const capture = (options: { dx?: number; colour?: string; format?: 'png' | 'jpeg' } = {}) => {
  const { dx = 0, colour = '#1e40af', format = 'png' } = options;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#fff"/>
    <text x="${20 + dx}" y="40" font-family="sans-serif" font-size="22" fill="#111">Pricing: 12 € a month, billed yearly</text>
    <line x1="${20 + dx}" y1="60" x2="${380 + dx}" y2="75" stroke="#333" stroke-width="1.3"/>
    <rect x="0" y="100" width="100" height="100" fill="${colour}"/></svg>`;
  const image = sharp(Buffer.from(svg));
  return (format === 'jpeg' ? image.jpeg({ quality: 60 }) : image.png()).toBuffer();
};

compare('the same capture has not changed', async () => {
  const same = await compareCaptures(await capture(), await capture());
  assert.is(same.changedShare, 0);
});

compare('text and lines moved by a fraction of a pixel, or compressed as JPEG, have not changed', async () => {
  const shifted = await compareCaptures(await capture(), await capture({ dx: 0.4 }));
  assert.ok(shifted.changedShare < 0.001, `sub-pixel shift: ${shifted.changedShare}`);
  const compressed = await compareCaptures(await capture(), await capture({ format: 'jpeg' }));
  assert.ok(compressed.changedShare < 0.001, `JPEG: ${compressed.changedShare}`);
});

compare('a block that changed colour is the share of the page it covers, and red in the diff', async () => {
  const changed = await compareCaptures(await capture(), await capture({ colour: '#f97316' }));
  assert.ok(Math.abs(changed.changedShare - (100 * 100) / (400 * 200)) < 0.002, String(changed.changedShare));
  const { data, info } = await sharp(await changed.diff())
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  assert.equal([info.width, info.height], [400, 200]);
  const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
  assert.equal(pixel(50, 150), [255, 0, 0]);
  assert.not.equal(pixel(300, 150), [255, 0, 0]);
});

compare('text that changed is a change', async () => {
  const svg = (text: string) =>
    sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#fff"/><text x="20" y="40" font-family="sans-serif" font-size="22">${text}</text></svg>`,
      ),
    )
      .png()
      .toBuffer();
  const changed = await compareCaptures(await svg('Pricing: 12 € a month'), await svg('Pricing: 19 € a month'));
  assert.ok(changed.changedShare > 0.0005, String(changed.changedShare * 80000));
});

compare('a digit replaced by another in place is a change, boxed in the diff', async () => {
  // 32 px text in a 240 × 64 element: "$19 / month" becoming "$12 / month" changes one glyph.
  const price = (text: string) =>
    sharp(
      Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="64"><rect width="240" height="64" fill="#fff"/><text x="8" y="44" font-family="sans-serif" font-size="32" fill="#111">${text}</text></svg>`,
      ),
    )
      .png()
      .toBuffer();
  const changed = await compareCaptures(await price('$19 / month'), await price('$12 / month'));
  assert.ok(changed.changedPixels >= DEFAULT_MIN_CHANGED_PIXELS, `${changed.changedPixels} changed pixels`);
  assert.is(changed.regions.length, 1, JSON.stringify(changed.regions));
  const [box] = changed.regions;
  // The second digit only: right of "$1", left of " / month".
  assert.ok(box.x > 30 && box.x + box.width < 90, JSON.stringify(box));
  const { data, info } = await sharp(await changed.diff())
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const red = (x: number, y: number) => {
    const at = (y * info.width + x) * 3;
    return data[at] > 200 && data[at + 1] < 40 && data[at + 2] < 40;
  };
  // The box's left edge is drawn in red beside the changed pixels, over what did not change.
  const edge = box.x - 4;
  assert.ok(red(edge, box.y + Math.floor(box.height / 2)), 'the left edge of the box');
  assert.not.ok(red(box.x + box.width + 20, box.y + Math.floor(box.height / 2)), 'outside the box');
  const same = await compareCaptures(await price('$19 / month'), await price('$19 / month'));
  assert.equal([same.changedPixels, same.regions], [0, []]);
});

compare('captures of different sizes: the part only one covers has changed', async () => {
  const taller = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#fff' } })
    .png()
    .toBuffer();
  const shorter = await sharp({ create: { width: 400, height: 200, channels: 3, background: '#fff' } })
    .png()
    .toBuffer();
  const changed = await compareCaptures(shorter, taller);
  assert.ok(Math.abs(changed.changedShare - 1 / 3) < 1e-9, String(changed.changedShare));
});

compare('the next tick: one interval on, or the first slot after now when ticks were missed', () => {
  const due = Date.UTC(2026, 0, 1, 12, 0, 0);
  assert.is(nextRunAfter(due, 60, due + 5_000), due + 60_000);
  assert.is(nextRunAfter(due, 60, due + 60_000), due + 120_000);
  assert.is(nextRunAfter(due, 60, due + 185_000), due + 240_000);
});

compare.run();
