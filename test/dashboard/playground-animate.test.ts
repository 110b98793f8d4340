// The playground's Animation mode end to end in real Chromium against the real stack: the form is
// the recording's rows of /api/animate's table, Render records a scrolling video through
// /api/animate, the page plays it in a <video> (a gif in an <img>), and the signed URL and the
// code beside it are the same request; without JavaScript the mode still works.
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bandOf, bandsHtml } from '../fixtures/animation-pages.ts';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, usedThisMonth, type TestService, type TestStack } from '../helpers/service.ts';
import { pixelAt, probe } from '../helpers/video.ts';

const playground = suite('dashboard in Chromium: the playground records animations');
let stack: TestStack;
let service: TestService;
let browser: Browser;
const state: { page?: Page; workspaceId?: string } = {};
const WIDTH = 480;
const HEIGHT = 270;

playground.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/lib/chromium/chromium' });
  // An owner, signed in, address confirmed.
  const email = 'owner@animate.example.com';
  const password = 'a long enough password';
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  await page.goto(`${service.base}/dashboard/sign-up`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.click('a.button:has-text("Sign in")');
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  const outbox = await shutterbus(stack, 'mail', 'outbox');
  const message = [...outbox.json.messages].reverse().find((m: { to: string }) => m.to === email);
  await page.goto(/https?:\/\/\S+\/dashboard\/\S+/.exec(message.text)![0]);
  await page.goto(`${service.base}/dashboard/keys`);
  state.workspaceId = (await page.textContent('.who .mono'))!.trim();
  state.page = page;
});
playground.after(async () => {
  await browser?.close();
  await service?.close();
  await stack?.stop();
});

