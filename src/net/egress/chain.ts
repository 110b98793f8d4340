// Chaining to an upstream proxy (a customer's `proxy`, a country's): the upstream's own address
// passes the same check as a target's, then carries a CONNECT tunnel or an absolute-form request.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { bypasses, type Upstream } from '../upstream.ts';
import { type BlockCode, type Listener, type Pinned, type ProxyState, pin, track } from './proxy-state.ts';

/** The upstream proxy a listener sends `host` through, or undefined when it goes direct. */
export function chainedVia(listener: Listener, host: string): Upstream | undefined {
  return listener.via !== undefined && !bypasses(listener.via, host) ? listener.via : undefined;
}

/** Where the upstream proxy is, for the log (never its credentials). */
export function whereOf(upstream: Upstream): { proxy: string } {
  return { proxy: `${upstream.host}:${upstream.port}` };
}

/** The upstream proxy's pinned address, checked like a target's, or the refusal. */
export function pinUpstream(proxy: ProxyState, upstream: Upstream): Promise<Pinned> {
  return pin(proxy, 'proxy', upstream.host, upstream.port);
}

/**
 * A socket to the upstream proxy (its address checked and pinned like a target's), on which a
 * CONNECT to host:port has been answered 200; the block code (logged) when the proxy refused or failed.
 */
export async function connectVia(
  proxy: ProxyState,
  upstream: Upstream,
  host: string,
  port: number,
): Promise<Duplex | BlockCode> {
  const pinned = await pinUpstream(proxy, upstream);
  if ('blocked' in pinned) return pinned.blocked;
  const socket: Duplex = upstream.secure
    ? tls.connect({
        host: pinned.address,
        port: upstream.port,
        servername: net.isIP(upstream.host) ? undefined : upstream.host,
      })
    : net.connect({ host: pinned.address, port: upstream.port });
  track(proxy, socket);
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const request = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${upstream.authorization ? `Proxy-Authorization: ${upstream.authorization}\r\n` : ''}\r\n`;
  return new Promise<Duplex | BlockCode>((resolve) => {
    let received = Buffer.alloc(0);
    const fail = (reason: string) => {
      proxy.log({ event: 'egress_failed', kind: 'proxy', ...whereOf(upstream), host, port, reason });
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
}

/**
 * An absolute-form request for `target` to the upstream proxy at its pinned `address`, with its
 * credentials; not pooled, since the proxy is the render's own.
 */
export function requestVia(
  upstream: Upstream,
  address: string,
  request: http.IncomingMessage,
  target: URL,
  headers: string[],
): http.ClientRequest {
  const client = upstream.secure ? https : http;
  return client.request({
    host: address,
    port: upstream.port,
    method: request.method,
    path: target.href,
    headers: upstream.authorization ? [...headers, 'Proxy-Authorization', upstream.authorization] : headers,
    setHost: false,
    agent: false,
    ...(upstream.secure && !net.isIP(upstream.host) ? { servername: upstream.host } : {}),
  });
}
