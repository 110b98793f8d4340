// Blocking (docs/blocking.md) against real Chromium: each switch on one fixture page of ads, a tracker,
// social and chat widgets, a OneTrust-style consent banner, an unknown cookie notice and a
// newsletter overlay. Chromium goes through the egress proxy, which resolves every host name to
// the fixture site: a vendor request the browser made arrives there under its host name, so the
// fixture's received list shows which were never made. The page itself is asked for as
// news.example.test, as a page on the web would be.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEgressProxy, type EgressProxy } from '../../src/net/egress-proxy.ts';
import { requestFailedMatched } from '../../actors/render.rules.ts';
import { renderDefaults, type PageObservation, type RenderOptions } from '../../src/domain/options.ts';
import { adblocker, ruleEngine } from '../../src/render/steps/filters.ts';
import { near, pixel, startRenderRig, type RenderRig } from '../helpers/render.ts';
import {
  blockingRoutes,
  PARTNER_HOST,
  PARTS,
  SOCIAL_WIDGET_HOSTS,
  VENDOR_HOSTS,
  WHITE,
  WIDGET_PARTS,
} from '../fixtures/blocking-pages.ts';

const test = suite('blocking');

let proxy: EgressProxy;
let rig: RenderRig;
let page: string;

type Part = keyof typeof PARTS;

let renders = 0;
/** Every host name the egress proxy resolved: a request Chromium made, over http or https. */

// Renders `path` (as news.example.test) with a mark of its own; what it showed, and the host names
// under which the fixture received requests of this render (vendor URLs carry the page's mark).
async function renderPage(
  options: Partial<RenderOptions> = {},
  path = '/b/page',
): Promise<{ observation: PageObservation; hosts: Set<string>; paths: string[] }> {
  const mark = `r${++renders}`;
  const from = rig.site.received.length;
  const observation = await rig.render(path, { url: `${page}${path}?r=${mark}`, ...options });
  const received = rig.site.received.slice(from);
  const marked = received.filter((request) => new URLSearchParams(request.search).get('r') === mark);
  return {
    observation,
    hosts: new Set(marked.map((request) => (request.headers.host ?? '').split(':')[0])),
    paths: received.map((request) => request.path + request.search.replace(/[?&]r=\w+$/, '')),
  };
}

async function shows(image: Buffer, part: Part): Promise<boolean> {
  const [x, y] = PARTS[part].at;
  return near(await pixel(image, x, y), [...PARTS[part].colour, 255]);
}

async function hidden(image: Buffer, part: Part): Promise<boolean> {
  const [x, y] = PARTS[part].at;
  return near(await pixel(image, x, y), [...WHITE, 255]);
}

// Asserts each part shows (true) or is gone (false).
async function expectParts(image: Buffer, expected: Partial<Record<Part, boolean>>): Promise<void> {
  for (const [part, visible] of Object.entries(expected) as [Part, boolean][]) {
    const [x, y] = PARTS[part].at;
    const ok = visible ? await shows(image, part) : await hidden(image, part);
    assert.ok(
      ok,
      `${part} should be ${visible ? 'visible' : 'hidden'}; pixel at ${x},${y} is ${await pixel(image, x, y)}`,
    );
  }
}

const never = (hosts: Set<string>, names: readonly string[]) => {
  for (const name of names) assert.not.ok(hosts.has(name), `${name} was asked for (${[...hosts].join(' ')})`);
};

