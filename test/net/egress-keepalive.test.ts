// The egress proxy's kept-alive connections to sites: one the site closed as it was reused.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEgressProxy, type EgressProxy } from '../../src/net/egress-proxy.ts';

const test = suite('net/egress-proxy: kept-alive upstream sockets');

// A site that answers the first request on a connection and keeps it open, then drops the
// connection when a second request arrives on it: its keep-alive timeout racing the reuse, every time.
let site: net.Server;
let sitePort = 0;
let connections = 0;
const received: string[] = [];
let proxy: EgressProxy;

test.before(async () => {
  site = net.createServer((socket) => {
    connections += 1;
    let answered = false;
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      received.push(chunk.toString('latin1').split(' ').slice(0, 2).join(' '));
      if (answered) return void socket.destroy();
      answered = true;
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
    });
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
  proxy = await startEgressProxy({ allowPrivate: true });
});

test.after(async () => {
  await proxy?.close();
  await new Promise((resolve) => site?.close(resolve));
});

/** One request through the proxy (absolute form, as Chromium sends it): its status and body. */
function viaProxy(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port: proxy.port,
      method,
      path: `http://127.0.0.1:${sitePort}${path}`,
      agent: false,
      headers: body === undefined ? {} : { 'content-length': Buffer.byteLength(body) },
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

test('a GET on a socket the site dropped as it was reused is sent again on a new connection', async () => {
  assert.equal(await viaProxy('GET', '/first'), { status: 200, body: 'ok' });
  assert.is(connections, 1);
  assert.equal(await viaProxy('GET', '/second'), { status: 200, body: 'ok' });
  assert.is(connections, 2, 'the kept socket was tried, then a new one');
  assert.equal(received, ['GET /first', 'GET /second', 'GET /second']);
});

test('a POST is not sent twice: the browser is told the connection dropped', async () => {
  // It goes out on the connection the GET above left open, which the site drops in turn.
  received.length = 0;
  const answer = await viaProxy('POST', '/order', 'item=1');
  assert.is(answer.status, 502);
  assert.is(answer.body, 'network_error\n');
  assert.equal(received, ['POST /order'], 'sent once');
});

test.run();
