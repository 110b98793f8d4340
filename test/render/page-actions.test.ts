// Navigation conditions and page actions (issue 13) by their visible effect: the colour of pixels
// where a style, a script, a click or a hover paints, against real Chromium and the fixture site.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { pixel as rgba, startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('page actions');

let rig: RenderRig;
let site: RenderRig['site'];
const render: RenderRig['render'] = (...args) => rig.render(...args);

const WHITE = [255, 255, 255];
const GREY = [128, 128, 128];
const RED = [204, 0, 0];
const GREEN = [0, 170, 0];
const BLUE = [0, 0, 255];
const ORANGE = [255, 136, 0];

// The RGB colour at (x, y) of a PNG.
async function pixel(image: Buffer, x: number, y: number): Promise<number[]> {
  return (await rgba(image, x, y)).slice(0, 3);
}

// The colours of the four /pa/page boxes and of the body below them.
async function boxes(image: Buffer) {
  return {
    styled: await pixel(image, 50, 50),
    hidden: await pixel(image, 150, 50),
    clickme: await pixel(image, 250, 50),
    hoverme: await pixel(image, 350, 50),
    body: await pixel(image, 200, 250),
  };
}

// The ServiceError a failed render rejects with.
async function failure(work: Promise<unknown>): Promise<ServiceError> {
  try {
    await work;
  } catch (error) {
    assert.instance(error, ServiceError, String(error));
    return error as ServiceError;
  }
  assert.unreachable('the render should have failed');
  throw new Error('unreachable');
}

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_actions',
    host: { poolSize: 6 },
    defaults: { viewport_width: 400, viewport_height: 300 },
  });
  site = rig.site;
});

test.after(async () => {
  await rig.stop();
});

test('without options the page shows as it is', async () => {
  const { image } = await render('/pa/page');
  assert.equal(await boxes(image), { styled: GREY, hidden: RED, clickme: GREY, hoverme: GREY, body: WHITE });
});

test('styles, hide_selectors, scripts, click and hover each paint their box', async () => {
  const { image } = await render('/pa/page', {
    styles: '#styled { background: rgb(0, 0, 255) !important; }',
    hide_selectors: ['#hidden', 'this is { not a selector'],
    scripts: "document.body.style.background = 'rgb(0, 170, 0)';",
    click: '#clickme',
    hover: '#hoverme',
  });
  assert.equal(await boxes(image), { styled: BLUE, hidden: GREEN, clickme: GREEN, hoverme: ORANGE, body: GREEN });
});

test('a script returning a promise is awaited', async () => {
  const { image } = await render('/pa/page', {
    scripts:
      "new Promise((resolve) => setTimeout(() => { document.body.style.background = 'rgb(0, 0, 255)'; resolve(); }, 300))",
  });
  assert.equal(await pixel(image, 200, 250), BLUE);
});

test('a script that throws is a script_error with its message', async () => {
  const error = await failure(render('/pa/page', { scripts: "throw new Error('the pop-up was not there')" }));
  assert.is(error.code, 'script_error');
  assert.equal(error.details, { error_details: [{ parameter: 'scripts', message: 'the pop-up was not there' }] });
  const rejected = await failure(render('/pa/page', { scripts: "Promise.reject(new TypeError('late failure'))" }));
  assert.is(rejected.code, 'script_error');
  assert.match(JSON.stringify(rejected.details), 'late failure');
});

test('scripts_wait_until waits for the document a script navigated to', async () => {
  const { image, finalUrl } = await render('/pa/page', {
    scripts: "location.href = '/pa/slow-blue'",
    scripts_wait_until: ['load'],
  });
  assert.is(finalUrl, `${site.url}/pa/page`, "the navigation result is the main navigation's");
  assert.equal(await pixel(image, 200, 150), BLUE);
});

test('wait_for_selector waits for a late element; one that never shows is selector_not_found', async () => {
  const started = performance.now();
  const { image } = await render('/pa/late', { wait_for_selector: '#late' });
  assert.equal(await pixel(image, 50, 50), GREEN);
  assert.ok(performance.now() - started >= 600, 'waited for the element');
  const error = await failure(render('/pa/late', { wait_for_selector: '#never', timeout: 2 }));
  assert.is(error.code, 'selector_not_found');
  assert.equal(error.details, { error_details: [{ parameter: 'wait_for_selector', selector: '#never' }] });
});

