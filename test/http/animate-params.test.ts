// The parameters of /api/animate: one table (the page rows of /api/take and its own), parsed the
// same way for GET and POST, every row named in docs/animate.md.
import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { animationParameters } from '../../src/domain/animation.ts';
import { parseAnimateParams } from '../../src/http/animate.ts';
import { parseTakeParams, type RawParams } from '../../src/http/params.ts';

const params = suite('/api/animate parameters');
const query = (text: string): RawParams => ({ kind: 'query', entries: [...new URLSearchParams(text)] });

params("defaults: mp4, 5 s, the default scenario, ScreenshotOne's scroll defaults, a 60 s timeout", () => {
  const parsed = parseAnimateParams(query('url=https://a.example'));
  assert.ok('request' in parsed, JSON.stringify(parsed));
  if (!('request' in parsed)) return;
  const { options, animation, control } = parsed.request;
  assert.is(options.format, 'mp4');
  assert.is(options.timeout, 60);
  assert.is(options.viewport_width, 1280);
  assert.equal(
    {
      duration: animation.duration,
      scenario: animation.scenario,
      by: animation.scroll_by,
      step: animation.scroll_duration,
      delay: animation.scroll_delay,
      easing: animation.scroll_easing,
      back: animation.scroll_back,
      complete: animation.scroll_complete,
      hints: animation.scroll_navigate_link_hints,
    },
    {
      duration: 5,
      scenario: 'default',
      by: 1000,
      step: 1500,
      delay: 500,
      easing: 'ease_in_out_quint',
      back: true,
      complete: true,
      hints: ['pricing', 'about', 'customers'],
    },
  );
  assert.is(control.response_type, 'by_format');
  assert.not.ok('duration' in options, 'the recording is not a page option');
});

params('GET and POST give the same request; an empty scenario is the default one', () => {
  const get = parseAnimateParams(
    query(
      'html=%3Cp%3Ex%3C%2Fp%3E&format=gif&scenario=&duration=2.5&scroll_navigate_link_hints=docs&scroll_navigate_link_hints=team&clip_x=0&clip_y=0&clip_width=10&clip_height=10',
    ),
  );
  const post = parseAnimateParams({
    kind: 'json',
    body: {
      html: '<p>x</p>',
      format: 'gif',
      scenario: '',
      duration: 2.5,
      scroll_navigate_link_hints: ['docs', 'team'],
      clip_x: 0,
      clip_y: 0,
      clip_width: 10,
      clip_height: 10,
    },
  });
  assert.equal(get, post);
  if (!('request' in get)) return assert.unreachable(JSON.stringify(get));
  assert.is(get.request.animation.scenario, 'default');
  assert.is(get.request.options.clip_width, 10);
  assert.equal(get.request.animation.scroll_navigate_link_hints, ['docs', 'team']);
});

params('/api/take knows none of the recording rows, and /api/animate none of the screenshot-only ones', () => {
  const take = parseTakeParams(query('url=https://a.example&duration=5&scenario=scroll'));
  assert.equal('problems' in take ? take.problems.map((p) => p.parameter) : [], ['duration', 'scenario']);
  const animate = parseAnimateParams(
    query(
      'url=https://a.example&full_page=true&image_quality=50&pdf_landscape=true&metadata_image_size=true&metadata_page_title=true&full_page_slices=true&selector_algorithm=clip',
    ),
  );
  assert.equal('problems' in animate ? animate.problems.map((p) => p.parameter) : [], [
    'full_page',
    'image_quality',
    'pdf_landscape',
    'metadata_image_size',
    'full_page_slices',
    'selector_algorithm',
  ]);
});

params("keys outside ScreenshotOne's animate schema are refused, never ignored: vision, slices, selector's", () => {
  const animate = parseAnimateParams(
    query(
      'url=https://a.example&vision_prompt=What%3F&vision_max_tokens=100&openai_api_key=sk-1&full_page_slices=true&selector_algorithm=clickable&error_on_selector_not_found=true',
    ),
  );
  assert.equal(
    'problems' in animate ? animate.problems.map((p) => [p.parameter, p.message]) : [],
    [
      'vision_prompt',
      'vision_max_tokens',
      'openai_api_key',
      'full_page_slices',
      'selector_algorithm',
      'error_on_selector_not_found',
    ].map((name) => [name, 'is not a known parameter']),
  );
  // Those of the schema that an animation honours as a screenshot does are accepted.
  const kept = parseAnimateParams(
    query(
      'url=https://a.example&proxy=http://p.example:8080&request_gpu_rendering=true&fail_if_gpu_rendering_fails=true',
    ),
  );
  assert.ok('request' in kept, JSON.stringify(kept));
  // /api/take's rules over the rows both have, said once each.
  const refused = parseAnimateParams(
    query(
      'url=https://a.example&proxy=socks5://p.example:1080&ip_country_code=de&proxy_bypass_hosts=a%20b&headers=nocolon&storage_path=x',
    ),
  );
  assert.equal('problems' in refused ? refused.problems.map((p) => p.parameter).sort() : [], [
    'headers',
    'ip_country_code',
    'proxy',
    'proxy_bypass_hosts',
    'storage_path',
  ]);
});

