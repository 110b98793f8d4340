import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { devices } from '../../src/domain/devices.ts';
import { parameters } from '../../src/domain/parameters.ts';
import { parseAnimateParams } from '../../src/http/animate.ts';
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
  const parsed = parseTakeParams(
    query(
      'url=https://a.example&format=jpg&full_page=1&ignore_host_errors=0&fail_if_content_missing=a&fail_if_content_missing=b',
    ),
  );
  assert.ok('request' in parsed);
  if (!('request' in parsed)) return;
  assert.is(parsed.request.options.format, 'jpeg');
  assert.is(parsed.request.options.full_page, true);
  assert.is(parsed.request.options.ignore_host_errors, false);
  assert.equal(parsed.request.options.fail_if_content_missing, ['a', 'b']);
});

params('POST lists are JSON arrays or one string; anything else is refused', () => {
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', fail_if_content_contains: ['x'] } }), []);
  const parsed = parseTakeParams({
    kind: 'json',
    body: { url: 'https://a.example', fail_if_content_contains: 'x', wait_until: 'networkidle' },
  });
  assert.ok('request' in parsed);
  if (!('request' in parsed)) return;
  assert.equal(parsed.request.options.fail_if_content_contains, ['x']);
  assert.equal(parsed.request.options.wait_until, ['networkidle']);
  assert.equal(
    problemsOf({ kind: 'json', body: { url: 'https://a.example', fail_if_content_contains: 7, wait_until: 'soon' } }),
    ['fail_if_content_contains', 'wait_until'],
  );
});

params('missing url, unknown and out-of-range parameters are each named', () => {
  assert.equal(problemsOf(query('colour=red&viewport_width=99&image_quality=101&delay=31&timeout=0')), [
    'colour',
    'delay',
    'image_quality',
    'timeout',
    'url',
    'viewport_width',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&viewport_height=2161&device_scale_factor=5.5&cache_ttl=59')), [
    'cache_ttl',
    'device_scale_factor',
    'viewport_height',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&format=bmp&wait_until=never&full_page=yes')), [
    'format',
    'full_page',
    'wait_until',
  ]);
});

params('limits are inclusive', () => {
  assert.equal(
    problemsOf(
      query(
        'url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=2&delay=30&timeout=90&image_quality=1',
      ),
    ),
    [],
  );
  assert.equal(
    problemsOf(query('url=https://a.example&viewport_width=3840&viewport_height=2160&device_scale_factor=2.01')),
    ['device_scale_factor'],
  );
  assert.equal(
    problemsOf(
      query('url=https://a.example&viewport_width=100&viewport_height=100&device_scale_factor=1&cache_ttl=2592000'),
    ),
    [],
  );
});

params('styles and scripts are limited to 64 KiB of UTF-8, not 64 Ki characters', () => {
  const body = (styles: string) => ({ kind: 'json' as const, body: { url: 'https://a.example', styles } });
  assert.equal(problemsOf(body('a'.repeat(65_536))), []);
  assert.equal(problemsOf(body('a'.repeat(65_537))), ['styles']);
  // 40,000 characters, 80,000 bytes.
  assert.equal(problemsOf(body('é'.repeat(40_000))), ['styles']);
});

params('a scalar given twice is refused', () => {
  assert.equal(problemsOf(query('url=https://a.example&url=https://b.example')), ['url']);
});

params('external_identifier is at most 128 characters', () => {
  assert.equal(problemsOf(query(`url=https://a.example&external_identifier=${'x'.repeat(129)}`)), [
    'external_identifier',
  ]);
  assert.equal(problemsOf(query(`url=https://a.example&external_identifier=${'x'.repeat(128)}`)), []);
});

params('POST numbers may be JSON numbers; a signature belongs in the header', () => {
  assert.equal(
    problemsOf({ kind: 'json', body: { url: 'https://a.example', viewport_width: 800, full_page: true } }),
    [],
  );
  assert.equal(problemsOf({ kind: 'json', body: { url: 'https://a.example', signature: 'ab' } }), ['signature']);
});

