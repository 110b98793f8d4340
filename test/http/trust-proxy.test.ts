// TRUST_PROXY and FILES_BASE_URL as configuration: which hops' X-Forwarded-For and
// X-Forwarded-Proto the ingress believes (request.ip feeds the sign-in limits), and bad values.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { appWithoutRenders } from '../helpers/app.ts';

const trust = suite('TRUST_PROXY and FILES_BASE_URL');

/** An app with one extra route that says what the ingress believes of the client. */
async function appTrusting(trustProxy?: string) {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...(trustProxy !== undefined ? { TRUST_PROXY: trustProxy } : {}),
  });
  const app = appWithoutRenders(config);
  app.get('/client', async (request) => ({ ip: request.ip, protocol: request.protocol }));
  await app.ready();
  return app;
}

const forwarded = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' };

trust("unset: the socket's peer is the client, whatever it forwards", async () => {
  const app = await appTrusting();
  const answer = await app.inject({ url: '/client', remoteAddress: '10.0.0.1', headers: forwarded });
  assert.equal(answer.json(), { ip: '10.0.0.1', protocol: 'http' });
  await app.close();
});

trust('a named proxy is believed; any other peer is not', async () => {
  const app = await appTrusting('10.0.0.1, 192.168.0.0/16');
  assert.equal((await app.inject({ url: '/client', remoteAddress: '10.0.0.1', headers: forwarded })).json(), {
    ip: '203.0.113.9',
    protocol: 'https',
  });
  assert.equal((await app.inject({ url: '/client', remoteAddress: '192.168.4.2', headers: forwarded })).json(), {
    ip: '203.0.113.9',
    protocol: 'https',
  });
  // A client reaching the ingress directly cannot pick its own address for the limits.
  assert.equal((await app.inject({ url: '/client', remoteAddress: '198.51.100.7', headers: forwarded })).json(), {
    ip: '198.51.100.7',
    protocol: 'http',
  });
  // Only the hops named are skipped: a spoofed address before the real client's stays unbelieved.
  const chained = await app.inject({
    url: '/client',
    remoteAddress: '10.0.0.1',
    headers: { 'x-forwarded-for': '1.2.3.4, 203.0.113.9' },
  });
  assert.is(chained.json().ip, '203.0.113.9');
  await app.close();
});

trust('bad values stop the start with one line naming the variable', () => {
  for (const value of ['2', 'yes', '10.0.0.300', '10.0.0.0/33', 'proxy.example.com']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: value }),
      (err: Error) => err instanceof ConfigError && err.message.startsWith('TRUST_PROXY:'),
      value,
    );
  }
  assert.equal(loadConfig({ TRUST_PROXY: 'loopback,10.1.0.0/16' }).trustProxy, ['loopback', '10.1.0.0/16']);
  assert.is(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.is(loadConfig({}).trustProxy, false);
});

trust('FILES_BASE_URL defaults to BASE_URL and must be an http(s) URL', () => {
  assert.is(loadConfig({ BASE_URL: 'https://shots.example.com/' }).filesBaseUrl, 'https://shots.example.com');
  assert.is(
    loadConfig({ BASE_URL: 'https://shots.example.com', FILES_BASE_URL: 'https://files.example-usercontent.com/' })
      .filesBaseUrl,
    'https://files.example-usercontent.com',
  );
  assert.throws(
    () => loadConfig({ FILES_BASE_URL: 'ftp://files.example.com' }),
    (err: Error) => err.message.startsWith('FILES_BASE_URL:'),
  );
});

trust.run();
