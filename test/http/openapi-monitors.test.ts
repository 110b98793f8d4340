// The monitors in the OpenAPI document: their paths, the create body beside /api/take's, the two events.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDocument } from '../../src/http/openapi.ts';

const openapi = suite('OpenAPI: monitors');
type Json = Record<string, any>;
const document: Json = openApiDocument('http://127.0.0.1:3000');

openapi('every monitor operation is documented with its answers', () => {
  assert.equal(Object.keys(document.paths['/api/monitors']).sort(), ['get', 'post']);
  assert.equal(
    Object.keys(document.paths['/api/monitors/{monitorId}'])
      .filter((key) => key !== 'parameters')
      .sort(),
    ['delete', 'get', 'patch'],
  );
  assert.ok(document.paths['/api/monitors'].post.responses['201']);
  assert.ok(document.paths['/api/monitors/{monitorId}'].delete.responses['204']);
  assert.ok(document.paths['/api/monitors/{monitorId}'].get.responses['404']);
});

openapi("the create body is /api/take's whole body, plus the monitor's own", () => {
  const create = document.components.schemas.MonitorCreate;
  const take = document.paths['/api/take'].post.requestBody.content['application/json'].schema;
  const own = ['interval', 'threshold', 'min_changed_pixels', 'compare', 'ignore_text'];
  const expected = [...Object.keys(take.properties), ...own].sort();
  assert.equal(Object.keys(create.properties).sort(), expected);
  assert.equal(create.required, ['interval', 'webhook_url']);
});

openapi('text comparison: compare, ignore_text, min_changed_pixels, and text_diff in changes and events', () => {
  const { MonitorCreate, MonitorPatch, MonitorChange, MonitorEvent, Monitor } = document.components.schemas;
  assert.equal(MonitorCreate.properties.compare.enum, ['pixels', 'text', 'both']);
  assert.is(MonitorCreate.properties.min_changed_pixels.default, 10);
  assert.is(MonitorCreate.properties.ignore_text.maxItems, 20);
  assert.ok(MonitorPatch.properties.min_changed_pixels && MonitorPatch.properties.ignore_text);
  for (const schema of [MonitorChange.properties.text_diff, MonitorEvent.properties.data.properties.text_diff]) {
    assert.is(schema.maxItems, 50);
    assert.equal(schema.items.required, ['before', 'after']);
  }
  assert.ok(Monitor.properties.compare && Monitor.properties.min_changed_pixels);
});

openapi('monitor.changed and monitor.failed are signed like render.ended', () => {
  for (const event of ['monitor.changed', 'monitor.failed']) {
    const post = document.webhooks[event].post;
    assert.equal(post.parameters, document.webhooks['render.ended'].post.parameters, event);
    assert.equal(post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/MonitorEvent' });
  }
  assert.equal(document.components.schemas.MonitorEvent.properties.type.enum, ['monitor.changed', 'monitor.failed']);
});

openapi.run();