params('every parameter of the table is parsed from it: a good value passes, a bad one is named', () => {
  const good = (type: (typeof parameters)[number]['type']): string[] => {
    const one = type.kind === 'list' ? type.item : type;
    const value =
      one.kind === 'boolean'
        ? 'true'
        : one.kind === 'integer' || one.kind === 'number'
          ? String(one.min)
          : one.kind === 'enum'
            ? one.values[0]
            : 'x';
    return type.kind === 'list' ? [value, value] : [value];
  };
  // Values whose meaning a rule checks, or that need a partner.
  const samples: Record<string, [string, string][]> = {
    viewport_device: [['viewport_device', 'iphone_13']],
    time_zone: [['time_zone', 'Asia/Tokyo']],
    geolocation_latitude: [
      ['geolocation_latitude', '48.85'],
      ['geolocation_longitude', '2.35'],
    ],
    geolocation_longitude: [
      ['geolocation_latitude', '48.85'],
      ['geolocation_longitude', '2.35'],
    ],
    geolocation_accuracy: [
      ['geolocation_latitude', '48.85'],
      ['geolocation_longitude', '2.35'],
      ['geolocation_accuracy', '10'],
    ],
    headers: [['headers', 'X-Test: 1']],
    mask_color: [
      ['mask_selectors', '#card'],
      ['mask_color', '#00FF00'],
    ],
    cookies: [['cookies', 'session=abc; Path=/']],
    cache_key: [['cache_key', 'v2']],
    metadata_content_format: [
      ['metadata_content', 'true'],
      ['metadata_content_format', 'markdown'],
    ],
    proxy: [['proxy', 'http://user:pass@proxy.example.com:8080']],
    ip_country_code: [['ip_country_code', 'de']],
    selector_algorithm: [
      ['selector', '#main'],
      ['selector_algorithm', 'clip'],
    ],
    selector_scroll_into_view: [
      ['selector', '#main'],
      ['selector_scroll_into_view', 'false'],
    ],
    wait_for_selector_algorithm: [
      ['wait_for_selector', '#main'],
      ['wait_for_selector_algorithm', 'at_least_one'],
    ],
    scripts_wait_until: [
      ['scripts', 'void 0'],
      ['scripts_wait_until', 'load'],
    ],
    scroll_into_view_adjust_top: [
      ['scroll_into_view', '#main'],
      ['scroll_into_view_adjust_top', '-100'],
    ],
    fail_if_gpu_rendering_fails: [
      ['request_gpu_rendering', 'true'],
      ['fail_if_gpu_rendering_fails', 'true'],
    ],
    proxy_bypass_hosts: [
      ['proxy', 'http://proxy.example.com:8080'],
      ['proxy_bypass_hosts', 'cdn.example.com'],
    ],
    vision_max_tokens: [
      ['vision_prompt', 'What is on the page?'],
      ['vision_max_tokens', '100'],
    ],
    openai_api_key: [
      ['vision_prompt', 'What is on the page?'],
      ['openai_api_key', 'sk-test'],
    ],
    // These only go with a full page.
    ...Object.fromEntries(
      [
        ['full_page_algorithm', 'by_sections'],
        ['full_page_slices', 'true'],
        ['full_page_slice_height', '500'],
        ['full_page_slice_overlap_height', '10'],
        ['full_page_scroll', 'true'],
        ['full_page_scroll_delay', '500'],
        ['full_page_scroll_by', '300'],
      ].map(([name, value]) => [
        name,
        [
          ['full_page', 'true'],
          ...(name.startsWith('full_page_slice_') ? [['full_page_slices', 'true'] as [string, string]] : []),
          [name, value],
        ],
      ]),
    ),
    ...Object.fromEntries(
      ['clip_x', 'clip_y', 'clip_width', 'clip_height'].map((name) => [
        name,
        [
          ['clip_x', '0'],
          ['clip_y', '0'],
          ['clip_width', '10'],
          ['clip_height', '10'],
        ],
      ]),
    ),
    // The pdf group needs format=pdf; its margins are CSS lengths.
    ...Object.fromEntries(
      ['pdf_print_background', 'pdf_fit_one_page', 'pdf_landscape'].map((name) => [
        name,
        [
          ['format', 'pdf'],
          [name, 'true'],
        ],
      ]),
    ),
    pdf_paper_format: [
      ['format', 'pdf'],
      ['pdf_paper_format', 'letter'],
    ],
    ...Object.fromEntries(
      ['pdf_margin', 'pdf_margin_top', 'pdf_margin_right', 'pdf_margin_bottom', 'pdf_margin_left'].map((name) => [
        name,
        [
          ['format', 'pdf'],
          [name, '10mm'],
        ],
      ]),
    ),
    ...Object.fromEntries(
      ['pdf_prefer_css_page_size', 'pdf_outline', 'pdf_tagged'].map((name) => [
        name,
        [
          ['format', 'pdf'],
          [name, 'true'],
        ],
      ]),
    ),
    ...Object.fromEntries(
      ['pdf_header', 'pdf_footer'].map((name) => [
        name,
        [
          ['format', 'pdf'],
          [name, '<span class="pageNumber"></span>'],
        ],
      ]),
    ),
    pdf_page_ranges: [
      ['format', 'pdf'],
      ['pdf_page_ranges', '1-3,5'],
    ],
    // The document operations (docs/capture.md, "PDF for archives and documents").
    ...Object.fromEntries(
      [
        ['pdf_archive', 'a-2b'],
        ['pdf_accessible', 'true'],
        ['pdf_title', 'Report'],
        ['pdf_author', 'Ann'],
        ['pdf_subject', 'Accounts'],
        ['pdf_keywords', 'a, b'],
        ['pdf_watermark', 'DRAFT'],
        ['pdf_password', 'secret'],
        ['pdf_owner_password', 'owner'],
        ['pdf_permissions', 'print'],
      ].map(([name, value]) => [
        name,
        [
          ['format', 'pdf'],
          [name, value],
        ],
      ]),
    ),
    ...Object.fromEntries(
      [
        ['pdf_watermark_opacity', '0.5'],
        ['pdf_watermark_layer', 'under'],
      ].map(([name, value]) => [
        name,
        [
          ['format', 'pdf'],
          ['pdf_watermark', 'DRAFT'],
          [name, value],
        ],
      ]),
    ),
    pdf_scale: [
      ['format', 'pdf'],
      ['pdf_scale', '0.5'],
    ],
    ...Object.fromEntries(
      ['pdf_width', 'pdf_height'].map((name) => [
        name,
        [
          ['format', 'pdf'],
          ['pdf_width', '8in'],
          ['pdf_height', '200mm'],
        ],
      ]),
    ),
    // store=true needs a storage_path; the keys come in pairs.
    store: [
      ['store', 'true'],
      ['storage_path', 'shots/home'],
    ],
    storage_path: [
      ['store', 'true'],
      ['storage_path', 'shots/home'],
    ],
    storage_endpoint: [
      ['store', 'true'],
      ['storage_path', 'a'],
      ['storage_endpoint', 'https://s3.eu-west-1.amazonaws.com'],
    ],
    storage_bucket: [
      ['store', 'true'],
      ['storage_path', 'a'],
      ['storage_bucket', 'my-bucket'],
    ],
    ...Object.fromEntries(
      ['storage_access_key_id', 'storage_secret_access_key'].map((name) => [
        name,
        [
          ['store', 'true'],
          ['storage_path', 'a'],
          ['storage_access_key_id', 'AKIA'],
          ['storage_secret_access_key', 'secret'],
        ],
      ]),
    ),
    storage_acl: [
      ['store', 'true'],
      ['storage_path', 'a'],
      ['storage_acl', ''],
    ],
    storage_class: [
      ['store', 'true'],
      ['storage_path', 'a'],
      ['storage_class', 'glacier_ir'],
    ],
    storage_return_location: [
      ['store', 'true'],
      ['storage_path', 'a'],
      ['storage_return_location', 'true'],
    ],
  };
  const failing: string[] = [];
  for (const parameter of parameters) {
    if (['url', 'html', 'markdown'].includes(parameter.name)) continue;
    const values = samples[parameter.name] ?? good(parameter.type).map((v): [string, string] => [parameter.name, v]);
    const entries: [string, string][] = [['url', 'https://example.com/'], ...values];
    const problems = problemsOf({ kind: 'query', entries });
    if (problems.length > 0) failing.push(parameter.name);
    if (problems.length > 0) continue;
    assert.ok(parameter.description.length > 10, `${parameter.name} has a description`);
    if (
      !samples[parameter.name] &&
      parameter.type.kind !== 'string' &&
      !(parameter.type.kind === 'list' && parameter.type.item.kind === 'string')
    ) {
      const bad = problemsOf({
        kind: 'query',
        entries: [
          ['url', 'https://example.com/'],
          [parameter.name, 'not-a-valid-value-#'],
        ],
      });
      assert.equal(bad, [parameter.name], `${parameter.name} refuses a bad value`);
    }
  }
  assert.equal(failing, [], 'parameters whose good value was refused');
});

