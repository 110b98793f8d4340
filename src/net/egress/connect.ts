// CONNECT tunnels: how https://, wss:// and (in Chromium) ws:// arrive at the HTTP proxy.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { chainedVia, connectVia, whereOf } from './chain.ts';
import { type Listener, pin, rawBlock, splice, tunnel } from './proxy-state.ts';

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/** Splits a CONNECT authority (`host:443`, `[::1]:443`) into host and a port in 1–65535. */
export function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1], port } : null;
}

/** Answers a CONNECT host:port: a tunnel to the checked address, directly or through the upstream proxy. */
export async function openTunnel(
  listener: Listener,
  request: http.IncomingMessage,
  client: Duplex,
  head: Buffer,
): Promise<void> {
  const { proxy } = listener;
  const target = parseAuthority(request.url ?? '');
  if (!target) return rawBlock(client, 'request_not_valid');
  // The target obeys the address rules whichever way it leaves: a proxy never reaches what they forbid.
  const pinned = await pin(proxy, 'connect', target.host, target.port);
  if (client.destroyed) return;
  if ('blocked' in pinned) return rawBlock(client, pinned.blocked);
  const via = chainedVia(listener, target.host);
  if (!via) return tunnel(proxy, client, { address: pinned.address, port: target.port }, ESTABLISHED, head);
  const upstream = await connectVia(proxy, via, target.host.replace(/^\[|\]$/g, ''), target.port);
  if (client.destroyed) return void (typeof upstream === 'string' ? undefined : upstream.destroy());
  if (typeof upstream === 'string') return rawBlock(client, upstream);
  splice(proxy, client, upstream, { opening: ESTABLISHED, head, where: whereOf(via), connected: true });
}
