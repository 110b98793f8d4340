// The render actor's failure rules and outcomes, with capture and storage swapped for doubles.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import { renderMachine, type CapturePageInput, type RenderOutput, type StoreImageInput, type StoredImage } from '../../actors/render.machine.ts';
import { wildcardPattern } from '../../actors/render.rules.ts';
import { ServiceError } from '../../src/errors.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';

const test = suite('render machine');

const baseOptions: RenderOptions = {
  ...renderDefaults,
  url: 'https://example.com/',
};

const baseObservation: PageObservation = {
  finalUrl: 'https://example.com/',
  mainStatus: 200,
  subRequests: [],
  visibleText: 'Welcome back\nYour dashboard',
  missingSelectors: [],
  image: Buffer.from('fake-png-bytes'),
};

type CaptureDouble = (signal: AbortSignal) => Promise<PageObservation>;

// Runs one render to its final state with the given options and capture behaviour.
async function render(options: Partial<RenderOptions>, capture: CaptureDouble | Partial<PageObservation>): Promise<RenderOutput> {
  const capturePage = typeof capture === 'function'
    ? fromPromise<PageObservation, CapturePageInput>(({ signal }) => capture(signal))
    : fromPromise<PageObservation, CapturePageInput>(async () => ({ ...baseObservation, ...capture }));
  const storeImage = fromPromise<StoredImage, StoreImageInput>(async ({ input }) => ({
    file_name: 'abc.png',
    size_bytes: input.observation.image.byteLength,
  }));
  const actor = createActor(renderMachine.provide({ actors: { capturePage, storeImage } }), {
    input: { renderId: 'r-1', options: { ...baseOptions, ...options } },
  });
  actor.start();
  actor.send({ type: 'render.start' });
  return toPromise(actor);
}

function assertFailed(output: RenderOutput, code: string, details: Record<string, unknown> = {}) {
  assert.is(output.status, 'failed', JSON.stringify(output));
  if (output.status !== 'failed') return;
  assert.is(output.error_code, code);
  assert.equal(output.details, details);
}

test('a clean page is stored and succeeds', async () => {
  const output = await render({}, {});
  assert.equal(output, { status: 'succeeded', stored: { file_name: 'abc.png', size_bytes: 14 }, format: 'png', size_bytes: 14 });
});

test('waits in pending until render.start', async () => {
  const actor = createActor(renderMachine, { input: { renderId: 'r-2', options: baseOptions } });
  actor.start();
  assert.is(actor.getSnapshot().value, 'pending');
  actor.stop();
});

test('host error fails unless ignore_host_errors', async () => {
  assertFailed(await render({}, { mainStatus: 404 }), 'host_returned_error', { returned_status_code: 404 });
  assert.is((await render({ ignore_host_errors: true }, { mainStatus: 500 })).status, 'succeeded');
});

test('missing selector fails only with error_on_selector_not_found', async () => {
  const observation = { missingSelectors: ['#nope'] };
  assert.is((await render({ selector: '#nope' }, observation)).status, 'succeeded');
  assertFailed(await render({ selector: '#nope', error_on_selector_not_found: true }, observation), 'selector_not_found', {
    error_details: [{ parameter: 'selector', selector: '#nope' }],
  });
  assertFailed(await render({ scroll_into_view: '#far', error_on_selector_not_found: true }, { missingSelectors: ['#far'] }), 'selector_not_found', {
    error_details: [{ parameter: 'scroll_into_view', selector: '#far' }],
  });
});