test('a click or hover target that is missing is selector_not_found, unless switched off', async () => {
  const click = await failure(render('/pa/page', { click: '#nothing' }));
  assert.is(click.code, 'selector_not_found');
  assert.equal(click.details, { error_details: [{ parameter: 'click', selector: '#nothing' }] });
  const hover = await failure(render('/pa/page', { hover: '#nothing' }));
  assert.equal(hover.details, { error_details: [{ parameter: 'hover', selector: '#nothing' }] });
  const { image } = await render('/pa/page', {
    click: '#nothing',
    error_on_click_selector_not_found: false,
    hover: '#nothing',
    error_on_hover_selector_not_found: false,
  });
  assert.equal(await pixel(image, 250, 50), GREY);
  const invalid = await failure(render('/pa/page', { click: 'this is { not a selector' }));
  assert.is(invalid.code, 'request_not_valid');
});

test('scroll_into_view_adjust_top scrolls further after scroll_into_view', async () => {
  // #far is 100 px tall at the top of the viewport; 50 px back up shows white above its top half.
  const plain = await render('/pa/page', { scroll_into_view: '#far' });
  assert.equal(await pixel(plain.image, 50, 10), BLUE);
  const adjusted = await render('/pa/page', { scroll_into_view: '#far', scroll_into_view_adjust_top: -50 });
  assert.equal(await pixel(adjusted.image, 50, 10), WHITE);
  assert.equal(await pixel(adjusted.image, 50, 60), BLUE);
});

test('networkidle0 waits for a request started 300 ms after load; load alone does not', async () => {
  const loaded = await render('/pa/idle');
  assert.equal(await pixel(loaded.image, 200, 150), WHITE);
  const idle = await render('/pa/idle', { wait_until: ['load', 'networkidle0'] });
  assert.equal(await pixel(idle.image, 200, 150), GREEN);
  const alias = await render('/pa/idle', { wait_until: ['networkidle'] });
  assert.equal(await pixel(alias.image, 200, 150), GREEN);
});

test('networkidle2 tolerates two requests in flight', async () => {
  // One slow request in flight is within networkidle2's allowance: it does not wait for it.
  const started = performance.now();
  const { image } = await render('/pa/idle', { wait_until: ['networkidle2'] });
  assert.equal(await pixel(image, 200, 150), WHITE);
  assert.ok(performance.now() - started < 5000);
});

test('a navigation over navigation_timeout is a timeout_error', async () => {
  const started = performance.now();
  const error = await failure(render('/never', { navigation_timeout: 1, timeout: 10 }));
  assert.is(error.code, 'timeout_error');
  assert.ok(performance.now() - started < 5000, 'the navigation alone was limited');
});

test('an html document renders, with an image from the fixture site', async () => {
  const observation = await render('', {
    html: `<!doctype html><html><body style="margin:0;background:#fff"><img src="${site.url}/pa/green.svg" style="display:block"></body></html>`,
  });
  assert.is(observation.mainStatus, null);
  assert.equal(await pixel(observation.image, 50, 50), GREEN);
  assert.equal(await pixel(observation.image, 150, 50), WHITE);
});

test('markdown becomes an HTML document: a heading is an h1', async () => {
  const observation = await render('', {
    markdown: '# Shutterbus heading\n\nSome *text*.',
    styles: 'h1 { background: rgb(0, 0, 255); margin: 0; height: 100px; } body { margin: 0; }',
    fail_if_content_missing: ['Shutterbus heading'],
  });
  assert.match(observation.visibleText, 'Shutterbus heading');
  assert.equal(await pixel(observation.image, 200, 50), BLUE);
});

test('nothing of a render with styles, scripts, click and hover survives into the next one on the warm page', async () => {
  const first = await render(
    '/pa/page',
    {
      styles: '#styled { background: rgb(0, 0, 255) !important; }',
      hide_selectors: ['#hidden'],
      scripts: "document.body.style.background = 'rgb(0, 170, 0)'; window.planted = 1;",
      click: '#clickme',
      hover: '#hoverme',
    },
    'ws_isolation',
  );
  assert.equal((await boxes(first.image)).hoverme, ORANGE);
  const next = await render(
    '/pa/page',
    {
      fail_if_content_contains: ['planted'],
      scripts:
        "document.title = typeof window.planted === 'undefined' ? '' : 'planted'; document.body.append(document.title)",
    },
    'ws_isolation',
  );
  assert.equal(await boxes(next.image), { styled: GREY, hidden: RED, clickme: GREY, hoverme: GREY, body: WHITE });
  const plain = await render('/pa/page', {}, 'ws_isolation');
  assert.equal(await boxes(plain.image), { styled: GREY, hidden: RED, clickme: GREY, hoverme: GREY, body: WHITE });
});

test.run();
