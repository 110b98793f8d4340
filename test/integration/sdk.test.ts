// ScreenshotOne's own Node SDK, unmodified, pointed at {base_url}/api: it builds and signs the requests
// for each option family, and each request's effect is checked on the image or at the fixture site.
import sharp from 'sharp';
import { Client, TakeOptions } from 'screenshotone-api-sdk';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { startSdkHelpers, type SdkHelpers } from '../helpers/sdk-helpers.ts';
import { waitFor } from '../helpers/wait.ts';

const sdk = suite('screenshotone-api-sdk against Shutterbus');
let stack: TestStack;
let service: TestService;
let client: Client;
// Forward proxies, a fake vision API, a webhook receiver and a locale page, for the options of docs/options.md.
let helpers: SdkHelpers;

sdk.before(async () => {
  stack = await startStack();
  helpers = await startSdkHelpers();
  service = await startService(stack, {
    GEO_PROXIES: `de=${helpers.geoProxy.url()}`,
    VISION_API_URL: `${helpers.base}/v1/chat/completions`,
    WEBHOOK_RETRY_SCHEDULE: '1s',
  });
  const workspace = await createWorkspace(stack);
  client = new Client(workspace.access_key, workspace.secret_key, `${service.base}/api`);
});
sdk.after(async () => {
  await service?.close();
  await helpers?.close();
  await stack?.stop();
});

/** Renders through a signed URL the SDK built; fails the test unless the answer is an image. */
async function shoot(options: TakeOptions) {
  const answer = await call(await client.generateSignedTakeURL(options));
  assert.is(answer.status, 200, answer.bytes.toString('utf8').slice(0, 300));
  const { data, info } = await sharp(answer.bytes).raw().toBuffer({ resolveWithObject: true });
  const pixel = (x: number, y: number) => {
    const at = (y * info.width + x) * info.channels;
    return [data[at], data[at + 1], data[at + 2]];
  };
  return { answer, width: info.width, height: info.height, pixel };
}

const near = (actual: number[], expected: number[]) => actual.every((value, i) => Math.abs(value - expected[i]) <= 8);
const colourPage = (css: string, script = '') =>
  `<!doctype html><html><head><style>html,body{margin:0;height:100%}${css}</style></head><body><div id="box" style="width:100px;height:100px"></div>${script}</body></html>`;

sdk('format, viewport and a signed GET', async () => {
  const { answer, width, height } = await shoot(
    TakeOptions.url(`${stack.site.url}/`).format('webp').viewportWidth(800).viewportHeight(600),
  );
  assert.is(answer.contentType, 'image/webp');
  assert.equal([width, height], [800, 600]);
});

sdk('a device preset, with its scale', async () => {
  const { width, height } = await shoot(TakeOptions.url(`${stack.site.url}/`).viewportDevice('iphone_13'));
  assert.equal([width, height], [390 * 3, 664 * 3]);
});

sdk('dark mode and a time zone paint what the page asks', async () => {
  const dark = await shoot(
    TakeOptions.html(
      colourPage('body{background:#fff}@media (prefers-color-scheme: dark){body{background:#000}}'),
    ).darkMode(true),
  );
  assert.ok(near(dark.pixel(300, 300), [0, 0, 0]), `dark ${dark.pixel(300, 300)}`);
  const zone = colourPage(
    '',
    `<script>document.body.style.background = new Date(Date.UTC(2024,0,1)).getTimezoneOffset() === -540 ? '#00ff00' : '#ff0000'</script>`,
  );
  const tokyo = await shoot(TakeOptions.html(zone).timeZone('Asia/Tokyo'));
  assert.ok(near(tokyo.pixel(300, 300), [0, 255, 0]), `Asia/Tokyo ${tokyo.pixel(300, 300)}`);
});

sdk('headers, authorization and cookies reach the target', async () => {
  const from = stack.site.received.length;
  await shoot(
    TakeOptions.url(`${stack.site.url}/page/sdk-request`)
      .headers('X-Shutterbus-Test: from-sdk')
      .authorization('Bearer sdk-token')
      .cookies('sdk_cookie=yes'),
  );
  const request = stack.site.received.slice(from).find((r) => r.path === '/page/sdk-request')!;
  assert.is(request.headers['x-shutterbus-test'], 'from-sdk');
  assert.is(request.headers.authorization, 'Bearer sdk-token');
  assert.match(String(request.headers.cookie), /sdk_cookie=yes/);
});