test('a failed sub-request fails the render only when a pattern matches it', async () => {
  const observation = {
    subRequests: [
      { url: 'https://example.com/app.js', status: 200 },
      { url: 'https://api.example.com/v1/items', status: 503 },
      { url: 'https://cdn.example.com/font.woff', failure: 'net::ERR_CONNECTION_REFUSED' },
    ],
  };
  assertFailed(await render({ fail_if_request_failed: ['https://api.example.com/*'] }, observation), 'matched_failed_request', {
    failed_request_url: 'https://api.example.com/v1/items',
    returned_status_code: 503,
  });
  assertFailed(await render({ fail_if_request_failed: ['*cdn.example.com/font.wof?'] }, observation), 'matched_failed_request', {
    failed_request_url: 'https://cdn.example.com/font.woff',
  });
  assert.is((await render({ fail_if_request_failed: ['https://other.example.com/*', '*/app.js'] }, observation)).status, 'succeeded');
});

test('wildcards are anchored: * any run, ? exactly one character', () => {
  assert.ok(wildcardPattern('https://*.example.com/v?/items').test('https://api.example.com/v1/items'));
  assert.not.ok(wildcardPattern('https://*.example.com/v?/items').test('https://api.example.com/v12/items'));
  assert.not.ok(wildcardPattern('example.com').test('https://example.com/'));
  assert.ok(wildcardPattern('https://example.com/a+b(c).js').test('https://example.com/a+b(c).js'));
});

test('content missing, case-insensitively', async () => {
  assertFailed(await render({ fail_if_content_missing: ['your DASHBOARD', 'Logout'] }, {}), 'content_missing_specified_string', { matched_string: 'Logout' });
  assert.is((await render({ fail_if_content_missing: ['WELCOME back your dashboard'] }, {})).status, 'succeeded');
});

test('content contains, case-insensitively', async () => {
  assertFailed(await render({ fail_if_content_contains: ['please sign in'] }, { visibleText: 'Please Sign In to continue' }), 'content_contains_specified_string', {
    matched_string: 'please sign in',
  });
  assert.is((await render({ fail_if_content_contains: ['no results found'] }, {})).status, 'succeeded');
});

test('rules are checked in order: host error before content', async () => {
  assertFailed(await render({ fail_if_content_missing: ['absent'] }, { mainStatus: 500 }), 'host_returned_error', { returned_status_code: 500 });
});

test('a capture ServiceError keeps its code', async () => {
  const output = await render({}, async () => {
    throw new ServiceError('timeout_error');
  });
  assertFailed(output, 'timeout_error');
  assert.is(output.status === 'failed' && output.retryable, false);
});

test('an unexpected capture error is internal, retryable and does not leak', async () => {
  const output = await render({}, async () => {
    throw new Error('secret /var/lib/chromium path blew up');
  });
  assertFailed(output, 'internal_application_error');
  if (output.status !== 'failed') return;
  assert.is(output.retryable, true);
  assert.not.match(output.error_message, /secret|chromium/);
  assert.not.match(JSON.stringify(output), /secret|chromium/);
});

test('render.cancel aborts the capture and fails retryably', async () => {
  let aborted = false;
  const actor = createActor(
    renderMachine.provide({
      actors: {
        capturePage: fromPromise<PageObservation, CapturePageInput>(({ signal }) => new Promise((_, reject) => {
          signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)));
        })),
      },
    }),
    { input: { renderId: 'r-3', options: baseOptions } },
  );
  actor.start();
  actor.send({ type: 'render.start' });
  actor.send({ type: 'render.cancel' });
  const output = await toPromise(actor);
  assert.ok(aborted, 'the capture saw its signal abort');
  assertFailed(output, 'temporary_unavailable');
  assert.is(output.status === 'failed' && output.retryable, true);
});

test('a storage failure fails the render', async () => {
  const actor = createActor(
    renderMachine.provide({
      actors: {
        capturePage: fromPromise<PageObservation, CapturePageInput>(async () => baseObservation),
        storeImage: fromPromise<StoredImage, StoreImageInput>(async () => {
          throw new ServiceError('temporary_unavailable');
        }),
      },
    }),
    { input: { renderId: 'r-4', options: baseOptions } },
  );
  actor.start();
  actor.send({ type: 'render.start' });
  assertFailed(await toPromise(actor), 'temporary_unavailable');
});

test.run();
