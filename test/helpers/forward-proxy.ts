// A real forward proxy for tests (plain http in absolute form, CONNECT tunnels), standing in for a
// customer's proxy or an operator's country proxy: it records what passed through it and, with
// credentials, answers 407 to a request that does not carry them.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/** One request the proxy saw. */
export interface ProxiedRequest {
  method: string;
  /** The absolute URL (plain http) or host:port (CONNECT). */
  target: string;
  /** The Proxy-Authorization header as received. */
  authorization?: string;
  /** Whether it was let through. */
  allowed: boolean;
}

/** A running forward proxy. */
export interface ForwardProxy {
  port: number;
  /** http://[user:password@]127.0.0.1:port (`host` overrides the address in the URL). */
  url(host?: string): string;
  seen: ProxiedRequest[];
  close(): Promise<void>;
}

/** Starts a forward proxy on `host` (default 127.0.0.1); with `credentials`, Basic auth is required. */
export async function startForwardProxy(
  options: { host?: string; credentials?: { user: string; password: string }; hosts?: Record<string, string> } = {},
): Promise<ForwardProxy> {
  const host = options.host ?? '127.0.0.1';
  // Test names resolve here as the test says; any other name as the system does.
  const addressOf = (name: string) => options.hosts?.[name] ?? name;
  const seen: ProxiedRequest[] = [];
  const sockets = new Set<Duplex>();
  const expected = options.credentials
    ? `Basic ${Buffer.from(`${options.credentials.user}:${options.credentials.password}`).toString('base64')}`
    : undefined;
  const allowed = (request: http.IncomingMessage) =>
    expected === undefined || request.headers['proxy-authorization'] === expected;
  const server = http.createServer((request, response) => {
    const ok = allowed(request);
    seen.push({
      method: request.method ?? '',
      target: request.url ?? '',
      authorization: request.headers['proxy-authorization'],
      allowed: ok,
    });
    if (!ok) return void response.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="test"' }).end();
    const target = new URL(request.url ?? '');
    const headers = { ...request.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const forward = http.request(
      {
        host: addressOf(target.hostname),
        port: Number(target.port || 80),
        method: request.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (upstream) => {
        response.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(response);
      },
    );
    forward.on('error', () => response.writeHead(502).end());
    request.pipe(forward);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (request: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const ok = allowed(request);
    seen.push({
      method: 'CONNECT',
      target: request.url ?? '',
      authorization: request.headers['proxy-authorization'],
      allowed: ok,
    });
    client.on('error', () => client.destroy());
    if (!ok)
      return void client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n',
      );
    const [targetHost, targetPort] = (request.url ?? '').split(/:(?=\d+$)/);
    const upstream = net.connect({ host: addressOf(targetHost.replace(/^\[|\]$/g, '')), port: Number(targetPort) });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.once('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const auth = options.credentials
    ? `${encodeURIComponent(options.credentials.user)}:${encodeURIComponent(options.credentials.password)}@`
    : '';
  return {
    port,
    url: (at = host) => `http://${auth}${at}:${port}`,
    seen,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
