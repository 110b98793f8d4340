// Plain http:// at the HTTP proxy: absolute-form requests forwarded once (never following a
// redirect: each hop comes back here), and ws:// Upgrade requests forwarded, then spliced.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { chainedVia, connectVia, pinUpstream, requestVia, whereOf } from './chain.ts';
import {
  type BlockCode,
  blockedHeader,
  blockStatus,
  type Listener,
  pin,
  rawBlock,
  splice,
  tunnel,
} from './proxy-state.ts';

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

/** The http:// URL of an absolute-form proxy request, or null for anything else. */
function absoluteTarget(request: http.IncomingMessage): URL | null {
  try {
    const url = new URL(request.url ?? '');
    return url.protocol === 'http:' || url.protocol === 'ws:' ? url : null;
  } catch {
    return null;
  }
}

/** Forwards one absolute-form http:// request to its checked address, directly or through the upstream proxy. */
export async function forwardRequest(
  listener: Listener,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const { proxy } = listener;
  const target = absoluteTarget(request);
  const answerBlocked = (code: BlockCode): void => {
    if (response.headersSent) return void response.destroy();
    const [status] = blockStatus[code];
    response.writeHead(status, { [blockedHeader]: code, 'Content-Type': 'text/plain' }).end(`${code}\n`);
  };
  if (!target) return answerBlocked('request_not_valid');
  const port = Number(target.port || 80);
  const pinned = await pin(proxy, 'http', target.hostname, port);
  if ('blocked' in pinned) return answerBlocked(pinned.blocked);
  const headers = endToEndHeaders(request.rawHeaders);
  if (request.headers.host === undefined) headers.push('Host', target.host);
  let send: () => http.ClientRequest;
  const via = chainedVia(listener, target.hostname);
  if (via) {
    const proxyPinned = await pinUpstream(proxy, via);
    if ('blocked' in proxyPinned) return answerBlocked(proxyPinned.blocked);
    send = () => requestVia(via, proxyPinned.address, request, target, headers);
  } else {
    send = () =>
      http.request({
        host: pinned.address,
        port,
        method: request.method,
        path: `${target.pathname}${target.search}`,
        headers,
        setHost: false,
        agent: proxy.agent,
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
      response.writeHead(upstream.statusCode ?? 502, upstream.statusMessage, endToEndHeaders(upstream.rawHeaders));
      upstream.pipe(response);
      upstream.on('error', () => response.destroy());
    });
    sent.on('error', (error) => {
      if (sent.reusedSocket && resendable && !response.headersSent && !response.destroyed) {
        forward = forwardOnce();
        forward.end();
        return;
      }
      proxy.log({ event: 'egress_failed', address: pinned.address, port, reason: error.message });
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
}

/** Forwards a ws:// absolute-form Upgrade request to its checked address, then splices the two. */
export async function forwardUpgrade(
  listener: Listener,
  request: http.IncomingMessage,
  client: Duplex,
  head: Buffer,
): Promise<void> {
  const { proxy } = listener;
  const target = absoluteTarget(request);
  if (!target) return rawBlock(client, 'request_not_valid');
  const port = Number(target.port || 80);
  const pinned = await pin(proxy, 'upgrade', target.hostname, port);
  if (client.destroyed) return;
  if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
  const headers = endToEndHeaders(request.rawHeaders, ['connection', 'upgrade']);
  const lines = [`${request.method} ${target.pathname}${target.search} HTTP/1.1`];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  const opening = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), head]);
  const via = chainedVia(listener, target.hostname);
  if (!via) return tunnel(proxy, client, { address: pinned.address, port }, '', opening);
  const upstream = await connectVia(proxy, via, target.hostname.replace(/^\[|\]$/g, ''), port);
  if (typeof upstream === 'string') return rawBlock(client, upstream);
  splice(proxy, client, upstream, { opening: '', head: opening, where: whereOf(via), connected: true });
}
