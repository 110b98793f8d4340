// The /take options that shape one render (docs/options.md), against real Chromium and pages of
// this test's own: the locale an Accept-Language header sets (and its undo on the warm page),
// full_page_algorithm=by_sections, selector_algorithm and selector_scroll_into_view,
// include_shadow_dom and wait_for_selector_algorithm.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import type { CDPSession, Page } from 'playwright-core';
import { applyEmulation } from '../../src/render/steps/emulation.ts';
import { renderDefaults } from '../../src/domain/options.ts';
import { splitSelectorList } from '../../src/render/steps/page-actions.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import type { FixtureRoute } from '../fixtures/site.ts';
import { Progress } from '../../src/render/browser/progress.ts';

const test = suite('take options on one render');
let rig: RenderRig;

const html = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0}</style>${head}</head><body>${body}</body></html>`;
const page =
  (body: string, head = ''): FixtureRoute =>
  (_req, res) =>
    void res.writeHead(200, { 'Content-Type': 'text/html' }).end(html(body, head));

// What the page believes about its locale, written into its body as JSON.
const LOCALE_PROBE = `<pre id="out"></pre><script>out.textContent = JSON.stringify({
  language: navigator.language, languages: navigator.languages,
  number: new Intl.NumberFormat().format(1234.5),
  date: new Date(Date.UTC(2024, 2, 5, 12)).toLocaleDateString(undefined, { timeZone: 'UTC' }),
  resolved: Intl.DateTimeFormat().resolvedOptions().locale,
})</script>`;

// Bands of 500 px, a fixed 40 px bar at the top of the viewport and a fixed 30 px grey one at its bottom.
const BANDS = ['#ff0000', '#00ff00', '#0000ff', '#ffff00', '#00ffff', '#ff00ff'];
const BANDED = BANDS.map((c) => `<div style="height:500px;background:${c}"></div>`).join('');
const SECTIONS = `<div style="position:fixed;top:0;left:0;right:0;height:40px;background:#000"></div>${BANDED}<div style="position:fixed;bottom:0;left:0;right:0;height:30px;background:#808080;opacity:0.99"></div>`;
// A sticky 40 px header above the same bands.
const STICKY_SECTIONS = `<div style="position:sticky;top:0;height:40px;background:#000;z-index:1"></div>${BANDED}`;

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_take_options',
    routes: {
      '/locale': page(LOCALE_PROBE),
      '/sections': page(SECTIONS),
      '/sticky-sections': page(STICKY_SECTIONS),
      // A fixed backdrop filling the viewport behind 2,000 px of transparent content.
      '/backdrop-sections': page(
        '<div style="position:fixed;inset:0;z-index:-1;background:#0000ff"></div><div style="height:2000px"></div>',
      ),
      // An element far below the fold, and a fixed overlay over the top 100 px of the viewport.
      '/element': page(
        `<div style="height:1500px"></div><div id="target" style="width:300px;height:300px;background:#00ff00"></div><div style="height:1500px"></div><div style="position:fixed;top:0;left:0;width:100%;height:100px;background:#ff0000"></div>`,
      ),
      '/shadow': page(`<div id="open-host"></div><div id="closed-host"><span>slotted light text</span></div><script>
        const openRoot = document.getElementById('open-host').attachShadow({ mode: 'open' }); openRoot.innerHTML = '<p>' + ['open', 'shadow', 'text'].join(' ') + '</p>';
        const closedRoot = document.getElementById('closed-host').attachShadow({ mode: 'closed' }); closedRoot.innerHTML = '<p>' + ['closed', 'shadow', 'text'].join(' ') + '</p><slot></slot>';
      </script>`),
      '/shadow-ad': page(`<div id="host"></div><script>
        const root = document.getElementById('host').attachShadow({ mode: 'closed' });
        root.innerHTML = '<div class="ad" style="height:100px;background:#ff0000"></div><div style="height:100px;background:#0000ff"></div>';
      </script>`),
      '/late': page(
        `<div class="a" style="height:50px;background:#0000ff"></div><script>setTimeout(() => { const b = document.createElement('div'); b.className = 'b'; b.style.cssText = 'height:50px;background:#00ff00'; document.body.append(b); }, 700)</script>`,
      ),
    },
  });
});
test.after(async () => rig?.stop());

const probe = async (options: Parameters<RenderRig['render']>[1]) =>
  JSON.parse(
    /<pre id="out">([^<]*)<\/pre>/
      .exec((await rig.render('/locale', { format: 'html', ...options })).image.toString('utf8'))![1]
      .replaceAll('&quot;', '"'),
  );

test('Accept-Language in headers sets navigator.language and Intl formats; the next render on the warm page has none', async () => {
  const german = await probe({ headers: ['Accept-Language: de-DE,de;q=0.9,en;q=0.5'] });
  assert.is(german.language, 'de-DE');
  assert.equal(german.languages, ['de-DE', 'de', 'en']);
  assert.is(german.number, '1.234,5');
  assert.is(german.date, '5.3.2024');
  assert.is(german.resolved, 'de-DE');
  assert.is(
    rig.site.received.filter((r) => r.path === '/locale').at(-1)!.headers['accept-language'],
    'de-DE,de;q=0.9,en;q=0.5',
  );
  const plain = await probe({});
  assert.is.not(plain.language, 'de-DE');
  assert.is(plain.number, '1,234.5');
  assert.is.not(plain.resolved, 'de-DE');
});

test('a locale with a user agent keeps both', async () => {
  const both = await probe({ headers: ['Accept-Language: fr-FR'], user_agent: 'ShutterbusLocaleAgent/1' });
  assert.is(both.language, 'fr-FR');
  assert.is(both.number, '1\u202f234,5');
  assert.is(
    rig.site.received.filter((r) => r.path === '/locale').at(-1)!.headers['user-agent'],
    'ShutterbusLocaleAgent/1',
  );
});

test('headers without Accept-Language make no emulation call', async () => {
  const calls: string[] = [];
  const spy = new Proxy(
    {},
    {
      get:
        (_, name) =>
        (...args: unknown[]) => {
          calls.push(`${String(name)} ${JSON.stringify(args[0] ?? '')}`);
          return Promise.resolve({});
        },
    },
  );
  const options = { ...renderDefaults, url: 'http://example.test/', headers: ['X-Test: 1'] };
  const progress = Progress.start(30_000);
  await applyEmulation({ page: spy as Page, session: spy as CDPSession, options, progress });
  await progress.undo();
  assert.equal(calls, []);
});

async function rgbAt(image: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at], data[at + 1], data[at + 2]];
}
const hex = (colour: string) => [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 10);

test('full_page_algorithm=by_sections: viewport-high sections stitched, fixed bars once', async () => {
  const shot = await rig.render('/sections', {
    full_page: true,
    full_page_algorithm: 'by_sections',
    full_page_scroll: false,
    viewport_width: 400,
    viewport_height: 600,
  });
  const meta = await sharp(shot.image).metadata();
  assert.equal([meta.width, meta.height], [400, 3000]);
  // The header once, at the top, as a person scrolling the page sees it first; the other sections
  // (at 600, 1200, 1800 and 2400 px) start with the page's bands, not the bar again.
  assert.ok(near(await rgbAt(shot.image, 200, 20), [0, 0, 0]), 'header at the top');
  for (const [top, band] of [
    [600, 1],
    [1200, 2],
    [1800, 3],
    [2400, 4],
  ] as const)
    assert.ok(near(await rgbAt(shot.image, 200, top + 20), hex(BANDS[band])), `no header at ${top}`);
  // The footer once, at the bottom of the page (the last section is scrolled to the page's
  // bottom), not at the foot of every section.
  assert.ok(near(await rgbAt(shot.image, 200, 2990), [128, 128, 128]), 'footer at the bottom');
  for (const [bottom, band] of [
    [600, 1],
    [1200, 2],
    [1800, 3],
  ] as const)
    assert.ok(near(await rgbAt(shot.image, 200, bottom - 10), hex(BANDS[band])), `no footer above ${bottom}`);
  // Between the bars, the bands where the page has them.
  for (const [y, band] of [
    [100, 0],
    [700, 1],
    [1100, 2],
    [1700, 3],
    [2100, 4],
    [2900, 5],
  ] as const) {
    assert.ok(
      near(await rgbAt(shot.image, 200, y), hex(BANDS[band])),
      `band ${band} at ${y}: ${await rgbAt(shot.image, 200, y)}`,
    );
  }
  // A backdrop is no bar: it stays behind every section.
  const backdrop = await rig.render('/backdrop-sections', {
    full_page: true,
    full_page_algorithm: 'by_sections',
    full_page_scroll: false,
    viewport_width: 400,
    viewport_height: 600,
  });
  for (const y of [100, 900, 1500, 1950])
    assert.ok(near(await rgbAt(backdrop.image, 200, y), [0, 0, 255]), `backdrop at ${y}`);
  // A sticky header: in its place at the top only, the bands 40 px lower.
  const sticky = await rig.render('/sticky-sections', {
    full_page: true,
    full_page_algorithm: 'by_sections',
    full_page_scroll: false,
    viewport_width: 400,
    viewport_height: 600,
  });
  assert.equal((await sharp(sticky.image).metadata()).height, 3040);
  assert.ok(near(await rgbAt(sticky.image, 200, 20), [0, 0, 0]), 'sticky header at the top');
  for (const top of [600, 1200, 1800, 2400, 3000]) {
    const band = Math.floor((top + 20 - 40) / 500);
    assert.ok(near(await rgbAt(sticky.image, 200, top + 20), hex(BANDS[band])), `no sticky header at ${top}`);
  }
  // The default algorithm: one capture, the fixed bar once at the top.
  const whole = await rig.render('/sections', {
    full_page: true,
    full_page_scroll: false,
    viewport_width: 400,
    viewport_height: 600,
  });
  assert.ok(near(await rgbAt(whole.image, 200, 620), hex(BANDS[1])), 'no bar at 600 in one capture');
});

test('selector_algorithm: default captures the element alone, clip as the viewport paints it', async () => {
  const alone = await rig.render('/element', { selector: '#target' });
  assert.equal([(await sharp(alone.image).metadata()).width, (await sharp(alone.image).metadata()).height], [300, 300]);
  assert.ok(near(await rgbAt(alone.image, 150, 20), [0, 255, 0]), 'default: the element, not the overlay');
  const clipped = await rig.render('/element', { selector: '#target', selector_algorithm: 'clip' });
  assert.equal(
    [(await sharp(clipped.image).metadata()).width, (await sharp(clipped.image).metadata()).height],
    [300, 300],
  );
  // Scrolled to the top of the viewport, under the fixed overlay's 100 px, as a reader sees it.
  assert.ok(
    near(await rgbAt(clipped.image, 150, 20), [255, 0, 0]),
    `clip: the overlay over it ${await rgbAt(clipped.image, 150, 20)}`,
  );
  assert.ok(near(await rgbAt(clipped.image, 150, 200), [0, 255, 0]), 'clip: the element below the overlay');
});

test('selector_scroll_into_view=false: the page is not scrolled for a clip', async () => {
  const unscrolled = await rig.render('/element', {
    selector: '#target',
    selector_algorithm: 'clip',
    selector_scroll_into_view: false,
  });
  // The element is 1500 px down, out of the 720 px viewport: the viewport does not paint it there.
  assert.not.ok(near(await rgbAt(unscrolled.image, 150, 200), [0, 255, 0]), 'not scrolled into view');
});

test('include_shadow_dom: html and markdown output hold open and closed shadow roots', async () => {
  const without = (await rig.render('/shadow', { format: 'html' })).image.toString('utf8');
  assert.not.match(without, 'open shadow text');
  const withShadow = (await rig.render('/shadow', { format: 'html', include_shadow_dom: true })).image.toString('utf8');
  assert.match(withShadow, /<template shadowrootmode="open"><p>open shadow text<\/p><\/template>/);
  assert.match(withShadow, /<template shadowrootmode="closed"><p>closed shadow text<\/p><slot><\/slot><\/template>/);
  assert.match(withShadow, /^<!DOCTYPE html>/i);
  // Markdown: the shadow content in its place, a slot filled with the host's light child.
  const plain = (await rig.render('/shadow', { format: 'markdown' })).image.toString('utf8');
  assert.not.match(plain, 'closed shadow text');
  const markdown = (await rig.render('/shadow', { format: 'markdown', include_shadow_dom: true })).image.toString(
    'utf8',
  );
  assert.match(markdown, 'open shadow text');
  assert.match(markdown, 'closed shadow text');
  assert.match(markdown, /closed shadow text[\s\S]*slotted light text/);
});

test('include_shadow_dom: hide_selectors reach into shadow roots, closed ones too', async () => {
  const shown = await rig.render('/shadow-ad', { hide_selectors: ['.ad'], viewport_width: 200, viewport_height: 200 });
  assert.ok(near(await rgbAt(shown.image, 50, 50), [255, 0, 0]), 'without include_shadow_dom the shadow ad stays');
  const hidden = await rig.render('/shadow-ad', {
    hide_selectors: ['.ad'],
    include_shadow_dom: true,
    viewport_width: 200,
    viewport_height: 200,
  });
  // The ad gone from inside the closed root, the rest of the root moves up into its place.
  assert.ok(
    near(await rgbAt(hidden.image, 50, 50), [0, 0, 255]),
    `hidden inside the closed root ${await rgbAt(hidden.image, 50, 50)}`,
  );
  assert.ok(near(await rgbAt(hidden.image, 50, 150), [255, 255, 255]));
  // Undone: the same warm page, the next render shows the ad again.
  const again = await rig.render('/shadow-ad', { viewport_width: 200, viewport_height: 200 });
  assert.ok(near(await rgbAt(again.image, 50, 50), [255, 0, 0]));
});

test('wait_for_selector_algorithm=at_least_by_count waits for every selector of the list', async () => {
  assert.equal(splitSelectorList('.a, div[data-x="1,2"], :is(.b, .c)'), ['.a', 'div[data-x="1,2"]', ':is(.b, .c)']);
  const one = await rig.render('/late', { wait_for_selector: '.a, .b', viewport_width: 200, viewport_height: 200 });
  assert.ok(near(await rgbAt(one.image, 100, 75), [255, 255, 255]), 'at_least_one: .a is enough, .b not there yet');
  const every = await rig.render('/late', {
    wait_for_selector: '.a, .b',
    wait_for_selector_algorithm: 'at_least_by_count',
    viewport_width: 200,
    viewport_height: 200,
  });
  assert.ok(near(await rgbAt(every.image, 100, 75), [0, 255, 0]), 'at_least_by_count: .b waited for');
});

test.run();
