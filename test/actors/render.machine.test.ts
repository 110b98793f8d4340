// The render actor's failure rules, retry verdict and outputs, with its steps swapped through .provide().

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  LATE,
  renderMachine,
  type CapturePageInput,
  type RecordStartInput,
  type RenderInput,
  type RenderOutput,
  type StoreImageInput,
  type StoredImage,
  type UploadOutputInput,
} from '../../actors/render.machine.ts';
import type { StoreResult, StoreTarget } from '../../src/domain/storage.ts';
import { wildcardPattern } from '../../src/domain/judgement.ts';
import { RenderLog } from '../../src/domain/render-log.ts';
import { ServiceError } from '../../src/errors.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';
import type { RenderRequest } from '../../src/domain/render.ts';
import { waitFor } from '../helpers/wait.ts';

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

const requestWith = (options: Partial<RenderOptions> = {}): RenderRequest => ({
  render_id: 'r-1',
  workspace_id: 'ws_0000000000000001',
  created_at: new Date().toISOString(),
  options: { ...baseOptions, ...options },
});

type CaptureDouble = (signal: AbortSignal) => Promise<PageObservation>;

/** What the worker's actors share of a delivery: a fresh log, nothing known of the record, nobody answered. */
const worker = (): Pick<RenderInput, 'log' | 'run'> => ({
  log: new RenderLog(),
  run: { answerBy: undefined, version: {}, early: { answered: false }, announceUnstored: () => {} },
});

/** What the steps saw: the steps in order they ran, and the store's input. */
interface Seen {
  steps: string[];
  stored?: StoreImageInput;
}

/** A render actor with doubles for its steps; `capture` is an observation or a function of the abort signal. */
function renderActor(
  input: Partial<RenderInput> & { options?: Partial<RenderOptions> },
  capture: CaptureDouble | Partial<PageObservation> = {},
  store?: () => Promise<StoredImage>,
) {
  const seen: Seen = { steps: [] };
  const machine = renderMachine.provide({
    actors: {
      recordStart: fromPromise<void, RecordStartInput>(async () => void seen.steps.push('recordStart')),
      capturePage: fromPromise<PageObservation, CapturePageInput>(async ({ input, signal }) => {
        seen.steps.push('capturePage');
        const observation = typeof capture === 'function' ? await capture(signal) : { ...baseObservation, ...capture };
        // As the worker's capture does: the machine's judge, once, on what the page showed.
        return { ...observation, broken: input.judge(observation, input.options) };
      }),
      storeImage: fromPromise<StoredImage, StoreImageInput>(async ({ input }) => {
        seen.steps.push('storeImage');
        seen.stored = input;
        return store ? store() : { file_name: 'abc.png', size_bytes: input.observation.image.byteLength };
      }),
    },
  });
  const { options, ...rest } = input;
  const actor = createActor(machine, {
    input: { request: requestWith(options), deliveryCount: 1, isLastDelivery: false, ...worker(), ...rest },
  });
  return { actor, seen };
}

/** Runs one render to its final state. */
async function render(
  ...args: Parameters<typeof renderActor>
): Promise<RenderOutput & { seen: Seen; finalState: unknown }> {
  const { actor, seen } = renderActor(...args);
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  return { ...output, seen, finalState: actor.getSnapshot().value };
}

function assertFailed(output: RenderOutput, code: string, details: Record<string, unknown> = {}) {
  assert.is(output.status, 'failed', JSON.stringify(output));
  if (output.status !== 'failed') return;
  assert.is(output.error_code, code);
  assert.equal(output.details, details);
}

test('a clean page: recorded as started, captured, stored; the output carries the file and the image', async () => {
  const output = await render({});
  assert.is(output.status, 'succeeded');
  if (output.status !== 'succeeded') return;
  assert.equal(output.stored, { file_name: 'abc.png', size_bytes: 14 });
  assert.is(output.size_bytes, 14);
  assert.is(output.format, 'png');
  assert.ok(output.image.equals(baseObservation.image), 'the image leaves through the output');
  assert.equal(output.seen.steps, ['recordStart', 'capturePage', 'storeImage']);
  assert.is(
    output.seen.stored?.request.render_id,
    'r-1',
    'the store sees the request (its cache ttl sets the file lifetime)',
  );
  assert.is(output.finalState, 'succeeded');
});

test('host error fails unless ignore_host_errors', async () => {
  assertFailed(await render({}, { mainStatus: 404 }), 'host_returned_error', { returned_status_code: 404 });
  assert.is((await render({ options: { ignore_host_errors: true } }, { mainStatus: 500 })).status, 'succeeded');
});

