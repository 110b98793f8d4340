// Monitors that see what people watch, end to end (real NATS, S3 store, Chromium): a digit, a word, a
// table cell and a line of terms changed are each announced once, with text_diff where text is
// compared; a page rendered again, text moved by a fraction of a pixel, a JPEG capture and a date
// left out by ignore_text are not. The examples of docs/monitors.md run as they are written.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MIN_CHANGED_PIXELS } from '../../src/domain/monitor.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { monitorPages } from '../fixtures/monitor-pages.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';

const changes = suite('monitors: changes of text, and what is no change');
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let workspace: Workspace;
let receiver: http.Server;
let hookBase: string;
const pages = monitorPages();
const received: { path: string; body: string }[] = [];
const hooksOf = (name: string) => received.filter((r) => r.path === `/hook/${name}`).map((r) => JSON.parse(r.body));

changes.before(async () => {
  stack = await startStack();
  site = await startFixtureSite(pages.routes);
  service = await startService(stack, { MONITOR_MIN_INTERVAL: '2', WEBHOOK_RETRY_SCHEDULE: '1s,1s' });
  workspace = await createWorkspace(stack, { quota: 1000 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

changes.after(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await site?.close();
  await stack?.stop();
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(`${service.base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'x-access-key': workspace.access_key,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

/** The JSON bodies of the `curl -X POST …/api/monitors` examples of docs/monitors.md, in order. */
function documentedMonitors(): Record<string, unknown>[] {
  const doc = readFileSync(new URL('../../docs/monitors.md', import.meta.url), 'utf8');
  return [...doc.matchAll(/curl -X POST http:\/\/127\.0\.0\.1:3000\/api\/monitors[\s\S]*?-d '([^']+)'/g)].map((match) =>
    JSON.parse(match[1]),
  );
}

changes('bad compare, min_changed_pixels and ignore_text are 400 naming each', async () => {
  const answer = await api('/api/monitors', {
    method: 'POST',
    body: {
      url: `${site.url}/monitor/stable`,
      interval: 600,
      webhook_url: `${hookBase}/hook/bad`,
      compare: 'words',
      min_changed_pixels: 0,
      ignore_text: ['(a+)+$'],
    },
  });
  assert.is(answer.status, 400);
  assert.equal(answer.json!.error_details, [
    { parameter: 'min_changed_pixels', message: 'must be a whole number from 1 to 1000000000' },
    { parameter: 'compare', message: 'must be one of pixels, text, both' },
    { parameter: 'ignore_text', message: 'pattern 1 nests quantifiers (like (a+)+): write it without' },
  ]);
  const pixelsOnly = await api('/api/monitors', {
    method: 'POST',
    body: { url: `${site.url}/monitor/stable`, interval: 600, webhook_url: `${hookBase}/hook/bad`, ignore_text: ['x'] },
  });
  assert.equal(pixelsOnly.json!.error_details, [
    { parameter: 'ignore_text', message: 'applies only with compare text or both' },
  ]);

  // PATCH changes min_changed_pixels, and ignore_text of a monitor that compares text.
  const create = (compare: string) =>
    api('/api/monitors', {
      method: 'POST',
      body: { url: `${site.url}/monitor/stable`, interval: 600, webhook_url: `${hookBase}/hook/patched`, compare },
    });
  const text = (await create('text')).json!;
  const pixels = (await create('pixels')).json!;
  const patched = await api(`/api/monitors/${text.monitor_id}`, {
    method: 'PATCH',
    body: { min_changed_pixels: 50, ignore_text: ['\\d+ visitors'] },
  });
  assert.is(patched.status, 200, JSON.stringify(patched.json));
  assert.equal([patched.json!.min_changed_pixels, patched.json!.ignore_text], [50, ['\\d+ visitors']]);
  const refused = await api(`/api/monitors/${pixels.monitor_id}`, { method: 'PATCH', body: { ignore_text: ['x'] } });
  assert.equal(refused.json!.error_details, [
    { parameter: 'ignore_text', message: 'applies only with compare text or both' },
  ]);
  const compareFixed = await api(`/api/monitors/${pixels.monitor_id}`, { method: 'PATCH', body: { compare: 'text' } });
  assert.is(compareFixed.status, 400);
  for (const monitor of [text, pixels])
    assert.is((await api(`/api/monitors/${monitor.monitor_id}`, { method: 'DELETE' })).status, 204);
});

changes('each change is announced once, with text_diff where text is compared; what is no change never', async () => {
  const [pricing, terms] = documentedMonitors();
  // The documented examples as written, pointed at the test site, ticking every 2 s.
  assert.equal(
    [pricing.selector, pricing.threshold, pricing.compare, terms.compare, terms.ignore_text],
    ['#plans', 0.005, undefined, 'text', ['Last updated: .*']],
  );
  const watch = async (name: string, body: Record<string, unknown>) => {
    const created = await api('/api/monitors', {
      method: 'POST',
      body: { ...body, interval: 2, webhook_url: `${hookBase}/hook/${name}` },
    });
    assert.is(created.status, 201, `${name}: ${JSON.stringify(created.json)}`);
    return created.json!;
  };
  const page = (path: string, key: string) => `${site.url}/monitor/text/${path}?key=${key}`;
  const monitors = {
    // Changes.
    digit: await watch('digit', { ...pricing, url: page('price', 'digit') }),
    word: await watch('word', { url: page('paragraph', 'word'), compare: 'both' }),
    cell: await watch('cell', { url: page('table', 'cell'), selector: '#prices', compare: 'text' }),
    terms: await watch('terms', { ...terms, url: page('terms', 'terms') }),
    // No changes.
    same: await watch('same', { url: page('paragraph', 'same'), compare: 'both' }),
    shifted: await watch('shifted', { url: page('shifted', 'shifted') }),
    jpeg: await watch('jpeg', { url: page('paragraph', 'jpeg'), format: 'jpeg', image_quality: 60 }),
    dated: await watch('dated', {
      url: page('dated', 'dated'),
      compare: 'text',
      ignore_text: ['Checked at \\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z'],
    }),
  };
  assert.is(monitors.digit.min_changed_pixels, DEFAULT_MIN_CHANGED_PIXELS);
  assert.is(monitors.terms.compare, 'text');
  const names = Object.keys(monitors);
  const loads = () => Object.fromEntries(names.map((name) => [name, pages.loadsOf(name)]));
  const allLoaded = (at: Record<string, number>, more: number) => () =>
    names.every((name) => pages.loadsOf(name) >= (at[name] ?? 0) + more);
  // The baseline and two ticks after it: nothing has changed yet.
  await waitFor(allLoaded({}, 3), 'three ticks of every monitor', 90_000);
  await pause(1500);
  for (const name of names) assert.is(hooksOf(name).length, 0, `${name}: no change yet`);

  for (const key of ['digit', 'word', 'cell', 'terms', 'shifted']) pages.setVersion(key, 1);
  const changedAt = loads();
  await waitFor(
    () => ['digit', 'word', 'cell', 'terms'].every((name) => hooksOf(name).length >= 1),
    'the four changes announced',
    60_000,
  );
  await waitFor(allLoaded(changedAt, 4), 'more ticks of every monitor after the change', 90_000);
  // A delivery in flight would have arrived within its retry schedule.
  await pause(2500);
  for (const name of ['digit', 'word', 'cell', 'terms'])
    assert.is(hooksOf(name).length, 1, `${name}: exactly one monitor.changed`);
  for (const name of ['same', 'shifted', 'jpeg', 'dated']) assert.is(hooksOf(name).length, 0, `${name}: no change`);

  const [digit] = hooksOf('digit');
  assert.is(digit.type, 'monitor.changed');
  assert.ok(
    digit.data.changed_pixels >= DEFAULT_MIN_CHANGED_PIXELS,
    `the digit: ${digit.data.changed_pixels} changed pixels`,
  );
  assert.is(digit.data.text_diff, undefined, 'a pixel monitor carries no text_diff');
  assert.equal(hooksOf('word')[0].data.text_diff, [
    {
      before:
        'Our service level is measured monthly, and the uptime figure is published on the status page every week for all customers.',
      after:
        'Our service level is measured monthly, and the uptime number is published on the status page every week for all customers.',
    },
  ]);
  assert.equal(hooksOf('cell')[0].data.text_diff, [{ before: 'Pro $19', after: 'Pro $24' }]);
  assert.equal(hooksOf('terms')[0].data.text_diff, [{ before: null, after: 'Prices may change with 30 days notice.' }]);

  // The change history shows the same.
  const shown = await api(`/api/monitors/${monitors.cell.monitor_id}`);
  assert.equal(shown.json!.changes[0].text_diff, [{ before: 'Pro $19', after: 'Pro $24' }]);
  for (const monitor of Object.values(monitors)) {
    const paused = await api(`/api/monitors/${monitor.monitor_id}`, { method: 'PATCH', body: { status: 'paused' } });
    assert.is(paused.status, 200);
  }
});

changes.run();
