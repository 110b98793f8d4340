// The forward proxy Chromium is launched behind: every connection the browser makes is
// resolved once, checked, and connected to exactly the address that passed (no rebinding).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { ServiceError } from '../errors.ts';
import { checkTargetUrl, resolvePublic, type TargetPolicy } from './target.ts';

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

/** A proxy the egress proxy chains to: `url` is http(s)://[user:password@]host[:port]. */
export interface UpstreamProxy {
  url: string;
  /** Host names (`*.example.com`: the domain and its subdomains) that skip the upstream proxy. */
  bypass?: readonly string[];
}

/** One render's listener, chained to its upstream proxy. */
export interface EgressRoute {
  url: string;
  close(): Promise<void>;
}

/** An upstream proxy as a connection needs it; the credentials never reach a log. */
interface Upstream {
  secure: boolean;
  host: string;
  port: number;
  authorization?: string;
  bypass: readonly string[];
}

function upstreamOf(proxy: UpstreamProxy): Upstream {
  const url = new URL(proxy.url);
  const secure = url.protocol === 'https:';
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    secure,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || (secure ? 443 : 80)),
    ...(user || password ? { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } : {}),
    bypass: (proxy.bypass ?? []).map((host) => host.toLowerCase()),
  };
}

/** True when `host` is one of the bypass names (`*.example.com` also covers example.com). */
function bypasses(upstream: Upstream, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return upstream.bypass.some((rule) => {
    if (!rule.startsWith('*.')) return name === rule;
    const domain = rule.slice(2);
    return name === domain || name.endsWith(`.${domain}`);
  });
}

/** The header every refusal carries, naming the error code the render should report. */
export const blockedHeader = 'X-Shutterbus-Blocked';

type BlockCode = 'url_not_allowed' | 'name_not_resolved' | 'network_error' | 'request_not_valid';
type Pinned = { address: string } | { blocked: BlockCode };

const blockStatus: Record<BlockCode, [number, string]> = {
  url_not_allowed: [403, 'Forbidden'],
  name_not_resolved: [502, 'Bad Gateway'],
  network_error: [502, 'Bad Gateway'],
  request_not_valid: [400, 'Bad Request'],
};

// Headers about one connection, never forwarded (RFC 9110 §7.6.1, plus the proxy ones).
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function blockCodeOf(error: unknown): BlockCode {
  if (error instanceof ServiceError && (error.code === 'url_not_allowed' || error.code === 'name_not_resolved')) {
    return error.code;
  }
  return 'network_error';
}

/** The internal reason of a refusal, for the log: the detail message, or the resolver's error. */
function reasonOf(error: unknown): string {
  const details = error instanceof ServiceError ? error.details.error_details : undefined;
  if (Array.isArray(details) && typeof details[0]?.message === 'string') return details[0].message;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Wraps an async event handler: a bug in one exchange destroys its socket, not the process. */
function guarded<A extends [http.IncomingMessage, Duplex | http.ServerResponse, ...unknown[]]>(
  handler: (...args: A) => Promise<void>,
): (...args: A) => void {
  return (...args) => void handler(...args).catch(() => args[1].destroy());
}

/** Raw header pairs minus hop-by-hop ones and those the Connection header names; `keep` survives. */
function endToEndHeaders(rawHeaders: string[], keep: string[] = []): string[] {
  const named = new Set(hopByHop);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1].split(',')) named.add(token.trim().toLowerCase());
  }
  for (const name of keep) named.delete(name);
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!named.has(rawHeaders[i].toLowerCase())) kept.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return kept;
}

