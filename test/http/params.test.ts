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
  assert.equal(problemsOf(query('url=https://a.example&viewport_height=2161&device_scale_factor=5.5&cache_ttl=59')), [
    'cache_ttl', 'device_scale_factor', 'viewport_height',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&format=bmp&wait_until=never&full_page=yes')), ['format', 'full_page', 'wait_until']);
});

params('limits are inclusive', () => {
  assert.equal(problemsOf(query('url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=2&delay=30&timeout=90&image_quality=1')), []);
  assert.equal(problemsOf(query('url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=2.01')), ['device_scale_factor']);
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
  // Values whose meaning a rule checks, or that need a partner.
  const samples: Record<string, [string, string][]> = {
    viewport_device: [['viewport_device', 'iphone_13']],
    time_zone: [['time_zone', 'Asia/Tokyo']],
    geolocation_latitude: [['geolocation_latitude', '48.85'], ['geolocation_longitude', '2.35']],
    geolocation_longitude: [['geolocation_latitude', '48.85'], ['geolocation_longitude', '2.35']],
    geolocation_accuracy: [['geolocation_latitude', '48.85'], ['geolocation_longitude', '2.35'], ['geolocation_accuracy', '10']],
    headers: [['headers', 'X-Test: 1']],
    cookies: [['cookies', 'session=abc; Path=/']],
    cache_key: [['cache_key', 'v2']],
    ...Object.fromEntries(['clip_x', 'clip_y', 'clip_width', 'clip_height'].map((name) => [name, [['clip_x', '0'], ['clip_y', '0'], ['clip_width', '10'], ['clip_height', '10']]])),
    // The pdf group needs format=pdf; its margins are CSS lengths.
    ...Object.fromEntries(['pdf_print_background', 'pdf_fit_one_page', 'pdf_landscape'].map((name) => [name, [['format', 'pdf'], [name, 'true']]])),
    pdf_paper_format: [['format', 'pdf'], ['pdf_paper_format', 'letter']],
    ...Object.fromEntries(['pdf_margin', 'pdf_margin_top', 'pdf_margin_right', 'pdf_margin_bottom', 'pdf_margin_left'].map((name) => [name, [['format', 'pdf'], [name, '10mm']]])),
    // Every storage_* needs store=true with a storage_path; the keys come in pairs.
    store: [['store', 'true'], ['storage_path', 'shots/home']],
    storage_path: [['store', 'true'], ['storage_path', 'shots/home']],
    storage_endpoint: [['store', 'true'], ['storage_path', 'a'], ['storage_endpoint', 'https://s3.eu-west-1.amazonaws.com']],
    storage_bucket: [['store', 'true'], ['storage_path', 'a'], ['storage_bucket', 'my-bucket']],
    ...Object.fromEntries(['storage_access_key_id', 'storage_secret_access_key'].map((name) => [name, [['store', 'true'], ['storage_path', 'a'], ['storage_access_key_id', 'AKIA'], ['storage_secret_access_key', 'secret']]])),
    storage_acl: [['store', 'true'], ['storage_path', 'a'], ['storage_acl', '']],
    storage_class: [['store', 'true'], ['storage_path', 'a'], ['storage_class', 'glacier_ir']],
    storage_return_location: [['store', 'true'], ['storage_path', 'a'], ['storage_return_location', 'true']],
  };
  for (const parameter of parameters) {
    if (['url', 'html', 'markdown'].includes(parameter.name)) continue;
    const values = samples[parameter.name] ?? good(parameter.type).map((v): [string, string] => [parameter.name, v]);
    const entries: [string, string][] = [['url', 'https://example.com/'], ...values];
    assert.equal(problemsOf({ kind: 'query', entries }), [], parameter.name);
    assert.ok(parameter.description.length > 10, `${parameter.name} has a description`);
    if (!samples[parameter.name] && parameter.type.kind !== 'string' && !(parameter.type.kind === 'list' && parameter.type.item.kind === 'string')) {
      const bad = problemsOf({ kind: 'query', entries: [['url', 'https://example.com/'], [parameter.name, 'not-a-valid-value-#']] });
      assert.equal(bad, [parameter.name], `${parameter.name} refuses a bad value`);
    }
  }
});

params('combinations and meanings: every offending parameter named at once', () => {
  assert.equal(problemsOf(query('html=<p>x</p>')), []);
  assert.equal(problemsOf(query('url=https://a.example&markdown=%23+x')), ['markdown']);
  assert.equal(problemsOf(query('format=png')), ['url']);
  assert.equal(problemsOf(query('url=https://a.example&viewport_device=no-such-phone&time_zone=Mars/Base&geolocation_latitude=1')), ['geolocation_longitude', 'time_zone', 'viewport_device']);
  assert.equal(problemsOf(query('url=https://a.example&headers=Host:+x&headers=nonsense&cookies=novalue')), ['cookies', 'headers', 'headers']);
  assert.equal(problemsOf(query('url=https://shop.example.com/&cookies=a%3Db%3B+Domain%3Dexample.com&cookies=c%3Dd%3B+Domain%3Devil.com')), ['cookies']);
  assert.equal(problemsOf(query('html=<p>x</p>&authorization=Bearer+x')), ['authorization']);
  assert.equal(problemsOf(query('url=https://a.example&navigation_timeout=20&timeout=10')), ['navigation_timeout']);
  assert.equal(problemsOf(query('url=https://a.example&store=true')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&storage_path=a&storage_bucket=b-b-b')), ['storage_bucket', 'storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=/a')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a/./b')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a/../b')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_secret_access_key=s')), ['storage_access_key_id']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_endpoint=https://s3.example/bucket')), ['storage_endpoint']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_endpoint=s3.example')), ['storage_endpoint']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a.b/c..d&storage_acl=')), []);
  assert.equal(problemsOf(query('url=https://a.example&clip_x=1&clip_y=1')), ['clip_height', 'clip_width']);
  assert.equal(problemsOf(query('url=https://a.example&clip_x=1&clip_y=1&clip_width=5&clip_height=5&full_page=true')), ['clip_x']);
  assert.equal(problemsOf(query('url=https://a.example&omit_background=true&format=jpg')), ['omit_background']);
  assert.equal(problemsOf(query('url=https://a.example&cache_key=not+ok')), ['cache_key']);
});

params('a device preset sets viewport, scale, mobile, touch and user agent; what is given explicitly wins, defaults included', () => {
  const parsed = parseTakeParams(query('url=https://a.example&viewport_device=iphone_13&viewport_width=1280&device_scale_factor=1'));
  assert.ok('request' in parsed);
  if (!('request' in parsed)) return;
  const { viewport_width, viewport_height, device_scale_factor, viewport_mobile, viewport_has_touch, user_agent } = parsed.request.options;
  assert.equal([viewport_width, viewport_height, device_scale_factor, viewport_mobile, viewport_has_touch], [1280, 664, 1, true, true]);
  assert.match(String(user_agent), /iPhone/);
});

params.run();