params('still captures and saved formats: their values and what they do not combine with', () => {
  assert.equal(
    problemsOf(
      query(
        'url=https://a.example&disable_animations=true&remove_selectors=.ad&mask_selectors=%23a&mask_selectors=.b&mask_color=%23123',
      ),
    ),
    [],
  );
  assert.equal(problemsOf(query('url=https://a.example&mask_selectors=%23a&mask_color=red')), ['mask_color']);
  assert.equal(problemsOf(query('url=https://a.example&mask_color=%23FFFFFF')), ['mask_color']);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&mask_selectors=%23a')), ['mask_selectors']);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&save_formats=html&save_formats=mhtml')), []);
  assert.equal(problemsOf(query('url=https://a.example&format=webp&save_formats=markdown')), []);
  assert.equal(problemsOf(query('url=https://a.example&format=html&save_formats=mhtml')), ['save_formats']);
  assert.equal(problemsOf(query('url=https://a.example&save_formats=png')), ['save_formats']);
  assert.equal(problemsOf(query('url=https://a.example&format=mhtml')), []);
  assert.equal(problemsOf(query('url=https://a.example&profile=work-1&save_profile=next_1')), []);
  assert.equal(problemsOf(query('url=https://a.example&profile=a%20b')), ['profile']);
  assert.equal(problemsOf(query('html=<p>x</p>&save_profile=x')), ['save_profile']);
});

