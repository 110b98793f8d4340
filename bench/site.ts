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
  close(): Promise<void>;
}

const FONTS = ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'];

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
const text = (bytes: number) => Array.from({ length: Math.ceil(bytes / 400) }, () => `<p>${paragraph.repeat(5)}</p>`).join('');

const lightPage = `<!doctype html><html><head><meta charset="utf-8"><title>Light</title></head>
<body style="font-family:sans-serif;margin:24px"><h1>A 20 KB article</h1><img src="/img/0.png" width="640" height="320" alt="">${text(19000)}</body></html>`;

const heavyPage = `<!doctype html><html><head><meta charset="utf-8"><title>Heavy</title><style>
@font-face{font-family:Bench;src:url(/font/0.ttf)}@font-face{font-family:BenchBold;src:url(/font/1.ttf)}
body{font-family:Bench;margin:24px}h1,h2{font-family:BenchBold}.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
img{width:100%;height:auto}</style></head><body><h1>A heavier page</h1><div class="grid">
${[1, 2, 3, 4, 5, 6].map((i) => `<img src="/img/${i}.png" width="400" height="260" alt="">`).join('')}</div>
<h2>Text in a web font</h2>${text(30000)}</body></html>`;

/** Starts the site on a free loopback port. */
export async function startBenchSite(): Promise<BenchSite> {
  const images = [0, 1, 2, 3, 4, 5, 6].map((i) => gradientPng(i === 0 ? 640 : 400, i === 0 ? 320 : 260, i * 36));
  const fonts = FONTS.map((file) => readFileSync(file));
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
    const body = path === '/heavy' ? heavyPage : lightPage;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    light: `${base}/light`,
    heavy: `${base}/heavy`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
