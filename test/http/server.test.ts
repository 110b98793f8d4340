import net from 'node:net';
import type { Server } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AppDeps } from '../../src/http/app.ts';
import { createHttpServer } from '../../src/http/server.ts';
import { loadConfig } from '../../src/config.ts';
import { appWithoutRenders } from '../helpers/app.ts';

const server = suite('HTTP server: malformed, oversized and slow clients');

// The routes under test (/healthz, /readyz, the error handler) touch none of the render collaborators.
const appWith = (readiness: AppDeps['readiness'] = []) => {
  const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0' });
  return appWithoutRenders(config, { readiness });
};
type App = ReturnType<typeof appWith>;

// Short limits, so that the body and keep-alive timeouts can be waited out within this file's budget.
const SHORT = { headersTimeout: 1000, requestTimeout: 2000, keepAliveTimeout: 1000 };
const SLOW_HANDLER_MS = 3000;

let app: App;
let appPort: number;
let short: Server;
let shortPort: number;

server.before(async () => {
  app = appWith();
  await app.listen({ host: '127.0.0.1', port: 0 });
  appPort = (app.server.address() as net.AddressInfo).port;
  // A tiny handler that reads the whole body, answering /slow only well after the request timeout.
  short = createHttpServer((req, res) => {
    let length = 0;
    req.on('data', (chunk: Buffer) => (length += chunk.length));
    req.on('end', () => {
      setTimeout(
        () => {
          const body = JSON.stringify({ length });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        req.url === '/slow' ? SLOW_HANDLER_MS : 0,
      );
    });
  }, SHORT);
  await new Promise<void>((resolve) => short.listen(0, '127.0.0.1', resolve));
  shortPort = (short.address() as net.AddressInfo).port;
});

server.after(async () => {
  await app?.close();
  await new Promise((resolve) => (short ? short.close(resolve) : resolve(undefined)));
});

interface Response {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a raw connection got: every response on it, whether the server closed it, and when. */
interface Exchange {
  responses: Response[];
  closed: boolean;
  ms: number;
}

/**
 * Opens a raw socket, lets `talk` write on it, and collects what comes back until the server
 * closes the connection or `waitMs` passes (then the connection counts as left open).
 */
function exchange(port: number, talk: (socket: net.Socket) => void, waitMs = 5000): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let received = Buffer.alloc(0);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      resolve({ responses: parseResponses(received), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      socket.removeAllListeners('close');
      socket.destroy();
      finish(false);
    }, waitMs);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.on('connect', () => talk(socket));
  });
}

/** Splits HTTP/1.1 responses; anything not Content-Length framed (or a cut-off head) ends the list with its rest as the body. */
function parseResponses(raw: Buffer): Response[] {
  const responses: Response[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return [...responses, { status: 0, headers: {}, body: rest.toString('latin1') }];
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    // Interim 1xx responses have no body.
    const length = status < 200 ? 0 : Number(headers['content-length'] ?? rest.length);
    responses.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') });
    rest = rest.subarray(end + 4 + length);
  }
  return responses;
}

