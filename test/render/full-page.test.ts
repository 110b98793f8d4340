// What a full-page capture shows on each kind of page (docs/capture.md): a document that scrolls,
// an app shell whose content scrolls inside an element, fixed and sticky headers, lazy content,
// a 100vh hero, web fonts that start loading after `load`; and the warnings of a cut capture and
// of fonts that did not load. Real Chromium and pages of the test's own, read back as pixels.

import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { near, pixel, startRenderRig, type RenderRig } from '../helpers/render.ts';
import type { FixtureRoute } from '../fixtures/site.ts';
import { renderDefaults } from '../../src/domain/options.ts';

const test = suite('full page');

let rig: RenderRig;

const RED = [204, 0, 0, 255];
const GREEN = [0, 170, 0, 255];
const BLUE = [0, 0, 204, 255];
const WHITE = [255, 255, 255, 255];
const MAGENTA = [204, 0, 204, 255];

const document = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0}</style>${head}</head><body>${body}</body></html>`;
const serve =
  (body: string): FixtureRoute =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(body);
  };

// The content of an app shell's scroller: 4,600 px, white, a green band in its last 100 px, a
// block 3,000 px down that an IntersectionObserver turns blue once it has been seen.
const SHELL_CONTENT = `<div style="height:3000px"></div>
  <div id="observed" style="height:200px;background:#fff"></div>
  <div style="height:1300px"></div>
  <div style="height:100px;background:#0a0"></div>
  <script>new IntersectionObserver((entries, observer) => {
    if (!entries.some((entry) => entry.isIntersecting)) return;
    document.getElementById('observed').style.background = '#00c';
    observer.disconnect();
  }).observe(document.getElementById('observed'));</script>`;

// A 56 px red header above the scroller.
const HEADER = '<header style="height:56px;flex:none;background:#c00"></header>';

// A web font (DejaVu Sans Mono Bold, from the machine) served after `delayMs`.
const fontBytes = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf');
const slowFont =
  (delayMs: number): FixtureRoute =>
  (_request, response: ServerResponse) => {
    const timer = setTimeout(() => {
      response.writeHead(200, { 'content-type': 'font/ttf', 'cache-control': 'no-store' });
      response.end(fontBytes);
    }, delayMs);
    response.on('close', () => clearTimeout(timer));
  };
// A page whose font starts loading only after `load`, from `fontPath`.
const lateFontPage = (fontPath: string) =>
  document(`<p id="text" style="font:60px Late, serif;margin:20px">Shutterbus 123</p>
  <script>addEventListener('load', () => {
    const face = new FontFace('Late', 'url(${fontPath})');
    document.fonts.add(face);
    face.load().catch(() => {});
  });</script>`);

// A page whose @font-face rule is added by a load handler: no font is requested until a layout needs it.
const lateRulePage = document(`<p id="text" style="font:60px LateRule, serif;margin:20px">Shutterbus 123</p>
  <script>addEventListener('load', () => {
    const style = document.createElement('style');
    style.textContent = "@font-face { font-family: LateRule; src: url(/font-slow.ttf) }";
    document.head.append(style);
  });</script>`);

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_full_page',
    defaults: { viewport_width: 800, viewport_height: 600, full_page: true, full_page_scroll_delay: 100 },
    routes: {
      // The usual app shell: a column flex box the height of the viewport, its main part scrolling.
      '/shell-flex': serve(
        document(
          `<div style="display:flex;flex-direction:column;height:100vh">${HEADER}<main style="flex:1;overflow:auto;min-height:0">${SHELL_CONTENT}</main></div>`,
        ),
      ),
      // html and body fill the viewport, html hides overflow, body scrolls.
      '/shell-body': serve(
        document(SHELL_CONTENT, '<style>html{height:100%;overflow:hidden}body{height:100%;overflow:auto}</style>'),
      ),
      // The flex app shell with a 30 px strip below it: the document scrolls by 30 px, the shell by 4,000.
      '/shell-and-strip': serve(
        document(
          `<div style="display:flex;flex-direction:column;height:100vh">${HEADER}<main style="flex:1;overflow:auto;min-height:0">${SHELL_CONTENT}</main></div><div style="height:30px;background:#c0c"></div>`,
        ),
      ),
      // A fixed box inset below a fixed header.
      '/shell-fixed': serve(
        document(`<header style="position:fixed;top:0;left:0;right:0;height:56px;background:#c00"></header>
        <main style="position:fixed;top:56px;left:0;right:0;bottom:0;overflow-y:scroll">${SHELL_CONTENT}</main>`),
      ),
      // A fixed red header, then a sticky blue bar 300 px down, on a 4,000 px document.
      '/sticky': serve(
        document(`<header style="position:fixed;top:0;left:0;right:0;height:50px;background:#c00;z-index:2"></header>
        <div style="height:300px"></div><nav style="position:sticky;top:50px;height:40px;background:#00c;z-index:1"></nav>
        <div style="height:4000px"></div>`),
      ),
      // A fixed magenta footer over a 3,000 px document, and a fixed header.
      '/fixed-footer': serve(
        document(`<header style="position:fixed;top:0;left:0;right:0;height:50px;background:#c00"></header>
        <div style="height:3000px"></div><footer style="position:fixed;bottom:0;left:0;right:0;height:40px;background:#c0c"></footer>`),
      ),
      // A sticky magenta bar at the end of a 3,000 px document.
      '/sticky-footer': serve(
        document(
          '<div style="height:3000px"></div><div style="position:sticky;bottom:0;height:40px;background:#c0c"></div>',
        ),
      ),
      // A green hero of 100vh above 3,000 px of white.
      '/hero': serve(
        document('<section style="height:100vh;background:#0a0"></section><div style="height:3000px"></div>'),
      ),
      // A box at the top that a scroll listener turns green once the page has been scrolled 1,000 px.
      '/scroll-listener': serve(
        document(`<div id="top" style="height:100px;background:#fff"></div><div style="height:3000px"></div>
        <script>addEventListener('scroll', () => {
          if (scrollY > 1000) document.getElementById('top').style.background = '#0a0';
        });</script>`),
      ),
      // An app shell whose scroller's own listener turns the header green once it has scrolled 1,000 px.
      '/shell-listener': serve(
        document(`<div style="display:flex;flex-direction:column;height:100vh">${HEADER}
        <main id="scroller" style="flex:1;overflow:auto;min-height:0"><div style="height:4000px"></div></main></div>
        <script>document.getElementById('scroller').addEventListener('scroll', (event) => {
          if (event.target.scrollTop > 1000) document.querySelector('header').style.background = '#0a0';
        });</script>`),
      ),
      // The same box turned red by a timer that sees the page scrolled: nothing a scroll sets off.
      '/scroll-unwatched': serve(
        document(`<div id="top" style="height:100px;background:#fff"></div><div style="height:3000px"></div>
        <script>setInterval(() => {
          if (scrollY > 0) document.getElementById('top').style.background = '#c00';
        }, 5);</script>`),
      ),
      // A paragraph that an IntersectionObserver writes once its place, 3,000 px down, is seen.
      '/lazy-text': serve(
        document(`<div style="height:3000px"></div><p id="late"></p><div style="height:400px"></div>
        <script>new IntersectionObserver((entries, observer) => {
          if (!entries.some((entry) => entry.isIntersecting)) return;
          document.getElementById('late').textContent = 'Loaded on scroll';
          observer.disconnect();
        }).observe(document.getElementById('late'));</script>`),
      ),
      // A paragraph 3,000 px down that, once seen, fetches its text from a server that takes 600 ms.
      '/lazy-fetch': serve(
        document(`<div style="height:3000px"></div><p id="late"></p><div style="height:400px"></div>
        <script>new IntersectionObserver(async (entries, observer) => {
          if (!entries.some((entry) => entry.isIntersecting)) return;
          observer.disconnect();
          document.getElementById('late').textContent = await (await fetch('/slow-text')).text();
        }).observe(document.getElementById('late'));</script>`),
      ),
      '/slow-text': (_request, response: ServerResponse) => {
        const timer = setTimeout(() => {
          response.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
          response.end('Fetched on scroll');
        }, 600);
        response.on('close', () => clearTimeout(timer));
      },
      // A lazy image 4,000 px down.
      '/lazy-image': serve(
        document(
          '<div style="height:4000px"></div><img loading="lazy" src="/green.png" width="200" height="200" style="display:block"><div style="height:400px"></div>',
        ),
      ),
      '/green.png': async (_request, response) => {
        const png = await sharp({
          create: { width: 200, height: 200, channels: 3, background: { r: 0, g: 170, b: 0 } },
        })
          .png()
          .toBuffer();
        response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
        response.end(png);
      },
      '/late-font': serve(lateFontPage('/font-slow.ttf')),
      '/late-font-ready': serve(lateFontPage('/font-fast.ttf')),
      '/late-font-stuck': serve(lateFontPage('/font-stuck.ttf')),
      '/late-rule': serve(lateRulePage),
      '/font-slow.ttf': slowFont(1500),
      '/font-fast.ttf': slowFont(0),
      '/font-stuck.ttf': slowFont(30_000),
    },
  });
});

test.after(async () => {
  await rig.stop();
});

async function heightOf(image: Buffer): Promise<number> {
  return (await sharp(image).metadata()).height!;
}

// The rows (y) of a column of the image whose pixel is near `colour`, as [first, last] runs.
async function bands(image: Buffer, x: number, colour: number[]): Promise<Array<[number, number]>> {
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const runs: Array<[number, number]> = [];
  for (let y = 0; y < info.height; y++) {
    const at = (y * info.width + x) * info.channels;
    if (!near([...data.subarray(at, at + 4)], colour)) continue;
    const last = runs.at(-1);
    if (last && last[1] === y - 1) last[1] = y;
    else runs.push([y, y]);
  }
  return runs;
}

for (const [path, kind] of [
  ['/shell-flex', 'a flex column of 100vh'],
  ['/shell-body', 'a scrolling body'],
  ['/shell-fixed', 'a fixed inset box'],
] as const) {
  test(`app shell (${kind}): the scroller's whole content, its lazy block loaded, the header once`, async () => {
    const observation = await rig.render(path);
    const { image } = observation;
    const header = path === '/shell-body' ? 0 : 56;
    const height = await heightOf(image);
    assert.ok(Math.abs(height - (header + 4600)) <= 2, `the capture is ${height} px, the content ${header + 4600} px`);
    assert.ok(near(await pixel(image, 400, height - 50), GREEN), 'the bottom band is in the capture');
    assert.ok(near(await pixel(image, 400, header + 3100), BLUE), 'the observed block was scrolled into view');
    assert.equal(await bands(image, 400, RED), header ? [[0, header - 1]] : [], 'the header appears once, at the top');
    assert.is(observation.warnings, undefined);
  });
}

