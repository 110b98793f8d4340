// Which upstream proxy a render leaves through, and the operator's GEO_PROXIES setting.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, parseGeoProxies } from '../../src/config.ts';
import { upstreamProxyOf } from '../../src/net/upstream.ts';
import { localeOf } from '../../src/domain/locale.ts';
import { parseProxyUrl } from '../../src/domain/proxy-url.ts';

const test = suite('net/upstream');

test('GEO_PROXIES: code=url pairs, codes in lower case; a bad entry names no credentials', () => {
  assert.equal(parseGeoProxies('DE=http://u:p@de.example:8080, us=https://us.example:443'), {
    de: 'http://u:p@de.example:8080',
    us: 'https://us.example:443',
  });
  assert.equal(parseGeoProxies(''), {});
  try {
    parseGeoProxies('germany=http://user:hunter2@de.example:8080');
    assert.unreachable();
  } catch (error) {
    assert.instance(error, ConfigError);
    assert.not.match((error as Error).message, 'hunter2');
  }
  assert.throws(() => parseGeoProxies('de=socks5://de.example:1080'), /http: or https:/);
});

test("the customer's proxy, a country's, or none; bypass hosts ride along", () => {
  const geo = { de: 'http://g:p@de.example:8080' };
  assert.is(upstreamProxyOf({ proxy_bypass_hosts: [] }, geo), undefined);
  assert.equal(upstreamProxyOf({ proxy: 'http://c:p@mine.example:3128', proxy_bypass_hosts: ['a.example'] }, geo), {
    url: 'http://c:p@mine.example:3128',
    bypass: ['a.example'],
  });
  assert.equal(upstreamProxyOf({ ip_country_code: 'de', proxy_bypass_hosts: [] }, geo), { url: geo.de, bypass: [] });
  assert.throws(
    () => upstreamProxyOf({ ip_country_code: 'fr', proxy_bypass_hosts: [] }, geo),
    /no proxy configured for fr/,
  );
});

test('proxy URLs: http(s), a host, no path; credentials decoded', () => {
  assert.equal(parseProxyUrl('http://us%40er:p%3Ass@proxy.example:8080')?.password, 'p:ss');
  assert.is(parseProxyUrl('http://us%40er:p%3Ass@proxy.example:8080')?.username, 'us@er');
  for (const bad of [
    'socks5://proxy.example:1080',
    'http://proxy.example:8080/path',
    'not a url',
    'http://proxy.example:8080/?q=1',
  ])
    assert.is(parseProxyUrl(bad), null, bad);
});

test('Accept-Language: languages by preference, the first the locale', () => {
  assert.equal(localeOf('de-DE,de;q=0.9,en;q=0.8'), { locale: 'de-DE', languages: ['de-DE', 'de', 'en'] });
  assert.equal(localeOf('en;q=0.5, fr-ch'), { locale: 'fr-CH', languages: ['fr-CH', 'en'] });
  assert.is(localeOf('*'), undefined);
  assert.is(localeOf('not a tag!'), undefined);
});

test.run();
