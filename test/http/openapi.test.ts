// The OpenAPI document and the /docs page: generated from the tables, valid OpenAPI 3.1, served offline.
import { createRequire } from 'node:module';
import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config.ts';
import { contentTypes } from '../../src/domain/options.ts';
import { parameterByName, parameters } from '../../src/domain/parameters.ts';
import { animateParameters, scrollEasings } from '../../src/domain/animation.ts';
import { errorTable, type ErrorCode } from '../../src/errors.ts';
import { apiParts, metadataFieldNames } from '../../src/http/openapi.ts';
import { routeUrl } from '../../src/http/operation.ts';
import { parseTakeParams } from '../../src/http/params.ts';
import { appWithoutRenders } from '../helpers/app.ts';

const openapi = suite('OpenAPI document and API reference');

// The document and the page touch none of the render collaborators; NATS is down, which they must not mind.
const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '3000' });
const app = appWithoutRenders(config, { natsLink: { isUp: false } as never });

type Json = Record<string, any>;
let document: Json;

openapi.before(async () => {
  const answer = await app.inject({ url: '/openapi.json' });
  assert.is(answer.statusCode, 200);
  assert.match(answer.headers['content-type'] as string, /^application\/json/);
  document = answer.json();
});
openapi.after(() => app.close());

openapi('the reference is built at its first visit, not at the start, and answers conditional requests', async () => {
  // This file's own process: nothing before this test asked for /docs (uvu runs a suite in order).
  const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('swagger-ui'));
  const fresh = appWithoutRenders(config, { natsLink: { isUp: false } as never });
  try {
    await fresh.ready();
    assert.not.ok(loaded(), 'Swagger UI not loaded by a start');
    const asset = await fresh.inject({ url: '/docs/static/index.css' });
    assert.is(asset.statusCode, 200);
    assert.ok(loaded(), 'loaded by the first visit');
    assert.match(asset.headers['content-security-policy'] as string, /^default-src 'none'/);
    assert.is(asset.headers['x-content-type-options'], 'nosniff');
    const again = await fresh.inject({
      url: '/docs/static/index.css',
      headers: { 'if-none-match': asset.headers.etag },
    });
    assert.is(again.statusCode, 304);
    assert.is(again.rawPayload.length, 0);
    assert.is(again.headers['content-type'], undefined, 'a 304 has no type');
    const head = await fresh.inject({ method: 'HEAD', url: '/docs/static/index.css' });
    assert.is(head.statusCode, 200);
    assert.is(head.headers['content-length'], String(asset.rawPayload.length));
  } finally {
    await fresh.close();
  }
});

/** Resolves a local $ref. */
const resolve = (node: Json): Json =>
  node.$ref
    ? node.$ref
        .slice(2)
        .split('/')
        .reduce((at: Json, key: string) => at[key], document)
    : node;

openapi('validates as OpenAPI 3.1 (and the validator refuses a broken copy)', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  assert.equal(result.errors, undefined, JSON.stringify(result.errors, null, 1));
  assert.ok(result.valid);
  assert.is(validator.version, '3.1');
  const broken = structuredClone(document);
  delete broken.paths['/api/take'].get.parameters[0].in;
  assert.not.ok((await new Validator().validate(broken)).valid, 'a parameter without "in" is refused');
});

openapi(
  'every row of the parameter table is a GET query parameter with its type, range, default and description',
  () => {
    const query = new Map<string, Json>(document.paths['/api/take'].get.parameters.map((p: Json) => [p.name, p]));
    assert.equal([...query.keys()].sort(), parameters.map((p) => p.name).sort());
    for (const row of parameters) {
      const documented = query.get(row.name)!;
      assert.is(documented.in, 'query', row.name);
      assert.ok(
        row.description.trim().length > 0 && documented.description.startsWith(row.description),
        `${row.name}: its description`,
      );
      const schema = documented.schema;
      const type = row.type.kind === 'list' ? row.type.item : row.type;
      if (row.type.kind === 'list') {
        assert.is(schema.type, 'array', `${row.name} is an array`);
        assert.is(documented.explode, true, `${row.name}: a GET repeats the key`);
        assert.is(schema.maxItems, row.type.maxItems);
      }
      const item = row.type.kind === 'list' ? schema.items : schema;
      const expectedType = type.kind === 'enum' ? 'string' : type.kind;
      assert.is(item.type, expectedType, `${row.name}: type`);
      if (type.kind === 'integer' || type.kind === 'number')
        assert.equal([item.minimum, item.maximum], [type.min, type.max], `${row.name}: range`);
      if (type.kind === 'string') assert.is(item.maxLength, type.maxLength, `${row.name}: length`);
      if (type.kind === 'enum') assert.equal(item.enum, [...type.values], `${row.name}: values`);
      if (row.default !== undefined) assert.equal(schema.default, row.default, `${row.name}: default`);
      if (row.defaultText) assert.ok(documented.description.includes(row.defaultText), `${row.name}: default in words`);
    }
  },
);

