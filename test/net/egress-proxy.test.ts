// The egress proxy in front of real Chromium: allowed traffic flows, private targets never answer.
import crypto from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chromium, type Browser } from 'playwright-core';
import { startEgressProxy, type EgressProxy } from '../../src/net/egress-proxy.ts';
import type { LookupFn } from '../../src/net/target.ts';
import { closePage } from '../helpers/pages.ts';
import { CHROMIUM } from '../helpers/render.ts';

// The "public" site listens on 127.0.0.2 and the private secret on 127.0.0.1 at the same port,
// so a DNS answer switching between them (rebinding) would show the secret.
const publicIp = '127.0.0.2';
const egress = suite('net/egress-proxy');

type LogEntry = Record<string, unknown>;
/** The fixture servers, both proxies (allowPrivate: true and false) and a browser behind each. */
const ctx = {} as {
  site: http.Server;
  secret: http.Server;
  port: number;
  closedPort: number;
  secretHits: number;
  openLog: LogEntry[];
  guardedLog: LogEntry[];
  openProxy: EgressProxy;
  guardedProxy: EgressProxy;
  openBrowser: Browser;
  guardedBrowser: Browser;
};
// Upgraded sockets are no longer the servers' to close, so the fixture tracks them all.
const fixtureSockets = new Set<Socket>();

/** Answers a WebSocket handshake and sends one text frame, enough for a browser to see a message. */
function acceptWebSocket(request: http.IncomingMessage, socket: Duplex): void {
  const accept = crypto
    .createHash('sha1')
    .update(`${request.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest('base64');
  // Upgraded sockets leave the server's half-open handling behind: close when the peer does.
  socket.on('error', () => {}).on('end', () => socket.end());
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  socket.write(Buffer.from([0x81, 5, ...Buffer.from('hello')]));
}

function listen(server: http.Server, host: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

const launch = (proxy: EgressProxy) =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      `--proxy-server=${proxy.url}`,
      '--proxy-bypass-list=<-loopback>',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });

let rebindAnswers = 0;
const lookup: LookupFn = async (hostname) => {
  if (hostname === 'public.test') return [{ address: publicIp, family: 4 }];
  // Public on the first answer, private on every later one.
  if (hostname === 'rebind.test') return [{ address: rebindAnswers++ === 0 ? publicIp : '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

egress.before(async () => {
  ctx.site = http.createServer((request, response) => {
    if (request.url === '/redirect') {
      return void response.writeHead(302, { Location: `http://127.0.0.1:${ctx.port}/secret` }).end();
    }
    if (request.url === '/echo') return void request.pipe(response);
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>public page</h1>');
  });
  ctx.site.on('upgrade', acceptWebSocket);
  // Readable from any origin, so a page could read it if the proxy ever let a request through.
  ctx.secret = http.createServer((_request, response) => {
    ctx.secretHits++;
    response.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' }).end('SECRET');
  });
  ctx.secret.on('upgrade', (request, socket) => {
    ctx.secretHits++;
    acceptWebSocket(request, socket);
  });
  for (const server of [ctx.site, ctx.secret]) server.on('connection', (socket) => fixtureSockets.add(socket));
  ctx.port = await listen(ctx.site, publicIp);
  await listen(ctx.secret, '127.0.0.1', ctx.port);
  const closed = http.createServer();
  ctx.closedPort = await listen(closed, publicIp);
  await new Promise((resolve) => closed.close(resolve));

  ctx.openLog = [];
  ctx.guardedLog = [];
  ctx.openProxy = await startEgressProxy({ allowPrivate: true, log: (entry) => ctx.openLog.push(entry as LogEntry) });
  ctx.guardedProxy = await startEgressProxy({
    allowPrivate: false,
    lookup,
    // Tests only: the site's loopback address stands in for a public one.
    isPublic: (ip) => ip === publicIp,
    log: (entry) => ctx.guardedLog.push(entry as LogEntry),
  });
  [ctx.openBrowser, ctx.guardedBrowser] = await Promise.all([launch(ctx.openProxy), launch(ctx.guardedProxy)]);
});