sdk('styles, scripts, hidden elements and clicks', async () => {
  const styled = await shoot(
    TakeOptions.html(colourPage('body{background:#fff}')).styles('body{background:#0000ff !important}'),
  );
  assert.ok(near(styled.pixel(300, 300), [0, 0, 255]), `styles ${styled.pixel(300, 300)}`);
  const scripted = await shoot(
    TakeOptions.html(colourPage('body{background:#fff}')).scripts("document.body.style.background = '#ff0000'"),
  );
  assert.ok(near(scripted.pixel(300, 300), [255, 0, 0]), `scripts ${scripted.pixel(300, 300)}`);
  const hidden = await shoot(
    TakeOptions.html(colourPage('body{background:#fff}#box{background:#000}')).hideSelectors('#box'),
  );
  assert.ok(near(hidden.pixel(50, 50), [255, 255, 255]), `hide_selectors ${hidden.pixel(50, 50)}`);
  const clicked = await shoot(
    TakeOptions.html(
      colourPage(
        'body{background:#fff}',
        `<script>box.onclick = () => document.body.style.background = '#00ff00'</script>`,
      ),
    ).click('#box'),
  );
  assert.ok(near(clicked.pixel(300, 300), [0, 255, 0]), `click ${clicked.pixel(300, 300)}`);
});

sdk('full page height, clip and resizing', async () => {
  const tall = await shoot(
    TakeOptions.url(`${stack.site.url}/very-tall`).fullPage(true).fullPageMaxHeight(1000).fullPageScroll(false),
  );
  assert.equal([tall.width, tall.height], [1280, 1000]);
  const clip = await shoot(TakeOptions.url(`${stack.site.url}/`).clipX(10).clipY(20).clipWidth(300).clipHeight(200));
  assert.equal([clip.width, clip.height], [300, 200]);
  const small = await shoot(TakeOptions.url(`${stack.site.url}/`).imageWidth(640));
  assert.equal([small.width, small.height], [640, 360]);
});

sdk('markdown as the page', async () => {
  const { width, height } = await shoot(TakeOptions.markdown('# Hello from Markdown\n\nA paragraph.'));
  assert.equal([width, height], [1280, 720]);
});

sdk('cache_key: the same signed URL redirects, another key renders afresh', async () => {
  const options = (key: string) => TakeOptions.url(`${stack.site.url}/page/sdk-cache`).cacheKey(key).cache(true);
  assert.is((await call(await client.generateSignedTakeURL(options('v1')))).status, 200);
  assert.is((await call(await client.generateSignedTakeURL(options('v1')))).status, 302);
  assert.is((await call(await client.generateSignedTakeURL(options('v2')))).status, 200);
});

/** Calls a signed URL the SDK built and reads the JSON answer. */
async function takeJson(options: TakeOptions) {
  const answer = await call(await client.generateSignedTakeURL(options.responseType('json')));
  assert.is(answer.status, 200, answer.bytes.toString('utf8').slice(0, 300));
  return answer.json!;
}

sdk('proxy, proxyBypassHosts and ipCountryCode: the page leaves through the proxy asked for', async () => {
  const through = `${stack.site.url}/page/sdk-proxy`;
  await shoot(TakeOptions.url(through).proxy(helpers.customerProxy.url()));
  assert.ok(
    helpers.customerProxy.seen.some((entry) => entry.target === through && entry.allowed),
    'proxy',
  );
  const bypassed = `${stack.site.url}/page/sdk-bypass`;
  await shoot(TakeOptions.url(bypassed).proxy(helpers.customerProxy.url()).proxyBypassHosts('127.0.0.1', 'localhost'));
  assert.not.ok(
    helpers.customerProxy.seen.some((entry) => entry.target === bypassed),
    'proxyBypassHosts',
  );
  const german = `${stack.site.url}/page/sdk-geo`;
  await shoot(TakeOptions.url(german).ipCountryCode('de'));
  assert.ok(
    helpers.geoProxy.seen.some((entry) => entry.target === german && entry.allowed),
    'ipCountryCode',
  );
  assert.is((await call(await client.generateSignedTakeURL(TakeOptions.url(german).ipCountryCode('us')))).status, 400);
});

sdk('visionPrompt, visionMaxTokens and openAiApiKey: the answer is vision', async () => {
  const json = await takeJson(
    TakeOptions.html('<body style="background:#00f"></body>')
      .visionPrompt('Which colour?')
      .visionMaxTokens(20)
      .openAiApiKey('sk-sdk-key'),
  );
  assert.is(json.vision, 'Answer to: Which colour?');
  const sent = helpers.visionCalls.at(-1)!;
  assert.equal([sent.headers.authorization, sent.body.max_tokens], ['Bearer sk-sdk-key', 20]);
});

sdk("fullPageSlices, fullPageSliceHeight and fullPageSliceOverlapHeight: the slices' offsets", async () => {
  const page = `<body style="margin:0"><div style="height:2500px;background:#0f0"></div></body>`;
  const json = await takeJson(
    TakeOptions.html(page)
      .viewportWidth(200)
      .fullPage(true)
      .fullPageScroll(false)
      .fullPageSlices(true)
      .fullPageSliceHeight(1000)
      .fullPageSliceOverlapHeight(200),
  );
  assert.equal(
    json.slices.map((slice: { offset_y: number; height: number }) => [slice.offset_y, slice.height]),
    [
      [0, 1000],
      [800, 1000],
      [1600, 900],
    ],
  );
});