openapi('the POST body has every parameter but the GET-only ones, under the same schema, and nothing else', () => {
  const body = document.paths['/api/take'].post.requestBody.content['application/json'].schema;
  const query = new Map<string, Json>(document.paths['/api/take'].get.parameters.map((p: Json) => [p.name, p]));
  assert.is(body.additionalProperties, false);
  assert.equal(
    Object.keys(body.properties).sort(),
    parameters
      .filter((p) => p.only !== 'GET')
      .map((p) => p.name)
      .sort(),
  );
  for (const [name, schema] of Object.entries<Json>(body.properties)) {
    const { description: _description, ...shape } = schema;
    assert.equal(shape, query.get(name)!.schema, name);
  }
});

openapi('the document names exactly the parameters the parser accepts', () => {
  const names: string[] = document.paths['/api/take'].get.parameters.map((p: Json) => p.name);
  const unknown = (name: string) => {
    const parsed = parseTakeParams({ kind: 'query', entries: [[name, 'x']] });
    return (
      'problems' in parsed &&
      parsed.problems.some((p) => p.parameter === name && p.message === 'is not a known parameter')
    );
  };
  for (const name of names) assert.not.ok(unknown(name), `${name} is accepted`);
  assert.ok(unknown('not_a_parameter'));
});

openapi('success answers: bytes by format, JSON, async, a cached redirect', () => {
  const responses = document.paths['/api/take'].get.responses;
  const format = parameterByName.get('format')!.type;
  assert.is(format.kind, 'enum');
  const content = responses['200'].content;
  for (const value of format.kind === 'enum' ? format.values : []) {
    const contentType = (contentTypes as Record<string, string>)[value];
    if (contentType === undefined) continue; // an alias (jpg) answers as the format it names
    assert.ok(content[contentType], `format=${value}: ${contentType}`);
  }
  assert.ok(Object.keys(contentTypes).some((name) => content[(contentTypes as Record<string, string>)[name]]));
  assert.ok(responses['200'].headers['X-Render-Id']);
  const answer = resolve(content['application/json'].schema);
  assert.equal(answer.required, ['is_successful', 'render_id', 'file_url', 'format', 'size_bytes']);
  assert.is(resolve(answer.properties.metadata).type, 'object');
  assert.equal(resolve(responses['202'].content['application/json'].schema).properties.status, { const: 'pending' });
  assert.ok(responses['302'].headers.Location);
  const status = resolve(
    document.paths['/api/renders/{renderId}'].get.responses['200'].content['application/json'].schema,
  );
  assert.equal(status.properties.status.enum, ['pending', 'rendering', 'succeeded', 'failed']);
});

openapi('every metadata_* parameter has its field documented', () => {
  const metadata = document.components.schemas.Metadata.properties;
  for (const field of metadataFieldNames()) assert.ok(metadata[field]?.type, `metadata.${field} has a schema`);
});

