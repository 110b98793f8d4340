// What every listener of one egress proxy shares: its sockets, its pooled agent, its log, and the
// one address check every target passes (pin), whichever protocol brought it.
import type http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { ServiceError } from '../../errors.ts';
import { resolvePublic, type TargetPolicy } from '../target.ts';
import type { Upstream } from '../upstream.ts';

/** The state of one egress proxy, passed to each of its protocol handlers. */
export interface ProxyState {
  /** The address rules every target and every upstream proxy is checked by. */
  policy: Omit<TargetPolicy, 'param'>;
  log: (entry: object) => void;
  /** Every open socket, client or upstream, so that closing the proxy ends them all. */
  sockets: Set<Duplex>;
  // Pooled per pinned IP and port, so a reused upstream socket is always to a checked address.
  agent: http.Agent;
}

/** One listener of the proxy: `via` chains what passed the checks to an upstream proxy. */
export interface Listener {
  proxy: ProxyState;
  via?: Upstream;
}

/** The header every refusal carries, naming the error code the render should report. */
export const blockedHeader = 'X-Shutterbus-Blocked';

/** Why a connection was refused, as the render reports it. */
export type BlockCode = 'url_not_allowed' | 'name_not_resolved' | 'network_error' | 'request_not_valid';
/** A host's checked address, or the refusal to answer with. */
export type Pinned = { address: string } | { blocked: BlockCode };
/** Answers a client still waiting for one with a refusal. */
export type Refuse = (client: Duplex, code: BlockCode) => void;

/** The status line of each refusal. */
export const blockStatus: Record<BlockCode, [number, string]> = {
  url_not_allowed: [403, 'Forbidden'],
  name_not_resolved: [502, 'Bad Gateway'],
  network_error: [502, 'Bad Gateway'],
  request_not_valid: [400, 'Bad Request'],
};

/** Keeps `socket` until it closes; a reset on it must never reach the process as an uncaught error. */
export function track(proxy: ProxyState, socket: Duplex): void {
  proxy.sockets.add(socket);
  socket.on('close', () => proxy.sockets.delete(socket));
  socket.on('error', () => socket.destroy());
}

/** The pinned address of host, or the block code to answer with (logged either way). */
export async function pin(proxy: ProxyState, kind: string, host: string, port: number): Promise<Pinned> {
  try {
    const address = await resolvePublic(host, proxy.policy);
    proxy.log({ event: 'egress_allowed', kind, host, port, address });
    return { address };
  } catch (error) {
    const blocked = blockCodeOf(error);
    proxy.log({ event: 'egress_blocked', kind, host, port, code: blocked, reason: reasonOf(error) });
    return { blocked };
  }
}

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

/** Answers a raw client socket with the refusal `code` as an HTTP response, then closes it. */
export function rawBlock(socket: Duplex, code: BlockCode): void {
  const [status, reason] = blockStatus[code];
  const body = `${code}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${blockedHeader}: ${code}\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Wraps an async event handler: a bug in one exchange destroys its socket, not the process. */
export function guarded<A extends [http.IncomingMessage, Duplex | http.ServerResponse, ...unknown[]]>(
  handler: (...args: A) => Promise<void>,
): (...args: A) => void {
  return (...args) => void handler(...args).catch(() => args[1].destroy());
}

/** How a client is spliced with its upstream. */
export interface SpliceHow {
  /** Written to the client once the upstream is up. */
  opening: string | Buffer;
  /** Written to the upstream once it is up. */
  head: Buffer;
  /** Where the upstream is, for the log. */
  where: object;
  /** The upstream is already up. */
  connected?: boolean;
  /** Answers the client should the upstream fail before the splice; rawBlock unless set. */
  refuse?: Refuse;
}

/**
 * Splices the client with `upstream` once it is up (`connected`: it is already), writing
 * `opening` to the client and `head` to the upstream first. Should the upstream fail before,
 * the client is answered by `refuse` (a network_error).
 */
export function splice(proxy: ProxyState, client: Duplex, upstream: Duplex, how: SpliceHow): void {
  const { opening, head, where, refuse = rawBlock } = how;
  let spliced = false;
  track(proxy, upstream);
  const go = () => {
    spliced = true;
    client.write(opening);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  };
  upstream.once('error', (error) => {
    proxy.log({ event: 'egress_failed', ...where, reason: error.message });
    // Before the splice the client still waits for an answer; after it, closing is the answer.
    if (!spliced) refuse(client, 'network_error');
  });
  // Before the splice the client is refuse's to end: it may still be waiting to be answered.
  upstream.once('close', () => spliced && client.destroy());
  client.once('close', () => upstream.destroy());
  if (how.connected) go();
  else upstream.once('connect', go);
}

/** Connects to the pinned address and splices it with the client once it is up. */
export function tunnel(
  proxy: ProxyState,
  client: Duplex,
  target: { address: string; port: number },
  opening: string | Buffer,
  head: Buffer,
  refuse?: Refuse,
): void {
  const { address, port } = target;
  splice(proxy, client, net.connect({ host: address, port }), { opening, head, where: { address, port }, refuse });
}