test('a broken rule is final even with deliveries left, and nothing is stored', async () => {
  const output = await render({ deliveryCount: 1, isLastDelivery: false }, { mainStatus: 503 });
  assertFailed(output, 'host_returned_error', { returned_status_code: 503 });
  assert.equal(output.seen.steps, ['recordStart', 'capturePage']);
});

test('missing selector fails only with error_on_selector_not_found', async () => {
  const observation = { missingSelectors: ['#nope'] };
  assert.is((await render({ options: { selector: '#nope' } }, observation)).status, 'succeeded');
  assertFailed(
    await render({ options: { selector: '#nope', error_on_selector_not_found: true } }, observation),
    'selector_not_found',
    {
      error_details: [{ parameter: 'selector', selector: '#nope' }],
    },
  );
  assertFailed(
    await render(
      { options: { scroll_into_view: '#far', error_on_selector_not_found: true } },
      { missingSelectors: ['#far'] },
    ),
    'selector_not_found',
    {
      error_details: [{ parameter: 'scroll_into_view', selector: '#far' }],
    },
  );
});

test('a failed sub-request fails the render only when a pattern matches it', async () => {
  const observation = {
    subRequests: [
      { url: 'https://example.com/app.js', status: 200 },
      { url: 'https://api.example.com/v1/items', status: 503 },
      { url: 'https://cdn.example.com/font.woff', failure: 'net::ERR_CONNECTION_REFUSED' },
    ],
  };
  assertFailed(
    await render({ options: { fail_if_request_failed: ['https://api.example.com/*'] } }, observation),
    'matched_failed_request',
    {
      failed_request_url: 'https://api.example.com/v1/items',
      returned_status_code: 503,
    },
  );
  assertFailed(
    await render({ options: { fail_if_request_failed: ['*cdn.example.com/font.wof?'] } }, observation),
    'matched_failed_request',
    {
      failed_request_url: 'https://cdn.example.com/font.woff',
    },
  );
  assert.is(
    (await render({ options: { fail_if_request_failed: ['https://other.example.com/*', '*/app.js'] } }, observation))
      .status,
    'succeeded',
  );
});

test('wildcards are anchored: * any run, ? exactly one character', () => {
  assert.ok(wildcardPattern('https://*.example.com/v?/items').test('https://api.example.com/v1/items'));
  assert.not.ok(wildcardPattern('https://*.example.com/v?/items').test('https://api.example.com/v12/items'));
  assert.not.ok(wildcardPattern('example.com').test('https://example.com/'));
  assert.ok(wildcardPattern('https://example.com/a+b(c).js').test('https://example.com/a+b(c).js'));
});

test('content missing, case-insensitively', async () => {
  assertFailed(
    await render({ options: { fail_if_content_missing: ['your DASHBOARD', 'Logout'] } }),
    'content_missing_specified_string',
    { matched_string: 'Logout' },
  );
  assert.is(
    (await render({ options: { fail_if_content_missing: ['WELCOME back your dashboard'] } })).status,
    'succeeded',
  );
});

test('content contains, case-insensitively', async () => {
  assertFailed(
    await render(
      { options: { fail_if_content_contains: ['please sign in'] } },
      { visibleText: 'Please Sign In to continue' },
    ),
    'content_contains_specified_string',
    {
      matched_string: 'please sign in',
    },
  );
  assert.is((await render({ options: { fail_if_content_contains: ['no results found'] } })).status, 'succeeded');
});

test('rules are checked in order: host error before content', async () => {
  assertFailed(
    await render({ options: { fail_if_content_missing: ['absent'] } }, { mainStatus: 500 }),
    'host_returned_error',
    { returned_status_code: 500 },
  );
});

test('a capture ServiceError that is not retryable is final', async () => {
  const output = await render({}, async () => {
    throw new ServiceError('timeout_error');
  });
  assertFailed(output, 'timeout_error');
  assert.is(output.finalState, 'failed');
});

test('an unexpected capture error is retried later, each delivery waiting longer, and does not leak', async () => {
  const boom = async () => {
    throw new Error('secret /var/lib/chromium path blew up');
  };
  const first = await render({ deliveryCount: 1 }, boom);
  const second = await render({ deliveryCount: 2 }, boom);
  assert.is(first.finalState, 'retryLater');
  for (const [output, delayMs] of [
    [first, 1000],
    [second, 2000],
  ] as const) {
    assert.is(output.status, 'retryLater');
    if (output.status !== 'retryLater') return;
    assert.is(output.delayMs, delayMs);
    assert.is(output.error_code, 'internal_application_error');
    assert.not.match(output.error_message, /secret|chromium/);
    assert.equal(output.details, {});
    assert.match(String((output.cause as Error).message), /secret/, 'the cause is kept for the log line');
  }
});