openapi('every error code the API answers is documented under its status, with the error body', () => {
  const documented = new Map<string, number>();
  // A path item holds its operations by method, beside shared entries such as `parameters`.
  const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
  const operations = Object.values<Json>(document.paths).flatMap((path) =>
    methods.filter((method) => path[method]).map((method) => path[method]),
  );
  for (const operation of operations) {
    for (const [status, response] of Object.entries<Json>(operation.responses)) {
      const schema = response.content?.['application/json']?.schema;
      if (!schema?.allOf) continue;
      assert.is(schema.allOf[0].$ref, '#/components/schemas/Error');
      for (const code of schema.properties.error_code.enum) documented.set(code, Number(status));
    }
  }
  for (const code of Object.keys(errorTable) as ErrorCode[]) {
    if (code === 'forbidden') continue; // the CLI's and the dashboard's, never the API's
    assert.is(documented.get(code), errorTable[code].status, code);
  }
  assert.ok(document.paths['/api/take'].get.responses['429'].headers['Retry-After']);
});

openapi('every operation documents what any request may meet: 408, 431 and 500, and 413 where it takes a body', () => {
  const methods = ['get', 'put', 'post', 'delete', 'patch'];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const method of methods.filter((name) => item[name])) {
      const operation = item[method];
      const codes = (status: string) =>
        operation.responses[status]?.content?.['application/json']?.schema?.properties?.error_code?.enum ?? [];
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(codes('408').includes('request_timeout'), `${where}: 408`);
      assert.ok(codes('431').includes('request_header_too_large'), `${where}: 431`);
      assert.ok(codes('500').includes('internal_application_error'), `${where}: 500`);
      if (operation.requestBody) assert.ok(codes('413').includes('request_body_too_large'), `${where}: 413`);
    }
  }
});

openapi('monitors: an interval of 60 s or more, as the service accepts, and a threshold from 0 to 1', () => {
  const { MonitorCreate, MonitorPatch } = document.components.schemas;
  for (const [name, schema] of [
    ['MonitorCreate', MonitorCreate],
    ['MonitorPatch', MonitorPatch],
  ] as const) {
    assert.equal([schema.properties.interval.minimum, schema.properties.interval.maximum], [60, 2_592_000], name);
    assert.equal([schema.properties.threshold.minimum, schema.properties.threshold.maximum], [0, 1], name);
  }
  assert.equal(MonitorCreate.required, ['interval', 'webhook_url']);
  assert.equal(
    Object.keys(document.paths['/api/monitors/{monitorId}']).filter((key) => key !== 'parameters'),
    ['get', 'patch', 'delete'],
  );
});

openapi("ScreenshotOne's other endpoints: bulk, usage and devices, and the JSON answer's names", () => {
  const bulk = document.paths['/api/bulk'].post;
  const request = resolve(bulk.requestBody.content['application/json'].schema);
  assert.equal(Object.keys(request.properties).sort(), ['access_key', 'execute', 'optimize', 'options', 'requests']);
  assert.equal([request.properties.requests.minItems, request.properties.requests.maxItems], [1, 20]);
  const entry = resolve(bulk.responses['200'].content['application/json'].schema).properties.responses.items;
  assert.ok(entry.properties.url && entry.properties.response);
  const usage = resolve(document.paths['/api/usage'].get.responses['200'].content['application/json'].schema);
  assert.equal(usage.required, ['total', 'available', 'used', 'concurrency']);
  assert.equal(usage.properties.concurrency.required, ['limit', 'remaining', 'reset']);
  const devices = resolve(document.paths['/api/devices'].get.responses['200'].content['application/json'].schema);
  assert.equal(devices.properties.devices.items.required, [
    'id',
    'name',
    'viewport',
    'device_scale_factor',
    'is_mobile',
    'has_touch',
    'user_agent',
  ]);
  const json = document.components.schemas.TakeJsonAnswer.properties;
  assert.ok(json.screenshot_url && json.cache_url);
});

openapi('the webhook: payload, both header sets, and the access key schemes', () => {
  const hook = document.webhooks['render.ended'].post;
  const headers = hook.parameters.map((p: Json) => `${p.in}:${p.name}`);
  for (const name of [
    'X-Webhook-Id',
    'X-Webhook-Timestamp',
    'X-Signature',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ])
    assert.ok(headers.includes(`header:${name}`), name);
  const payload = resolve(hook.requestBody.content['application/json'].schema);
  assert.equal(payload.properties.type.enum, ['render.succeeded', 'render.failed']);
  assert.ok(payload.properties.data.properties.render_id);
  assert.equal(document.components.securitySchemes.AccessKeyHeader, {
    type: 'apiKey',
    in: 'header',
    name: 'X-Access-Key',
    description: document.components.securitySchemes.AccessKeyHeader.description,
  });
  assert.is(document.components.securitySchemes.AccessKeyQuery.name, 'access_key');
  assert.equal(document.paths['/api/take'].get.security, [{ AccessKeyHeader: [] }, { AccessKeyQuery: [] }]);
});