test.before(async () => {
  // Every name resolves to the fixture site: nothing leaves this machine.
  proxy = await startEgressProxy({
    allowPrivate: true,
    lookup: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  rig = await startRenderRig({
    workspaceId: 'ws_blocking',
    routes: blockingRoutes,
    host: { proxyServer: proxy.browserProxy },
    defaults: { viewport_width: 800, viewport_height: 600 },
  });
  page = rig.site.url.replace('127.0.0.1', 'news.example.test');
});

test.after(async () => {
  await rig?.stop();
  await proxy?.close();
});

// Cross-site frames paint in renderers of their own, which may still be starting when the page has
// loaded (more so on a loaded machine): the renders that look for the frames' pixels wait a little.
const FRAMES_PAINTED = { delay: 0.5 };

test('without blocking every part shows and every vendor is asked for', async () => {
  const { observation, hosts, paths } = await renderPage(FRAMES_PAINTED);
  await expectParts(observation.image, {
    adSlot: true,
    adFrame: true,
    adScript: true,
    socialFrame: true,
    chat: true,
    newsletter: true,
    consent: true,
    cookieNotice: true,
  });
  for (const name of Object.values(VENDOR_HOSTS).flat()) assert.ok(hosts.has(name), `${name} was not asked for`);
  assert.not.ok(
    paths.some((path) => path.startsWith('/b/consent')),
    'nobody answered the banner',
  );
});

test('block_ads: the ad server is never asked, the slot and the frame are hidden, the rest stays', async () => {
  const { observation, hosts } = await renderPage({ block_ads: true });
  never(hosts, VENDOR_HOSTS.ads);
  await expectParts(observation.image, {
    adSlot: false,
    adFrame: false,
    adScript: false,
    socialFrame: true,
    chat: true,
    newsletter: true,
    consent: true,
  });
});

test('block_ads hides the slot on a page served from 127.0.0.1 and localhost too', async () => {
  for (const origin of [rig.site.url, rig.site.url.replace('127.0.0.1', 'localhost')]) {
    const observation = await rig.render('/b/page', { url: `${origin}/b/page`, block_ads: true });
    await expectParts(observation.image, { adSlot: false, chat: true });
  }
});

test('block_trackers: the analytics request is never made', async () => {
  const { observation, hosts } = await renderPage({ block_trackers: true });
  never(hosts, VENDOR_HOSTS.trackers);
  assert.ok(hosts.has('js.driftt.com'));
  await expectParts(observation.image, { adSlot: true, chat: true });
});

test('block_cookie_banners: the OneTrust banner is answered "reject all" by autoconsent; a notice no rule knows is hidden', async () => {
  const { observation, paths } = await renderPage({ block_cookie_banners: true });
  assert.ok(paths.includes('/b/consent?choice=reject'), `the banner was not refused: ${paths.join(' ')}`);
  assert.not.ok(paths.includes('/b/consent?choice=accept'));
  await expectParts(observation.image, {
    consent: false,
    cookieNotice: false,
    newsletter: true,
    adSlot: true,
    chat: true,
  });
});

test('block_banners_by_heuristics: the fixed newsletter overlay is hidden, the small chat launcher is not', async () => {
  const { observation } = await renderPage({ block_banners_by_heuristics: true });
  await expectParts(observation.image, { newsletter: false, chat: true, adSlot: true });
});

test('block_chats: the chat vendor is never asked and no launcher shows', async () => {
  const { observation, hosts } = await renderPage({ block_chats: true });
  never(hosts, VENDOR_HOSTS.chats);
  await expectParts(observation.image, { chat: false, adSlot: true, newsletter: true });
});

test('block_socials: the social plugin and script are never asked for', async () => {
  const { observation, hosts } = await renderPage({ block_socials: true });
  never(hosts, VENDOR_HOSTS.socials);
  await expectParts(observation.image, { socialFrame: false, adSlot: true });
});

// The pixel of one part of /b/widgets is the part's own colour (true) or the white page (false).
async function widgetShows(image: Buffer, part: keyof typeof WIDGET_PARTS): Promise<boolean> {
  const [x, y] = WIDGET_PARTS[part].at;
  const colour = await pixel(image, x, y);
  if (near(colour, [...WIDGET_PARTS[part].colour, 255])) return true;
  assert.ok(near(colour, [...WHITE, 255]), `${part} at ${x},${y} is neither its colour nor white: ${colour}`);
  return false;
}

test('block_ads hides an AdSense slot whose script it blocked, on any host', async () => {
  const plain = await renderPage({}, '/b/widgets');
  assert.ok(await widgetShows(plain.observation.image, 'adSenseSlot'), 'the slot shows without blocking');
  for (const origin of [page, rig.site.url]) {
    const from = rig.site.received.length;
    const observation = await rig.render('/b/widgets', { url: `${origin}/b/widgets`, block_ads: true });
    assert.not.ok(
      rig.site.received.slice(from).some((request) => request.path.includes('adsbygoogle')),
      'the AdSense script was asked for',
    );
    assert.not.ok(await widgetShows(observation.image, 'adSenseSlot'), `the AdSense slot is hidden on ${origin}`);
  }
});

test('block_socials: the X/Twitter, Facebook, LinkedIn, Pinterest, Instagram and TikTok widget scripts are never asked for', async () => {
  const plain = await renderPage({}, '/b/widgets');
  // Asked for and let go: an https one then fails at the fixture, which serves no https.
  for (const host of SOCIAL_WIDGET_HOSTS) {
    const requests = plain.observation.subRequests.filter((request) => new URL(request.url).hostname === host);
    assert.ok(requests.length > 0, `${host} asked for without blocking`);
    for (const request of requests) assert.not.match(request.failure ?? '', 'ERR_BLOCKED_BY_CLIENT', request.url);
  }
  assert.ok(await widgetShows(plain.observation.image, 'tweet'));
  const { observation, hosts } = await renderPage({ block_socials: true }, '/b/widgets');
  never(hosts, SOCIAL_WIDGET_HOSTS);
  // An https host (HSTS-preloaded) never reaches the fixture either way, and Chromium may open a
  // tunnel to it ahead of time: the browser's own account says the request was stopped before it left.
  for (const host of SOCIAL_WIDGET_HOSTS) {
    const requests = observation.subRequests.filter((request) => new URL(request.url).hostname === host);
    assert.ok(requests.length > 0, `the page asked for nothing of ${host}`);
    for (const request of requests) assert.match(request.failure ?? 'made', /^net::ERR_BLOCKED_BY_CLIENT/, request.url);
  }
  assert.not.ok(await widgetShows(observation.image, 'tweet'), 'the unfilled embed is hidden');
});

test('block_socials: the widget scripts at their own addresses (the fixture serves them on a port of its own)', async () => {
  const { Request } = await adblocker();
  const socials = await ruleEngine('socials');
  for (const url of [
    'https://platform.twitter.com/widgets.js',
    'https://connect.facebook.net/en_US/sdk.js',
    'https://www.instagram.com/embed.js',
    'https://www.tiktok.com/embed.js',
    'https://www.instagram.com/p/abc/embed/',
  ]) {
    const request = Request.fromRawDetails({ url, sourceUrl: 'https://news.example.com/', type: 'script' });
    assert.ok(socials.match(request).match, url);
  }
  const own = Request.fromRawDetails({
    url: 'https://www.instagram.com/embed.js',
    sourceUrl: 'https://www.instagram.com/',
    type: 'script',
  });
  assert.not.ok(socials.match(own).match, "Instagram's own pages keep their script");
});

test("block_ads: Taboola's loader and thumbnails, which the lists leave, and its container", async () => {
  const { Request } = await adblocker();
  const ads = await ruleEngine('ads');
  for (const url of [
    'https://cdn.taboola.com/libtrc/example-publisher/loader.js',
    'https://images.taboola.com/taboola/image/fetch/f_jpg/thumbnail.jpg',
  ]) {
    const request = Request.fromRawDetails({ url, sourceUrl: 'https://news.example.com/', type: 'script' });
    assert.ok(ads.match(request).match, url);
  }
  const { styles } = ads.getCosmeticsFilters({
    url: 'https://news.example.com/',
    hostname: 'news.example.com',
    domain: 'example.com',
    classes: ['trc_related_container'],
    ids: ['taboola-below-article'],
  });
  assert.match(styles, /\.trc_related_container/);
  assert.match(styles, /taboola-/);
});

test('block_annoyances with block_ads: everything is gone; blocked requests do not trip fail_if_request_failed', async () => {
  const options = { block_annoyances: true, block_ads: true, fail_if_request_failed: ['*'] };
  const { observation, hosts, paths } = await renderPage(options);
  never(hosts, [...VENDOR_HOSTS.ads, ...VENDOR_HOSTS.socials, ...VENDOR_HOSTS.chats]);
  assert.ok(paths.includes('/b/consent?choice=reject'));
  await expectParts(observation.image, {
    adSlot: false,
    adFrame: false,
    socialFrame: false,
    chat: false,
    newsletter: false,
    consent: false,
    cookieNotice: false,
  });
  const blocked = observation.subRequests.filter((request) =>
    request.failure?.startsWith('net::ERR_BLOCKED_BY_CLIENT'),
  );
  assert.ok(blocked.length >= 4, JSON.stringify(observation.subRequests));
  assert.is(requestFailedMatched(observation, { ...renderDefaults, ...options } as RenderOptions), null);
});

test('nothing carries over: the next render on the same warm page shows and asks for everything again', async () => {
  await renderPage({
    block_annoyances: true,
    block_ads: true,
    block_trackers: true,
    block_requests: ['*/in.js'],
    block_resources: ['image'],
  });
  const { observation, hosts, paths } = await renderPage(FRAMES_PAINTED);
  await expectParts(observation.image, {
    adSlot: true,
    adFrame: true,
    adScript: true,
    socialFrame: true,
    chat: true,
    newsletter: true,
    consent: true,
    cookieNotice: true,
  });
  for (const name of Object.values(VENDOR_HOSTS).flat()) assert.ok(hosts.has(name), `${name} was not asked for`);
  assert.ok(paths.includes('/in.js'));
  assert.not.ok(
    paths.some((path) => path.startsWith('/b/consent')),
    'autoconsent still ran',
  );
});

test("a cross-site frame's own requests are judged too: its ad script and tracker are never asked for, the frame still loads", async () => {
  const plain = await renderPage({}, '/b/embed');
  for (const host of [PARTNER_HOST, ...VENDOR_HOSTS.ads.slice(0, 1), ...VENDOR_HOSTS.trackers])
    assert.ok(plain.hosts.has(host), `${host} asked for without blocking`);
  const blocked = await renderPage({ block_ads: true, block_trackers: true }, '/b/embed');
  assert.ok(blocked.hosts.has(PARTNER_HOST), 'the unlisted frame loads');
  never(blocked.hosts, [...VENDOR_HOSTS.ads, ...VENDOR_HOSTS.trackers]);
});

test('block_requests and block_resources: matching requests never reach the server; they are not failures', async () => {
  const options: Partial<RenderOptions> = {
    block_requests: ['*/b/asset/app.?s', '*data.json'],
    block_resources: ['stylesheet', 'image', 'font', 'websocket'],
    fail_if_request_failed: ['*/b/asset/*'],
    fail_if_content_missing: ['Resources'],
  };
  const { observation, paths } = await renderPage(options, '/b/resources');
  assert.ok(paths.includes('/b/resources'), 'the page itself is never blocked');
  assert.match(observation.visibleText, 'websocket refused');
  assert.not.ok(paths.includes('/b/ws'));
  for (const asset of ['app.js', 'data.json', 'style.css', 'pixel.svg', 'font.woff2']) {
    assert.not.ok(paths.includes(`/b/asset/${asset}`), `${asset} reached the server`);
  }
  assert.ok(observation.subRequests.length >= 4, JSON.stringify(observation.subRequests));
  for (const request of observation.subRequests)
    assert.match(request.failure ?? 'none', /^net::ERR_BLOCKED_BY_CLIENT/, request.url);
  assert.is(requestFailedMatched(observation, { ...renderDefaults, ...options } as RenderOptions), null);
});

test('block_resources=document: the page loads, its frames are never asked for and leave no trace', async () => {
  const { observation, hosts } = await renderPage({ block_resources: ['document'], ...FRAMES_PAINTED });
  assert.ok(hosts.has('news.example.test'), 'the page itself loads');
  never(hosts, ['ad.doubleclick.net', 's7.addthis.com']);
  assert.ok(hosts.has('securepubads.g.doubleclick.net'), 'scripts still load');
  await expectParts(observation.image, { adFrame: false, socialFrame: false, adSlot: true, adScript: true });
});

test('block_ads with headers and block_requests: both interceptions apply in the same render', async () => {
  const from = rig.site.received.length;
  const { observation } = await renderPage(
    {
      block_ads: true,
      block_requests: ['*data.json'],
      headers: ['X-Test: both'],
      fail_if_content_missing: ['Resources'],
    },
    '/b/resources',
  );
  assert.match(observation.visibleText, 'websocket opened', 'the WebSocket refusal is not left behind');
  const received = rig.site.received.slice(from);
  const app = received.find((request) => request.path === '/b/asset/app.js');
  assert.is(app?.headers['x-test'], 'both', 'the header interception still applies');
  assert.is(received.find((request) => request.path === '/b/resources')?.headers['x-test'], 'both');
  assert.not.ok(received.some((request) => request.path === '/b/asset/data.json'));
});

test.run();
