// The rest of ScreenshotOne's /take through the whole stack (docs/options.md): the customer's proxy
// and a country's proxy (real forward proxies that record what passed), secrets sealed in the
// stream, vision against a local fake of the chat completions protocol, full-page slices,
// webhook_sign and webhook_errors, GPU rendering, jp2 and heif, servers_region.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('take options through the stack');
const PROXY_PASSWORD = 'proxy-Secret-7731';
const GEO_PASSWORD = 'geo-Secret-5520';
const OPENAI_KEY = 'sk-test-Vision-Key-0042';

let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let customerProxy: ForwardProxy;
let geoProxy: ForwardProxy;
let helpers: http.Server;
let helpersBase: string;
/** What the fake vision API and the webhook receiver got. */
const visionCalls: { headers: http.IncomingHttpHeaders; body: any }[] = [];
const hooks: { path: string; headers: http.IncomingHttpHeaders; body: any }[] = [];
let visionStatus = 200;

test.before(async () => {
  stack = await startStack();
  customerProxy = await startForwardProxy({ credentials: { user: 'customer', password: PROXY_PASSWORD } });
  geoProxy = await startForwardProxy({ credentials: { user: 'geo', password: GEO_PASSWORD } });
  // The fake chat completions API and the webhook receiver, on one local server.
  helpers = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      if (req.url === '/v1/chat/completions') {
        visionCalls.push({ headers: req.headers, body });
        // 0: the API takes the question and never answers.
        if (visionStatus === 0) return;
        if (visionStatus !== 200)
          return void res
            .writeHead(visionStatus, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'model overloaded' } }));
        const prompt = body.messages[0].content[0].text;
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            choices: [
              { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `Answer to: ${prompt}` } },
            ],
          }),
        );
      }
      hooks.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => helpers.listen(0, '127.0.0.1', resolve));
  helpersBase = `http://127.0.0.1:${(helpers.address() as AddressInfo).port}`;
  service = await startService(stack, {
    GEO_PROXIES: `de=${geoProxy.url()}`,
    VISION_API_URL: `${helpersBase}/v1/chat/completions`,
    WEBHOOK_RETRY_SCHEDULE: '1s',
  });
  workspace = await createWorkspace(stack);
});

test.after(async () => {
  await service?.close();
  await customerProxy?.close();
  await geoProxy?.close();
  await new Promise((resolve) => helpers?.close(resolve));
  await stack?.stop();
});

const take = (params: Record<string, unknown>) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify(params),
  });

test("proxy: the page leaves through the customer's proxy, with its credentials", async () => {
  const url = `${stack.site.url}/page/through-proxy`;
  const answer = await take({ url, proxy: customerProxy.url() });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  const seen = customerProxy.seen.find((entry) => entry.target === url && entry.allowed);
  assert.ok(seen, JSON.stringify(customerProxy.seen));
  assert.is(seen!.authorization, `Basic ${Buffer.from(`customer:${PROXY_PASSWORD}`).toString('base64')}`);
});

test('proxy_bypass_hosts: a listed host skips the proxy', async () => {
  const url = `${stack.site.url}/page/bypassed`;
  const answer = await take({ url, proxy: customerProxy.url(), proxy_bypass_hosts: ['127.0.0.1'] });
  assert.is(answer.status, 200);
  assert.not.ok(customerProxy.seen.some((entry) => entry.target === url));
  assert.ok(stack.site.received.some((r) => r.path === '/page/bypassed'));
});

test("ip_country_code: the operator's proxy for that country; unknown countries and proxy together are 400", async () => {
  const url = `${stack.site.url}/page/from-germany`;
  assert.is((await take({ url, ip_country_code: 'DE' })).status, 200);
  const seen = geoProxy.seen.find((entry) => entry.target === url);
  assert.ok(seen?.allowed, JSON.stringify(geoProxy.seen));
  const unknown = await take({ url, ip_country_code: 'fr' });
  assert.is(unknown.status, 400);
  assert.is(unknown.json!.error_details[0].parameter, 'ip_country_code');
  assert.match(unknown.json!.error_details[0].message, /fr.*configured: de/);
  const both = await take({ url, ip_country_code: 'de', proxy: customerProxy.url() });
  assert.is(both.status, 400);
  assert.is(both.json!.error_details[0].parameter, 'ip_country_code');
  const bad = await take({ url, proxy: 'socks5://127.0.0.1:1080' });
  assert.equal([bad.status, bad.json!.error_details[0].parameter], [400, 'proxy']);
});