/** Splits a CONNECT authority (`host:443`, `[::1]:443`) into host and a port in 1–65535. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1], port } : null;
}

function rawBlock(socket: Duplex, code: BlockCode): void {
  const [status, reason] = blockStatus[code];
  const body = `${code}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${blockedHeader}: ${code}\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Starts the egress proxy on 127.0.0.1 at a free port. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const log = options.log ?? (() => {});
  const sockets = new Set<Duplex>();
  // Pooled per pinned IP and port, so a reused upstream socket is always to a checked address.
  const agent = new http.Agent({ keepAlive: true });
  const routes = new Set<http.Server>();

  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset on one connection must never reach the process as an uncaught error.
    socket.on('error', () => socket.destroy());
  };

  /** The pinned address of host, or the block code to answer with (logged either way). */
  const pin = async (kind: string, host: string, port: number): Promise<Pinned> => {
    try {
      const address = await resolvePublic(host, options);
      log({ event: 'egress_allowed', kind, host, port, address });
      return { address };
    } catch (error) {
      const blocked = blockCodeOf(error);
      log({ event: 'egress_blocked', kind, host, port, code: blocked, reason: reasonOf(error) });
      return { blocked };
    }
  };

  /**
   * Splices the client with `upstream` once it is up (`connected`: it is already), writing
   * `opening` to the client and `head` to the upstream first. Should the upstream fail before,
   * the client is answered by `refuse` (a network_error).
   */
  const splice = (
    client: Duplex,
    upstream: Duplex,
    how: {
      opening: string | Buffer;
      head: Buffer;
      where: object;
      connected?: boolean;
      refuse?: (client: Duplex, code: BlockCode) => void;
    },
  ): void => {
    const { opening, head, where, refuse = rawBlock } = how;
    let spliced = false;
    track(upstream);
    const go = () => {
      spliced = true;
      client.write(opening);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    upstream.once('error', (error) => {
      log({ event: 'egress_failed', ...where, reason: error.message });
      // Before the splice the client still waits for an answer; after it, closing is the answer.
      if (!spliced) refuse(client, 'network_error');
    });
    // Before the splice the client is refuse's to end: it may still be waiting to be answered.
    upstream.once('close', () => spliced && client.destroy());
    client.once('close', () => upstream.destroy());
    if (how.connected) go();
    else upstream.once('connect', go);
  };

  /** Connects to the pinned address and splices it with the client once it is up. */
  const tunnel = (
    client: Duplex,
    address: string,
    port: number,
    opening: string | Buffer,
    head: Buffer,
    refuse?: (client: Duplex, code: BlockCode) => void,
  ): void => {
    splice(client, net.connect({ host: address, port }), { opening, head, where: { address, port }, refuse });
  };

  /**
   * A socket to the upstream proxy (its address checked and pinned like a target's), on which a
   * CONNECT to host:port has been answered 200; null (logged) when the proxy refused or failed.
   */
  const connectVia = async (upstream: Upstream, host: string, port: number): Promise<Duplex | BlockCode> => {
    const pinned = await pin('proxy', upstream.host, upstream.port);
    if ('blocked' in pinned) return pinned.blocked;
    const socket: Duplex = upstream.secure
      ? tls.connect({
          host: pinned.address,
          port: upstream.port,
          servername: net.isIP(upstream.host) ? undefined : upstream.host,
        })
      : net.connect({ host: pinned.address, port: upstream.port });
    track(socket);
    const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const request = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${upstream.authorization ? `Proxy-Authorization: ${upstream.authorization}\r\n` : ''}\r\n`;
    return new Promise<Duplex | BlockCode>((resolve) => {
      let received = Buffer.alloc(0);
      const fail = (reason: string) => {
        log({ event: 'egress_failed', kind: 'proxy', proxy: `${upstream.host}:${upstream.port}`, host, port, reason });
        socket.destroy();
        resolve('network_error');
      };
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return received.length > 16_384 ? fail('proxy answer too long') : undefined;
        socket.off('data', onData);
        socket.off('error', onError);
        // Held until the splice pipes it: nothing the target sends meanwhile is lost.
        socket.pause();
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(received.subarray(0, end).toString('latin1'))?.[1];
        if (status !== '200') return fail(`proxy answered ${status ?? 'something else'} to CONNECT`);
        const rest = received.subarray(end + 4);
        if (rest.length > 0) socket.unshift(rest);
        resolve(socket);
      };
      const onError = (error: Error) => fail(error.message);
      socket.on('data', onData);
      socket.once('error', onError);
      socket.once(upstream.secure ? 'secureConnect' : 'connect', () => socket.write(request));
    });
  };

  /** The handlers of one listener: `via` chains what passed the checks to an upstream proxy. */
  const serve = (server: http.Server, via?: Upstream): Set<Duplex> => {
    const own = new Set<Duplex>();
    server.on('connection', (socket: Duplex) => {
      track(socket);
      own.add(socket);
      socket.on('close', () => own.delete(socket));
    });
    server.on('clientError', (_error, socket) => socket.destroy());
    const chained = (host: string) => via !== undefined && !bypasses(via, host);

    // https://, wss:// and (in Chromium) ws:// arrive as CONNECT host:port tunnels.
    server.on(
      'connect',
      guarded(async (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
        const target = parseAuthority(request.url ?? '');
        if (!target) return rawBlock(client, 'request_not_valid');
        // The target obeys the address rules whichever way it leaves: a proxy never reaches what they forbid.
        const pinned = await pin('connect', target.host, target.port);
        if (client.destroyed) return;
        if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
        if (!chained(target.host))
          return tunnel(client, pinned.address, target.port, 'HTTP/1.1 200 Connection Established\r\n\r\n', head);
        const upstream = await connectVia(via!, target.host.replace(/^\[|\]$/g, ''), target.port);
        if (client.destroyed) return void (typeof upstream === 'string' ? undefined : upstream.destroy());
        if (typeof upstream === 'string') return rawBlock(client, upstream);
        splice(client, upstream, {
          opening: 'HTTP/1.1 200 Connection Established\r\n\r\n',
          head,
          where: { proxy: `${via!.host}:${via!.port}` },
          connected: true,
        });
      }),
    );

    // ws:// sent as an absolute-form Upgrade request: forward the request, then splice.
    server.on(
      'upgrade',
      guarded(async (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
        const target = absoluteTarget(request);
        if (!target) return rawBlock(client, 'request_not_valid');
        const port = Number(target.port || 80);
        const pinned = await pin('upgrade', target.hostname, port);
        if (client.destroyed) return;
        if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
        const headers = endToEndHeaders(request.rawHeaders, ['connection', 'upgrade']);
        const lines = [`${request.method} ${target.pathname}${target.search} HTTP/1.1`];
        for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
        const opening = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), head]);
        if (!chained(target.hostname)) return tunnel(client, pinned.address, port, '', opening);
        const upstream = await connectVia(via!, target.hostname.replace(/^\[|\]$/g, ''), port);
        if (typeof upstream === 'string') return rawBlock(client, upstream);
        splice(client, upstream, {
          opening: '',
          head: opening,
          where: { proxy: `${via!.host}:${via!.port}` },
          connected: true,
        });
      }),
    );

    // Plain http:// in absolute form: forward once, never follow redirects (each hop comes back here).
    server.on(
      'request',
      guarded(async (request: http.IncomingMessage, response: http.ServerResponse) => {
        const target = absoluteTarget(request);
        const answerBlocked = (code: BlockCode): void => {
          if (response.headersSent) return void response.destroy();
          const [status] = blockStatus[code];
          response.writeHead(status, { [blockedHeader]: code, 'Content-Type': 'text/plain' }).end(`${code}\n`);
        };
        if (!target) return answerBlocked('request_not_valid');
        const port = Number(target.port || 80);
        const pinned = await pin('http', target.hostname, port);
        if ('blocked' in pinned) return answerBlocked(pinned.blocked);
        const headers = endToEndHeaders(request.rawHeaders);
        if (request.headers.host === undefined) headers.push('Host', target.host);
        let send: () => http.ClientRequest;
        if (chained(target.hostname)) {
          // Through the upstream proxy: the absolute-form request, with its credentials.
          const proxyPinned = await pin('proxy', via!.host, via!.port);
          if ('blocked' in proxyPinned) return answerBlocked(proxyPinned.blocked);
          if (via!.authorization) headers.push('Proxy-Authorization', via!.authorization);
          const client = via!.secure ? https : http;
          send = () =>
            client.request({
              host: proxyPinned.address,
              port: via!.port,
              method: request.method,
              path: target.href,
              headers,
              setHost: false,
              agent: false,
              ...(via!.secure && !net.isIP(via!.host) ? { servername: via!.host } : {}),
            });
        } else {
          send = () =>
            http.request({
              host: pinned.address,
              port,
              method: request.method,
              path: `${target.pathname}${target.search}`,
              headers,
              setHost: false,
              agent,
            });
        }
        // A request sent on a kept-alive socket that the site closed meanwhile (its keep-alive
        // timeout raced the reuse) fails before any answer: a GET or HEAD without a body is sent
        // again on a new connection, as browsers do. Other requests may have had effects: not resent.
        const resendable =
          (request.method === 'GET' || request.method === 'HEAD') &&
          !request.headers['transfer-encoding'] &&
          Number(request.headers['content-length'] ?? 0) === 0;
        const forwardOnce = (): http.ClientRequest => {
          const sent = send();
          sent.on('response', (upstream) => {
            response.writeHead(
              upstream.statusCode ?? 502,
              upstream.statusMessage,
              endToEndHeaders(upstream.rawHeaders),
            );
            upstream.pipe(response);
            upstream.on('error', () => response.destroy());
          });
          sent.on('error', (error) => {
            if (sent.reusedSocket && resendable && !response.headersSent && !response.destroyed) {
              forward = forwardOnce();
              forward.end();
              return;
            }
            log({ event: 'egress_failed', address: pinned.address, port, reason: error.message });
            answerBlocked('network_error');
          });
          return sent;
        };
        let forward = forwardOnce();
        request.pipe(forward);
        // The browser gave up (page closed, navigation cancelled): stop the upstream request too.
        request.on('error', () => forward.destroy());
        response.on('close', () => {
          if (!response.writableFinished) forward.destroy();
        });
      }),
    );
    return own;
  };

  // http:// (and any scheme without a rule of its own) arrives as SOCKS5 connections to a host and port.
  const socksServer = net.createServer((client) => {
    track(client);
    void (async () => {
      const request = await socksRequestOf(client, options.socksHandshakeMs ?? SOCKS_HANDSHAKE_MS);
      if (!request) return;
      const { host, port, rest } = request;
      const pinned = await pin('socks', host, port);
      if (client.destroyed) return;
      if ('blocked' in pinned) return refuseOnRequest(client, pinned.blocked, rest);
      tunnel(client, pinned.address, port, socksReply(SOCKS_SUCCEEDED), rest, (socket, code) =>
        refuseOnRequest(socket, code, rest),
      );
    })().catch(() => client.destroy());
  });

  const listen = async (server: net.Server): Promise<number> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return (server.address() as net.AddressInfo).port;
  };
  const shut = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

  const server = http.createServer();
  serve(server);
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
      const own = serve(routeServer, upstreamOf(upstream));
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
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await closed;
    },
  };
}

/** The http:// URL of an absolute-form proxy request, or null for anything else. */
function absoluteTarget(request: http.IncomingMessage): URL | null {
  try {
    const url = new URL(request.url ?? '');
    return url.protocol === 'http:' || url.protocol === 'ws:' ? url : null;
  } catch {
    return null;
  }
}

// SOCKS5 (RFC 1928): no authentication, CONNECT only.
const SOCKS_VERSION = 5;
const SOCKS_NO_AUTHENTICATION = 0;
const SOCKS_NO_ACCEPTABLE_METHOD = 0xff;
const SOCKS_CONNECT = 1;
const SOCKS_SUCCEEDED = 0;
const SOCKS_COMMAND_NOT_SUPPORTED = 7;
// A greeting and a request never come near this: more is not a SOCKS client.
const SOCKS_HANDSHAKE_MAX_BYTES = 1024;
// Chromium sends its greeting and request at once; a client silent for this long is dropped, not kept.
const SOCKS_HANDSHAKE_MS = 10_000;

/** A SOCKS5 reply with `code` and an unspecified bound address (0.0.0.0:0). */
function socksReply(code: number): Buffer {
  return Buffer.from([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/**
 * A refused target on a SOCKS5 connection, answered as the HTTP proxy answers one: the connection
 * is granted, and the first request on it gets the refusal (X-Shutterbus-Blocked naming why), so
 * the browser shows a response the render reads rather than a bare connection failure. Only
 * http:// and schemes without a rule of their own come this way; https:// takes CONNECT.
 */
function refuseOnRequest(client: Duplex, code: BlockCode, rest: Buffer): void {
  client.write(socksReply(SOCKS_SUCCEEDED));
  if (rest.length > 0) return rawBlock(client, code);
  client.once('data', () => rawBlock(client, code));
  client.resume();
}

/** The target of a SOCKS5 CONNECT request (an IPv6 address bracketed), and what the client sent after it. */
interface SocksRequest {
  host: string;
  port: number;
  rest: Buffer;
}

/**
 * Reads a SOCKS5 greeting (answering it) and a CONNECT request from `client` within `timeoutMs`;
 * the client is left paused. Null when the client is not one this listener serves (answered and
 * closed), went away, or took too long (closed).
 */
function socksRequestOf(client: Duplex, timeoutMs: number): Promise<SocksRequest | null> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let greeted = false;
    const done = (request: SocksRequest | null) => {
      clearTimeout(timer);
      client.off('data', onData);
      client.off('close', onClose);
      resolve(request);
    };
    const refuse = (reply?: Buffer) => {
      if (reply) client.end(reply);
      else client.destroy();
      done(null);
    };
    const onClose = () => done(null);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > SOCKS_HANDSHAKE_MAX_BYTES || received[0] !== SOCKS_VERSION) return refuse();
      if (!greeted) {
        if (received.length < 2 || received.length < 2 + received[1]) return;
        const methods = received.subarray(2, 2 + received[1]);
        received = received.subarray(2 + received[1]);
        if (!methods.includes(SOCKS_NO_AUTHENTICATION))
          return refuse(Buffer.from([SOCKS_VERSION, SOCKS_NO_ACCEPTABLE_METHOD]));
        client.write(Buffer.from([SOCKS_VERSION, SOCKS_NO_AUTHENTICATION]));
        greeted = true;
        if (received.length === 0) return;
        if (received[0] !== SOCKS_VERSION) return refuse();
      }
      const request = parseSocksRequest(received);
      if (request === 'incomplete') return;
      if (request === null) return refuse(socksReply(SOCKS_COMMAND_NOT_SUPPORTED));
      client.pause();
      done(request);
    };
    const timer = setTimeout(() => refuse(), timeoutMs);
    client.on('data', onData);
    client.once('close', onClose);
  });
}

/** A CONNECT request (VER CMD RSV ATYP ADDR PORT); 'incomplete' until all of it is in, null for anything else. */
function parseSocksRequest(data: Buffer): SocksRequest | null | 'incomplete' {
  if (data.length < 5) return 'incomplete';
  if (data[1] !== SOCKS_CONNECT) return null;
  let host: string;
  let end: number;
  switch (data[3]) {
    case 1: // IPv4
      end = 8;
      if (data.length < end + 2) return 'incomplete';
      host = [...data.subarray(4, end)].join('.');
      break;
    case 3: // a domain name, its length first
      end = 5 + data[4];
      if (data.length < end + 2) return 'incomplete';
      host = data.subarray(5, end).toString('latin1');
      break;
    case 4: // IPv6
      end = 20;
      if (data.length < end + 2) return 'incomplete';
      host = `[${Array.from({ length: 8 }, (_, i) => data.readUInt16BE(4 + 2 * i).toString(16)).join(':')}]`;
      break;
    default:
      return null;
  }
  const port = data.readUInt16BE(end);
  return port === 0 ? null : { host, port, rest: data.subarray(end + 2) };
}