/** Asserts a contract error body (docs/api.md) with this status and code. */
function assertError(response: Response | undefined, status: number, code: string): void {
  assert.ok(response, `a ${status} response arrived`);
  assert.is(response.status, status);
  assert.match(response.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(response.body || 'null') ?? {};
  assert.is(body.is_successful, false);
  assert.is(body.error_code, code);
  assert.type(body.error_message, 'string');
}

const send = (text: string) => (socket: net.Socket) => socket.write(text);

/** Writes `first`, then `piece` every `everyMs` until the server closes the connection. */
const trickle = (first: string, piece: string, everyMs: number) => (socket: net.Socket) => {
  socket.write(first);
  const timer = setInterval(() => socket.writable && socket.write(piece), everyMs);
  socket.on('close', () => clearInterval(timer));
};

server("production limits are the contract's: 16 KiB of headers, 10 s headers, 30 s request, 5 s keep-alive", () => {
  for (const http of [app.server, createHttpServer(() => {})]) {
    // Set by the maxHeaderSize option; @types/node 20 does not declare the property.
    assert.is((http as Server & { maxHeaderSize?: number }).maxHeaderSize, 16 * 1024);
    assert.is(http.headersTimeout, 10_000);
    assert.is(http.requestTimeout, 30_000);
    assert.is(http.keepAliveTimeout, 5_000);
    // No inactivity timeout: a synchronous render keeps a complete request silent for long.
    assert.is(http.timeout, 0);
  }
});

server('a garbage request line is a 400 request_not_valid, and the connection is closed', async () => {
  const got = await exchange(appPort, send('HELLO WORLD\r\n\r\n'));
  assert.is(got.responses.length, 1);
  assertError(got.responses[0], 400, 'request_not_valid');
  assert.is(got.responses[0].headers.connection, 'close');
  assert.ok(got.closed);
});

server('invalid chunked encoding and an unknown method are 400 request_not_valid, connection closed', async () => {
  const chunked =
    'POST /api/take HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n';
  for (const request of [
    chunked,
    'FOO / HTTP/1.1\r\nHost: x\r\n\r\n',
    'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n',
  ]) {
    const got = await exchange(appPort, send(request));
    assert.is(got.responses.length, 1, request);
    assertError(got.responses[0], 400, 'request_not_valid');
    assert.ok(got.closed, request);
  }
});

server('a 20 KB query is a 431 request_header_too_large, connection closed; 15 KB still passes', async () => {
  const got = await exchange(appPort, send(`GET /healthz?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
  assert.is(got.responses.length, 1);
  assertError(got.responses[0], 431, 'request_header_too_large');
  assert.match(JSON.parse(got.responses[0].body).error_message, /POST/);
  assert.ok(got.closed);

  const fits = await exchange(
    appPort,
    send(`GET /healthz?q=${'a'.repeat(15_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
  );
  assert.is(fits.responses[0]?.status, 200);
});

server("Node's own answers are the contract's: an unknown Expect (not an empty 417), a missing Host", async () => {
  const expect = await exchange(
    appPort,
    send(
      'POST /api/take HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    ),
  );
  assertError(expect.responses[0], 400, 'request_not_valid');
  assert.ok(expect.closed);
  const hostless = await exchange(appPort, send('GET /healthz HTTP/1.1\r\n\r\n'));
  assertError(hostless.responses[0], 400, 'request_not_valid');
  assert.ok(hostless.closed);
});

server(
  "Fastify's own failures go through the error handler: bad URL, long param, unsupported method and body",
  async () => {
    const badUrl = await app.inject({ method: 'GET', url: '/api/renders/%zz' });
    assert.is(badUrl.statusCode, 400);
    assert.is(badUrl.json().error_code, 'request_not_valid');
    const longParam = await app.inject({ method: 'GET', url: `/api/renders/${'a'.repeat(200)}` });
    assert.is(longParam.statusCode, 400);
    assert.is(longParam.json().error_code, 'request_not_valid');
    const propfind = await app.inject({ method: 'PROPFIND', url: '/healthz' });
    assert.is(propfind.statusCode, 404);
    assert.is(propfind.json().error_code, 'not_found');
    const textPlain = await app.inject({
      method: 'POST',
      url: '/api/take',
      headers: { 'content-type': 'text/plain' },
      payload: 'url=x',
    });
    // Without an access key the 401 comes first: the body's own 400 waits for the caller's checks.
    assert.is(textPlain.statusCode, 401);
    assert.is(textPlain.json().error_code, 'access_key_invalid');
    const emptyJson = await app.inject({
      method: 'POST',
      url: '/api/take',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    assert.is(emptyJson.statusCode, 401);
    assert.is(emptyJson.json().error_code, 'access_key_invalid');
  },
);

server('the bare address leads to the API reference (no dashboard here), and there is a favicon', async () => {
  const root = await app.inject({ method: 'GET', url: '/' });
  assert.is(root.statusCode, 302);
  assert.is(root.headers.location, '/docs');
  const icon = await app.inject({ method: 'GET', url: '/favicon.ico' });
  assert.is(icon.statusCode, 200);
  assert.is(icon.headers['content-type'], 'image/svg+xml');
  assert.match(icon.body, /^<svg /);
});

server('a valid GET pipelined before garbage gets its 200, then the 400, then the close', async () => {
  const got = await exchange(
    appPort,
    send('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n'),
  );
  assert.equal(
    got.responses.map((r) => r.status),
    [200, 200, 400],
  );
  assert.equal(JSON.parse(got.responses[0].body), { status: 'ok' });
  assertError(got.responses[2], 400, 'request_not_valid');
  assert.ok(got.closed);
});

server('headers trickled past 10 s (production limits) are a 408 request_timeout within about a second', async () => {
  const got = await exchange(appPort, trickle('GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 500), 20_000);
  assert.is(got.responses.length, 1);
  assertError(got.responses[0], 408, 'request_timeout');
  assert.ok(got.closed);
  assert.ok(got.ms >= 9_500 && got.ms < 13_000, `answered after ${got.ms} ms`);
});

server('a connection that never sends a request is answered 408 and closed after the headers timeout', async () => {
  const got = await exchange(shortPort, () => {});
  assertError(got.responses[0], 408, 'request_timeout');
  assert.ok(got.closed);
  assert.ok(got.ms >= SHORT.headersTimeout - 100 && got.ms < SHORT.headersTimeout + 2500, `closed after ${got.ms} ms`);
});

server('a body trickled past the request timeout is cut off with a 408', async () => {
  const got = await exchange(
    shortPort,
    trickle('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n', 'a', 100),
  );
  assert.is(got.responses.length, 1);
  assertError(got.responses[0], 408, 'request_timeout');
  assert.ok(got.closed);
  assert.ok(got.ms >= SHORT.requestTimeout - 100 && got.ms < SHORT.requestTimeout + 2500, `cut off after ${got.ms} ms`);
});

server('a complete request whose answer takes longer than the request timeout is still answered', async () => {
  const got = await exchange(
    shortPort,
    send('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab'),
    SLOW_HANDLER_MS + 3000,
  );
  assert.is(got.responses[0]?.status, 200);
  assert.equal(JSON.parse(got.responses[0].body), { length: 2 });
});

server('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
  const got = await exchange(shortPort, send('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  assert.is(got.responses.length, 1);
  assert.is(got.responses[0].status, 200);
  assert.is(got.responses[0].headers['keep-alive'], `timeout=${SHORT.keepAliveTimeout / 1000}`);
  assert.ok(got.closed);
  // Node keeps the socket a further second beyond what it advertised, against racing a client's next request.
  assert.ok(
    got.ms >= SHORT.keepAliveTimeout - 100 && got.ms < SHORT.keepAliveTimeout + 3000,
    `closed after ${got.ms} ms`,
  );
});

server('while shutting down, a request on an open connection is a 503 temporary_unavailable', async () => {
  // A ready check slow enough to keep the connection busy while close() begins.
  const closing = appWith([{ name: 'slow', check: () => new Promise((resolve) => setTimeout(resolve, 500)) }]);
  await closing.listen({ host: '127.0.0.1', port: 0 });
  const port = (closing.server.address() as net.AddressInfo).port;
  let closed: Promise<void> | undefined;
  const got = await exchange(port, (socket) => {
    socket.write('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n');
    setTimeout(() => (closed = closing.close()), 100);
    setTimeout(() => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'), 200);
  });
  await closed;
  assert.equal(
    got.responses.map((r) => r.status),
    [200, 503],
  );
  assertError(got.responses[1], 503, 'temporary_unavailable');
  assert.is(got.responses[1].headers['retry-after'], '1');
  assert.ok(got.closed);
});

server.run();