test('vision: the capture and the prompt go to the chat completions API with the key; its answer is vision', async () => {
  const from = visionCalls.length;
  const answer = await take({
    html: '<body style="background:#00ff00"></body>',
    vision_prompt: 'What colour is it?',
    vision_max_tokens: 50,
    openai_api_key: OPENAI_KEY,
    response_type: 'json',
  });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  assert.is(answer.json!.vision, 'Answer to: What colour is it?');
  const sent = visionCalls[from];
  assert.is(sent.headers.authorization, `Bearer ${OPENAI_KEY}`);
  assert.is(sent.body.max_tokens, 50);
  const [text, image] = sent.body.messages[0].content;
  assert.equal(text, { type: 'text', text: 'What colour is it?' });
  const match = /^data:image\/png;base64,(.+)$/.exec(image.image_url.url);
  assert.ok(match, 'a png data URL');
  const { data } = await sharp(Buffer.from(match![1], 'base64')).raw().toBuffer({ resolveWithObject: true });
  assert.equal([...data.subarray(0, 3)], [0, 255, 0]);
  // The status of the render says it too; the key is never in an answer.
  const status = await call(`${service.base}/api/renders/${answer.json!.render_id}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
  assert.is(status.json!.vision, 'Answer to: What colour is it?');
  assert.not.match(status.bytes.toString() + answer.bytes.toString(), OPENAI_KEY);
});

test('vision: an error of the API is 502 vision_failed', async () => {
  visionStatus = 503;
  try {
    const answer = await take({ html: '<p>x</p>', vision_prompt: 'Describe', response_type: 'json' });
    assert.is(answer.status, 502);
    assert.is(answer.json!.error_code, 'vision_failed');
    assert.match(JSON.stringify(answer.json!.error_details), /503: model overloaded/);
  } finally {
    visionStatus = 200;
  }
});

test('vision: an API that never answers is 502 vision_failed once the timeout passes, not retried', async () => {
  visionStatus = 0;
  const from = visionCalls.length;
  try {
    const answer = await take({ html: '<p>x</p>', vision_prompt: 'Describe', timeout: 3, response_type: 'json' });
    assert.is(answer.status, 502, JSON.stringify(answer.json));
    assert.is(answer.json!.error_code, 'vision_failed');
    assert.match(JSON.stringify(answer.json!.error_details), /did not answer within 3 s/);
    assert.is(visionCalls.length, from + 1, 'asked once');
  } finally {
    visionStatus = 200;
  }
});

test('vision in the webhook of an asynchronous render', async () => {
  const answer = await take({
    html: '<p>async</p>',
    vision_prompt: 'Say hi',
    async: true,
    webhook_url: `${helpersBase}/hook/vision`,
  });
  assert.is(answer.status, 202);
  await waitFor(() => hooks.some((hook) => hook.path === '/hook/vision'), 'the vision webhook');
  assert.is(hooks.find((hook) => hook.path === '/hook/vision')!.body.data.vision, 'Answer to: Say hi');
});

test('secrets: the proxy password and the vision key are nowhere in the NATS store, sealed instead', async () => {
  const dir = natsStoreDir(stack.nats.port);
  const files = filesUnder(dir).map((file) => readFileSync(file));
  const all = Buffer.concat(files);
  assert.ok(all.includes('sealed:v1:'), 'the requests are in the store, their secrets sealed');
  for (const secret of [PROXY_PASSWORD, OPENAI_KEY, GEO_PASSWORD])
    assert.not.ok(all.includes(secret), `${secret} in the NATS store`);
});

test("full_page_slices: the slices' exact offsets and sizes, each a file of its own", async () => {
  const bands = ['#ff0000', '#00ff00', '#0000ff', '#ffff00', '#00ffff', '#ff00ff', '#000000'];
  const page = `<body style="margin:0">${bands.map((c) => `<div style="height:500px;background:${c}"></div>`).join('')}</body>`;
  const answer = await take({
    html: page,
    full_page: true,
    full_page_scroll: false,
    viewport_width: 300,
    full_page_slices: true,
    full_page_slice_height: 1000,
    full_page_slice_overlap_height: 100,
    response_type: 'json',
  });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  const slices = answer.json!.slices as {
    index: number;
    offset_y: number;
    width: number;
    height: number;
    url: string;
  }[];
  assert.equal(
    slices.map(({ url: _url, ...slice }) => slice),
    [
      { index: 0, offset_y: 0, width: 300, height: 1000 },
      { index: 1, offset_y: 900, width: 300, height: 1000 },
      { index: 2, offset_y: 1800, width: 300, height: 1000 },
      { index: 3, offset_y: 2700, width: 300, height: 800 },
    ],
  );
  for (const slice of slices) {
    const file = await call(slice.url);
    assert.is(file.status, 200);
    const { data, info } = await sharp(file.bytes).raw().toBuffer({ resolveWithObject: true });
    assert.equal([info.width, info.height], [slice.width, slice.height]);
    // The slice's first row is the page's row offset_y: the band there.
    const band = bands[Math.floor(slice.offset_y / 500)];
    assert.equal(
      [...data.subarray(0, 3)],
      [1, 3, 5].map((i) => parseInt(band.slice(i, i + 2), 16)),
      `slice ${slice.index}`,
    );
  }
  const refused = await take({ html: page, full_page_slices: true });
  assert.equal([refused.status, refused.json!.error_details[0].parameter], [400, 'full_page_slices']);
  const thin = await take({
    html: page,
    full_page: true,
    full_page_slices: true,
    full_page_slice_height: 150,
    full_page_slice_overlap_height: 60,
  });
  assert.equal([thin.status, thin.json!.error_details[0].parameter], [400, 'full_page_slice_overlap_height']);
});

test('webhook_sign=false: the delivery carries no signature; webhook_errors=false: a failure sends none', async () => {
  const url = `${stack.site.url}/`;
  assert.is(
    (await take({ url, async: true, webhook_url: `${helpersBase}/hook/unsigned`, webhook_sign: false })).status,
    202,
  );
  assert.is((await take({ url, async: true, webhook_url: `${helpersBase}/hook/signed` })).status, 202);
  const broken = `${stack.site.url}/api/broken`;
  assert.is(
    (await take({ url: broken, async: true, webhook_url: `${helpersBase}/hook/quiet-failure`, webhook_errors: false }))
      .status,
    202,
  );
  assert.is((await take({ url: broken, async: true, webhook_url: `${helpersBase}/hook/loud-failure` })).status, 202);
  await waitFor(
    () => ['/hook/unsigned', '/hook/signed', '/hook/loud-failure'].every((p) => hooks.some((hook) => hook.path === p)),
    'three webhooks',
  );
  const unsigned = hooks.find((hook) => hook.path === '/hook/unsigned')!;
  assert.is(unsigned.headers['x-signature'], undefined);
  assert.is(unsigned.headers['webhook-signature'], undefined);
  assert.ok(unsigned.headers['webhook-id']);
  assert.ok(hooks.find((hook) => hook.path === '/hook/signed')!.headers['x-signature']);
  assert.is(hooks.find((hook) => hook.path === '/hook/loud-failure')!.body.type, 'render.failed');
  // The quiet failure's render ended before the loud one was delivered; give it a moment more.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.not.ok(hooks.some((hook) => hook.path === '/hook/quiet-failure'));
});

test('request_gpu_rendering: software here; fail_if_gpu_rendering_fails is 422 gpu_rendering_failed', async () => {
  const url = `${stack.site.url}/`;
  const software = await take({ url, request_gpu_rendering: true });
  assert.is(software.status, 200);
  assert.is(software.contentType, 'image/png');
  const strict = await take({ url, request_gpu_rendering: true, fail_if_gpu_rendering_fails: true });
  assert.is(strict.status, 422);
  assert.is(strict.json!.error_code, 'gpu_rendering_failed');
});

test('jp2 and heif: a 400 that says why where the image library cannot write them', async () => {
  for (const [format, why] of [
    ['jp2', /OpenJPEG/],
    ['heif', /HEVC/],
  ] as const) {
    const answer = await take({ url: `${stack.site.url}/`, format });
    assert.is(answer.status, 400, format);
    assert.is(answer.json!.error_details[0].parameter, 'format');
    assert.match(answer.json!.error_details[0].message, why);
  }
});

test('servers_region: us-east accepted, another region is 400', async () => {
  assert.is((await take({ url: `${stack.site.url}/`, servers_region: 'us-east' })).status, 200);
  const other = await take({ url: `${stack.site.url}/`, servers_region: 'eu-central' });
  assert.equal([other.status, other.json!.error_details[0].parameter], [400, 'servers_region']);
});

/** The store directory (-sd) of the nats-server listening on `port`, found in /proc. */
function natsStoreDir(port: number): string {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (argv.includes('-p') && argv[argv.indexOf('-p') + 1] === String(port) && argv.includes('-sd'))
      return argv[argv.indexOf('-sd') + 1];
  }
  throw new Error(`no nats-server on port ${port}`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

test.run();
