// The playground's choices and the code it shows: the @shutterbus/client snippet signs exactly the URL shown.
import { pdfDocumentOptions } from '../../src/domain/pdf.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AnimateOptions, TakeOptions } from 'screenshotone-api-sdk';
import { Shutterbus } from '../../src/client/index.ts';
import { animateParameters } from '../../src/domain/animation.ts';
import { takeFormats } from '../../src/domain/formats.ts';
import { parameterByName } from '../../src/domain/parameters.ts';
import {
  choicesQuery,
  notInScreenshotOneSdk,
  playgroundFields,
  readChoices,
  signedTakeUrl,
  snippets,
} from '../../src/http/dashboard/playground-request.ts';
import { playgroundPage } from '../../src/http/dashboard/views/playground.ts';
import { parseTakeParams } from '../../src/http/params.ts';

const request = suite('dashboard playground request');
const keys = { access_key: 'ak_test', secret_key: 'sk_test' };

request('fields come from the parameter table, in its order; names it lacks are left out', () => {
  const fields = playgroundFields();
  assert.ok(fields.length > 10);
  for (const field of fields) assert.is(parameterByName.get(field.name), field);
  assert.equal(
    fields.map((f) => f.name),
    fields
      .map((f) => f.name)
      .sort((a, b) => [...parameterByName.keys()].indexOf(a) - [...parameterByName.keys()].indexOf(b)),
  );
});

request(
  'choices: defaults and empty values left out, lists one a line, a switch on by default only when turned off',
  () => {
    const form: Record<string, string[]> = {
      url: [' https://example.com/a b '],
      viewport_width: ['1280'],
      viewport_height: ['800.0'],
      delay: [''],
      dark_mode: ['true'],
      full_page: [],
      hide_selectors: ['.ad\r\n\n#cookie '],
      cache: ['false', 'true'],
      format: ['png'],
    };
    assert.equal(
      readChoices((name) => form[name] ?? []),
      [
        ['url', 'https://example.com/a b'],
        ['viewport_height', '800'],
        ['dark_mode', 'true'],
        ['hide_selectors', '.ad'],
        ['hide_selectors', '#cookie'],
      ],
    );
    assert.equal(
      readChoices((name) => (name === 'cache' ? ['false'] : [])),
      [['cache', 'false']],
    );
  },
);

