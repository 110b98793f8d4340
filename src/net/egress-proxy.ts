// The forward proxy Chromium is launched behind: every connection the browser makes is
// resolved once, checked, and connected to exactly the address that passed (no rebinding).
// This file assembles the listeners; each protocol is a part of its own in egress/.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { openTunnel } from './egress/connect.ts';
import { forwardRequest, forwardUpgrade } from './egress/http.ts';
import { guarded, type Listener, type ProxyState, track } from './egress/proxy-state.ts';
import { SOCKS_HANDSHAKE_MS, serveSocks } from './egress/socks.ts';
import { checkTargetUrl, type TargetPolicy } from './target.ts';
import { type UpstreamProxy, upstreamOf } from './upstream.ts';

/** Options of the egress proxy; `isPublic` exists for tests only (see TargetPolicy). */
export interface EgressProxyOptions extends Omit<TargetPolicy, 'param'> {
  /** Receives one entry per forwarded or blocked connection. */
  log?: (entry: object) => void;
  /** How long a SOCKS5 client has for its greeting and request before it is dropped; 10 s unless set. */
  socksHandshakeMs?: number;
}

/** A running egress proxy: give Chromium `--proxy-server=<browserProxy>`. */
export interface EgressProxy {
  port: number;
  /** The HTTP proxy: absolute-form http:// requests, CONNECT tunnels and ws:// upgrades. */
  url: string;
  /** The SOCKS5 listener: a connection to one host and port, checked once, then spliced. */
  socksUrl: string;
  /**
   * What Chromium's `--proxy-server` takes: http:// through the SOCKS5 listener (a request is then
   * bytes on a checked connection, not parsed and forwarded one by one), https:// as CONNECT
   * tunnels of the HTTP proxy, and any other scheme through the SOCKS5 listener too, so that
   * nothing leaves the browser directly.
   */
  browserProxy: string;
  /**
   * Opens a listener of its own for one render whose traffic leaves through `upstream` (the
   * customer's proxy or a country's): the same checks, then chained to that proxy. Give the
   * render's browser context `proxy: { server: route.url }`; close the route after the render.
   */
  route(upstream: UpstreamProxy): Promise<EgressRoute>;
  /**
   * Checks a URL the render is about to navigate to under this proxy's own address rules, before
   * the browser is told of it (a link the page chose, docs/security.md): an absolute http(s) URL
   * whose host passes them, else the refusal naming `param`.
   */
  checkTarget(raw: string, param: string): Promise<URL>;
  close(): Promise<void>;
}

/** One render's listener, chained to its upstream proxy. */
export interface EgressRoute {
  url: string;
  close(): Promise<void>;
}

/** Registers the HTTP proxy's handlers on `server`; the client sockets it accepts are returned, to end with it. */
function serve(server: http.Server, listener: Listener): Set<Duplex> {
  const own = new Set<Duplex>();
  server.on('connection', (socket: Duplex) => {
    track(listener.proxy, socket);
    own.add(socket);
    socket.on('close', () => own.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  server.on(
    'connect',
    guarded((request: http.IncomingMessage, client: Duplex, head: Buffer) =>
      openTunnel(listener, request, client, head),
    ),
  );
  server.on(
    'upgrade',
    guarded((request: http.IncomingMessage, client: Duplex, head: Buffer) =>
      forwardUpgrade(listener, request, client, head),
    ),
  );
  server.on(
    'request',
    guarded((request: http.IncomingMessage, response: http.ServerResponse) =>
      forwardRequest(listener, request, response),
    ),
  );
  return own;
}

/** Listens on 127.0.0.1 at a free port, and answers which. */
async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as net.AddressInfo).port;
}

function shut(server: net.Server): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Starts the egress proxy on 127.0.0.1 at a free port. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const proxy: ProxyState = {
    policy: options,
    log: options.log ?? (() => {}),
    sockets: new Set<Duplex>(),
    agent: new http.Agent({ keepAlive: true }),
  };
  const routes = new Set<http.Server>();
  const handshakeMs = options.socksHandshakeMs ?? SOCKS_HANDSHAKE_MS;
  const socksServer = net.createServer(
    (client) => void serveSocks(proxy, client, handshakeMs).catch(() => client.destroy()),
  );
  const server = http.createServer();
  serve(server, { proxy });
  const port = await listen(server);
  const socksPort = await listen(socksServer);
  const url = `http://127.0.0.1:${port}`;
  const socksUrl = `socks5://127.0.0.1:${socksPort}`;
  return {
    port,
    url,
    socksUrl,
    browserProxy: `http=${socksUrl};https=${url};socks=${socksUrl}`,
    checkTarget: (raw, param) => checkTargetUrl(raw, { ...options, param }),
    async route(upstream) {
      const routeServer = http.createServer();
      const own = serve(routeServer, { proxy, via: upstreamOf(upstream) });
      const routePort = await listen(routeServer);
      routes.add(routeServer);
      return {
        url: `http://127.0.0.1:${routePort}`,
        async close() {
          routes.delete(routeServer);
          const closed = shut(routeServer);
          // The render is over: its tunnels (and the upstream sockets spliced to them) go too.
          for (const socket of own) socket.destroy();
          await closed;
        },
      };
    },
    async close() {
      const closed = Promise.all([server, socksServer, ...routes].map(shut));
      for (const socket of proxy.sockets) socket.destroy();
      proxy.agent.destroy();
      await closed;
    },
  };
}