test("app shell in a document that scrolls a little: the shell's whole content, then what is below it", async () => {
  const { image } = await rig.render('/shell-and-strip');
  const height = await heightOf(image);
  assert.ok(Math.abs(height - (56 + 4600 + 30)) <= 2, `the capture is ${height} px`);
  assert.ok(near(await pixel(image, 400, height - 45), GREEN), "the shell's bottom band");
  assert.equal(await bands(image, 400, MAGENTA), [[height - 30, height - 1]]);
});

test('app shell without full_page_scroll: the whole content still, the observed block never seen', async () => {
  const { image } = await rig.render('/shell-flex', { full_page_scroll: false });
  assert.ok(Math.abs((await heightOf(image)) - 4656) <= 2);
  assert.ok(near(await pixel(image, 400, 56 + 3100), WHITE));
});

test('a viewport capture of an app shell is the viewport', async () => {
  const { image } = await rig.render('/shell-flex', { full_page: false });
  assert.is(await heightOf(image), 600);
});

test('a fixed header and a sticky bar appear once each, where they are at the top of the page', async () => {
  const { image } = await rig.render('/sticky');
  assert.is(await heightOf(image), 4340);
  assert.equal(await bands(image, 400, RED), [[0, 49]]);
  assert.equal(await bands(image, 400, BLUE), [[300, 339]]);
});

