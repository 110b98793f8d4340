// /api/animate end to end: real NATS, the S3 store, Chromium and ffmpeg. ScreenshotOne's SDK,
// unmodified, gets a playable mp4; a signed GET is cached; a scrolling gif shows the bands in
// turn; bad values are 400s naming the parameter; async answers 202 and a webhook announces the
// file; an animation is charged once, a failed one not at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnimateOptions, Client } from 'screenshotone-api-sdk';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { bandOf, bandsHtml } from '../fixtures/animation-pages.ts';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pixelAt, probe } from '../helpers/video.ts';
import { waitFor } from '../helpers/wait.ts';

const animate = suite('/api/animate');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let client: Client;
let receiver: http.Server;
let hookBase: string;
let customerProxy: ForwardProxy;
let geoProxy: ForwardProxy;
const PROXY_PASSWORD = 'proxy-Secret-4417';
const received: { path: string; body: Record<string, any> }[] = [];

const WIDTH = 640;
const HEIGHT = 360;
const bands = bandsHtml(HEIGHT);
const small = { viewport_width: String(WIDTH), viewport_height: String(HEIGHT) };

/** A GET of /api/animate with the workspace's key in the header. */
const get = (params: Record<string, string | string[]>) => {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const one of [value].flat()) query.append(name, one);
  return call(`${service.base}/api/animate?${query}`, { headers: { 'x-access-key': workspace.access_key } });
};

animate.before(async () => {
  stack = await startStack();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  customerProxy = await startForwardProxy({ credentials: { user: 'customer', password: PROXY_PASSWORD } });
  geoProxy = await startForwardProxy();
  service = await startService(stack, { ROLES: 'ingress,render,delivery', GEO_PROXIES: `de=${geoProxy.url()}` });
  workspace = await createWorkspace(stack);
  client = new Client(workspace.access_key, workspace.secret_key, `${service.base}/api`);
});