test('on the last delivery a retryable failure is final', async () => {
  const output = await render({ deliveryCount: 3, isLastDelivery: true }, async () => {
    throw new Error('browser crashed');
  });
  assertFailed(output, 'internal_application_error');
  assert.is(output.finalState, 'failed');
});

test('a caller whose deadline passed: failed as late before anything runs', async () => {
  const output = await render({ answerBy: Date.now() - 1 });
  assertFailed(output, 'temporary_unavailable');
  assert.is(output.status === 'failed' && output.error_message, LATE.message);
  assert.equal(output.seen.steps, [], 'not even recorded as started');
});

test('a deadline that passes while rendering: the stored render ends late; a retryable failure is not retried', async () => {
  const slowCapture = (ms: number) => () =>
    new Promise<PageObservation>((resolve) => setTimeout(() => resolve(baseObservation), ms));
  const late = await render({ answerBy: Date.now() + 30 }, slowCapture(60));
  assertFailed(late, 'temporary_unavailable');
  assert.is(late.status === 'failed' && late.error_message, LATE.message);
  assert.equal(late.seen.steps, ['recordStart', 'capturePage', 'storeImage']);

  const failing = await render(
    { answerBy: Date.now() + 30 },
    () => new Promise((_, reject) => setTimeout(() => reject(new Error('crash')), 60)),
  );
  assertFailed(failing, 'internal_application_error');

  const inTime = await render({ answerBy: Date.now() + 10_000 }, slowCapture(10));
  assert.is(inTime.status, 'succeeded');
});

test('recording the start failing is an internal, retryable failure', async () => {
  const machine = renderMachine.provide({
    actors: {
      recordStart: fromPromise<void, RecordStartInput>(async () => {
        throw Object.assign(new Error('no responders'), { name: 'NoRespondersError' });
      }),
    },
  });
  const actor = createActor(machine, {
    input: { request: requestWith(), deliveryCount: 2, isLastDelivery: false, ...worker() },
  });
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  assert.is(output.status, 'retryLater');
  assert.is(output.status === 'retryLater' && output.delayMs, 2000);
});

test('render.cancel aborts the capture and hands the request back at once, even on the last delivery', async () => {
  let aborted = false;
  const { actor, seen } = renderActor(
    { isLastDelivery: true },
    (signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)));
      }),
  );
  const done = toPromise(actor);
  actor.start();
  await waitFor(() => actor.getSnapshot().matches('capturing'), 'the capture under way', 1000, 1);
  actor.send({ type: 'render.cancel' });
  const output = await done;
  assert.ok(aborted, 'the capture saw its signal abort');
  assert.equal(seen.steps, ['recordStart', 'capturePage']);
  assert.is(output.status, 'retryLater');
  assert.is(output.status === 'retryLater' && output.delayMs, 0);
});

test('render.late at the deadline aborts a capture still running and ends it failed late; before it, nothing', async () => {
  let aborted = false;
  const answerBy = Date.now() + 200;
  const { actor, seen } = renderActor(
    { answerBy, isLastDelivery: false },
    (signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)));
      }),
  );
  const done = toPromise(actor);
  actor.start();
  await waitFor(() => actor.getSnapshot().matches('capturing'), 'the capture under way', 1000, 1);
  actor.send({ type: 'render.late' });
  assert.ok(actor.getSnapshot().matches('capturing'), 'before the deadline it changes nothing');
  await waitFor(() => Date.now() > answerBy, 'the deadline passed', 1000, 5);
  actor.send({ type: 'render.late' });
  const output = await done;
  assert.ok(aborted, 'the capture saw its signal abort');
  assert.equal(seen.steps, ['recordStart', 'capturePage']);
  assertFailed(output, 'temporary_unavailable');
  assert.is(output.status === 'failed' && output.error_message, LATE.message);
});

test('render.late after the caller was answered with the image changes nothing', async () => {
  const answerBy = Date.now() + 50;
  let finishStore!: () => void;
  const { actor } = renderActor(
    { answerBy },
    {},
    () => new Promise((resolve) => (finishStore = () => resolve({ file_name: 'abc.png', size_bytes: 14 }))),
  );
  const done = toPromise(actor);
  actor.start();
  await waitFor(() => actor.getSnapshot().matches('storing'), 'storing', 1000, 1);
  actor.send({ type: 'render.answered' });
  await waitFor(() => Date.now() > answerBy, 'the deadline passed', 1000, 5);
  actor.send({ type: 'render.late' });
  finishStore();
  assert.is((await done).status, 'succeeded');
});

