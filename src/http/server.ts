// The ingress's node:http server: bounded client timeouts, and the API's JSON for everything
// Node answers by itself (malformed HTTP, oversized headers, slow clients, odd Expect headers).
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, errorTable, type ErrorCode, type ErrorDetails } from '../errors.ts';

// Request line plus headers up to 16 KiB; longer ones answer 431 (docs/operations.md).
export const MAX_HEADER_BYTES = 16 * 1024;
// Headers within 10 s, the whole request within 30 s, idle keep-alive kept 5 s (docs/operations.md).
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
// Node only looks for expired requests this often (30 s by default), so this bounds how late a 408 comes.
const TIMEOUT_CHECK_INTERVAL_MS = 500;

/** Client time limits in milliseconds; tests pass shorter ones, production keeps the API's. */
export interface ServerTimeouts {
  headersTimeout?: number;
  requestTimeout?: number;
  keepAliveTimeout?: number;
}

/** A node:http server around `handler` that answers every failure Node meets before it with the API's JSON error. */
export function createHttpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  timeouts: ServerTimeouts = {},
): Server {
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      headersTimeout: timeouts.headersTimeout ?? HEADERS_TIMEOUT_MS,
      requestTimeout: timeouts.requestTimeout ?? REQUEST_TIMEOUT_MS,
      // Node's own answer to a missing Host is an empty 400; the listener below sends the API's.
      requireHostHeader: false,
    },
    (req, res) => {
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        answer(res, 'request_not_valid', {
          error_details: [{ parameter: 'Host', message: 'is required in HTTP/1.1' }],
        });
        return;
      }
      handler(req, res);
    },
  );
  // Advertised in Keep-Alive; Node closes a second after it, so a client's next request never races the close.
  server.keepAliveTimeout = timeouts.keepAliveTimeout ?? KEEP_ALIVE_TIMEOUT_MS;
  // No inactivity timeout: a synchronous render keeps a complete request silent for minutes, and
  // the headers and request timeouts above already bound what a client can hold.
  server.setTimeout(0);

  server.on('clientError', onClientError);
  // Without a listener Node answers an unknown Expect with an empty 417.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    answer(res, 'request_not_valid', {
      error_details: [{ parameter: 'Expect', message: 'only 100-continue is supported' }],
    });
  });
  // Without a listener Node drops a CONNECT without a word; this is no proxy.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const details = { error_details: [{ parameter: 'method', message: 'CONNECT is not supported' }] };
    answerSocket(socket, 'request_not_valid', details);
  });
  return server;
}

// Sockets already being answered: llhttp repeats its error for every later chunk of the connection.
const answering = new WeakSet<Duplex>();

function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const code: ErrorCode =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'request_header_too_large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'request_not_valid';
  answerSocket(socket, code, {});
}

/**
 * Writes the error on the bare socket and closes it, but only once the responses to complete
 * requests pipelined before the bad bytes have gone out: they come first on the wire.
 */
function answerSocket(socket: Duplex, code: ErrorCode, details: ErrorDetails): void {
  if (answering.has(socket) || socket.destroyed) return;
  answering.add(socket);
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (pending?.req.complete && !pending.writableFinished) {
    // Node hands the socket to the next pipelined response when this one finishes; look again then.
    const next = () => {
      answering.delete(socket);
      setImmediate(() => answerSocket(socket, code, details));
    };
    pending.once('finish', next);
    pending.once('close', () => pending.writableFinished || next());
    return;
  }
  // A response already under way to the request that broke cannot be followed by another one.
  if (socket.writable && !pending?.headersSent) {
    const body = JSON.stringify(errorBody(code, details));
    const { status } = errorTable[code];
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  closeAfterFlush(socket);
}

// The server's sockets stay half-open after end(); destroying once the answer is flushed frees them.
function closeAfterFlush(socket: Duplex): void {
  if (socket.destroyed) return;
  if (!socket.writable || socket.writableFinished) {
    socket.destroy();
    return;
  }
  socket.once('finish', () => socket.destroy());
  socket.end();
}

function answer(res: ServerResponse, code: ErrorCode, details: ErrorDetails): void {
  const body = JSON.stringify(errorBody(code, details));
  res.writeHead(errorTable[code].status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  res.end(body);
}