params('combinations and meanings: every offending parameter named at once', () => {
  assert.equal(problemsOf(query('html=<p>x</p>')), []);
  assert.equal(problemsOf(query('url=https://a.example&markdown=%23+x')), ['markdown']);
  assert.equal(problemsOf(query('format=png')), ['url']);
  assert.equal(
    problemsOf(query('url=https://a.example&viewport_device=no-such-phone&time_zone=Mars/Base&geolocation_latitude=1')),
    ['geolocation_longitude', 'time_zone', 'viewport_device'],
  );
  assert.equal(problemsOf(query('url=https://a.example&headers=Host:+x&headers=nonsense&cookies=novalue')), [
    'cookies',
    'headers',
    'headers',
  ]);
  assert.equal(
    problemsOf(
      query('url=https://shop.example.com/&cookies=a%3Db%3B+Domain%3Dexample.com&cookies=c%3Dd%3B+Domain%3Devil.com'),
    ),
    ['cookies'],
  );
  assert.equal(problemsOf(query('html=<p>x</p>&authorization=Bearer+x')), ['authorization']);
  assert.equal(problemsOf(query('url=https://a.example&navigation_timeout=20&timeout=10')), ['navigation_timeout']);
  assert.equal(problemsOf(query('url=https://a.example&store=true')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&storage_path=a&storage_bucket=b-b-b')), ['storage_path']);
  // Without store, the other storage_* are ignored, as ScreenshotOne does, and so are the vision
  // settings without a vision_prompt: a client may send them with every request.
  assert.equal(
    problemsOf(
      query(
        'url=https://a.example&storage_bucket=b-b-b&storage_class=glacier&storage_access_key_id=AKIA&storage_secret_access_key=s&vision_max_tokens=100&openai_api_key=sk-1',
      ),
    ),
    [],
  );
  const unasked = parseTakeParams(query('url=https://a.example&openai_api_key=sk-1&vision_max_tokens=100'));
  assert.ok('request' in unasked);
  assert.equal(
    [unasked.request.options.openai_api_key, unasked.request.options.vision_max_tokens],
    [undefined, undefined],
  );
  const asked = parseTakeParams(query('url=https://a.example&vision_prompt=Hi&openai_api_key=sk-1'));
  assert.is('request' in asked && asked.request.options.openai_api_key, 'sk-1');
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=/a')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a/./b')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a/../b')), ['storage_path']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_secret_access_key=s')), [
    'storage_access_key_id',
  ]);
  assert.equal(
    problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_endpoint=https://s3.example/bucket')),
    ['storage_endpoint'],
  );
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_endpoint=s3.example')), [
    'storage_endpoint',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a.b/c..d&storage_acl=')), []);
  // The empty value a list of values allows is named as such, not as a trailing comma.
  const acl = parseTakeParams(query('url=https://a.example&store=true&storage_path=a&storage_acl=private'));
  assert.equal('problems' in acl ? acl.problems : [], [
    { parameter: 'storage_acl', message: 'must be one of public-read, "" (empty)' },
  ]);
  assert.equal(problemsOf(query('url=https://a.example&clip_x=1&clip_y=1')), ['clip_height', 'clip_width']);
  assert.equal(problemsOf(query('url=https://a.example&clip_x=1&clip_y=1&clip_width=5&clip_height=5&full_page=true')), [
    'clip_x',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&omit_background=true&format=jpg')), ['omit_background']);
  assert.equal(problemsOf(query('url=https://a.example&cache_key=not+ok')), ['cache_key']);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&pdf_width=8in')), ['pdf_height']);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&pdf_width=8in&pdf_height=9in&pdf_paper_format=a4')), [
    'pdf_width',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&pdf_page_ranges=1-3,x&pdf_scale=3')), [
    'pdf_page_ranges',
    'pdf_scale',
  ]);
  // A paper of no width would be Letter (Chromium's default), one of 1000in fails to print.
  const paper = (width: string, height: string) =>
    problemsOf(query(`url=https://a.example&format=pdf&pdf_width=${width}&pdf_height=${height}`));
  assert.equal(paper('0', '10in'), ['pdf_width']);
  assert.equal(paper('5in', '0mm'), ['pdf_height']);
  assert.equal(paper('1000in', '9999in'), ['pdf_height', 'pdf_width']);
  assert.equal(paper('200in', '5080mm'), []);
  assert.equal(paper('5081mm', '508.1cm'), ['pdf_height', 'pdf_width']);
  assert.equal(paper('1px', '0.1mm'), []);
  // CSS units in either case, as CSS takes them; the limits hold in every unit.
  assert.equal(paper('5IN', '210Mm'), []);
  assert.equal(paper('201IN', '5081MM'), ['pdf_height', 'pdf_width']);
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&pdf_margin=10MM&pdf_margin_top=1Cm')), []);
  // Page 0 or a backwards range is refused before the render, not found wrong after the page is loaded.
  for (const ranges of ['0', '1,0-2', '3-1', '2-5, 4 - 3'])
    assert.equal(problemsOf(query(`url=https://a.example&format=pdf&pdf_page_ranges=${encodeURIComponent(ranges)}`)), [
      'pdf_page_ranges',
    ]);
  for (const ranges of ['1', '2-2', '1-3, 5', '007'])
    assert.equal(
      problemsOf(query(`url=https://a.example&format=pdf&pdf_page_ranges=${encodeURIComponent(ranges)}`)),
      [],
    );
  assert.equal(problemsOf(query('url=https://a.example&format=pdf&pdf_page_ranges=1&pdf_fit_one_page=true')), [
    'pdf_page_ranges',
  ]);
  assert.equal(problemsOf(query('url=https://a.example&pdf_outline=true')), [], 'ignored with another format');
  // A template's images, styles and fonts are inline: nothing is fetched for a template.
  const template = (html: string) => `url=https://a.example&format=pdf&pdf_header=${encodeURIComponent(html)}`;
  assert.equal(problemsOf(query(template('<img src="data:image/png;base64,iVBO"><span class="title"></span>'))), []);
  assert.equal(
    problemsOf(
      query(
        template(
          '<a href="https://a.example/">a.example</a> <div style="background:url(data:image/png;base64,iVBO)"></div>',
        ),
      ),
    ),
    [],
  );
  for (const fetching of [
    '<img src="http://127.0.0.1/logo.png">',
    '<div style="background:url(\'https://a.example/x.png\')"></div>',
    '<link rel="stylesheet" href="/t.css">',
    '<style>@import "x.css";</style>',
    '<img src=//a.example/x.png>',
    '<svg><image href="https://a.example/x.svg"/></svg>',
    '<img data-x="1" srcset="https://a.example/x.png 2x">',
  ]) {
    assert.equal(problemsOf(query(template(fetching))), ['pdf_header'], fetching);
  }
});

