// Every setter of ScreenshotOne's Node SDK (screenshotone-api-sdk, unmodified) with a value a user
// of it would write: the query it builds is accepted by /api/take's parser and means that value.
// The SDK's own serialisation is what is tested (a whole-number coordinate is "35.", for one).
import { TakeOptions } from 'screenshotone-api-sdk';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseTakeParams } from '../../src/http/params.ts';

const sdk = suite('SDK setters through the take parser');

const page = () => TakeOptions.url('https://example.com/');
/** Calls the setter `name` of `options`, as a user's code does. */
const set = (options: TakeOptions, name: string, args: unknown[]): TakeOptions =>
  (options as unknown as Record<string, (...values: unknown[]) => TakeOptions>)[name](...args);
const parse = (options: TakeOptions) =>
  parseTakeParams({ kind: 'query', entries: [...(options as unknown as { toQuery(): URLSearchParams }).toQuery()] });

/** Each setter: its arguments, and the options it goes with (what it refines). */
const setters: [name: string, args: unknown[], prepare?: (options: TakeOptions) => TakeOptions][] = [
  ['selector', ['#main']],
  ['selectorAlgorithm', ['clip'], (o) => o.selector('#main')],
  ['selectorScrollIntoView', [false], (o) => o.selector('#main')],
  ['responseType', ['json']],
  ['errorOnSelectorNotFound', [true]],
  ['captureBeyondViewport', [false]],
  ['includeShadowDom', [true]],
  ['attachmentName', ['shot.png']],
  ['externalIdentifier', ['order42']],
  ['reducedMotion', [true]],
  ['mediaType', ['print']],
  ['darkMode', [true]],
  ['hideSelectors', ['.a', '.b']],
  ['scriptsWaitUntil', ['networkidle0', 'load'], (o) => o.scripts('1')],
  ['styles', ['body{color:red}']],
  ['scripts', ['document.body.remove()']],
  ['click', ['#go']],
  ['hover', ['#menu']],
  ['errorOnClickSelectorNotFound', [false], (o) => o.click('#go')],
  ['errorOnHoverSelectorNotFound', [false], (o) => o.hover('#menu')],
  ['fullPage', [true]],
  ['fullPageMaxHeight', [5000], (o) => o.fullPage(true)],
  ['fullPageAlgorithm', ['by_sections'], (o) => o.fullPage(true)],
  ['fullPageScroll', [true], (o) => o.fullPage(true)],
  ['fullPageScrollDelay', [500], (o) => o.fullPage(true)],
  ['fullPageScrollBy', [400], (o) => o.fullPage(true)],
  ['fullPageSlices', [true], (o) => o.fullPage(true)],
  ['fullPageSliceHeight', [2000], (o) => o.fullPage(true).fullPageSlices(true)],
  ['fullPageSliceOverlapHeight', [100], (o) => o.fullPage(true).fullPageSlices(true)],
  ['format', ['jpg']],
  ['ignoreHostErrors', [true]],
  ['waitUntil', ['domcontentloaded', 'networkidle2']],
  ['ipCountryCode', ['de']],
  ['serversRegion', ['us-east']],
  ['imageQuality', [90], (o) => o.format('jpeg')],
  ['omitBackground', [true]],
  ['viewportDevice', ['iphone_13']],
  ['viewportWidth', [1920]],
  ['viewportHeight', [1080]],
  ['clipX', [0], (o) => o.clipY(10).clipWidth(200).clipHeight(100)],
  ['deviceScaleFactor', [2]],
  ['viewportMobile', [true]],
  ['viewportHasTouch', [true]],
  ['viewportLandscape', [true]],
  ['geolocationLatitude', [35], (o) => o.geolocationLongitude(139)],
  ['geolocationLongitude', [0], (o) => o.geolocationLatitude(51.5)],
  ['geolocationAccuracy', [50], (o) => o.geolocationLatitude(48).geolocationLongitude(2.35)],
  ['blockAds', [true]],
  ['blockBannersByHeuristics', [true]],
  ['blockCookieBanners', [true]],
  ['blockChats', [true]],
  ['blockSocials', [true]],
  ['blockTrackers', [true]],
  ['blockRequests', ['*.doubleclick.net*', '*analytics*']],
  ['blockResources', ['image', 'font']],
  ['cache', [true]],
  ['cacheTtl', [86400], (o) => o.cache(true)],
  ['cacheKey', ['v2'], (o) => o.cache(true)],
  ['userAgent', ['Mozilla/5.0 (X11; Linux x86_64) Test/1.0']],
  ['authorization', ['Bearer token']],
  ['scrollIntoView', ['#pricing']],
  ['scrollIntoViewAdjustTop', [-80], (o) => o.scrollIntoView('#pricing')],
  ['proxy', ['http://user:pass@proxy.example.com:8080']],
  ['proxyBypassHosts', ['cdn.example.com', '*.static.example.com'], (o) => o.proxy('http://proxy.example.com:8080')],
  ['cookies', ['session=abc; Path=/', 'theme=dark']],
  ['headers', ['X-Test: 1', 'Accept-Language: de-DE,de;q=0.9']],
  ['timeZone', ['Europe/Berlin']],
  ['delay', [3]],
  ['timeout', [60]],
  ['navigationTimeout', [20]],
  ['store', [true], (o) => o.storagePath('shots/home')],
  ['storageACL', ['public-read'], (o) => o.store(true).storagePath('a')],
  ['storageBucket', ['my-bucket'], (o) => o.store(true).storagePath('a')],
  ['storageAccessKeyId', ['AKIA'], (o) => o.store(true).storagePath('a').storageSecretAccessKey('secret')],
  ['storageEndpoint', ['https://s3.eu-west-1.amazonaws.com'], (o) => o.store(true).storagePath('a')],
  ['storageClass', ['standard_ia'], (o) => o.store(true).storagePath('a')],
  ['storageReturnLocation', [true], (o) => o.store(true).storagePath('a')],
  ['imageWidth', [640]],
  ['imageHeight', [480]],
  ['requestGpuRendering', [true]],
  ['failIfGpuRenderingFails', [true], (o) => o.requestGpuRendering(true)],
  ['pdfPrintBackground', [false], (o) => o.format('pdf')],
  ['pdfFitOnePage', [true], (o) => o.format('pdf')],
  ['pdfLandscape', [true], (o) => o.format('pdf')],
  ['pdfPaperFormat', ['letter'], (o) => o.format('pdf')],
  ['pdfMargin', ['10mm'], (o) => o.format('pdf')],
  ['pdfMarginTop', ['0.5in'], (o) => o.format('pdf')],
  ['pdfMarginRight', ['20px'], (o) => o.format('pdf')],
  ['pdfMarginBottom', ['1cm'], (o) => o.format('pdf')],
  ['pdfMarginLeft', ['0'], (o) => o.format('pdf')],
  ['openAiApiKey', ['sk-test'], (o) => o.visionPrompt('Describe the page')],
  ['visionPrompt', ['Describe the page']],
  ['visionMaxTokens', [300], (o) => o.visionPrompt('Describe the page')],
  ['bypassCsp', [true]],
  ['waitForSelector', ['#ready']],
  ['waitForSelectorAlgorithm', ['at_least_by_count'], (o) => o.waitForSelector('.item')],
  ['metadataImageSize', [true]],
  ['metadataFonts', [true]],
  ['metadataIcon', [true]],
  ['metadataOpenGraph', [true]],
  ['metadataPageTitle', [true]],
  ['metadataContent', [true]],
  ['metadataContentFormat', ['markdown'], (o) => o.metadataContent(true)],
  ['metadataHttpResponseStatusCode', [true]],
  ['metadataHttpResponseHeaders', [true]],
  ['async', [true]],
  ['webhookUrl', ['https://hooks.example.com/shots']],
  ['webhookSign', [false], (o) => o.webhookUrl('https://hooks.example.com/shots')],
  ['webhookErrors', [true], (o) => o.webhookUrl('https://hooks.example.com/shots')],
  ['failIfContentContains', ['Access denied']],
  ['failIfContentMissing', ['Pricing']],
  ['failIfRequestFailed', ['*.example.com/api/*']],
];

