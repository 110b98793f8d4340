// block_ads through /api/take on the whole stack (real NATS, S3 store, Chromium behind the egress
// proxy), as GET and as POST: an html document with an ad slot the lists hide and an ad image
// from a local server whose path the lists block; the server's log shows it was never asked.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { near, pixel } from '../helpers/render.ts';

const take = suite('block_ads through /api/take');
let stack: TestStack;
let service: TestService;
let workspace: Workspace;
let ads: FixtureSite;

// A 200×150 red ad slot at the top left (hidden by the lists' element hiding) and an ad banner
// image (a path of the lists' network rules) below it.
const documentWithAds = () => `<!doctype html><html><body style="margin:0;background:#fff">
<div id="div-gpt-ad-1" style="width:200px;height:150px;background:rgb(255,0,0)"></div>
<img src="${ads.url}/banners/ad-728x90.gif" width="200" height="50" alt="">
</body></html>`;

const bannerRequests = () => ads.received.filter((request) => request.path === '/banners/ad-728x90.gif').length;

take.before(async () => {
  ads = await startFixtureSite({
    '/banners/ad-728x90.gif': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="50"><rect width="200" height="50" fill="blue"/></svg>',
      );
    },
  });
  stack = await startStack();
  service = await startService(stack);
  workspace = await createWorkspace(stack);
});

take.after(async () => {
  await service?.close();
  await stack?.stop();
  await ads?.close();
});

const get = (params: Record<string, string>) =>
  call(`${service.base}/api/take?${new URLSearchParams(params)}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
const post = (body: object) =>
  call(`${service.base}/api/take`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-access-key': workspace.access_key },
    body: JSON.stringify(body),
  });

take('without block_ads the slot shows and the banner is fetched', async () => {
  const before = bannerRequests();
  const answer = await get({ html: documentWithAds(), viewport_width: '400', viewport_height: '300' });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.ok(near(await pixel(answer.bytes, 100, 75), [255, 0, 0, 255]));
  assert.is(bannerRequests(), before + 1);
});

take('GET with block_ads=true: the slot is hidden and the banner never requested', async () => {
  const before = bannerRequests();
  const answer = await get({
    html: documentWithAds(),
    viewport_width: '400',
    viewport_height: '300',
    block_ads: 'true',
    fail_if_request_failed: '*',
  });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.ok(near(await pixel(answer.bytes, 100, 75), [255, 255, 255, 255]), String(await pixel(answer.bytes, 100, 75)));
  assert.is(bannerRequests(), before);
});

take('POST with "block_ads": true does the same', async () => {
  const before = bannerRequests();
  const answer = await post({
    html: documentWithAds(),
    viewport_width: 400,
    viewport_height: 300,
    block_ads: true,
    fail_if_request_failed: ['*'],
  });
  assert.is(answer.status, 200, answer.bytes.toString().slice(0, 300));
  assert.ok(near(await pixel(answer.bytes, 100, 75), [255, 255, 255, 255]));
  assert.is(bannerRequests(), before);
});

take('a bad block_resources value is a 400 naming it', async () => {
  const answer = await post({ url: `${ads.url}/`, block_resources: ['image', 'pictures'] });
  assert.is(answer.status, 400);
  assert.ok(JSON.stringify(answer.json).includes('block_resources'), JSON.stringify(answer.json));
});

take.run();
