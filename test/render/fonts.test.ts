// Text in every script a browser user meets renders as glyphs, colour emoji included, and a page's
// language picks its own CJK face (docs/capture.md, "Fonts"): real Chromium with the fontconfig
// file of src/render/browser/fonts.ts, read back as pixels.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fontconfigXml } from '../../src/render/browser/fonts.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('fonts');

let rig: RenderRig;

// A character no font has: Chromium draws its empty box (tofu).
const TOFU = '\u{10FFFD}';

const SAMPLES: Array<{ script: string; lang: string; text: string }> = [
  { script: 'Latin', lang: 'en', text: 'Ag' },
  { script: 'Greek', lang: 'el', text: 'Ωλ' },
  { script: 'Cyrillic', lang: 'ru', text: 'Жя' },
  { script: 'Chinese', lang: 'zh-CN', text: '汉字' },
  { script: 'Japanese', lang: 'ja', text: 'かな' },
  { script: 'Korean', lang: 'ko', text: '한글' },
  { script: 'Arabic', lang: 'ar', text: 'عرب' },
  { script: 'Hebrew', lang: 'he', text: 'עבר' },
  { script: 'Devanagari', lang: 'hi', text: 'हिन्दी' },
  { script: 'Tamil', lang: 'ta', text: 'தமிழ்' },
  { script: 'Bengali', lang: 'bn', text: 'বাংলা' },
  { script: 'Thai', lang: 'th', text: 'ไทย' },
  // The other Indic scripts, and the other alphabets a browser user meets.
  { script: 'Telugu', lang: 'te', text: 'తెలుగు' },
  { script: 'Kannada', lang: 'kn', text: 'ಕನ್ನಡ' },
  { script: 'Malayalam', lang: 'ml', text: 'മലയാളം' },
  { script: 'Gujarati', lang: 'gu', text: 'ગુજરાતી' },
  { script: 'Gurmukhi', lang: 'pa', text: 'ਪੰਜਾਬੀ' },
  { script: 'Odia', lang: 'or', text: 'ଓଡ଼ିଆ' },
  { script: 'Sinhala', lang: 'si', text: 'සිංහල' },
  { script: 'Traditional Chinese', lang: 'zh-TW', text: '漢體' },
  { script: 'Armenian', lang: 'hy', text: 'Հայ' },
  { script: 'Georgian', lang: 'ka', text: 'ქართ' },
];

const CELL = { width: 160, height: 80 };

/** A page of cells, left to right, each one text of its own at 40 px; cell i at x = i × CELL.width. */
function cellsPage(cells: Array<{ lang?: string; text: string; family?: string }>): string {
  const spans = cells.map(
    ({ lang, text, family }, i) =>
      `<div ${lang ? `lang="${lang}" ` : ''}style="position:absolute;left:${i * CELL.width}px;top:0;width:${CELL.width}px;height:${CELL.height}px;overflow:hidden;font:40px/80px ${family ?? 'sans-serif'};text-align:center">${text}</div>`,
  );
  return `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#fff;color:#000}</style></head><body>${spans.join('')}</body></html>`;
}

/** The raw RGB pixels of each cell of an image of `count` cells. */
async function cellPixels(image: Buffer, count: number): Promise<Buffer[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      sharp(image)
        .extract({ left: i * CELL.width, top: 0, width: CELL.width, height: CELL.height })
        .removeAlpha()
        .raw()
        .toBuffer(),
    ),
  );
}

const inked = (pixels: Buffer) => pixels.some((value) => value < 128);

// A strongly coloured pixel: channels far apart (black text and grey anti-aliasing are not).
const coloured = (pixels: Buffer) => {
  for (let i = 0; i < pixels.length; i += 3) {
    const [r, g, b] = [pixels[i], pixels[i + 1], pixels[i + 2]];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 80) return true;
  }
  return false;
};

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_fonts', defaults: { viewport_width: 2400, viewport_height: 100 } });
});

test.after(async () => {
  await rig.stop();
});

test('every script renders as glyphs, not as the box of a character no font has', async () => {
  const cells = [{ text: TOFU }, { text: TOFU + TOFU }, ...SAMPLES.map(({ lang, text }) => ({ lang, text }))];
  const image = (await rig.render('', { html: cellsPage(cells), viewport_width: cells.length * CELL.width })).image;
  const [tofu, tofus, ...samples] = await cellPixels(image, cells.length);
  assert.ok(inked(tofu), 'the tofu box is drawn');
  assert.not.equal(tofu, tofus, 'the probe tells drawings apart');
  SAMPLES.forEach(({ script }, i) => {
    assert.ok(inked(samples[i]), `${script} is drawn`);
    // A script with no font shows one tofu box per character: two characters look like two boxes.
    assert.not.equal(samples[i], tofus, `${script} is not two tofu boxes`);
    assert.not.equal(samples[i], tofu, `${script} is not a tofu box`);
  });
});

test('emoji are drawn in colour', async () => {
  const cells = [{ text: '😀' }, { text: '🌍' }, { text: '🇯🇵' }, { text: TOFU }];
  const image = (await rig.render('', { html: cellsPage(cells), viewport_width: cells.length * CELL.width })).image;
  const [smile, globe, flag, tofu] = await cellPixels(image, cells.length);
  for (const [name, pixels] of Object.entries({ smile, globe, flag }))
    assert.ok(coloured(pixels), `${name} emoji is in colour`);
  assert.not.ok(coloured(tofu), 'a tofu box is not');
});

