// The forward proxy Chromium is launched behind: every connection the browser makes is
// resolved once, checked, and connected to exactly the address that passed (no rebinding).
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { ServiceError } from '../errors.ts';
import { resolvePublic, type TargetPolicy } from './target.ts';

/** Options of the egress proxy; `isPublic` exists for tests only (see TargetPolicy). */
export interface EgressProxyOptions extends Omit<TargetPolicy, 'param'> {
  /** Receives one entry per forwarded or blocked connection. */
  log?: (entry: object) => void;
}

/** A running egress proxy: give Chromium `--proxy-server=<url>`. */
export interface EgressProxy {
  port: number;
  url: string;
  close(): Promise<void>;
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
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade',
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

  /** Connects to the pinned address and splices it with the client once it is up. */
  const tunnel = (client: Duplex, address: string, port: number, opening: string | Buffer, head: Buffer): void => {
    const upstream = net.connect({ host: address, port });
    let spliced = false;
    track(upstream);
    upstream.once('connect', () => {
      spliced = true;
      client.write(opening);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', (error) => {
      log({ event: 'egress_failed', address, port, reason: error.message });
      // Before the splice the client still waits for an answer; after it, closing is the answer.
      if (!spliced) rawBlock(client, 'network_error');
    });
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  };

  const server = http.createServer();
  server.on('connection', track);
  server.on('clientError', (_error, socket) => socket.destroy());

  // https://, wss:// and (in Chromium) ws:// arrive as CONNECT host:port tunnels.
  server.on('connect', guarded(async (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const target = parseAuthority(request.url ?? '');
    if (!target) return rawBlock(client, 'request_not_valid');
    const pinned = await pin('connect', target.host, target.port);
    if (client.destroyed) return;
    if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
    tunnel(client, pinned.address, target.port, 'HTTP/1.1 200 Connection Established\r\n\r\n', head);
  }));

  // ws:// sent as an absolute-form Upgrade request: forward the request, then splice.
  server.on('upgrade', guarded(async (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const target = absoluteTarget(request);
    if (!target) return rawBlock(client, 'request_not_valid');
    const port = Number(target.port || 80);
    const pinned = await pin('upgrade', target.hostname, port);
    if (client.destroyed) return;
    if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
    const headers = endToEndHeaders(request.rawHeaders, ['connection', 'upgrade']);
    const lines = [`${request.method} ${target.pathname}${target.search} HTTP/1.1`];
    for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
    tunnel(client, pinned.address, port, '', Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), head]));
  }));

  // Plain http:// in absolute form: forward once, never follow redirects (each hop comes back here).
  server.on('request', guarded(async (request: http.IncomingMessage, response: http.ServerResponse) => {
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
    const forward = http.request({
      host: pinned.address, port, method: request.method, path: `${target.pathname}${target.search}`,
      headers, setHost: false, agent,
    });
    forward.on('response', (upstream) => {
      response.writeHead(upstream.statusCode ?? 502, upstream.statusMessage, endToEndHeaders(upstream.rawHeaders));
      upstream.pipe(response);
      upstream.on('error', () => response.destroy());
    });
    forward.on('error', (error) => {
      log({ event: 'egress_failed', address: pinned.address, port, reason: error.message });
      answerBlocked('network_error');
    });
    request.pipe(forward);
    // The browser gave up (page closed, navigation cancelled): stop the upstream request too.
    request.on('error', () => forward.destroy());
    response.on('close', () => {
      if (!response.writableFinished) forward.destroy();
    });
  }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
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