// Each test asserts on the secret requests it caused itself.
egress.before.each(() => {
  ctx.secretHits = 0;
});

egress.after(async () => {
  await Promise.all([ctx.openBrowser?.close(), ctx.guardedBrowser?.close()]);
  await Promise.all([ctx.openProxy?.close(), ctx.guardedProxy?.close()]);
  for (const socket of fixtureSockets) socket.destroy();
  await Promise.all([ctx.site, ctx.secret].map((server) => new Promise((resolve) => server?.close(resolve))));
});

/** Opens `url` in a fresh page of `browser`, runs `inPage` there, and closes the page. */
async function inPage<T>(
  browser: Browser,
  url: string,
  inPage: (page: import('playwright-core').Page) => Promise<T>,
): Promise<T> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    return await inPage(page);
  } finally {
    await closePage(page);
  }
}

const webSocketMessage = (url: string) =>
  new Promise<string>((resolve) => {
    const socket = new WebSocket(url);
    socket.onmessage = (event) => resolve(`message ${event.data}`);
    socket.onerror = () => resolve('error');
  });

const blockedEntries = (host: string, kind?: string) =>
  ctx.guardedLog.filter(
    (entry) => entry.event === 'egress_blocked' && entry.host === host && (!kind || entry.kind === kind),
  );

egress('allowPrivate: a loopback page and its WebSocket go through the proxy', async () => {
  const url = `http://127.0.0.1:${ctx.port}/`;
  const response = await inPage(ctx.openBrowser, `http://${publicIp}:${ctx.port}/`, async (page) => {
    const message = await page.evaluate(webSocketMessage, `ws://${publicIp}:${ctx.port}/sock`);
    assert.is(message, 'message hello');
    return page.evaluate((secretUrl) => fetch(secretUrl).then((r) => r.text()), url);
  });
  // The same cross-origin fetch that the guarded proxy blocks below reads the secret here.
  assert.is(response, 'SECRET');
  assert.ok(ctx.openLog.some((entry) => entry.kind === 'http' && entry.host === publicIp));
  // Chromium tunnels ws:// with CONNECT through an HTTP proxy.
  assert.ok(ctx.openLog.some((entry) => entry.kind === 'connect' && entry.port === ctx.port));
});

egress('a public page loads, and its WebSocket works, through the guarded proxy', async () => {
  const message = await inPage(ctx.guardedBrowser, `http://public.test:${ctx.port}/`, async (page) => {
    assert.is(await page.textContent('h1'), 'public page');
    return page.evaluate(webSocketMessage, `ws://public.test:${ctx.port}/sock`);
  });
  assert.is(message, 'message hello');
});

egress('a redirect to a private address ends at the proxy’s 403', async () => {
  const page = await ctx.guardedBrowser.newPage();
  const response = await page.goto(`http://public.test:${ctx.port}/redirect`);
  assert.is(response?.status(), 403);
  assert.is(response?.url(), `http://127.0.0.1:${ctx.port}/secret`);
  assert.is(await response?.headerValue('x-shutterbus-blocked'), 'url_not_allowed');
  assert.not.match(await page.content(), 'SECRET');
  await closePage(page);
  assert.is(ctx.secretHits, 0);
});

