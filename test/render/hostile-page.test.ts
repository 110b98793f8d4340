// The page is hostile (docs/security.md): pages that rewrite the JavaScript a helper of the service
// would run in their own world, so that the link scroll_try_navigate follows is `file:`, a
// loopback address or `javascript:`. Real Chromium, real ffmpeg, the fixture site; every
// navigation the service makes passes one gate whatever chose its URL.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { animateParameters, type AnimationOptions } from '../../src/domain/animation.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';
import { ServiceError } from '../../src/errors.ts';
import { checkTargetUrl } from '../../src/net/target.ts';
import { captureAnimation, discardRecording } from '../../src/render/animation.ts';
import type { TargetCheck } from '../../src/render/steps/choreography.ts';
import { navigate } from '../../src/render/steps/page.ts';
import { hostilePages, LIAR_COLOUR } from '../fixtures/hostile-pages.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { pixelAt } from '../helpers/video.ts';
import { imageSize } from '../../src/render/outputs/image.ts';

const test = suite('the page is hostile');
const WIDTH = 320;
const HEIGHT = 240;
let rig: RenderRig;

const animationDefaults = Object.fromEntries(
  animateParameters.filter((p) => p.group === 'animation' && p.default !== undefined).map((p) => [p.name, p.default]),
) as unknown as AnimationOptions;

/** The address rules of production: private targets refused. */
const productionRules: TargetCheck = (raw, param) => checkTargetUrl(raw, { allowPrivate: false, param });

/** A scroll with scroll_try_navigate on `path` after 600 ms, its link chosen by the hints; the video read and discarded. */
async function navigateByHint(path: string, checkTarget?: TargetCheck) {
  const page: RenderOptions = {
    ...renderDefaults,
    url: `${rig.site.url}${path}`,
    viewport_width: WIDTH,
    viewport_height: HEIGHT,
    timeout: 30,
    format: 'mp4',
  };
  const animation: AnimationOptions = {
    ...animationDefaults,
    scenario: 'scroll',
    duration: 2,
    scroll_by: 100,
    scroll_duration: 200,
    scroll_delay: 100,
    scroll_back: false,
    scroll_complete: false,
    scroll_try_navigate: true,
    scroll_navigate_after: 600,
    scroll_navigate_link_hints: ['pricing'],
  };
  const observation: PageObservation = await captureAnimation(
    rig.host,
    page,
    animation,
    new AbortController().signal,
    'ws_hostile',
    checkTarget ? { checkTarget } : {},
  );
  const video = await readFile(observation.file!.path);
  await discardRecording(observation.file);
  assert.not.ok(existsSync(dirname(observation.file!.path)), 'the recording is gone');
  return video;
}

const isLiarColour = (rgba: number[]) => LIAR_COLOUR.every((c, i) => Math.abs(c - rgba[i]) <= 40);

test.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_hostile', routes: hostilePages });
});

test.after(async () => {
  await rig?.stop();
});

test('a link the page says is file:///etc/passwd is never followed: the video ends on the lying page', async () => {
  const video = await navigateByHint('/liar/file');
  const last = await pixelAt(video, 'last', WIDTH / 2, HEIGHT / 2);
  assert.ok(isLiarColour(last), `the last frame is still the lying page, not a file: ${last}`);
});

test('a link the page says is javascript: is never followed: the page script it names never runs', async () => {
  const video = await navigateByHint('/liar/javascript');
  const last = await pixelAt(video, 'last', WIDTH / 2, HEIGHT / 2);
  assert.ok(isLiarColour(last), `the last frame is still red, the javascript: URL never ran: ${last}`);
});

test('a link to a private address is refused under the production rules: url_not_allowed, never fetched', async () => {
  const from = rig.site.received.length;
  try {
    await navigateByHint('/liar/private', productionRules);
    assert.unreachable('the render must fail');
  } catch (error) {
    assert.instance(error, ServiceError);
    assert.is((error as ServiceError).code, 'url_not_allowed');
    assert.match(JSON.stringify((error as ServiceError).details), /scroll_navigate_link_hints/);
  }
  assert.not.ok(
    rig.site.received.slice(from).some((request) => request.search === '?private'),
    'the private address was never fetched',
  );
});

test('the same link under rules that allow it is followed: the check is of the address, not of the page', async () => {
  const from = rig.site.received.length;
  await navigateByHint('/liar/private');
  assert.ok(
    rig.site.received.slice(from).some((request) => request.search === '?private'),
    'the link was followed',
  );
});

test("a page's rewritten getters do not decide a content rule or its metadata: both are read in an isolated world", async () => {
  const observation = await rig.render('/liar/facts', { fail_if_content_contains: ['forbidden'] });
  assert.match(observation.visibleText, /forbidden/, 'the text the page shows, not its innerText getter');
  const facts = await rig.render('/liar/facts', { metadata_page_title: true });
  assert.is(facts.metadata?.page_title, 'Truth', 'the title in the DOM, not the getter');
});

test('sizes and boxes the page lies about are finite numbers before they size a capture', async () => {
  const full = await rig.render('/liar/facts', { full_page: true, viewport_width: 320, viewport_height: 240 });
  const fullSize = await imageSize(full.image);
  assert.ok(fullSize.width >= 1 && fullSize.height >= 1, `a full page of ${JSON.stringify(fullSize)}`);
  // The box the page reported has no area: the selector is as good as missing, never a capture of NaN.
  const element = await rig.render('/liar/facts', { selector: '#box', viewport_width: 320, viewport_height: 240 });
  assert.equal(element.missingSelectors, ['#box']);
});

test('every navigation the service makes refuses every scheme but http(s), whoever chose the URL', async () => {
  const schemes = [
    'file:///etc/passwd',
    'chrome://version',
    'view-source:http://127.0.0.1/',
    "javascript:document.title='x'",
    'data:text/html,<p>x</p>',
    'ftp://127.0.0.1/',
  ];
  for (const url of schemes) {
    const refused = await rig.host.withPage(
      { ...renderDefaults, timeout: 10, workspaceId: 'ws_hostile' },
      new AbortController().signal,
      (page, progress, session) =>
        navigate({ page, session, options: { ...renderDefaults, url, timeout: 10 }, progress }).then(
          () => null,
          (error: unknown) => error,
        ),
    );
    assert.instance(refused, ServiceError, url);
    assert.is((refused as ServiceError).code, 'url_not_allowed', url);
  }
});

test.run();