// 直 and 骨 are drawn differently in Japan, mainland China, Taiwan and Korea: each language's
// cell, and the cells of the faces named, for sans-serif and serif.
async function languageFaces(on: RenderRig, workspaceId?: string | null) {
  const han = '直骨';
  const cells = [
    { lang: 'ja', text: han },
    { lang: 'zh-CN', text: han },
    { lang: 'zh-TW', text: han },
    { lang: 'ko', text: han },
    { text: han, family: "'Noto Sans CJK JP'" },
    { text: han, family: "'Noto Sans CJK SC'" },
    { text: han, family: "'Noto Sans CJK TC'" },
    { text: han, family: "'Noto Sans CJK KR'" },
    { lang: 'ja', text: han, family: 'serif' },
    { text: han, family: "'Noto Serif CJK JP'" },
    { text: han, family: "'Noto Serif CJK SC'" },
  ];
  const options = { html: cellsPage(cells), viewport_width: cells.length * CELL.width };
  const image = (await on.render('', options, workspaceId)).image;
  const [ja, zhCN, zhTW, ko, jpFace, scFace, tcFace, krFace, jaSerif, jpSerif, scSerif] = await cellPixels(
    image,
    cells.length,
  );
  assert.not.equal(jpFace, scFace, 'the Japanese and Chinese faces differ for these characters');
  assert.not.equal(jpFace, tcFace);
  assert.not.equal(jpSerif, scSerif);
  return {
    ja: ja.equals(jpFace),
    'zh-CN': zhCN.equals(scFace),
    'zh-TW': zhTW.equals(tcFace),
    ko: ko.equals(krFace),
    'ja serif': jaSerif.equals(jpSerif),
  };
}

const EVERY_LANGUAGE_ITS_FACE = { ja: true, 'zh-CN': true, 'zh-TW': true, ko: true, 'ja serif': true };

test("a page's language picks its CJK face for sans-serif and serif", async () => {
  assert.equal(await languageFaces(rig), EVERY_LANGUAGE_ITS_FACE);
});

test('so does a page of its own, outside the warm pages (a render with no workspace)', async () => {
  assert.equal(await languageFaces(rig, null), EVERY_LANGUAGE_ITS_FACE);
});

// What fontconfig answers for a generic family in a language, under the configuration `file`.
// (A family name's dash is escaped: in fontconfig's pattern syntax it would start the size.)
const faceFor = (file: string, generic: string, lang: string) =>
  execFileSync('fc-match', ['-f', '%{family[0]}', `${generic.replace('-', '\\-')}:lang=${lang}`], {
    env: { ...process.env, FONTCONFIG_FILE: file },
    encoding: 'utf8',
  });

const EXPECTED_FACES: Record<string, Record<string, string>> = {
  ja: { 'sans-serif': 'Noto Sans CJK JP', serif: 'Noto Serif CJK JP', monospace: 'Noto Sans Mono CJK JP' },
  ko: { 'sans-serif': 'Noto Sans CJK KR', serif: 'Noto Serif CJK KR', monospace: 'Noto Sans Mono CJK KR' },
  'zh-cn': { 'sans-serif': 'Noto Sans CJK SC', serif: 'Noto Serif CJK SC', monospace: 'Noto Sans Mono CJK SC' },
  'zh-tw': { 'sans-serif': 'Noto Sans CJK TC', serif: 'Noto Serif CJK TC', monospace: 'Noto Sans Mono CJK TC' },
  'zh-hk': { 'sans-serif': 'Noto Sans CJK HK', serif: 'Noto Serif CJK TC', monospace: 'Noto Sans Mono CJK HK' },
};

test("the service's fontconfig file gives each language its face, on a machine whose configuration does not", async () => {
  // A machine's configuration that only lists the fonts: no generic families, no language rules.
  const directory = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-fonts-test-'));
  try {
    const bare = path.join(directory, 'bare.conf');
    writeFileSync(
      bare,
      '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd"><fontconfig><dir>/usr/share/fonts</dir><cachedir>/var/cache/fontconfig</cachedir></fontconfig>',
    );
    const ours = path.join(directory, 'ours.conf');
    writeFileSync(ours, fontconfigXml(bare));
    const answers = (file: string) =>
      Object.fromEntries(
        Object.entries(EXPECTED_FACES).map(([lang, faces]) => [
          lang,
          Object.fromEntries(Object.keys(faces).map((generic) => [generic, faceFor(file, generic, lang)])),
        ]),
      );
    assert.not.equal(answers(bare), EXPECTED_FACES, 'the bare configuration alone gives some language another face');
    assert.equal(answers(ours), EXPECTED_FACES);
    // Chromium with the service's file over the bare configuration draws every script and face.
    const other = await startRenderRig({ workspaceId: 'ws_fonts_bare', host: { fontconfigFile: ours } });
    try {
      assert.equal(await languageFaces(other), EVERY_LANGUAGE_ITS_FACE);
    } finally {
      await other.stop();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

test.run();
