import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parameters } from '../../src/domain/parameters.ts';
import { parseTakeParams, type RawParams } from '../../src/http/params.ts';

const params = suite('take parameters');

const query = (qs: string): RawParams => ({ kind: 'query', entries: [...new URLSearchParams(qs)] });
const problemsOf = (raw: RawParams) => {
  const parsed = parseTakeParams(raw);
  return 'problems' in parsed ? parsed.problems.map((p) => p.parameter).sort() : [];
};

params('defaults apply to a bare url', () => {
  const parsed = parseTakeParams(query('url=https%3A%2F%2Fexample.com'));
  assert.ok('request' in parsed);
  if (!('request' in parsed)) return;
  assert.is(parsed.request.options.url, 'https://example.com');
  assert.is(parsed.request.options.format, 'png');
  assert.is(parsed.request.options.viewport_width, 1280);
  assert.is(parsed.request.options.viewport_height, 720);
  assert.is(parsed.request.options.timeout, 30);
  assert.is(parsed.request.control.response_type, 'by_format');
  assert.is(parsed.request.control.cache_ttl, 14400);
});

params('jpg is jpeg, booleans accept 1 and 0, GET lists repeat the key', () => {
  const parsed = parseTakeParams(query('url=https://a.example&format=jpg&full_page=1&ignore_host_errors=0&fail_if_content_missing=a&fail_if_content_missing=b'));
  assert.ok('request' in parsed);
  if (!('request' in parsed)) return;
  assert.is(parsed.request.options.format, 'jpeg');
  assert.is(parsed.request.options.full_page, true);
  assert.is(parsed.request.options.ignore_host_errors, false);
  assert.equal(parsed.request.options.fail_if_content_missing, ['a', 'b']);
});

params('POST lists are JSON arrays; a string is refused', () => {
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', fail_if_content_contains: ['x'] } }), []);
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', fail_if_content_contains: 'x' } }), ['fail_if_content_contains']);
});

params('missing url, unknown and out-of-range parameters are each named', () => {
  assert.equal(problemsOf(query('colour=red&viewport_width=99&image_quality=101&delay=31&timeout=0')), [
    'colour', 'delay', 'image_quality', 'timeout', 'url', 'viewport_width',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&viewport_height=2161&device_scale_factor=3.5&cache_ttl=59')), [
    'cache_ttl', 'device_scale_factor', 'viewport_height',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&format=gif&wait_until=never&full_page=yes')), ['format', 'full_page', 'wait_until']);
});

params('limits are inclusive', () => {
  assert.equal(problemsOf(query('url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=3&delay=30&timeout=90&image_quality=1')), []);
  assert.equal(problemsOf(query('url=https://a.example&viewport_width=100&viewport_height=100&device_scale_factor=1&cache_ttl=2592000')), []);
});

params('a scalar given twice is refused', () => {
  assert.equal(problemsOf(query('url=https://a.example&url=https://b.example')), ['url']);
});

params('external_identifier is at most 128 characters', () => {
  assert.equal(problemsOf(query(`url=https://a.example&external_identifier=${'x'.repeat(129)}`)), ['external_identifier']);
  assert.equal(problemsOf(query(`url=https://a.example&external_identifier=${'x'.repeat(128)}`)), []);
});

params('POST numbers may be JSON numbers; a signature belongs in the header', () => {
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', viewport_width: 800, full_page: true } }), []);
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', signature: 'ab' } }), ['signature']);
});

params('every parameter of the table is parsed from it: a good value passes, a bad one is named', () => {
  const good = (type: (typeof parameters)[number]['type']): string[] => {
    const one = type.kind === 'list' ? type.item : type;
    const value = one.kind === 'boolean' ? 'true' : one.kind === 'integer' || one.kind === 'number' ? String(one.min) : one.kind === 'enum' ? one.values[0] : 'x';
    return type.kind === 'list' ? [value, value] : [value];
  };
  for (const parameter of parameters) {
    if (parameter.name === 'url') continue;
    const entries: [string, string][] = [['url', 'https://example.com/'], ...good(parameter.type).map((v): [string, string] => [parameter.name, v])];
    assert.equal(problemsOf({ kind: 'query', entries }), [], parameter.name);
    assert.ok(parameter.description.length > 10, `${parameter.name} has a description`);
    if (parameter.type.kind !== 'string' && !(parameter.type.kind === 'list' && parameter.type.item.kind === 'string')) {
      const bad = problemsOf({ kind: 'query', entries: [['url', 'https://example.com/'], [parameter.name, 'not-a-valid-value-#']] });
      assert.equal(bad, [parameter.name], `${parameter.name} refuses a bad value`);
    }
  }
});

params.run();