test('a fixed footer appears once, at the bottom of the page; the header stays at the top', async () => {
  const { image } = await rig.render('/fixed-footer');
  assert.is(await heightOf(image), 3000);
  assert.equal(await bands(image, 400, MAGENTA), [[2960, 2999]]);
  assert.equal(await bands(image, 400, RED), [[0, 49]]);
  // Cut at 1,000 px, the footer is at the bottom of what is captured.
  assert.equal(await bands((await rig.render('/fixed-footer', { full_page_max_height: 1000 })).image, 400, MAGENTA), [
    [960, 999],
  ]);
  // A viewport capture is the viewport: the footer at its bottom.
  assert.equal(await bands((await rig.render('/fixed-footer', { full_page: false })).image, 400, MAGENTA), [
    [560, 599],
  ]);
});

test('a sticky footer appears once, in its place at the end of the page', async () => {
  const { image } = await rig.render('/sticky-footer');
  assert.is(await heightOf(image), 3040);
  assert.equal(await bands(image, 400, MAGENTA), [[3000, 3039]]);
});

test('a 100vh hero keeps the viewport height in the capture', async () => {
  const { image } = await rig.render('/hero');
  assert.is(await heightOf(image), 3600);
  assert.equal(await bands(image, 400, GREEN), [[0, 599]]);
});

test('a loading=lazy image far down the page is loaded by the scroll; without it, it is not', async () => {
  const before = rig.site.hits.get('/green.png') ?? 0;
  const { image } = await rig.render('/lazy-image');
  assert.is(await heightOf(image), 4600);
  assert.ok(near(await pixel(image, 100, 4100), GREEN));
  assert.is(rig.site.hits.get('/green.png'), before + 1);
  const unscrolled = (await rig.render('/lazy-image', { full_page_scroll: false })).image;
  assert.not.ok(near(await pixel(unscrolled, 100, 4100), GREEN));
});