params(
  'a device preset sets viewport, scale, mobile, touch and user agent; what is given explicitly wins, defaults included',
  () => {
    const parsed = parseTakeParams(
      query('url=https://a.example&viewport_device=iphone_13&viewport_width=1280&device_scale_factor=1'),
    );
    assert.ok('request' in parsed);
    if (!('request' in parsed)) return;
    const { viewport_width, viewport_height, device_scale_factor, viewport_mobile, viewport_has_touch, user_agent } =
      parsed.request.options;
    assert.equal(
      [viewport_width, viewport_height, device_scale_factor, viewport_mobile, viewport_has_touch],
      [1280, 664, 1, true, true],
    );
    assert.match(String(user_agent), /iPhone/);
  },
);

params(
  'asynchronous renders get the longer limits: timeout up to 600, delay up to 300; synchronous ones keep 90 and 30',
  () => {
    assert.equal(problemsOf(query('url=https://a.example&async=true&timeout=600&delay=300')), []);
    assert.equal(problemsOf(query('url=https://a.example&timeout=91&delay=31')), ['delay', 'timeout']);
    assert.equal(problemsOf(query('url=https://a.example&async=false&timeout=120')), ['timeout']);
    assert.equal(problemsOf(query('url=https://a.example&async=true&timeout=601&delay=301')), ['delay', 'timeout']);
    assert.equal(
      problemsOf({
        kind: 'json',
        body: { url: 'https://a.example', async: true, timeout: 300, delay: 120, navigation_timeout: 30 },
      }),
      [],
    );
    const parsed = parseTakeParams(query('url=https://a.example&timeout=120'));
    assert.ok('problems' in parsed && /at most 90 for a synchronous render/.test(parsed.problems[0].message));
  },
);

