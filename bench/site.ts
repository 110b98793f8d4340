// The benchmark's own pages on 127.0.0.1: a ~20 KB article with one image, and a heavier page
// with two web fonts and six images. Everything is served locally; nothing leaves the machine.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';

/** The running benchmark site and the URL of each page. */
export interface BenchSite {
  light: string;
  heavy: string;
  /** A page shorter than the viewport (for full_page in the soak). */
  short: string;
  /** An app shell: a header above a viewport-filling element whose 4,600 px of content scroll inside it. */
  appShell: string;
  /** A page exactly 5,000 px tall at 1280 px wide: text and images all the way down (the full-page rows). */
  tall: string;
  /** A page that answers 404 (a render of it fails with host_returned_error by default). */
  missing: string;
  /** The ad-heavy page (for the blocking rows): its third parties are on AD_PAGE_HOSTS, on this site's port. */
  ads: string;
  /** Requests the ad-heavy page's third parties received so far. */
  thirdPartyRequests(): number;
  close(): Promise<void>;
}

/**
 * Host names of the ad-heavy page's third parties, taken from the filter lists (ads, trackers,
 * chat and social widgets) and off Chromium's HSTS preload list (so plain http reaches the bench
 * site). The service under test resolves them to 127.0.0.1 (bench/local-names.mjs).
 */
export const AD_PAGE_HOSTS = [
  'securepubads.g.doubleclick.net',
  'ad.doubleclick.net',
  'static.hotjar.com',
  'sb.scorecardresearch.com',
  'www.googletagmanager.com',
  'js.driftt.com',
  'embed.tawk.to',
  's7.addthis.com',
  'platform.linkedin.com',
];

