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
      `--proxy-server=${proxy.browserProxy}`,
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
  // Chromium sends http:// and ws:// through the SOCKS5 listener (browserProxy's rules).
  assert.ok(ctx.openLog.some((entry) => entry.kind === 'socks' && entry.host === publicIp));
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
  const before = blockedEntries('127.0.0.1', 'socks').length;
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
  // A refused connection is closed once it has been answered: each request asked on a connection of its own.
  assert.ok(
    blockedEntries('127.0.0.1', 'socks').length - before >= 4,
    'fetch, img, worker and WebSocket reached the proxy',
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
    // More requests at once than one connection carries: some open connections of their own.
    const later = await page.evaluate(() =>
      Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          fetch(`/secret?${i}`).then(
            async (r) => `${r.status} ${r.headers.get('x-shutterbus-blocked') ?? (await r.text())}`,
          ),
        ),
      ),
    );
    // On the connection to the address checked first, the public site answers; a new connection is
    // checked again, gets the private answer, and is refused.
    const answers = new Set(later);
    assert.ok(later.includes('403 url_not_allowed'), later.join(', '));
    answers.delete('403 url_not_allowed');
    answers.delete('200 <h1>public page</h1>');
    assert.equal([...answers], []);
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

/** The address part of a SOCKS5 request for `host`: IPv4, the IPv6 loopback, or a name. */
function socksAddress(host: string): Buffer {
  if (net.isIPv4(host)) return Buffer.from([1, ...host.split('.').map(Number)]);
  if (host === '[::1]') return Buffer.from([4, ...Array(15).fill(0), 1]);
  return Buffer.concat([Buffer.from([3, host.length]), Buffer.from(host, 'latin1')]);
}

/**
 * A SOCKS5 CONNECT to host:port through the guarded proxy, then `GET /` on the connection: the
 * method and request replies, and what came back to the GET (the socket's whole answer).
 */
function socksThrough(host: string, port: number, options: { methods?: number[]; command?: number } = {}) {
  return new Promise<{ method: number; reply: number | null; answer: string }>((resolve) => {
    const socket = net.connect(Number(new URL(ctx.guardedProxy.socksUrl).port), '127.0.0.1');
    const methods = options.methods ?? [0];
    let received = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      const before = received.length;
      received = Buffer.concat([received, chunk]);
      if (before < 2 && received.length >= 2 && received[1] === 0) {
        const port16 = Buffer.alloc(2);
        port16.writeUInt16BE(port);
        socket.write(Buffer.concat([Buffer.from([5, options.command ?? 1, 0]), socksAddress(host), port16]));
      }
      if (before < 12 && received.length >= 12 && received[3] === 0) {
        socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on('close', () =>
      resolve({
        method: received[1],
        reply: received.length >= 4 ? received[3] : null,
        answer: received.subarray(12).toString(),
      }),
    );
    socket.on('connect', () => socket.write(Buffer.from([5, methods.length, ...methods])));
  });
}

egress(
  'SOCKS5: a checked connection is spliced; a refused one is granted and its request answered with the reason',
  async () => {
    const open = await socksThrough('public.test', ctx.port);
    assert.equal([open.method, open.reply], [0, 0]);
    assert.match(open.answer, 'public page');
    const expected: Array<[string, number, string]> = [
      ['127.0.0.1', ctx.port, 'url_not_allowed'],
      ['[::1]', ctx.port, 'url_not_allowed'],
      ['0x7f.1', ctx.port, 'url_not_allowed'],
      ['localhost', ctx.port, 'url_not_allowed'],
      ['nowhere.test', 80, 'name_not_resolved'],
      ['public.test', ctx.closedPort, 'network_error'],
    ];
    for (const [host, port, code] of expected) {
      const answer = await socksThrough(host, port);
      assert.is(answer.reply, 0, host);
      assert.match(answer.answer, `\r\nX-Shutterbus-Blocked: ${code}\r\n`, host);
    }
    assert.is(ctx.secretHits, 0);
  },
);

egress(
  'SOCKS5: a client without the no-authentication method, or asking anything but CONNECT, is turned away',
  async () => {
    const password = await socksThrough('public.test', ctx.port, { methods: [2] });
    assert.equal([password.method, password.reply], [0xff, null]);
    const bind = await socksThrough('public.test', ctx.port, { command: 2 });
    assert.equal([bind.method, bind.reply, bind.answer], [0, 7, '']);
    const socket = net.connect(Number(new URL(ctx.guardedProxy.socksUrl).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.end('GET / HTTP/1.1\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    assert.match((await socksThrough('public.test', ctx.port)).answer, 'public page');
  },
);

egress('SOCKS5: a client that stops halfway through its handshake is dropped', async () => {
  const proxy = await startEgressProxy({ allowPrivate: true, socksHandshakeMs: 300 });
  try {
    const port = Number(new URL(proxy.socksUrl).port);
    // Half a greeting; a whole greeting and no request after it.
    for (const sent of [[5], [5, 1, 0]]) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      const received: number[] = [];
      socket.on('data', (chunk: Buffer) => received.push(...chunk));
      socket.on('connect', () => socket.write(Buffer.from(sent)));
      const started = performance.now();
      await new Promise((resolve) => socket.on('close', resolve));
      const waited = performance.now() - started;
      assert.ok(waited >= 250 && waited < 5000, `closed after ${Math.round(waited)} ms`);
      assert.equal(received, sent.length === 1 ? [] : [5, 0]);
    }
  } finally {
    await proxy.close();
  }
});

egress('https:// and wss:// to a private address are refused too', async () => {
  const before = ctx.guardedLog.filter(
    (entry) => entry.event === 'egress_blocked' && entry.host === '127.0.0.1',
  ).length;
  const socket = await inPage(ctx.guardedBrowser, `http://public.test:${ctx.port}/`, (page) =>
    page.evaluate(
      (url) =>
        new Promise((resolve) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve('open');
          ws.onerror = () => resolve('error');
        }),
      `wss://127.0.0.1:${ctx.port}/sock`,
    ),
  );
  assert.is(socket, 'error');
  const after = ctx.guardedLog.filter((entry) => entry.event === 'egress_blocked' && entry.host === '127.0.0.1');
  assert.ok(after.length > before, 'the wss:// connection reached the proxy');
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