params("every device id of ScreenshotOne's list is a viewport_device, parentheses and all", () => {
  for (const id of [
    'ipad_gen_7',
    'pixel_4a_5g_landscape',
    'iphone_4',
    'jiophone_2_landscape',
    'ipad_pro',
    'iPad (gen 6)',
  ]) {
    assert.equal(problemsOf(query(`url=https://a.example&viewport_device=${encodeURIComponent(id)}`)), [], id);
  }
});

params('enum values and booleans in any case, as ScreenshotOne takes them; the table spelling comes out', () => {
  const parsed = parseTakeParams(
    query('url=https://a.example&format=PNG&response_type=%20JSON%20&media_type=Print&full_page=True&dark_mode=FALSE'),
  );
  assert.ok('request' in parsed, JSON.stringify(parsed));
  if (!('request' in parsed)) return;
  assert.is(parsed.request.options.format, 'png');
  assert.is(parsed.request.control.response_type, 'json');
  assert.is(parsed.request.options.media_type, 'print');
  assert.is(parsed.request.options.full_page, true);
  assert.is(parsed.request.options.dark_mode, false);
  const pdf = parseTakeParams(query('url=https://a.example&format=PDF&pdf_paper_format=A4&wait_until=NetworkIdle0'));
  assert.ok('request' in pdf && pdf.request.options.pdf_paper_format === 'a4');
  assert.ok('request' in pdf && pdf.request.options.wait_until[0] === 'networkidle0');
  // Still a bad value is named; the empty storage_acl is the empty string only.
  assert.equal(problemsOf(query('url=https://a.example&format=PNGG&full_page=yes')), ['format', 'full_page']);
  assert.equal(problemsOf(query('url=https://a.example&store=true&storage_path=a&storage_acl=%20')), ['storage_acl']);
});

