// Every output format and the metadata end to end: real NATS, the S3 store and Chromium. Content
// types and magic bytes of sync answers, response_type=empty, attachment_name, metadata in the
// JSON answer, the status route and the webhook, the stored file of an async render, and a cached
// signed PDF.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hmacHex } from '../../src/signing.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { formatPages, WEB_FONT_FAMILY } from '../fixtures/format-pages.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const formats = suite('output formats and metadata, end to end');
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let workspace: Workspace;
let receiver: http.Server;
let hookUrl: string;
const webhooks: Array<{ data: Record<string, any> }> = [];

const shot = (params: Record<string, string | number | boolean>) => {
  const query = new URLSearchParams(Object.entries(params).map(([name, value]) => [name, String(value)]));
  return call(`${service.base}/api/take?${query}`, { headers: { 'x-access-key': workspace.access_key } });
};
const page = (path: string) => `${site.url}${path}`;
const ascii = (bytes: Buffer, from: number, to: number) => bytes.subarray(from, to).toString('latin1');

const METADATA = {
  metadata_image_size: true,
  metadata_page_title: true,
  metadata_open_graph: true,
  metadata_icon: true,
  metadata_fonts: true,
  metadata_http_response_status_code: true,
  metadata_http_response_headers: true,
  metadata_content: true,
  metadata_content_format: 'markdown',
};