animate.after(async () => {
  await service?.close();
  await customerProxy?.close();
  await geoProxy?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

animate("the unmodified SDK's animate() gets a playable mp4; its signed URL is cached", async () => {
  const options = AnimateOptions.html(bands).format('mp4').duration(2).viewportWidth(WIDTH).viewportHeight(HEIGHT);
  const blob = await client.animate(options);
  const bytes = Buffer.from(await blob.arrayBuffer());
  assert.is(blob.type, 'video/mp4');
  const video = await probe(bytes);
  assert.is(video.codec, 'h264');
  assert.equal([video.width, video.height], [WIDTH, HEIGHT]);
  assert.ok(Math.abs(video.duration - 2) <= 0.2, `duration ${video.duration}`);
  assert.ok(video.fps >= 25, `fps ${video.fps}`);
  assert.is(bandOf(await pixelAt(bytes, 0, WIDTH / 2, HEIGHT / 2)), 0);

  // The same signed URL again: a redirect to the stored file, which is the same video.
  const used = await usedThisMonth(stack, workspace.workspace_id);
  const again = await call(await client.generateSignedAnimateURL(options));
  assert.is(again.status, 302);
  assert.match(String(again.headers.get('location')), /\/files\/\d{8}-[0-9a-f]{32}\.mp4$/);
  const file = await call(String(again.headers.get('location')));
  assert.is(file.contentType, 'video/mp4');
  assert.equal(file.bytes, bytes);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used, 'a redirect is not charged');
});

animate('a scrolling gif, posted as JSON: the first frame the first band, a later one a later band', async () => {
  const body = {
    html: bands,
    format: 'gif',
    scenario: 'scroll',
    duration: 3,
    scroll_by: HEIGHT * 2,
    scroll_duration: 500,
    scroll_delay: 300,
    scroll_back: false,
    viewport_width: WIDTH,
    viewport_height: HEIGHT,
    width: 320,
    height: 180,
  };
  const answer = await call(`${service.base}/api/animate`, {
    method: 'POST',
    headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.is(answer.status, 200, answer.bytes.toString('utf8').slice(0, 300));
  assert.is(answer.contentType, 'image/gif');
  const gif = await probe(answer.bytes);
  assert.is(gif.codec, 'gif');
  assert.equal([gif.width, gif.height], [320, 180]);
  assert.ok(Math.abs(gif.duration - 3) <= 0.2, `duration ${gif.duration}`);
  assert.is(bandOf(await pixelAt(answer.bytes, 0, 160, 90)), 0);
  assert.is(bandOf(await pixelAt(answer.bytes, 'last', 160, 90)), 4);
});

animate(
  'page options apply to the recording; response_type=json describes the file and the metadata asked for',
  async () => {
    const answer = await get({
      html: bands,
      ...small,
      duration: '1',
      format: 'gif',
      response_type: 'json',
      styles: '#band0 { background: #0000ff !important }',
      metadata_page_title: 'true',
    });
    assert.is(answer.status, 200, JSON.stringify(answer.json));
    assert.is(answer.json!.format, 'gif');
    assert.is(answer.json!.metadata.page_title, 'Bands');
    assert.match(answer.json!.file_url, /\/files\/\d{8}-[0-9a-f]{32}\.gif$/);
    const file = await call(answer.json!.file_url);
    assert.is(file.contentType, 'image/gif');
    assert.is(file.bytes.length, answer.json!.size_bytes);
    assert.is(bandOf(await pixelAt(file.bytes, 0, WIDTH / 2, HEIGHT / 2)), 2, 'styles turned the first band blue');
  },
);

animate('a large video is answered straight from the store, its length announced', async () => {
  // Noise, new every frame: nothing for ProRes to compress.
  const noise = `<body style="margin:0"><canvas id="c" width="${WIDTH}" height="${HEIGHT}"></canvas><script>
    const c = document.getElementById('c').getContext('2d');
    const frame = () => { const d = c.createImageData(${WIDTH}, ${HEIGHT}); const a = new Uint32Array(d.data.buffer);
      for (let i = 0; i < a.length; i++) a[i] = (Math.random() * 0xffffffff) | 0xff000000; c.putImageData(d, 0, 0); requestAnimationFrame(frame); };
    frame();</script></body>`;
  const answer = await get({ html: noise, ...small, duration: '1', format: 'mov' });
  assert.is(answer.status, 200, answer.bytes.toString('utf8').slice(0, 200));
  assert.is(answer.contentType, 'video/quicktime');
  assert.ok(answer.bytes.length > 768 * 1024, `${answer.bytes.length} bytes: more than a done message carries`);
  assert.is(Number(answer.headers.get('content-length')), answer.bytes.length);
  const mov = await probe(answer.bytes);
  assert.is(mov.codec, 'prores');
  assert.ok(Math.abs(mov.duration - 1) <= 0.2, `duration ${mov.duration}`);
});

animate('bad values are 400 request_not_valid naming each parameter', async () => {
  const cases: [Record<string, string | string[]>, string][] = [
    [{ duration: '31' }, 'duration'],
    [{ format: 'png' }, 'format'],
    [{ scroll_easing: 'bounce' }, 'scroll_easing'],
    [{ scenario: 'zoom' }, 'scenario'],
    [{ aspect_ratio: '1:1' }, 'aspect_ratio'],
    [{ full_page: 'true' }, 'full_page'],
    [{ clip_x: '0', clip_y: '0', clip_width: '10', clip_height: '10' }, 'clip_x'],
    [{ omit_background: 'true' }, 'omit_background'],
    [{ scroll_stop_after_duration: '1000' }, 'scroll_stop_after_duration'],
    [
      { scroll_back: 'false', scroll_stop_after_duration: '1000', scroll_back_after_duration: '500' },
      'scroll_back_after_duration',
    ],
    [{ scroll_to_end_after: '1000' }, 'scroll_to_end_after'],
    [{ scroll_navigate_to_url: 'ftp://example.com/' }, 'scroll_navigate_to_url'],
    [{ duration: '10', timeout: '10' }, 'timeout'],
    // Over the budget of pixels × frames (docs/animate.md, "Cost"): refused before anything records.
    [{ format: 'mov', width: '3840', height: '2160', duration: '30' }, 'width'],
    [{ format: 'mov', width: '3840', height: '2160', duration: '30' }, 'duration'],
  ];
  const used = await usedThisMonth(stack, workspace.workspace_id);
  for (const [params, parameter] of cases) {
    const answer = await get({ html: '<p>x</p>', ...params });
    assert.is(answer.status, 400, JSON.stringify(params));
    assert.is(answer.json!.error_code, 'request_not_valid');
    assert.ok(
      answer.json!.error_details.some((d: { parameter: string }) => d.parameter === parameter),
      `${JSON.stringify(params)}: ${JSON.stringify(answer.json!.error_details)}`,
    );
  }
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used);
});

animate("a bad combination of page options is the same 400 as /api/take's", async () => {
  const cases: Record<string, string | string[]>[] = [
    { proxy: 'ftp://proxy.example.com' },
    { proxy: 'http://proxy.example.com:8080', ip_country_code: 'de' },
    { headers: 'Accept-Language: ;;;' },
    { storage_path: 'shots/home' },
    { store: 'true', storage_path: 'a', storage_access_key_id: 'AKIA' },
  ];
  for (const params of cases) {
    // Parsed before any address is looked at: the page need not exist.
    const query = new URLSearchParams({ url: 'https://example.com/' });
    for (const [name, value] of Object.entries(params)) for (const one of [value].flat()) query.append(name, one);
    const headers = { 'x-access-key': workspace.access_key };
    const take = await call(`${service.base}/api/take?${query}`, { headers });
    const animation = await get({ url: 'https://example.com/', ...params });
    assert.is(take.status, 400, JSON.stringify(params));
    assert.equal(
      [animation.status, animation.json!.error_code, animation.json!.error_details],
      [take.status, take.json!.error_code, take.json!.error_details],
      JSON.stringify(params),
    );
  }
});

animate('synchronous: webm, mov and avi at 25 fps with their content types; a failed one is not charged', async () => {
  const used = await usedThisMonth(stack, workspace.workspace_id);
  for (const [format, contentType, codec] of [
    ['webm', 'video/webm', 'vp9'],
    ['mov', 'video/quicktime', 'prores'],
    ['avi', 'video/x-msvideo', 'mpeg4'],
  ] as const) {
    const answer = await get({ html: bands, ...small, duration: '1', format });
    assert.is(answer.status, 200, `${format}: ${answer.bytes.toString('utf8').slice(0, 300)}`);
    assert.is(answer.contentType, contentType, format);
    const video = await probe(answer.bytes);
    assert.is(video.codec, codec, format);
    assert.ok(video.fps >= 25, `${format} at ${video.fps} fps`);
  }
  const failed = await get({ url: `${stack.site.url}/status/500`, ...small, duration: '1' });
  assert.equal([failed.status, failed.json!.error_code], [502, 'host_returned_error']);
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used + 3, 'three charged, the failed one not');
});

animate('async: 202, then a webhook with the file; charged once, and a failed animation not at all', async () => {
  const used = await usedThisMonth(stack, workspace.workspace_id);
  const answer = await get({
    html: bands,
    ...small,
    duration: '1',
    format: 'webm',
    async: 'true',
    webhook_url: `${hookBase}/hook/animated`,
    external_identifier: 'anim-1',
  });
  assert.is(answer.status, 202, JSON.stringify(answer.json));
  const failed = await get({
    url: `${stack.site.url}/status/500`,
    ...small,
    duration: '1',
    async: 'true',
    webhook_url: `${hookBase}/hook/failed`,
  });
  assert.is(failed.status, 202);
  await waitFor(() => received.length >= 2, 'both webhooks', 60_000);

  const ok = received.find((hit) => hit.path === '/hook/animated')!;
  assert.is(ok.body.type, 'render.succeeded');
  assert.is(ok.body.data.render_id, answer.json!.render_id);
  assert.is(ok.body.data.format, 'webm');
  assert.is(ok.body.data.external_identifier, 'anim-1');
  const file = await call(ok.body.data.file_url);
  assert.is(file.contentType, 'video/webm');
  assert.is((await probe(file.bytes)).codec, 'vp9');
  const status = await call(`${service.base}/api/renders/${answer.json!.render_id}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(status.json!.status, 'succeeded');

  const bad = received.find((hit) => hit.path === '/hook/failed')!;
  assert.is(bad.body.type, 'render.failed');
  assert.is(bad.body.data.error_code, 'host_returned_error');
  await waitFor(
    async () => (await usedThisMonth(stack, workspace.workspace_id)) === used + 1,
    'the one success charged',
  );
  assert.is(await usedThisMonth(stack, workspace.workspace_id), used + 1);
});

animate(
  "proxy and ip_country_code: the recorded page leaves through the customer's or the country's proxy",
  async () => {
    const url = `${stack.site.url}/page/animate-through-proxy`;
    const proxied = await get({ url, ...small, duration: '1', proxy: customerProxy.url() });
    assert.is(proxied.status, 200, proxied.bytes.toString('utf8').slice(0, 300));
    assert.is((await probe(proxied.bytes)).codec, 'h264');
    const seen = customerProxy.seen.find((entry) => entry.target === url && entry.allowed);
    assert.ok(seen, JSON.stringify(customerProxy.seen));
    assert.is(seen!.authorization, `Basic ${Buffer.from(`customer:${PROXY_PASSWORD}`).toString('base64')}`);

    const fromGermany = `${stack.site.url}/page/animate-from-germany`;
    assert.is((await get({ url: fromGermany, ...small, duration: '1', ip_country_code: 'de' })).status, 200);
    assert.ok(geoProxy.seen.some((entry) => entry.target === fromGermany && entry.allowed));

    // The same refusals as /api/take's.
    const unknown = await get({ url, ip_country_code: 'fr' });
    assert.equal([unknown.status, unknown.json!.error_details[0].parameter], [400, 'ip_country_code']);
    const both = await get({ url, ip_country_code: 'de', proxy: customerProxy.url() });
    assert.equal([both.status, both.json!.error_details[0].parameter], [400, 'ip_country_code']);
    const bad = await get({ url, proxy: 'socks5://127.0.0.1:1080' });
    assert.equal([bad.status, bad.json!.error_details[0].parameter], [400, 'proxy']);
    const vision = await get({ url, vision_prompt: 'What is on the page?' });
    assert.equal([vision.status, vision.json!.error_details[0].parameter], [400, 'vision_prompt']);
  },
);

animate('request_gpu_rendering: software here; fail_if_gpu_rendering_fails is 422 gpu_rendering_failed', async () => {
  const strict = await get({
    html: bands,
    ...small,
    duration: '1',
    request_gpu_rendering: 'true',
    fail_if_gpu_rendering_fails: 'true',
  });
  assert.equal([strict.status, strict.json?.error_code], [422, 'gpu_rendering_failed']);
});

animate('a navigation obeys the address rules of url: at the ingress, and for a hinted link in the page', async () => {
  // A stack of its own: the one above has a renderer that may reach private addresses.
  const own = await startStack();
  const guarded = await startService(own, { ALLOW_PRIVATE_TARGETS: 'false', ROLES: 'ingress,render' });
  const workspace = await createWorkspace(own);
  try {
    const refused = await call(
      `${guarded.base}/api/animate?${new URLSearchParams({ html: bands, scroll_try_navigate: 'true', scroll_navigate_to_url: 'http://10.1.2.3/' })}`,
      { headers: { 'x-access-key': workspace.access_key } },
    );
    assert.is(refused.status, 400);
    assert.is(refused.json!.error_code, 'url_not_allowed');
    assert.is(refused.json!.error_details[0].parameter, 'scroll_navigate_to_url');

    const from = own.site.received.length;
    const linked = bands.replace('></div>', `><a href="${own.site.url}/page/animate-hint">Pricing</a></div>`);
    const answer = await call(`${guarded.base}/api/animate`, {
      method: 'POST',
      headers: { 'x-access-key': workspace.access_key, 'content-type': 'application/json' },
      body: JSON.stringify({
        html: linked,
        ...small,
        duration: 2,
        scenario: 'scroll',
        scroll_try_navigate: true,
        scroll_navigate_after: 300,
      }),
    });
    assert.is(
      answer.json?.error_code,
      'url_not_allowed',
      `${answer.status} ${answer.bytes.toString('utf8').slice(0, 200)}`,
    );
    assert.not.ok(
      own.site.received.slice(from).some((request) => request.path === '/page/animate-hint'),
      'the private page was never fetched',
    );
  } finally {
    await guarded.close();
    await own.stop();
  }
});

animate.run();
