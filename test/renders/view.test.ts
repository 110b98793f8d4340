// The public view of a render: each use shows its own fields of one view, and OpenAPI documents the same lists.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RenderRecord } from '../../src/domain/render.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { renderView, renderViewFields } from '../../src/renders/view.ts';

const view = suite('renderView');
const urlOf = (name: string) => `https://files.test/${name}`;

const succeeded: RenderRecord = {
  render_id: '6f0e7c1e-0000-4000-8000-000000000001',
  workspace_id: 'w1',
  status: 'succeeded',
  url: 'https://example.com/',
  format: 'png',
  created_at: '2026-01-01T00:00:00.000Z',
  finished_at: '2026-01-01T00:00:01.000Z',
  file_name: 'a.png',
  size_bytes: 123,
  external_identifier: 'mine',
  store: { bucket: 'b', key: 'k' },
};

view('the status answer: state, file and times, no size or page', () => {
  assert.equal(renderView(succeeded, urlOf, 'status'), {
    render_id: succeeded.render_id,
    status: 'succeeded',
    file_url: 'https://files.test/a.png',
    store: { bucket: 'b', key: 'k' },
    external_identifier: 'mine',
    created_at: succeeded.created_at,
    finished_at: succeeded.finished_at,
    timeline: [],
  });
});

view('the JSON answer: file under both names, cache_url only for a cached signed GET', () => {
  const answer = renderView(succeeded, urlOf, 'answer');
  assert.equal(answer, {
    is_successful: true,
    render_id: succeeded.render_id,
    file_url: 'https://files.test/a.png',
    screenshot_url: 'https://files.test/a.png',
    format: 'png',
    size_bytes: 123,
    store: { bucket: 'b', key: 'k' },
  });
  assert.is(renderView(succeeded, urlOf, 'answer', { cached: true }).cache_url, 'https://files.test/a.png');
});

view(
  "a refused upload's webhook and status: the error and the storage's answer, no file even if the record names one",
  () => {
    const details = [{ parameter: 'store', code: 'AccessDenied', message: 'no' }];
    const refused: RenderRecord = {
      ...succeeded,
      status: 'failed',
      store: undefined,
      error_code: 'storage_upload_failed',
      error_message: 'refused',
      error_details: { error_details: details },
    };
    assert.equal(renderView(refused, urlOf, 'webhook'), {
      render_id: succeeded.render_id,
      url: 'https://example.com/',
      format: 'png',
      error_code: 'storage_upload_failed',
      error_message: 'refused',
      error_details: details,
      external_identifier: 'mine',
    });
    // The status says it too: its error_message points at error_details.
    assert.equal(renderView(refused, urlOf, 'status').error_details, details);
    assert.is(renderView(refused, urlOf, 'status').file_url, undefined);
  },
);

view('OpenAPI documents exactly the fields each use shows', () => {
  const document = openApiDocument('http://x') as { components: { schemas: Record<string, any> } };
  const { schemas } = document.components;
  const documented = {
    status: schemas.RenderStatus,
    answer: schemas.TakeJsonAnswer,
    webhook: schemas.WebhookPayload.properties.data,
  };
  for (const [use, schema] of Object.entries(documented))
    assert.equal(Object.keys(schema.properties), [...renderViewFields[use as keyof typeof renderViewFields]], use);
});

view.run();