params('options that refine another are refused without it, never silently ignored', () => {
  const url = 'url=https://a.example';
  assert.equal(problemsOf(query(`${url}&full_page_scroll=true&full_page_scroll_delay=500&full_page_scroll_by=300`)), [
    'full_page_scroll',
    'full_page_scroll_by',
    'full_page_scroll_delay',
  ]);
  assert.equal(problemsOf(query(`${url}&full_page=false&full_page_scroll_delay=500`)), ['full_page_scroll_delay']);
  assert.equal(
    problemsOf(query(`${url}&full_page=true&full_page_scroll=false&full_page_scroll_delay=500&full_page_scroll_by=9`)),
    ['full_page_scroll_by', 'full_page_scroll_delay'],
  );
  // Turning the scroll off needs nothing; with a full page every one is fine.
  assert.equal(problemsOf(query(`${url}&full_page_scroll=false`)), []);
  assert.equal(
    problemsOf(query(`${url}&full_page=1&full_page_scroll=1&full_page_scroll_delay=500&full_page_scroll_by=300`)),
    [],
  );
  assert.equal(problemsOf(query(`${url}&metadata_content_format=markdown`)), ['metadata_content_format']);
  assert.equal(problemsOf(query(`${url}&metadata_content=true&metadata_content_format=markdown`)), []);
  assert.equal(
    problemsOf(query('html=x&metadata_http_response_status_code=true&metadata_http_response_headers=true')),
    ['metadata_http_response_headers', 'metadata_http_response_status_code'],
  );
  assert.equal(problemsOf(query('html=x&metadata_http_response_status_code=false')), []);
  assert.equal(
    problemsOf(query(`${url}&metadata_http_response_status_code=true&metadata_http_response_headers=1`)),
    [],
  );
  assert.equal(problemsOf(query(`${url}&cache=false&cache_key=v2&cache_ttl=3600`)), ['cache_key', 'cache_ttl']);
  assert.equal(problemsOf(query(`${url}&cache=true&cache_key=v2&cache_ttl=3600`)), []);
  for (const format of ['pdf', 'html', 'markdown'])
    assert.equal(problemsOf(query(`${url}&format=${format}&image_quality=50`)), ['image_quality'], format);
  assert.equal(problemsOf(query(`${url}&format=webp&image_quality=50`)), []);
  assert.equal(
    problemsOf(
      query(
        `${url}&scripts_wait_until=load&wait_for_selector_algorithm=at_least_one&scroll_into_view_adjust_top=-50&fail_if_gpu_rendering_fails=true&full_page=true&full_page_slice_height=500&full_page_slice_overlap_height=10`,
      ),
    ),
    [
      'fail_if_gpu_rendering_fails',
      'full_page_slice_height',
      'full_page_slice_overlap_height',
      'scripts_wait_until',
      'scroll_into_view_adjust_top',
      'wait_for_selector_algorithm',
    ],
  );
  assert.equal(problemsOf(query(`${url}&request_gpu_rendering=false&fail_if_gpu_rendering_fails=false`)), []);
});

params('a delay that takes the whole timeout given is refused; without a timeout, the timeout leaves it room', () => {
  const url = 'url=https://a.example';
  assert.equal(problemsOf(query(`${url}&delay=5&timeout=5`)), ['delay']);
  assert.equal(problemsOf(query(`${url}&delay=30&timeout=31`)), []);
  assert.equal(problemsOf(query(`${url}&async=true&delay=300&timeout=301`)), []);
  const refused = parseTakeParams(query(`${url}&delay=5&timeout=5`));
  assert.ok('problems' in refused && /less than timeout \(5 s\)/.test(refused.problems[0].message));
  const timeoutOf = (qs: string) => {
    const parsed = parseTakeParams(query(`${url}&${qs}`));
    assert.ok('request' in parsed, qs);
    return 'request' in parsed ? parsed.request.options.timeout : 0;
  };
  assert.is(timeoutOf('delay=30'), 60);
  assert.is(timeoutOf('delay=0'), 30);
  assert.is(timeoutOf('async=true&delay=300'), 330);
  assert.is(timeoutOf('delay=10&timeout=12'), 12, 'a timeout given wins');
  assert.equal(problemsOf(query(`${url}&delay=31`)), ['delay'], 'over 30 s needs async');
  // An animation's timeout is 60 s unless given: its delay of 30 s fits.
  assert.ok('request' in parseAnimateParams(query(`${url}&delay=30`)));
});

params("the pixel cap counts a device preset's scale and size, not the defaults", () => {
  const url = 'url=https://a.example';
  // iphone_13 is scale 3: its 3840 × 2160 viewport would be 3840 × 2160 × 9 device pixels.
  assert.equal(problemsOf(query(`${url}&viewport_device=iphone_13&viewport_width=3840&viewport_height=2160`)), [
    'viewport_device',
  ]);
  assert.equal(
    problemsOf(
      query(`${url}&viewport_device=iphone_13&viewport_width=3840&viewport_height=2160&device_scale_factor=2`),
    ),
    [],
  );
  // ipad_pro is 1024 × 1366: at scale 5 that is over the cap, where 1280 × 720 would not be.
  assert.equal(problemsOf(query(`${url}&viewport_device=ipad_pro&device_scale_factor=5`)), ['device_scale_factor']);
  assert.equal(problemsOf(query(`${url}&device_scale_factor=5`)), []);
  // A clip is counted at the preset's scale too.
  assert.equal(
    problemsOf(query(`${url}&viewport_device=iphone_13&clip_x=0&clip_y=0&clip_width=3840&clip_height=2000`)),
    ['clip_height'],
  );
  // And within WebP's longest side: 6000 px at the iPhone's scale 3 is 18,000, refused up front
  // (it failed after three attempts as a 500); 5000 at scale 3 is 15,000 and fits.
  const webpClip = (width: number) =>
    `${url}&viewport_device=iphone_13&format=webp&clip_x=0&clip_y=0&clip_width=${width}&clip_height=10`;
  assert.equal(problemsOf(query(webpClip(6000))), ['clip_width']);
  assert.equal(problemsOf(query(webpClip(5000))), []);
  assert.equal(problemsOf(query(`${webpClip(6000)}&device_scale_factor=1`)), []);
  for (const device of devices.all())
    assert.equal(problemsOf(query(`${url}&viewport_device=${encodeURIComponent(device.name)}`)), [], device.name);
});

