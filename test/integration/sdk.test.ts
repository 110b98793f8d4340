// ScreenshotOne's own Node SDK, unmodified, pointed at {base_url}/api: it builds and signs the requests
// for each option family, and each request's effect is checked on the image or at the fixture site.
import sharp from 'sharp';
import { Client, TakeOptions } from 'screenshotone-api-sdk';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createWorkspace, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';

const sdk = suite('screenshotone-api-sdk against Shutterbus');
let stack: TestStack;
let service: TestService;
let client: Client;

sdk.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  const workspace = await createWorkspace(stack);
  client = new Client(workspace.access_key, workspace.secret_key, `${service.base}/api`);
});
sdk.after(async () => {
  await service?.close();
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
const colourPage = (css: string, script = '') => `<!doctype html><html><head><style>html,body{margin:0;height:100%}${css}</style></head><body><div id="box" style="width:100px;height:100px"></div>${script}</body></html>`;

sdk('format, viewport and a signed GET', async () => {
  const { answer, width, height } = await shoot(TakeOptions.url(`${stack.site.url}/`).format('webp').viewportWidth(800).viewportHeight(600));
  assert.is(answer.contentType, 'image/webp');
  assert.equal([width, height], [800, 600]);
});

sdk('a device preset, with its scale', async () => {
  const { width, height } = await shoot(TakeOptions.url(`${stack.site.url}/`).viewportDevice('iphone_13'));
  assert.equal([width, height], [390 * 3, 664 * 3]);
});

sdk('dark mode and a time zone paint what the page asks', async () => {
  const dark = await shoot(TakeOptions.html(colourPage('body{background:#fff}@media (prefers-color-scheme: dark){body{background:#000}}')).darkMode(true));
  assert.ok(near(dark.pixel(300, 300), [0, 0, 0]), `dark ${dark.pixel(300, 300)}`);
  const zone = colourPage('', `<script>document.body.style.background = new Date(Date.UTC(2024,0,1)).getTimezoneOffset() === -540 ? '#00ff00' : '#ff0000'</script>`);
  const tokyo = await shoot(TakeOptions.html(zone).timeZone('Asia/Tokyo'));
  assert.ok(near(tokyo.pixel(300, 300), [0, 255, 0]), `Asia/Tokyo ${tokyo.pixel(300, 300)}`);
});

sdk('headers, authorization and cookies reach the target', async () => {
  const from = stack.site.received.length;
  await shoot(TakeOptions.url(`${stack.site.url}/page/sdk-request`).headers('X-Shutterbus-Test: from-sdk').authorization('Bearer sdk-token').cookies('sdk_cookie=yes'));
  const request = stack.site.received.slice(from).find((r) => r.path === '/page/sdk-request')!;
  assert.is(request.headers['x-shutterbus-test'], 'from-sdk');
  assert.is(request.headers.authorization, 'Bearer sdk-token');
  assert.match(String(request.headers.cookie), /sdk_cookie=yes/);
});

sdk('styles, scripts, hidden elements and clicks', async () => {
  const styled = await shoot(TakeOptions.html(colourPage('body{background:#fff}')).styles('body{background:#0000ff !important}'));
  assert.ok(near(styled.pixel(300, 300), [0, 0, 255]), `styles ${styled.pixel(300, 300)}`);
  const scripted = await shoot(TakeOptions.html(colourPage('body{background:#fff}')).scripts("document.body.style.background = '#ff0000'"));
  assert.ok(near(scripted.pixel(300, 300), [255, 0, 0]), `scripts ${scripted.pixel(300, 300)}`);
  const hidden = await shoot(TakeOptions.html(colourPage('body{background:#fff}#box{background:#000}')).hideSelectors('#box'));
  assert.ok(near(hidden.pixel(50, 50), [255, 255, 255]), `hide_selectors ${hidden.pixel(50, 50)}`);
  const clicked = await shoot(TakeOptions.html(colourPage('body{background:#fff}', `<script>box.onclick = () => document.body.style.background = '#00ff00'</script>`)).click('#box'));
  assert.ok(near(clicked.pixel(300, 300), [0, 255, 0]), `click ${clicked.pixel(300, 300)}`);
});

sdk('full page height, clip and resizing', async () => {
  const tall = await shoot(TakeOptions.url(`${stack.site.url}/very-tall`).fullPage(true).fullPageMaxHeight(1000).fullPageScroll(false));
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

sdk.run();