egress('fetch, <img>, a Worker’s fetch and a WebSocket to a private address are blocked', async () => {
  const secretUrl = `http://127.0.0.1:${ctx.port}/secret`;
  // Entries of earlier tests do not count: only what this page's requests made the proxy log.
  const before = {
    http: blockedEntries('127.0.0.1', 'http').length,
    connect: blockedEntries('127.0.0.1', 'connect').length,
  };
  const results = await inPage(ctx.guardedBrowser, `http://public.test:${ctx.port}/`, (page) =>
    page.evaluate(
      async ([url, wsUrl]) => {
        const fetched = await fetch(url).then(
          (r) => r.text(),
          () => 'error',
        );
        const image = await new Promise((resolve) => {
          const img = document.createElement('img');
          img.onload = () => resolve('loaded');
          img.onerror = () => resolve('error');
          img.src = `${url}.png`;
        });
        const worker = new Worker(
          URL.createObjectURL(
            new Blob([`fetch(${JSON.stringify(url)}).then((r) => r.text(), () => 'error').then(postMessage)`], {
              type: 'text/javascript',
            }),
          ),
        );
        const fromWorker = await new Promise((resolve) => (worker.onmessage = (event) => resolve(event.data)));
        const socket = await new Promise((resolve) => {
          const ws = new WebSocket(wsUrl);
          ws.onopen = () => resolve('open');
          ws.onerror = () => resolve('error');
        });
        return { fetched, image, fromWorker, socket };
      },
      [secretUrl, `ws://127.0.0.1:${ctx.port}/sock`],
    ),
  );
  assert.equal(results, { fetched: 'error', image: 'error', fromWorker: 'error', socket: 'error' });
  assert.is(ctx.secretHits, 0);
  assert.ok(blockedEntries('127.0.0.1', 'http').length - before.http >= 3, 'fetch, img and worker reached the proxy');
  assert.ok(
    blockedEntries('127.0.0.1', 'connect').length - before.connect >= 1,
    'the WebSocket CONNECT reached the proxy',
  );
});

egress('https:// to a private address fails with ERR_TUNNEL_CONNECTION_FAILED', async () => {
  const page = await ctx.guardedBrowser.newPage();
  const error = await page.goto(`https://127.0.0.1:${ctx.port}/`).then(
    () => null,
    (e: Error) => e,
  );
  await closePage(page);
  assert.match(error?.message ?? '', 'net::ERR_TUNNEL_CONNECTION_FAILED');
  assert.is(ctx.secretHits, 0);
});

egress('DNS rebinding: the proxy connects to the first answer it checked', async () => {
  const text = await inPage(ctx.guardedBrowser, `http://rebind.test:${ctx.port}/`, async (page) => {
    const later = await page.evaluate(() =>
      fetch('/secret').then((r) => `${r.status} ${r.headers.get('x-shutterbus-blocked')}`),
    );
    assert.is(later, '403 url_not_allowed');
    return page.textContent('h1');
  });
  assert.is(text, 'public page');
  assert.is(ctx.secretHits, 0);
  const allowed = ctx.guardedLog.filter((entry) => entry.event === 'egress_allowed' && entry.host === 'rebind.test');
  assert.equal(
    allowed.map((entry) => entry.address),
    [publicIp],
  );
});

/** Sends a CONNECT through the guarded proxy; resolves with the answer and the tunnel socket. */
function connectThrough(authority: string) {
  return new Promise<{ status: number; blocked: unknown; socket: Socket }>((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port: ctx.guardedProxy.port,
      method: 'CONNECT',
      path: authority,
    });
    request.on('connect', (response, socket) => {
      socket.on('error', () => {});
      resolve({ status: response.statusCode ?? 0, blocked: response.headers['x-shutterbus-blocked'], socket });
    });
    request.on('error', reject);
    request.end();
  });
}

