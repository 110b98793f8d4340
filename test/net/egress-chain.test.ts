// The egress proxy chained to an upstream proxy (a customer's `proxy`, a country's GEO_PROXIES
// entry): what passed the address rules goes through the upstream with its credentials; a target
// or an upstream the rules forbid is refused at our side; bypass hosts go direct; no log holds
// the credentials.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEgressProxy, type EgressProxy, type EgressRoute } from '../../src/net/egress-proxy.ts';
import type { LookupFn } from '../../src/net/target.ts';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.ts';

// 127.0.0.2 counts as public here, 127.0.0.1 as private.
const PUBLIC = '127.0.0.2';
const chain = suite('net/egress-proxy chained to an upstream proxy');
const PASSWORD = 'pa:ss w0rd';

const ctx = {} as {
  site: http.Server;
  port: number;
  upstream: ForwardProxy;
  privateUpstream: ForwardProxy;
  egress: EgressProxy;
  log: object[];
};

const lookup: LookupFn = async (hostname) => {
  if (hostname === 'public.test' || hostname === 'bypass.test' || hostname === 'www.direct.test')
    return [{ address: PUBLIC, family: 4 }];
  if (hostname === 'private.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

chain.before(async () => {
  ctx.site = http.createServer((request, response) =>
    response.writeHead(200, { 'Content-Type': 'text/plain' }).end(`site ${request.url}`),
  );
  await new Promise<void>((resolve) => ctx.site.listen(0, PUBLIC, () => resolve()));
  ctx.port = (ctx.site.address() as AddressInfo).port;
  ctx.upstream = await startForwardProxy({
    host: PUBLIC,
    credentials: { user: 'customer', password: PASSWORD },
    hosts: { 'public.test': PUBLIC },
  });
  ctx.privateUpstream = await startForwardProxy({ host: '127.0.0.1' });
  ctx.log = [];
  ctx.egress = await startEgressProxy({
    allowPrivate: false,
    lookup,
    isPublic: (ip) => ip === PUBLIC,
    log: (entry) => ctx.log.push(entry),
  });
});

chain.after(async () => {
  await ctx.egress.close();
  await ctx.upstream.close();
  await ctx.privateUpstream.close();
  await new Promise((resolve) => ctx.site.close(resolve));
});

/** A plain-http GET in absolute form through `proxyUrl`. */
function get(proxyUrl: string, target: string): Promise<{ status: number; body: string; blocked?: string }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: proxy.hostname,
          port: Number(proxy.port),
          path: target,
          headers: { Host: new URL(target).host },
          agent: false,
        },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              body,
              blocked: response.headers['x-shutterbus-blocked'] as string | undefined,
            }),
          );
        },
      )
      .on('error', reject);
  });
}

/** A CONNECT through `proxyUrl`, then a GET over the tunnel; the CONNECT's status and, on 200, the body. */
function connect(proxyUrl: string, authority: string): Promise<{ status: number; body: string }> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.hostname, port: Number(proxy.port) });
    let received = '';
    let tunnelled = false;
    socket.on('error', reject);
    socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (!tunnelled) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(received)![1]);
        if (status !== 200) return (socket.destroy(), resolve({ status, body: '' }));
        tunnelled = true;
        received = received.slice(end + 4);
        socket.write(`GET /tunnelled HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on('close', () => tunnelled && resolve({ status: 200, body: received }));
  });
}

async function withRoute<T>(url: string, bypass: string[], work: (route: EgressRoute) => Promise<T>): Promise<T> {
  const route = await ctx.egress.route({ url, bypass });
  try {
    return await work(route);
  } finally {
    await route.close();
  }
}

chain('plain http and a CONNECT tunnel leave through the upstream, with its credentials', async () => {
  const from = ctx.upstream.seen.length;
  await withRoute(ctx.upstream.url('127.0.0.2'), [], async (route) => {
    const page = await get(route.url, `http://public.test:${ctx.port}/plain`);
    assert.is(page.status, 200);
    assert.is(page.body, '/plain'.replace(/^/, 'site '));
    const tunnel = await connect(route.url, `public.test:${ctx.port}`);
    assert.is(tunnel.status, 200);
    assert.match(tunnel.body, /site \/tunnelled/);
  });
  const seen = ctx.upstream.seen.slice(from);
  const basic = `Basic ${Buffer.from(`customer:${PASSWORD}`).toString('base64')}`;
  assert.equal(
    seen.map(({ method, target, authorization, allowed }) => ({ method, target, authorization, allowed })),
    [
      { method: 'GET', target: `http://public.test:${ctx.port}/plain`, authorization: basic, allowed: true },
      { method: 'CONNECT', target: `public.test:${ctx.port}`, authorization: basic, allowed: true },
    ],
  );
});

chain('a private target is refused at our side: the upstream never sees it', async () => {
  const from = ctx.upstream.seen.length;
  await withRoute(ctx.upstream.url('127.0.0.2'), [], async (route) => {
    assert.is((await connect(route.url, `private.test:${ctx.port}`)).status, 403);
    assert.is((await connect(route.url, `127.0.0.1:${ctx.port}`)).status, 403);
    const plain = await get(route.url, `http://private.test:${ctx.port}/`);
    assert.is(plain.blocked, 'url_not_allowed');
  });
  assert.is(ctx.upstream.seen.length, from);
});

chain('an upstream proxy at a private address is refused', async () => {
  await withRoute(ctx.privateUpstream.url(), [], async (route) => {
    assert.is((await connect(route.url, `public.test:${ctx.port}`)).status, 403);
    assert.is((await get(route.url, `http://public.test:${ctx.port}/`)).blocked, 'url_not_allowed');
  });
  assert.is(ctx.privateUpstream.seen.length, 0);
});

chain('bypass hosts go direct, still under the address rules', async () => {
  const from = ctx.upstream.seen.length;
  await withRoute(ctx.upstream.url('127.0.0.2'), ['bypass.test', '*.direct.test'], async (route) => {
    assert.is((await get(route.url, `http://bypass.test:${ctx.port}/b`)).body, 'site /b');
    assert.is((await connect(route.url, `www.direct.test:${ctx.port}`)).status, 200);
    assert.is((await get(route.url, `http://public.test:${ctx.port}/p`)).body, 'site /p');
  });
  assert.equal(
    ctx.upstream.seen.slice(from).map((s) => s.target),
    [`http://public.test:${ctx.port}/p`],
  );
});

chain('wrong credentials: the upstream refuses and the render sees a network error', async () => {
  const wrong = ctx.upstream.url('127.0.0.2').replace(encodeURIComponent(PASSWORD), 'wrong');
  await withRoute(wrong, [], async (route) => {
    assert.is((await connect(route.url, `public.test:${ctx.port}`)).status, 502);
    assert.is((await get(route.url, `http://public.test:${ctx.port}/`)).status, 407);
  });
});

chain('no log entry holds the password or the encoded credentials', () => {
  const text = JSON.stringify(ctx.log);
  assert.ok(ctx.log.length > 0);
  assert.not.match(text, PASSWORD);
  assert.not.match(text, encodeURIComponent(PASSWORD));
  assert.not.match(text, Buffer.from(`customer:${PASSWORD}`).toString('base64'));
});

chain('a closed route stops listening', async () => {
  const route = await ctx.egress.route({ url: ctx.upstream.url('127.0.0.2') });
  await route.close();
  const refused = await get(route.url, `http://public.test:${ctx.port}/`).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
  );
  assert.ok(refused);
});

chain.run();
