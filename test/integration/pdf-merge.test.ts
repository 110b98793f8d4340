// POST /api/pdf/merge end to end: real NATS, the S3 store and Chromium. Sources of every kind merged
// in order (pdftotext reads the order, pdfinfo the pages), the JSON and async answers, one render
// charged per source with the quota checked for all of them up front, and a failing source failing
// the whole merge with its own error.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  usedThisMonth,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const merge = suite('POST /api/pdf/merge, end to end');
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let workspace: Workspace;
let directory: string;

const post = (body: Record<string, unknown>, key = workspace.access_key) =>
  call(`${service.base}/api/pdf/merge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': key },
    body: JSON.stringify(body),
  });

let count = 0;
const file = (pdf: Buffer) => {
  const target = path.join(directory, `${++count}.pdf`);
  writeFileSync(target, pdf);
  return target;
};
const pages = (pdf: Buffer) =>
  Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file(pdf)], { encoding: 'utf8' }))![1]);
const text = (pdf: Buffer) => execFileSync('pdftotext', [file(pdf), '-'], { encoding: 'utf8' });
const doc = (name: string) => `<!doctype html><html lang="en"><title>${name}</title><h1>Source ${name}</h1></html>`;

merge.before(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'shutterbus-merge-'));
  [stack, site] = await Promise.all([
    startStack(),
    startFixtureSite({
      '/source-three': (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(doc('three')),
    }),
  ]);
  service = await startService(stack);
  workspace = await createWorkspace(stack);
});
merge.after(async () => {
  await service?.close();
  await Promise.allSettled([stack?.stop(), site?.close()]);
  rmSync(directory, { recursive: true, force: true });
});

merge('a url, html and markdown merged in order into one PDF, charged one render per source', async () => {
  const before = await usedThisMonth(stack, workspace.workspace_id);
  const answer = await post({
    pdf_title: 'Merged',
    pdf_outline: true,
    sources: [
      { html: doc('one') },
      { markdown: '# Source two\n\nIn Markdown.' },
      { url: `${site.url}/source-three` },
      { html: doc('four') },
    ],
  });
  assert.is(answer.status, 200, answer.bytes.toString('utf8').slice(0, 300));
  assert.is(answer.contentType, 'application/pdf');
  assert.ok(answer.headers.get('x-render-id'));
  const merged = answer.bytes;
  assert.is(pages(merged), 4);
  const order = ['Source one', 'Source two', 'Source three', 'Source four'].map((line) => text(merged).indexOf(line));
  assert.ok(
    order.every((at, index) => at >= 0 && (index === 0 || at > order[index - 1])),
    `in order: ${order}`,
  );
  assert.match(execFileSync('pdfinfo', [file(merged)], { encoding: 'utf8' }), /Title:\s+Merged/);
  await waitFor(
    async () => (await usedThisMonth(stack, workspace.workspace_id)) === before + 4,
    'four renders charged',
  );
});

merge('response_type=json and async answer as /api/take does', async () => {
  const json = await post({ response_type: 'json', sources: [{ html: doc('a') }, { html: doc('b') }] });
  assert.is(json.status, 200);
  assert.is(json.json!.format, 'pdf');
  const stored = await call(json.json!.file_url);
  assert.is(stored.contentType, 'application/pdf');
  assert.is(pages(stored.bytes), 2);

  const accepted = await post({ async: true, sources: [{ html: doc('c') }, { html: doc('d') }] });
  assert.is(accepted.status, 202);
  const statusUrl = accepted.json!.status_url as string;
  let status: Record<string, any> = {};
  await waitFor(
    async () => {
      status = (await call(statusUrl, { headers: { 'x-access-key': workspace.access_key } })).json!;
      return status.status === 'succeeded' || status.status === 'failed';
    },
    () => `the async merge ended (${JSON.stringify(status)})`,
    60_000,
  );
  assert.is(status.status, 'succeeded');
  assert.is(pages((await call(status.file_url)).bytes), 2);
});

merge('the quota is checked for every source up front: 402, and nothing charged', async () => {
  const small = await createWorkspace(stack, { quota: 2 });
  const refused = await post(
    { sources: [{ html: doc('x') }, { html: doc('y') }, { html: doc('z') }] },
    small.access_key,
  );
  assert.is(refused.status, 402);
  assert.is(refused.json!.error_code, 'screenshots_limit_reached');
  const fits = await post({ sources: [{ html: doc('x') }, { html: doc('y') }] }, small.access_key);
  assert.is(fits.status, 200);
  await waitFor(async () => (await usedThisMonth(stack, small.workspace_id)) === 2, 'two renders charged');
});

merge('the first failing source fails the merge with its error; nothing is charged', async () => {
  const before = await usedThisMonth(stack, workspace.workspace_id);
  const failed = await post({
    sources: [
      { html: doc('fine') },
      { html: doc('missing'), fail_if_content_missing: ['never there'] },
      { html: doc('later') },
    ],
  });
  assert.is(failed.status, 422);
  assert.is(failed.json!.error_code, 'content_missing_specified_string');
  assert.is(failed.json!.source, 1);
  const invalid = await post({ sources: [{ html: doc('a') }, { url: 'ftp://example.com/' }] });
  assert.is(invalid.status, 400);
  assert.is(invalid.json!.error_details[0].parameter, 'sources[1].url');
  assert.is(await usedThisMonth(stack, workspace.workspace_id), before);
});

merge.run();
