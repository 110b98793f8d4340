// Paths with `..` in them, sent raw (a client library would resolve them): a 404, never a 500
// nor an error with a stack in the log, whatever route they start under.
import net from 'node:net';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type buildApp, hasDotSegment } from '../../src/http/app.ts';
import { loadConfig } from '../../src/config.ts';
import { appWithoutRenders } from '../helpers/app.ts';

const paths = suite('paths with .. in them');
const logged: string[] = [];
let app: ReturnType<typeof buildApp>;
let port: number;

paths.before(async () => {
  const config = loadConfig({ LOG_LEVEL: 'info', PORT: '0' });
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
  // The routes under test (/docs, /files, unknown ones) reach none of the render collaborators.
  app = appWithoutRenders(config, { log });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as net.AddressInfo).port;
});
paths.after(async () => {
  await app?.close();
});

/** Sends one request line exactly as given and reads the status and body. */
function get(path: string): Promise<{ status: number; body: string; headers: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`),
    );
    let raw = '';
    socket.on('data', (chunk) => (raw += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const end = raw.indexOf('\r\n\r\n');
      resolve({ status: Number(raw.split(' ')[1]), headers: raw.slice(0, end), body: raw.slice(end + 4) });
    });
  });
}

paths('.. anywhere in the path is 404 not_found, and nothing is logged as an error', async () => {
  const climbs = [
    '/docs/static/../..',
    '/docs/static/../../package.json',
    '/docs/static/%2e%2e/%2e%2e/package.json',
    '/docs/static/.%2E/x',
    '/docs/static/....//x',
    '/docs/..',
    '/files/../healthz',
    '/dashboard/../healthz',
    '/api/take/..?url=https://example.com',
  ];
  for (const path of climbs) {
    const answer = await get(path);
    assert.is(answer.status, 404, path);
    assert.is(JSON.parse(answer.body).error_code, 'not_found', path);
    assert.match(answer.headers.toLowerCase(), /x-content-type-options: nosniff/, path);
  }
  const errors = logged
    .map((line) => JSON.parse(line))
    .filter((line) => line.level >= 50 || JSON.stringify(line).includes('stack'));
  assert.equal(errors, []);
  // The static route itself still serves its files, and a `..` in the query is no path.
  assert.is((await get('/docs/static/index.css')).status, 200);
  assert.is((await get('/healthz?next=../..')).status, 200);
});

paths('hasDotSegment looks at the path only', () => {
  assert.ok(hasDotSegment('/a/../b'));
  assert.ok(hasDotSegment('/a/%2E%2e/b'));
  assert.ok(hasDotSegment('/a/.%2e'));
  assert.not.ok(hasDotSegment('/files/20990101-abc.png'));
  assert.not.ok(hasDotSegment('/api/take?url=https://example.com/../x'));
  assert.not.ok(hasDotSegment('/a/%2e/b'));
});

paths.run();