request("the signed URL is the one @shutterbus/client signs from the snippet's parameters", () => {
  const choices = readChoices(
    (name) =>
      ({
        url: ['https://example.com/?q=a&b'],
        viewport_device: ['iPhone 13'],
        dark_mode: ['true'],
        delay: ['1.5'],
        hide_selectors: ['.a\n.b'],
      })[name] ?? [],
  );
  const signed = signedTakeUrl('http://shots.test', choices, keys);
  const client = new Shutterbus({ accessKey: 'ak_test', secretKey: 'sk_test', baseUrl: 'http://shots.test' });
  const viaClient = client.signUrl({
    url: 'https://example.com/?q=a&b',
    viewport_device: 'iPhone 13',
    dark_mode: true,
    delay: 1.5,
    hide_selectors: ['.a', '.b'],
  });
  assert.is(signed.url, viaClient);
  assert.is(signed.url, `http://shots.test${signed.path}`);
  const code = snippets('http://shots.test', choices, 'ak_test', signed.url);
  assert.is(code.curl, `curl -L -o shot.png '${signed.url}'`);
  assert.match(code.client, /^import \{ Shutterbus \} from '@shutterbus\/client';/, 'the package as it is installed');
  assert.match(code.client, /baseUrl: "http:\/\/shots\.test" \}\);\nconst url = client\.signUrl\(\{/);
  assert.match(code.client, /delay: 1\.5,\n {2}hide_selectors: \[".a", ".b"\],/);
  assert.match(code.sdk, /TakeOptions\.url\("https:\/\/example\.com\/\?q=a&b"\)\n {2}\.viewportDevice\("iPhone 13"\)/);
  assert.match(code.sdk, /\.hideSelectors\(".a", ".b"\)/);
  // Shutterbus's own options: in the client's snippet; named, never called, in the SDK's.
  const own = readChoices((name) => ({ url: ['https://example.com'], disable_animations: ['true'] })[name] ?? []);
  const ownCode = snippets('http://shots.test', own, 'ak_test', signedTakeUrl('http://shots.test', own, keys).url);
  assert.match(ownCode.client, /disable_animations: true,/);
  assert.match(ownCode.sdk, /Not in ScreenshotOne's SDK .*: disable_animations/);
  assert.not.match(ownCode.sdk, /\.disableAnimations\(/);
  // Every other offered row has its setter on the SDK's TakeOptions, which the snippet calls.
  const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  for (const field of playgroundFields('take')) {
    if (['url', 'html'].includes(field.name)) continue;
    const setter = typeof (TakeOptions.prototype as unknown as Record<string, unknown>)[camel(field.name)];
    const own = [...notInScreenshotOneSdk, ...pdfDocumentOptions].includes(field.name);
    assert.is(setter === 'function', !own, field.name);
  }
  assert.is(choicesQuery(choices).includes('access_key'), false, 'the page URL never holds a key');
});

request('a PDF with document operations: the client snippet has them, the SDK snippet names them aside', () => {
  const choices: [string, string][] = [
    ['url', 'https://example.com/'],
    ['format', 'pdf'],
    ['pdf_archive', 'a-2b'],
    ['pdf_watermark', 'DRAFT'],
  ];
  const code = snippets('http://shots.test', choices, 'ak_test', 'http://shots.test/api/take?x');
  assert.match(code.client, /pdf_archive: "a-2b",\n {2}pdf_watermark: "DRAFT",/);
  assert.match(code.sdk, /\.format\("pdf"\);/);
  assert.not.match(code.sdk, /pdfArchive|pdfWatermark/);
  assert.match(code.sdk, /Not in ScreenshotOne's SDK \(use the client above\): pdf_archive, pdf_watermark/);
  assert.ok(playgroundFields().some((field) => field.name === 'pdf_archive'));
  assert.not.ok(
    playgroundFields().some((field) => field.name === 'pdf_password'),
    'no password in a URL the page shows',
  );
});

request("animation mode: /api/animate's rows, signed alike, and snippets the SDK's AnimateOptions can run", () => {
  const fields = playgroundFields('animate');
  for (const field of fields) assert.ok(animateParameters.includes(field), field.name);
  const names = fields.map((f) => f.name);
  for (const name of ['format', 'duration', 'scenario', 'scroll_by', 'scroll_easing'])
    assert.ok(names.includes(name), name);
  assert.not.ok(names.includes('full_page'), 'a screenshot option');
  assert.equal(
    fields.find((f) => f.name === 'format')?.type,
    animateParameters.find((p) => p.name === 'format')?.type,
    "the format list is animate's",
  );
  // Every offered row has its setter on the SDK's AnimateOptions, which the snippet calls.
  const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  for (const name of names.filter((n) => n !== 'url' && n !== 'html'))
    assert.type((AnimateOptions.prototype as unknown as Record<string, unknown>)[camel(name)], 'function', name);

  const choices = readChoices(
    (name) =>
      ({ url: ['https://example.com'], format: ['gif'], duration: ['3'], scenario: ['scroll'], full_page: ['true'] })[
        name
      ] ?? [],
    'animate',
  );
  assert.equal(choices, [
    ['url', 'https://example.com'],
    ['format', 'gif'],
    ['duration', '3'],
    ['scenario', 'scroll'],
  ]);
  const signed = signedTakeUrl('http://shots.test', choices, keys, 'animate');
  assert.match(signed.path, /^\/api\/animate\?/);
  const viaClient = new Shutterbus({
    accessKey: 'ak_test',
    secretKey: 'sk_test',
    baseUrl: 'http://shots.test',
  }).signAnimateUrl({ url: 'https://example.com', format: 'gif', duration: 3, scenario: 'scroll' });
  assert.is(signed.url, viaClient);
  const code = snippets('http://shots.test', choices, 'ak_test', signed.url, 'animate');
  assert.is(code.curl, `curl -L -o animation.gif '${signed.url}'`);
  assert.match(code.client, /const url = client\.signAnimateUrl\(\{\n {2}url: "https:\/\/example\.com",/);
  assert.match(code.sdk, /AnimateOptions\.url\("https:\/\/example\.com"\)\n {2}\.format\("gif"\)\n {2}\.duration\(3\)/);
  assert.match(code.sdk, /generateSignedAnimateURL\(options\)/);
});

request("the format menu offers exactly /api/take's formats, each once, by its own name", () => {
  const menu = (choices: [string, string][], unwritable: ReadonlySet<string> = new Set()) => {
    const page = playgroundPage({
      viewer: { email: 'a@b.test', workspaceId: 'w', workspaceIds: ['w'], csrf: 'c' },
      mode: 'take',
      choices,
      signedUrl: '',
      code: { curl: '', client: '', sdk: '' },
      unwritable,
    }).text;
    const select = /<select id="field-format"[^>]*>(.*?)<\/select>/s.exec(page)![1];
    const options = [...select.matchAll(/<option( selected)?>([^<]*)<\/option>/g)];
    return { values: options.map((o) => o[2]), selected: options.filter((o) => o[1]).map((o) => o[2]) };
  };
  assert.equal(menu([]).values, takeFormats);
  assert.equal(menu([]).selected, ['png']);
  // What this machine's image library cannot write is not offered.
  assert.equal(
    menu([], new Set(['jp2', 'heif'])).values,
    takeFormats.filter((f) => f !== 'jp2' && f !== 'heif'),
  );
  // A shared page's alias selects the format it names.
  assert.equal(menu([['format', 'jpg']]).selected, ['jpeg']);
  for (const format of menu([]).values) {
    const parsed = parseTakeParams({
      kind: 'query',
      entries: [
        ['url', 'https://a.example'],
        ['format', format],
      ],
    });
    assert.ok('request' in parsed && parsed.request.options.format === format, format);
  }
});

request.run();