sdk('every setter of the SDK, with an ordinary value, builds a request the parser accepts', () => {
  const refused: string[] = [];
  for (const [name, args, prepare = (o: TakeOptions) => o] of setters) {
    const parsed = parse(set(prepare(page()), name, args));
    if ('problems' in parsed) refused.push(`${name}(${args.join(', ')}): ${JSON.stringify(parsed.problems)}`);
  }
  assert.equal(refused, []);
});

sdk('the table covers every setter the SDK has (a new setter needs a row here)', () => {
  const tested = new Set(setters.map(([name]) => name));
  const internal = new Set(['constructor', 'put', 'toQuery']);
  // Set within another setter's row, as their options go together.
  const alongside = new Set(['clipY', 'clipWidth', 'clipHeight', 'storagePath', 'storageSecretAccessKey']);
  const untested = Object.getOwnPropertyNames(TakeOptions.prototype).filter(
    (name) => !internal.has(name) && !tested.has(name) && !alongside.has(name),
  );
  assert.equal(untested, []);
});

sdk('whole-number coordinates, as the SDK writes them ("35."), are those numbers', () => {
  const parsed = parse(page().geolocationLatitude(35).geolocationLongitude(0));
  assert.ok('request' in parsed, JSON.stringify(parsed));
  if (!('request' in parsed)) return;
  assert.is(parsed.request.options.geolocation_latitude, 35);
  assert.is(parsed.request.options.geolocation_longitude, 0);
});

sdk.run();