formats.before(async () => {
  [stack, site] = await Promise.all([startStack(), startFixtureSite(formatPages)]);
  service = await startService(stack);
  workspace = await createWorkspace(stack);
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      webhooks.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
formats.after(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await service?.close();
  await Promise.allSettled([stack?.stop(), site?.close()]);
});

formats('every format answers with its content type and its magic bytes', async () => {
  const expected: Array<[string, string, (bytes: Buffer) => boolean]> = [
    ['png', 'image/png', (b) => ascii(b, 1, 4) === 'PNG'],
    ['jpeg', 'image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
    ['jpg', 'image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
    ['webp', 'image/webp', (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP'],
    ['gif', 'image/gif', (b) => ascii(b, 0, 6) === 'GIF89a'],
    ['avif', 'image/avif', (b) => ascii(b, 4, 12) === 'ftypavif'],
    ['tiff', 'image/tiff', (b) => ['II*\0', 'MM\0*'].includes(ascii(b, 0, 4))],
    ['pdf', 'application/pdf', (b) => ascii(b, 0, 5) === '%PDF-'],
    ['html', 'text/html; charset=utf-8', (b) => /^<!doctype html>/i.test(b.toString('utf8'))],
    ['markdown', 'text/markdown; charset=utf-8', (b) => b.toString('utf8').startsWith('# Quarterly report')],
  ];
  for (const [format, contentType, magic] of expected) {
    const answer = await shot({
      url: page(format === 'html' || format === 'markdown' ? '/article' : '/box'),
      format,
      viewport_width: 400,
      viewport_height: 300,
    });
    assert.is(answer.status, 200, `${format}: ${answer.bytes.toString('utf8').slice(0, 200)}`);
    assert.is(answer.contentType, contentType, format);
    assert.ok(magic(answer.bytes), `${format} starts with its magic bytes`);
  }
});

formats('response_type=empty answers 200 with no body; attachment_name names the download', async () => {
  const empty = await shot({ url: page('/box'), response_type: 'empty' });
  assert.is(empty.status, 200);
  assert.is(empty.bytes.length, 0);
  assert.match(empty.headers.get('x-render-id') ?? '', /^[0-9a-f-]{36}$/);

  const download = await shot({ url: page('/article'), format: 'pdf', attachment_name: 'Bericht März "Q1".pdf' });
  assert.is(download.status, 200);
  assert.is(
    download.headers.get('content-disposition'),
    `attachment; filename="Bericht M_rz _Q1_.pdf"; filename*=UTF-8''Bericht%20M%C3%A4rz%20%22Q1%22.pdf`,
  );
});

formats(
  'metadata: the JSON answer, the status route and the webhook carry the same; the stored file keeps its format',
  async () => {
    const sync = await shot({ url: page('/article'), response_type: 'json', ...METADATA });
    assert.is(sync.status, 200, JSON.stringify(sync.json));
    const { metadata } = sync.json!;
    assert.equal(metadata.image_size, { width: 1280, height: 720 });
    assert.is(metadata.page_title, 'Quarterly report');
    assert.is(metadata.open_graph.image, page('/images/cover.png'));
    assert.is(metadata.icon.url, page('/images/icon.png'));
    assert.ok(metadata.fonts.includes(WEB_FONT_FAMILY), JSON.stringify(metadata.fonts));
    assert.is(metadata.http_response_status_code, 200);
    assert.is(metadata.http_response_headers['x-fixture'], 'formats');
    assert.is(metadata.content.format, 'markdown');
    const content = await call(metadata.content.url);
    assert.is(content.contentType, 'text/markdown; charset=utf-8');
    assert.match(content.bytes.toString('utf8'), /^# Quarterly report/);

    const accepted = await shot({
      url: page('/article'),
      format: 'pdf',
      async: true,
      webhook_url: hookUrl,
      metadata_page_title: true,
      metadata_open_graph: true,
      metadata_http_response_status_code: true,
    });
    assert.is(accepted.status, 202);
    const renderId = accepted.json!.render_id;
    await waitFor(() => webhooks.some((hook) => hook.data.render_id === renderId), 'the webhook');
    const hook = webhooks.find((one) => one.data.render_id === renderId)!;
    const status = await call(accepted.json!.status_url, { headers: { 'x-access-key': workspace.access_key } });
    assert.is(status.json!.status, 'succeeded');
    assert.equal(hook.data.metadata, status.json!.metadata);
    assert.equal(status.json!.metadata, {
      page_title: 'Quarterly report',
      open_graph: metadata.open_graph,
      http_response_status_code: 200,
    });
    assert.is(hook.data.format, 'pdf');
    assert.match(status.json!.file_url, /\.pdf$/);
    const file = await call(status.json!.file_url);
    assert.is(file.contentType, 'application/pdf');
    assert.is(ascii(file.bytes, 0, 5), '%PDF-');
  },
);

formats('a cached signed GET of a pdf redirects to a pdf', async () => {
  const query = `url=${encodeURIComponent(page('/article'))}&access_key=${workspace.access_key}&format=pdf&pdf_landscape=true`;
  const url = `${service.base}/api/take?${query}&signature=${hmacHex(workspace.secret_key, query)}`;
  const first = await call(url);
  assert.is(first.status, 200);
  assert.is(first.contentType, 'application/pdf');
  const again = await call(url);
  assert.is(again.status, 302);
  assert.match(again.headers.get('location') ?? '', /\.pdf$/);
  const file = await call(again.headers.get('location')!);
  assert.is(file.contentType, 'application/pdf');
  assert.equal(file.bytes, first.bytes);
});

formats('a cached signed GET with attachment_name: every view downloads under that name', async () => {
  const name = 'Bericht März.png';
  const query = `url=${encodeURIComponent(page('/box'))}&access_key=${workspace.access_key}&attachment_name=${encodeURIComponent(name)}`;
  const url = `${service.base}/api/take?${query}&signature=${hmacHex(workspace.secret_key, query)}`;
  const disposition = `attachment; filename="Bericht M_rz.png"; filename*=UTF-8''Bericht%20M%C3%A4rz.png`;
  const first = await call(url);
  assert.is(first.status, 200);
  assert.is(first.headers.get('content-disposition'), disposition);
  // Answered from memory, then (a key also in a header passes the full checks) by the route.
  let location = '';
  for (const headers of [{}, { 'x-access-key': workspace.access_key }] as Record<string, string>[]) {
    const again = await call(url, { headers });
    assert.is(again.status, 302, JSON.stringify(headers));
    location = again.headers.get('location')!;
    const file = await call(location);
    assert.is(file.headers.get('content-disposition'), disposition, JSON.stringify(headers));
    assert.equal(file.bytes, first.bytes);
  }
  // The file itself, asked for without a name, is shown, not downloaded.
  const plain = await call(location.slice(0, location.indexOf('?')));
  assert.is(plain.status, 200);
  assert.is(plain.headers.get('content-disposition'), null);
});

formats.run();