egress('CONNECT answers 200, 400, 403 or 502 with the reason in X-Shutterbus-Blocked', async () => {
  const tunnel = await connectThrough(`public.test:${ctx.port}`);
  assert.is(tunnel.status, 200);
  tunnel.socket.write('GET / HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n');
  const body = await new Promise<string>((resolve) => {
    let text = '';
    tunnel.socket.on('data', (chunk) => (text += chunk)).on('end', () => resolve(text));
  });
  assert.match(body, 'public page');
  const expected: Array<[string, number, unknown]> = [
    [`127.0.0.1:${ctx.port}`, 403, 'url_not_allowed'],
    [`[::1]:${ctx.port}`, 403, 'url_not_allowed'],
    [`0x7f.1:${ctx.port}`, 403, 'url_not_allowed'],
    ['nowhere.test:443', 502, 'name_not_resolved'],
    [`public.test:${ctx.closedPort}`, 502, 'network_error'],
    ['public.test:0', 400, 'request_not_valid'],
    ['public.test:65536', 400, 'request_not_valid'],
    ['public.test', 400, 'request_not_valid'],
  ];
  for (const [authority, status, blocked] of expected) {
    const answer = await connectThrough(authority);
    answer.socket.destroy();
    assert.equal([answer.status, answer.blocked], [status, blocked], authority);
  }
});

/** One absolute-form request through the guarded proxy. */
function requestThrough(url: string, options: http.RequestOptions & { body?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; reused: boolean }>(
    (resolve, reject) => {
      const request = http.request(
        { host: '127.0.0.1', port: ctx.guardedProxy.port, path: url, ...options },
        (response) => {
          let body = '';
          response
            .on('data', (chunk) => (body += chunk))
            .on('end', () => {
              resolve({
                status: response.statusCode ?? 0,
                headers: response.headers,
                body,
                reused: request.reusedSocket,
              });
            });
        },
      );
      request.on('error', reject);
      request.end(options.body);
    },
  );
}

egress('plain http: bodies stream both ways, keep-alive reuses the socket, failures are 502', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const first = await requestThrough(`http://public.test:${ctx.port}/echo`, {
    method: 'POST',
    agent,
    body: 'ping'.repeat(50_000),
  });
  const second = await requestThrough(`http://public.test:${ctx.port}/`, {
    agent,
    headers: { 'Proxy-Connection': 'keep-alive' },
  });
  agent.destroy();
  assert.equal([first.status, first.body.length, second.status, second.reused], [200, 200_000, 200, true]);
  const refused = await requestThrough(`http://public.test:${ctx.closedPort}/`);
  assert.equal([refused.status, refused.headers['x-shutterbus-blocked']], [502, 'network_error']);
  const unresolved = await requestThrough('http://nowhere.test/');
  assert.equal([unresolved.status, unresolved.headers['x-shutterbus-blocked']], [502, 'name_not_resolved']);
  const direct = await requestThrough('/not-a-proxy-request');
  assert.is(direct.status, 400);
});

egress('an absolute-form WebSocket upgrade is forwarded, or refused with 403', async () => {
  const upgrade = (host: string) =>
    new Promise<string>((resolve, reject) => {
      const request = http.request({
        host: '127.0.0.1',
        port: ctx.guardedProxy.port,
        path: `http://${host}:${ctx.port}/sock`,
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      request.on('upgrade', (response, socket, head) => {
        const frame = head.length > 0 ? head : null;
        const finish = (data: Buffer) => (
          socket.destroy(), resolve(`${response.statusCode} ${data.subarray(2).toString()}`)
        );
        if (frame) finish(frame);
        else socket.once('data', finish);
      });
      request.on('response', (response) =>
        resolve(`${response.statusCode} ${response.headers['x-shutterbus-blocked']}`),
      );
      request.on('error', reject);
      request.end();
    });
  assert.is(await upgrade('public.test'), '101 hello');
  assert.is(await upgrade('127.0.0.1'), '403 url_not_allowed');
  assert.is(ctx.secretHits, 0);
});

egress('garbage on one socket does not disturb the proxy', async () => {
  const socket = net.connect(ctx.guardedProxy.port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.end('\x00\x01 not http at all\r\n\r\n');
  await new Promise((resolve) => socket.on('close', resolve));
  assert.is((await requestThrough(`http://public.test:${ctx.port}/`)).status, 200);
});

egress.run();