params('time_zone in any case is the IANA name the browser takes', () => {
  for (const [given, zone] of [
    ['asia/tokyo', 'Asia/Tokyo'],
    ['EUROPE/BERLIN', 'Europe/Berlin'],
    ['utc', 'UTC'],
    ['America/New_York', 'America/New_York'],
  ]) {
    const parsed = parseTakeParams(query(`url=https://a.example&time_zone=${encodeURIComponent(given)}`));
    assert.ok('request' in parsed && parsed.request.options.time_zone === zone, `${given}: ${JSON.stringify(parsed)}`);
  }
  assert.equal(problemsOf(query('url=https://a.example&time_zone=asia/nowhere')), ['time_zone']);
  // Offsets are zones to Node's Intl, not to Chromium's Emulation.setTimezoneOverride: refused here, not mid-render.
  for (const offset of ['+05:00', '-08:00', '+0530', '\u221205:00'])
    assert.equal(
      problemsOf(query(`url=https://a.example&time_zone=${encodeURIComponent(offset)}`)),
      ['time_zone'],
      offset,
    );
});

params('a POST list given empty is its default: wait_until=[] still waits for load', () => {
  const parsed = parseTakeParams({
    kind: 'json',
    body: { url: 'https://a.example', wait_until: [], hide_selectors: [], cookies: [] },
  });
  assert.ok('request' in parsed, JSON.stringify(parsed));
  if (!('request' in parsed)) return;
  assert.equal(parsed.request.options.wait_until, ['load']);
  assert.equal(parsed.request.options.hide_selectors, []);
  // Empty lists that go to the target's origin need no url either.
  assert.equal(problemsOf({ kind: 'json', body: { html: '<p>x</p>', headers: [], cookies: [] } }), []);
});

const messagesOf = (raw: RawParams) => {
  const parsed = parseTakeParams(raw);
  return 'problems' in parsed ? parsed.problems.map((p) => `${p.parameter} ${p.message}`) : [];
};

params('an unknown parameter names the closest known one, when one is close', () => {
  assert.equal(messagesOf(query('url=https://a.example&formt=png')), [
    'formt is not a known parameter; did you mean `format`?',
  ]);
  assert.equal(messagesOf(query('url=https://a.example&viewport_widht=800')), [
    'viewport_widht is not a known parameter; did you mean `viewport_width`?',
  ]);
  assert.equal(messagesOf({ kind: 'json', body: { url: 'https://a.example', Full_Page: true } }), [
    'Full_Page is not a known parameter; did you mean `full_page`?',
  ]);
  // Nothing near: no guess, and a short name is not stretched to fit.
  assert.equal(messagesOf(query('url=https://a.example&colour=red&a=1')), [
    'colour is not a known parameter',
    'a is not a known parameter',
  ]);
});

params('a cookie for a public suffix is refused up front, a parent domain is not', () => {
  assert.equal(messagesOf(query('url=https://shop.example.co.uk/&cookies=a%3Db%3B+Domain%3Dco.uk')), [
    "cookies a: Domain co.uk is a public suffix, which browsers refuse; leave Domain out for the page's own host",
  ]);
  assert.equal(problemsOf(query('url=https://me.github.io/&cookies=a%3Db%3B+Domain%3Dgithub.io')), ['cookies']);
  assert.equal(problemsOf(query('url=https://a.shop.example.co.uk/&cookies=a%3Db%3B+Domain%3Dexample.co.uk')), []);
  assert.equal(problemsOf(query('url=http://app.localhost/&cookies=a%3Db%3B+Domain%3Dlocalhost')), []);
});

params.run();