test('a storage outage is retried later; a storage failure on the last delivery is final', async () => {
  const unavailable = async (): Promise<StoredImage> => {
    throw new ServiceError('temporary_unavailable');
  };
  const early = await render({ deliveryCount: 1 }, {}, unavailable);
  assert.is(early.status, 'retryLater');
  assertFailed(await render({ deliveryCount: 3, isLastDelivery: true }, {}, unavailable), 'temporary_unavailable');
});

/** A render with store=true: the steps as doubles, the upload answering with `upload`. */
async function renderStored(upload: () => Promise<StoreResult>) {
  const steps: string[] = [];
  const target: StoreTarget = {
    endpoint: 'https://s3.example',
    bucket: 'b-1',
    region: 'us-east-1',
    access_key_id: 'K',
    secret_access_key: 'sealed:v1:x:y',
    key: 'a.png',
    acl: '',
    storage_class: 'standard',
    return_location: false,
  };
  const machine = renderMachine.provide({
    actors: {
      recordStart: fromPromise<void, RecordStartInput>(async () => void steps.push('recordStart')),
      capturePage: fromPromise<PageObservation, CapturePageInput>(
        async () => (steps.push('capturePage'), baseObservation),
      ),
      storeImage: fromPromise<StoredImage, StoreImageInput>(
        async () => (steps.push('storeImage'), { file_name: 'abc.png', size_bytes: 14 }),
      ),
      uploadOutput: fromPromise<StoreResult, UploadOutputInput>(async ({ input }) => {
        steps.push('uploadOutput');
        assert.ok(input.observation.image.equals(baseObservation.image), 'the upload gets the output');
        return upload();
      }),
    },
  });
  const actor = createActor(machine, {
    input: { request: { ...requestWith(), store: target }, deliveryCount: 1, isLastDelivery: false, ...worker() },
  });
  const done = toPromise(actor);
  actor.start();
  return { output: await done, steps };
}

test('store=true: after the own copy, the upload; the output says where it went', async () => {
  const { output, steps } = await renderStored(async () => ({ bucket: 'b-1', key: 'a.png' }));
  assert.equal(steps, ['recordStart', 'capturePage', 'storeImage', 'uploadOutput']);
  assert.is(output.status, 'succeeded');
  if (output.status === 'succeeded') assert.equal(output.uploaded, { bucket: 'b-1', key: 'a.png' });
});

test('a refused upload fails the render, final, and hands out no file', async () => {
  const refusal = new ServiceError('storage_upload_failed', {
    error_details: [{ parameter: 'store', code: 'AccessDenied', message: 'Access Denied' }],
  });
  const { output } = await renderStored(async () => {
    throw refusal;
  });
  assertFailed(output, 'storage_upload_failed', refusal.details);
  assert.not.ok('stored' in output, 'no stored file in the verdict');
});

test('without store the upload step never runs', async () => {
  const output = await render({});
  assert.equal(output.seen.steps, ['recordStart', 'capturePage', 'storeImage']);
  assert.is(output.status, 'succeeded');
  if (output.status === 'succeeded') assert.is(output.uploaded, undefined);
});

test('an animation request hands its recording to capturePage; a screenshot request hands none', async () => {
  const inputs: CapturePageInput[] = [];
  const machine = renderMachine.provide({
    actors: {
      recordStart: fromPromise<void, RecordStartInput>(async () => {}),
      capturePage: fromPromise<PageObservation, CapturePageInput>(async ({ input }) => {
        inputs.push(input);
        return baseObservation;
      }),
      storeImage: fromPromise<StoredImage, StoreImageInput>(async () => ({ file_name: 'a.mp4', size_bytes: 1 })),
    },
  });
  const animation = { duration: 2, scenario: 'scroll' } as RenderRequest['animation'];
  for (const request of [{ ...requestWith({ format: 'mp4' }), kind: 'animation' as const, animation }, requestWith()]) {
    const actor = createActor(machine, {
      input: { request, deliveryCount: 1, isLastDelivery: false, ...worker() },
    });
    const done = toPromise(actor);
    actor.start();
    assert.is((await done).status, 'succeeded');
  }
  assert.equal(inputs[0].animation, animation);
  assert.is(inputs[1].animation, undefined);
});

test.run();