test('a scroll step that loads nothing moves on at once; a delay given is a pause per step', async () => {
  // /hero is 3,600 px: six steps of 600 px, each waiting what the caller asked when a delay is given.
  const timed = async (options: Record<string, unknown>) => {
    const started = performance.now();
    const { image } = await rig.render('/hero', options);
    assert.is(await heightOf(image), 3600);
    return performance.now() - started;
  };
  const given = await timed({ full_page_scroll_delay: 1000 });
  assert.ok(given >= 5000, `six pauses of 1,000 ms were waited (${Math.round(given)} ms)`);
  const adaptive = await timed({});
  assert.ok(adaptive < given - 2500, `the default moves on once nothing loads (${Math.round(adaptive)} ms)`);
});

test('at the default delay a page scrolls only when something loads on scroll', async () => {
  const adaptive = { full_page_scroll_delay: renderDefaults.full_page_scroll_delay };
  // An IntersectionObserver, a loading=lazy image, a scroll listener: each is scrolled to.
  const { visibleText } = await rig.render('/lazy-text', {
    ...adaptive,
    fail_if_content_missing: ['loaded on scroll'],
  });
  assert.match(visibleText, 'Loaded on scroll');
  assert.ok(near(await pixel((await rig.render('/lazy-image', adaptive)).image, 100, 4100), GREEN));
  assert.ok(near(await pixel((await rig.render('/scroll-listener', adaptive)).image, 10, 10), GREEN));
  // An app shell's scroller listens on itself, not on the window: a scripted shell is scrolled.
  assert.ok(near(await pixel((await rig.render('/shell-listener', adaptive)).image, 10, 10), GREEN));
  // Nothing of the kind: captured as it stands, never scrolled; a delay given scrolls it all the same.
  assert.ok(near(await pixel((await rig.render('/scroll-unwatched', adaptive)).image, 10, 10), WHITE));
  assert.ok(
    near(await pixel((await rig.render('/scroll-unwatched', { full_page_scroll_delay: 50 })).image, 10, 10), RED),
  );
});

test('a scroll step waits for what it started loading: a fetch of 600 ms, its text in the capture', async () => {
  const { visibleText } = await rig.render('/lazy-fetch', {
    full_page_scroll_delay: 2000,
    fail_if_content_missing: ['fetched on scroll'],
  });
  assert.match(visibleText, 'Fetched on scroll');
});

test("a content rule reads the full page's text as captured: what loads on scroll is there", async () => {
  const { visibleText } = await rig.render('/lazy-text', { fail_if_content_missing: ['loaded on scroll'] });
  assert.match(visibleText, 'Loaded on scroll');
  const unscrolled = await rig.render('/lazy-text', { full_page_scroll: false, fail_if_content_missing: ['x'] });
  assert.not.match(unscrolled.visibleText, 'Loaded on scroll');
});

test('a capture cut at full_page_max_height says so; one that is not, says nothing', async () => {
  const cut = await rig.render('/hero', { full_page_max_height: 1000 });
  assert.is(await heightOf(cut.image), 1000);
  assert.equal(
    cut.warnings?.map((w) => w.code),
    ['full_page_cut'],
  );
  assert.match(cut.warnings![0].message, '3600 px');
  const shellCut = await rig.render('/shell-flex', { full_page_max_height: 2000 });
  assert.equal(
    shellCut.warnings?.map((w) => w.code),
    ['full_page_cut'],
  );
  assert.is((await rig.render('/hero')).warnings, undefined);
});

test('a web font that starts loading after load is awaited', async () => {
  const reference = (await rig.render('/late-font-ready', { full_page: false, delay: 1 })).image;
  const started = performance.now();
  const late = await rig.render('/late-font', { full_page: false });
  const ms = performance.now() - started;
  assert.ok(ms >= 1400, `the render waited for the font (${Math.round(ms)} ms)`);
  assert.ok(late.image.equals(reference), 'the text is drawn in the web font');
  assert.is(late.warnings, undefined);
});

test('a web font declared after load, not yet requested by a layout, is awaited', async () => {
  const reference = (await rig.render('/late-font-ready', { full_page: false, delay: 1 })).image;
  const started = performance.now();
  const late = await rig.render('/late-rule', { full_page: false });
  const ms = performance.now() - started;
  assert.ok(ms >= 1400, `the render waited for the font (${Math.round(ms)} ms)`);
  assert.ok(late.image.equals(reference), 'the text is drawn in the web font');
  assert.is(late.warnings, undefined);
});

test('a web font that does not load within 5 s is given up on, and the render says so', async () => {
  const started = performance.now();
  const stuck = await rig.render('/late-font-stuck', { full_page: false });
  const ms = performance.now() - started;
  assert.ok(ms >= 5000 && ms < 9000, `gave up after ${Math.round(ms)} ms`);
  assert.equal(
    stuck.warnings?.map((w) => w.code),
    ['fonts_not_loaded'],
  );
});

test.run();