playground('Animation mode: a scrolling mp4 recorded through /api/animate and played in the page', async () => {
  const page = state.page!;
  await page.goto(`${service.base}/dashboard/playground`);
  await page.click('#mode-animate');
  assert.is(new URL(page.url()).searchParams.get('mode'), 'animate');
  assert.is(await page.getAttribute('#mode-animate', 'aria-current'), 'page');
  // The recording's rows, from /api/animate's table; none of a screenshot's own.
  for (const name of ['duration', 'scenario', 'scroll_by', 'scroll_easing', 'scroll_back', 'width', 'aspect_ratio'])
    assert.ok((await page.locator(`#field-${name}`).count()) === 1, name);
  assert.is(await page.locator('[name=full_page]').count(), 0, 'full_page is a screenshot option');
  assert.equal(
    await page.locator('#field-format option').allTextContents(),
    ['mp4', 'webm', 'mov', 'avi', 'gif'],
    'the formats of /api/animate',
  );

  await page.fill('#field-html', bandsHtml(HEIGHT));
  await page.fill('#field-viewport_width', String(WIDTH));
  await page.fill('#field-viewport_height', String(HEIGHT));
  await page.fill('#field-duration', '2');
  await page.selectOption('#field-scenario', 'scroll');
  await page.fill('#field-scroll_by', String(HEIGHT));
  await page.fill('#field-scroll_duration', '300');
  await page.fill('#field-scroll_delay', '100');
  await page.click('#render');
  await page.waitForSelector('#result-video', { timeout: 60_000 });
  const shared = new URL(page.url());
  assert.equal([shared.searchParams.get('mode'), shared.searchParams.get('scenario')], ['animate', 'scroll']);
  assert.match(shared.searchParams.get('result') ?? '', /^[0-9a-f-]{36}$/);

  // The browser plays it: its metadata loads and it lasts the duration asked for.
  const played = await page
    .waitForFunction(
      () => {
        const video = document.querySelector<HTMLVideoElement>('#result-video');
        return video && video.readyState >= 1 && Number.isFinite(video.duration)
          ? { duration: video.duration, width: video.videoWidth, height: video.videoHeight }
          : null;
      },
      undefined,
      { timeout: 20_000 },
    )
    .catch(async (error) => {
      const why = await page.evaluate(() => {
        const video = document.querySelector<HTMLVideoElement>('#result-video')!;
        return { src: video.src, network: video.networkState, ready: video.readyState, error: video.error?.message };
      });
      throw new Error(`the video did not load: ${JSON.stringify(why)} (${error})`);
    });
  const shown = (await played.jsonValue())!;
  assert.ok(Math.abs(shown.duration - 2) <= 0.2, `duration ${shown.duration}`);
  assert.equal([shown.width, shown.height], [WIDTH, HEIGHT]);

  // The file it shows is the recording: an H.264 mp4 whose frames scroll through the bands.
  const src = (await page.getAttribute('#result-video', 'src'))!;
  const file = await call(src);
  assert.is(file.contentType, 'video/mp4');
  const video = await probe(file.bytes);
  assert.is(video.codec, 'h264');
  assert.is(bandOf(await pixelAt(file.bytes, 0, WIDTH / 2, HEIGHT / 2)), 0, 'the first frame shows the first band');
  assert.ok(bandOf(await pixelAt(file.bytes, 0.6, WIDTH / 2, HEIGHT / 2)) > 0, 'a later frame shows a later band');
  assert.is(await usedThisMonth(stack, state.workspaceId!), 1, 'charged as one screenshot');

  // The same request beside it: a signed /api/animate URL (the cache answers it with the same file) and code.
  const signedUrl = (await page.textContent('#signed-url'))!.trim();
  assert.match(signedUrl, /\/api\/animate\?.*&signature=[0-9a-f]{64}$/);
  const again = await call(signedUrl);
  assert.is(again.status, 302);
  assert.ok((await call(again.headers.get('location')!)).bytes.equals(file.bytes), 'same bytes from the cache');
  assert.match((await page.textContent('#curl-line'))!, /^curl -L -o animation\.mp4 /);
  assert.match((await page.textContent('#client-snippet'))!, /client\.signAnimateUrl\(\{[\s\S]*scenario: "scroll",/);
  assert.match(
    (await page.textContent('#sdk-snippet'))!,
    /AnimateOptions\.html\([\s\S]*\.duration\(2\)[\s\S]*\.scenario\("scroll"\)[\s\S]*generateSignedAnimateURL/,
  );
});

playground('without JavaScript: a gif is recorded and shown as an image; a refusal names its parameter', async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    storageState: await state.page!.context().storageState(),
  });
  const page = await context.newPage();
  try {
    await page.goto(`${service.base}/dashboard/playground?mode=animate`);
    await page.fill('#field-html', bandsHtml(HEIGHT));
    await page.fill('#field-viewport_width', String(WIDTH));
    await page.fill('#field-viewport_height', String(HEIGHT));
    await page.fill('#field-duration', '1');
    await page.selectOption('#field-format', 'gif');
    await page.click('#render');
    await page.waitForSelector('#result-image', { timeout: 60_000 });
    const gif = await call((await page.getAttribute('#result-image', 'src'))!);
    assert.is(gif.contentType, 'image/gif');
    assert.is((await probe(gif.bytes)).codec, 'gif');
    assert.match((await page.textContent('#result-facts'))!, /image\/gif/);

    await page.goto(`${service.base}/dashboard/playground?mode=animate`);
    await page.fill('#field-url', 'https://example.com');
    await page.fill('#field-duration', '10');
    await page.fill('#field-timeout', '8');
    await page.click('#render');
    assert.is((await page.textContent('#error-code'))!.trim(), 'request_not_valid');
    assert.match((await page.textContent('#render-error'))!, /timeout\s+must be more than duration/);
    // The refused form is still the Animation mode, choices kept.
    assert.is(await page.getAttribute('#mode-animate', 'aria-current'), 'page');
    assert.is(await page.inputValue('#field-duration'), '10');
  } finally {
    await context.close();
  }
});

playground.run();