// The ad-heavy page: an article with six ad frames (each a slow ad server answer, an image and a
// busy script of its own), an ad tag, three trackers, two chat widgets, two social widgets, a
// OneTrust-style consent banner and a newsletter overlay.
const adsPage = (port: string) => {
  const on = (host: string, path: string) => `http://${host}:${port}${path}`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Ads</title>
<script src="${on('securepubads.g.doubleclick.net', '/tag/js/gpt.js')}"></script>
<script async src="${on('www.googletagmanager.com', '/gtag/js?id=G-BENCH')}"></script>
<script async src="${on('static.hotjar.com', '/c/hotjar-1.js')}"></script>
<script async src="${on('js.driftt.com', '/include/bench/widget.js')}"></script>
<script async src="${on('embed.tawk.to', '/bench/default')}"></script>
<script async src="${on('platform.linkedin.com', '/in.js')}"></script>
</head><body style="font-family:sans-serif;margin:24px"><h1>An ad-heavy article</h1>
<img src="${on('sb.scorecardresearch.com', '/b?c1=2&c2=1')}" width="1" height="1" alt="">
${[1, 2, 3, 4, 5, 6].map((i) => `<iframe src="${on('ad.doubleclick.net', `/ddm/adi/slot${i}`)}" width="300" height="250" style="border:0"></iframe>${text(2000)}`).join('')}
<iframe src="${on('s7.addthis.com', '/static/widget.html')}" width="300" height="60" style="border:0"></iframe>
<div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" style="position:fixed;left:0;bottom:0;width:100%;height:90px;background:#123;color:#fff;z-index:100">
<p>We use cookies.</p><button id="onetrust-accept-btn-handler">Accept</button>
<button id="onetrust-reject-all-handler" onclick="document.getElementById('onetrust-banner-sdk').style.display='none'">Reject all</button></div></div>
<div style="position:fixed;inset:10% 20%;background:#fff;border:2px solid #333;z-index:90"><h2>Subscribe to our newsletter</h2></div>
</body></html>`;
};

// What the third parties answer: scripts that do some work (as ad and widget scripts do), ad
// frames that take a while (an auction) and carry an image and a script, a tracking pixel.
function thirdParty(path: string): { type: string; body: string | Buffer; delayMs?: number } | undefined {
  const busyScript = (ms: number, what: string) =>
    `(() => { const end = performance.now() + ${ms}; let x = 0; while (performance.now() < end) x += Math.sqrt(x + 1); window['${what}'] = x; })();`;
  if (path.startsWith('/ddm/adi/slot')) {
    return {
      type: 'text/html',
      delayMs: 150,
      body: `<body style="margin:0;background:#fc0"><img src="/img/${path.slice(-1)}.png" width="300" height="250"><script src="/ad/render.js"></script></body>`,
    };
  }
  if (path === '/ad/render.js') return { type: 'text/javascript', body: busyScript(20, 'adRendered') };
  if (path === '/tag/js/gpt.js') return { type: 'text/javascript', body: busyScript(30, 'gpt') };
  if (path.startsWith('/gtag/') || path.startsWith('/c/hotjar') || path === '/in.js')
    return { type: 'text/javascript', body: busyScript(15, path) };
  if (path.startsWith('/include/') || path.startsWith('/bench/')) {
    return {
      type: 'text/javascript',
      body: `${busyScript(25, path)} const l = document.createElement('div'); l.style.cssText = 'position:fixed;right:20px;bottom:110px;width:60px;height:60px;border-radius:30px;background:#07f;z-index:95'; document.body.appendChild(l);`,
    };
  }
  if (path === '/static/widget.html')
    return { type: 'text/html', body: '<body style="margin:0;background:#39f">Share</body>' };
  if (path.startsWith('/b?')) return { type: 'image/gif', body: Buffer.alloc(0) };
  return undefined;
}

const FONTS = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
];

/** A valid RGB PNG of `width`×`height` with a colour gradient (so it is not trivially small). */
export function gradientPng(width: number, height: number, hue: number): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      row[1 + x * 3] = (x * 255) / width;
      row[2 + x * 3] = (y * 255) / height;
      row[3 + x * 3] = hue;
    }
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let crc = ~0;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

const paragraph = 'Shutterbus renders pages to images through a warm pool of browser pages. ';
const text = (bytes: number) =>
  Array.from({ length: Math.ceil(bytes / 400) }, () => `<p>${paragraph.repeat(5)}</p>`).join('');

const lightPage = `<!doctype html><html><head><meta charset="utf-8"><title>Light</title></head>
<body style="font-family:sans-serif;margin:24px"><h1>A 20 KB article</h1><img src="/img/0.png" width="640" height="320" alt="">${text(19000)}</body></html>`;

const heavyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Heavy</title><style>
@font-face{font-family:Bench;src:url(/font/0.ttf)}@font-face{font-family:BenchBold;src:url(/font/1.ttf)}
body{font-family:Bench;margin:24px}h1,h2{font-family:BenchBold}.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
img{width:100%;height:auto}</style></head><body><h1>A heavier page</h1><div class="grid">
${[1, 2, 3, 4, 5, 6].map((i) => `<img src="/img/${i}.png" width="400" height="260" alt="">`).join('')}</div>
<h2>Text in a web font</h2>${text(30000)}</body></html>`;

const shortPage = `<!doctype html><html><head><meta charset="utf-8"><title>Short</title></head>
<body style="font-family:sans-serif;margin:24px"><h1>A short page</h1><img src="/img/1.png" width="400" height="260" alt="">${text(800)}</body></html>`;

const appShellPage = `<!doctype html><html><head><meta charset="utf-8"><title>App shell</title><style>
body{margin:0;font-family:sans-serif}.app{display:flex;flex-direction:column;height:100vh}
header{flex:none;height:56px;background:#234;color:#fff}main{flex:1;min-height:0;overflow:auto;padding:0 24px}
.content{height:4600px;box-sizing:border-box}</style></head><body><div class="app"><header>App</header>
<main><div class="content"><h1>Content that scrolls inside main</h1><img src="/img/0.png" width="640" height="320" alt="">${text(12000)}</div></main></div></body></html>`;

// 5,000 px at any width: ten 500 px sections, each a heading, an image and text, cut at its height.
const tallPage = `<!doctype html><html><head><meta charset="utf-8"><title>Tall</title><style>
body{margin:0;font-family:sans-serif}section{height:500px;overflow:hidden;box-sizing:border-box;padding:16px 24px}
section:nth-child(odd){background:#f4f6fa}img{float:right;margin:0 0 8px 16px}</style></head><body>
${[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `<section><h2>Section ${i + 1}</h2><img src="/img/${(i % 6) + 1}.png" width="400" height="260" alt="">${text(1600)}</section>`).join('')}
</body></html>`;

/** Starts the site on a free loopback port. */
export async function startBenchSite(): Promise<BenchSite> {
  const images = [0, 1, 2, 3, 4, 5, 6].map((i) => gradientPng(i === 0 ? 640 : 400, i === 0 ? 320 : 260, i * 36));
  const fonts = FONTS.map((file) => readFileSync(file));
  let thirdPartyRequests = 0;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const image = /^\/img\/(\d)\.png$/.exec(path);
    const font = /^\/font\/(\d)\.ttf$/.exec(path);
    if (image && images[Number(image[1])]) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return void res.end(images[Number(image[1])]);
    }
    if (font && fonts[Number(font[1])]) {
      res.writeHead(200, { 'content-type': 'font/ttf' });
      return void res.end(fonts[Number(font[1])]);
    }
    const vendor = thirdParty(path);
    if (vendor) {
      thirdPartyRequests += 1;
      const answer = () => {
        res.writeHead(200, { 'content-type': vendor.type, 'cache-control': 'no-store' });
        res.end(vendor.body);
      };
      return void (vendor.delayMs ? setTimeout(answer, vendor.delayMs) : answer());
    }
    if (path === '/ads') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end(adsPage((req.headers.host ?? '').split(':')[1] ?? '80'));
    }
    if (path === '/missing') {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end('<!doctype html><title>Not found</title><h1>Not found</h1>');
    }
    const body =
      path === '/heavy'
        ? heavyPage
        : path === '/tall'
          ? tallPage
          : path === '/short'
            ? shortPage
            : path === '/app-shell'
              ? appShellPage
              : lightPage;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    light: `${base}/light`,
    heavy: `${base}/heavy`,
    short: `${base}/short`,
    tall: `${base}/tall`,
    appShell: `${base}/app-shell`,
    missing: `${base}/missing`,
    ads: `${base.replace('127.0.0.1', 'news.bench.test')}/ads`,
    thirdPartyRequests: () => thirdPartyRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