sdk('fullPageAlgorithm by_sections, selectorAlgorithm, selectorScrollIntoView', async () => {
  const sections = await shoot(
    TakeOptions.html('<body style="margin:0"><div style="height:2000px;background:#f00"></div></body>')
      .fullPage(true)
      .fullPageAlgorithm('by_sections'),
  );
  assert.equal([sections.width, sections.height], [1280, 2000]);
  assert.ok(near(sections.pixel(100, 1900), [255, 0, 0]), `by_sections ${sections.pixel(100, 1900)}`);
  const element =
    '<body style="margin:0"><div style="height:1200px"></div><div id="e" style="width:120px;height:80px;background:#0f0"></div></body>';
  const clipped = await shoot(
    TakeOptions.html(element).selector('#e').selectorAlgorithm('clip').selectorScrollIntoView(true),
  );
  assert.equal([clipped.width, clipped.height], [120, 80]);
  assert.ok(near(clipped.pixel(60, 40), [0, 255, 0]), `selectorAlgorithm clip ${clipped.pixel(60, 40)}`);
  const whole = await shoot(TakeOptions.html(element).selector('#e').selectorAlgorithm('default'));
  assert.ok(near(whole.pixel(60, 40), [0, 255, 0]));
});

sdk('includeShadowDom: the html output holds the shadow root', async () => {
  const page = `<div id="h"></div><script>document.getElementById('h').attachShadow({ mode: 'closed' }).innerHTML = '<b>' + 'in the ' + 'shadow</b>'</script>`;
  const answer = await call(
    await client.generateSignedTakeURL(TakeOptions.html(page).format('html').includeShadowDom(true)),
  );
  assert.match(answer.bytes.toString('utf8'), '<template shadowrootmode="closed"><b>in the shadow</b></template>');
});

sdk('waitForSelectorAlgorithm at_least_by_count waits for each selector of the list', async () => {
  const page = `<body style="margin:0"><script>setTimeout(() => { document.body.innerHTML += '<div class="late" style="height:100px;background:#0f0"></div>' }, 600)</script><div class="early" style="height:100px;background:#00f"></div></body>`;
  const shot = await shoot(
    TakeOptions.html(page).waitForSelector('.early, .late').waitForSelectorAlgorithm('at_least_by_count'),
  );
  assert.ok(near(shot.pixel(50, 150), [0, 255, 0]), `late element ${shot.pixel(50, 150)}`);
});

sdk("headers with Accept-Language set the page's locale", async () => {
  const answer = await call(
    await client.generateSignedTakeURL(
      TakeOptions.url(`${helpers.base}/locale`).format('html').headers('Accept-Language: de-DE'),
    ),
  );
  assert.match(answer.bytes.toString('utf8'), 'de-DE 1.234,5');
});

sdk('requestGpuRendering and failIfGpuRenderingFails; serversRegion', async () => {
  await shoot(TakeOptions.url(`${stack.site.url}/`).requestGpuRendering(true).serversRegion('us-east'));
  const strict = await call(
    await client.generateSignedTakeURL(
      TakeOptions.url(`${stack.site.url}/`).requestGpuRendering(true).failIfGpuRenderingFails(true),
    ),
  );
  assert.equal([strict.status, strict.json?.error_code], [422, 'gpu_rendering_failed']);
});

sdk('webhookSign(false) and webhookErrors(false)', async () => {
  const unsigned = TakeOptions.url(`${stack.site.url}/`)
    .async(true)
    .webhookUrl(`${helpers.base}/hook/sdk-unsigned`)
    .webhookSign(false);
  assert.is((await call(await client.generateSignedTakeURL(unsigned))).status, 202);
  const quiet = TakeOptions.url(`${stack.site.url}/api/broken`)
    .async(true)
    .webhookUrl(`${helpers.base}/hook/sdk-quiet`)
    .webhookErrors(false);
  assert.is((await call(await client.generateSignedTakeURL(quiet))).status, 202);
  const loud = TakeOptions.url(`${stack.site.url}/api/broken`)
    .async(true)
    .webhookUrl(`${helpers.base}/hook/sdk-loud`)
    .webhookErrors(true);
  assert.is((await call(await client.generateSignedTakeURL(loud))).status, 202);
  await waitFor(
    () => ['/hook/sdk-unsigned', '/hook/sdk-loud'].every((p) => helpers.hooks.some((hook) => hook.path === p)),
    'the webhooks',
  );
  assert.is(helpers.hooks.find((hook) => hook.path === '/hook/sdk-unsigned')!.headers['x-signature'], undefined);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.not.ok(helpers.hooks.some((hook) => hook.path === '/hook/sdk-quiet'));
});

sdk('format jp2 and heif: a 400 that says why', async () => {
  for (const format of ['jp2', 'heif']) {
    const answer = await call(await client.generateSignedTakeURL(TakeOptions.url(`${stack.site.url}/`).format(format)));
    assert.equal([answer.status, answer.json?.error_details?.[0]?.parameter], [400, 'format']);
  }
});

sdk.run();