openapi('/docs is an HTML page whose every asset this service serves itself (no CDN), NATS or not', async () => {
  for (const url of ['/docs', '/docs/']) {
    const page = await app.inject({ url });
    assert.is(page.statusCode, 200, url);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.not.match(page.body, /(src|href)="(https?:)?\/\//, 'no asset from elsewhere');
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map(
      (match) => new URL(match[1], `http://127.0.0.1${url}`).pathname,
    );
    assert.ok(assets.length >= 4);
    for (const asset of assets) assert.is((await app.inject({ url: asset })).statusCode, 200, asset);
  }
  const initializer = await app.inject({ url: '/docs/static/swagger-initializer.js' });
  assert.match(initializer.body, /validatorUrl: null/, 'no call to the online validator');
  assert.equal((await app.inject({ url: '/docs/json' })).json(), document);
});

openapi('unknown paths under /docs keep the contract 404; the API still needs NATS', async () => {
  for (const url of ['/docs/static/nope.js', '/docs/static/../../package.json', '/docs/nope']) {
    const answer = await app.inject({ url });
    assert.is(answer.statusCode, 404, url);
    assert.is(answer.json().error_code, 'not_found', url);
  }
  assert.is((await app.inject({ url: '/api/take?url=https://example.com' })).statusCode, 503);
});

openapi(
  '/api/animate: every row of its table as a GET parameter and in the POST body, its formats with their content types',
  () => {
    const get = document.paths['/api/animate'].get;
    const query = new Map<string, Json>(get.parameters.map((p: Json) => [p.name, p]));
    assert.equal([...query.keys()].sort(), animateParameters.map((p) => p.name).sort());
    assert.equal(query.get('scroll_easing')!.schema.enum, [...scrollEasings]);
    assert.is(query.get('duration')!.schema.maximum, 30);
    assert.equal(query.get('format')!.schema.enum, ['mp4', 'webm', 'mov', 'avi', 'gif']);
    assert.not.ok(query.has('full_page'), 'a screenshot-only row is not an animate parameter');
    const body = document.paths['/api/animate'].post.requestBody.content['application/json'].schema;
    assert.ok(body.properties.scroll_navigate_link_hints, 'the body has the animate rows');
    const answers = Object.keys(get.responses['200'].content);
    for (const type of ['video/mp4', 'video/webm', 'video/quicktime', 'video/x-msvideo', 'image/gif'])
      assert.ok(answers.includes(type), type);
    const files = Object.keys(document.paths['/files/{fileName}'].get.responses['200'].content);
    assert.ok(files.includes('video/mp4') && files.includes('image/png'), 'a stored file of either endpoint');
  },
);

openapi(
  'every public route the app registers is an operation of the document, at its path and method, and back',
  async () => {
    // Every route plugin registered: monitors and profiles with stubs they only keep.
    const full = appWithoutRenders(config, {
      natsLink: { isUp: false } as never,
      monitors: { manager: { store: {} }, sealer: {} } as never,
      profiles: {} as never,
    });
    const registered: string[] = [];
    full.addHook('onRoute', ({ method, url }) => {
      for (const verb of [method].flat())
        if (/^\/(api|files)\//.test(url) && verb !== 'HEAD') registered.push(`${verb} ${url}`);
    });
    try {
      await full.ready();
    } finally {
      await full.close();
    }
    const operations = apiParts.flatMap((part) => part.operations);
    const described = operations.map((operation) => `${operation.method.toUpperCase()} ${routeUrl(operation)}`);
    assert.equal(described.sort(), registered.sort());
    const documented = Object.entries<Json>(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${routeUrl({ path })}`),
    );
    assert.equal(documented.sort(), described);
  },
);

openapi.run();
