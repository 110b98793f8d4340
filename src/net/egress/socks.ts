// SOCKS5 (RFC 1928), no authentication, CONNECT only: how http:// and any scheme without a rule of
// its own leave the browser, as a connection to one host and port, checked once, then spliced.
import type { Duplex } from 'node:stream';
import { type BlockCode, type ProxyState, pin, rawBlock, track, tunnel } from './proxy-state.ts';

const SOCKS_VERSION = 5;
const SOCKS_NO_AUTHENTICATION = 0;
const SOCKS_NO_ACCEPTABLE_METHOD = 0xff;
const SOCKS_CONNECT = 1;
const SOCKS_SUCCEEDED = 0;
const SOCKS_COMMAND_NOT_SUPPORTED = 7;
// A greeting and a request never come near this: more is not a SOCKS client.
const SOCKS_HANDSHAKE_MAX_BYTES = 1024;
// Chromium sends its greeting and request at once; a client silent for this long is dropped, not kept.
export const SOCKS_HANDSHAKE_MS = 10_000;

/** Serves one SOCKS5 client: its target checked by the same rule as every other, then tunnelled. */
export async function serveSocks(proxy: ProxyState, client: Duplex, handshakeMs: number): Promise<void> {
  track(proxy, client);
  const request = await socksRequestOf(client, handshakeMs);
  if (!request) return;
  const { host, port, rest } = request;
  const pinned = await pin(proxy, 'socks', host, port);
  if (client.destroyed) return;
  if ('blocked' in pinned) return refuseOnRequest(client, pinned.blocked, rest);
  tunnel(proxy, client, { address: pinned.address, port }, socksReply(SOCKS_SUCCEEDED), rest, (socket, code) =>
    refuseOnRequest(socket, code, rest),
  );
}

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