params("a gif clip must lie inside the viewport the render will have (a device preset's included)", () => {
  const clip = 'format=gif&clip_x=0&clip_y=500&clip_width=100&clip_height=100';
  const parameterOf = (text: string) => {
    const parsed = parseAnimateParams(query(`url=https://a.example&${clip}&${text}`));
    return 'problems' in parsed ? parsed.problems.map((p) => p.parameter) : [];
  };
  assert.equal(parameterOf(''), []);
  assert.equal(parameterOf('viewport_height=500'), ['clip_x']);
  assert.equal(parameterOf('viewport_device=iphone_13'), []);
  assert.equal(parameterOf('viewport_device=iphone_se'), ['clip_x']);
});

params('an animation over its pixels × frames budget is a 400 naming the duration and the sizes given', () => {
  const problemsOf = (text: string) => {
    const parsed = parseAnimateParams(query(`url=https://a.example&${text}`));
    return 'problems' in parsed ? parsed.problems : [];
  };
  const fourK = problemsOf('format=mov&width=3840&height=2160&duration=30');
  assert.equal(
    fourK.map((p) => p.parameter),
    ['duration', 'width', 'height'],
  );
  assert.match(fourK[0].message, /3840 × 2160 px at 25 fps for 30 s/);
  assert.match(fourK[0].message, /record at most 3 s at this size/);
  // The frames count as well as the output: a 4K viewport scaled down to a small video is as dear.
  assert.equal(
    problemsOf('viewport_width=1920&viewport_height=1080&device_scale_factor=2&width=320&height=180&duration=10').map(
      (p) => p.parameter,
    ),
    ['duration', 'width', 'height', 'viewport_width', 'viewport_height', 'device_scale_factor'],
  );
  // A device preset's viewport and scale count too.
  assert.ok(problemsOf('viewport_device=iphone_13&duration=30').length === 0, 'a phone is mobile: frames at 1x');
  // The budget itself: 1280 × 720 for 30 s passes, a second more at 1080p does not.
  assert.equal(problemsOf('width=1280&height=720&duration=30'), []);
  assert.equal(problemsOf('width=1920&height=1080&duration=13'), []);
  assert.equal(
    problemsOf('width=1920&height=1080&duration=14').map((p) => p.parameter),
    ['duration', 'width', 'height'],
  );
});

params('a gif clip is checked against the viewport turned on its side by viewport_landscape', () => {
  const parameterOf = (text: string) => {
    const parsed = parseAnimateParams(query(`url=https://a.example&format=gif&clip_x=0&clip_y=0&${text}`));
    return 'problems' in parsed ? parsed.problems.map((p) => p.parameter) : [];
  };
  // iphone_13 is 390 × 664: 664 × 390 on its side.
  assert.equal(parameterOf('viewport_device=iphone_13&viewport_landscape=true&clip_width=600&clip_height=100'), []);
  assert.equal(parameterOf('viewport_device=iphone_13&viewport_landscape=true&clip_width=100&clip_height=500'), [
    'clip_x',
  ]);
  assert.equal(
    parameterOf('viewport_width=300&viewport_height=400&viewport_landscape=true&clip_width=350&clip_height=300'),
    [],
  );
  // Already wider than tall: landscape changes nothing.
  assert.equal(parameterOf('viewport_landscape=true&clip_width=1280&clip_height=720'), []);
});

params("/api/take's rules over the page's request, traffic and bucket refuse the same in /api/animate", () => {
  const cases = [
    'proxy=ftp%3A%2F%2Fproxy.example.com',
    'proxy=http%3A%2F%2Fproxy.example.com%3A8080&ip_country_code=de',
    'proxy=http%3A%2F%2Fproxy.example.com%3A8080&proxy_bypass_hosts=not%20a%20host',
    'proxy_bypass_hosts=cdn.example.com',
    'headers=Accept-Language%3A%20%3B%3B%3B',
    'storage_path=shots%2Fhome',
    'store=true',
    'store=true&storage_path=%2Fa',
    'store=true&storage_path=a&storage_access_key_id=AKIA',
    'store=true&storage_path=a&storage_endpoint=https%3A%2F%2Fs3.example.com%2Fbucket',
  ];
  for (const text of cases) {
    const take = parseTakeParams(query(`url=https://a.example&${text}`));
    const animate = parseAnimateParams(query(`url=https://a.example&${text}`));
    assert.ok('problems' in take, `/api/take refuses ${text}`);
    assert.equal(animate, take, text);
  }
});

params('every problem at once', () => {
  const parsed = parseAnimateParams(query('duration=0&scroll_easing=bounce&width=8'));
  assert.equal('problems' in parsed ? parsed.problems.map((p) => p.parameter).sort() : [], [
    'duration',
    'scroll_easing',
    'url',
    'width',
  ]);
});

params('docs/animate.md names every row of its own', () => {
  const docs = readFileSync(new URL('../../docs/animate.md', import.meta.url), 'utf8');
  for (const { name } of animationParameters) assert.ok(docs.includes(`\`${name}\``), `docs/animate.md names ${name}`);
});

params.run();
