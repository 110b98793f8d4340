// Every refused range and its edges, the embedded-IPv4 forms, and IP literals in any spelling.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isPublicAddress, parseHostLiteral } from '../../src/net/address.ts';

const address = suite('net/address');

const refused = [
  // IPv4: first and last address of each range.
  '0.0.0.0',
  '0.255.255.255',
  '10.0.0.0',
  '10.255.255.255',
  '100.64.0.0',
  '100.64.0.1',
  '100.127.255.255',
  '127.0.0.1',
  '127.255.255.255',
  '169.254.0.0',
  '169.254.169.254',
  '169.254.255.255',
  '172.16.0.0',
  '172.31.255.255',
  '192.0.0.0',
  '192.0.0.255',
  '192.0.2.0',
  '192.0.2.255',
  '192.88.99.0',
  '192.88.99.255',
  '192.168.0.0',
  '192.168.255.255',
  '198.18.0.0',
  '198.19.255.255',
  '198.51.100.0',
  '198.51.100.255',
  '203.0.113.0',
  '203.0.113.255',
  '224.0.0.0',
  '239.255.255.255',
  '240.0.0.0',
  '255.255.255.254',
  '255.255.255.255',
  // IPv6 ranges.
  '::',
  '::1',
  'fc00::',
  'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fe80::',
  'fe80::1%eth0',
  'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fec0::',
  'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'ff00::',
  'ff02::1',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:db8::',
  '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
  '100::',
  '100::ffff:ffff:ffff:ffff',
  '2001::',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:1ff:ffff::',
  '64:ff9b:1::',
  '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
  '64:ff9b:1::808:808',
  // Outside global unicast 2000::/3 (100:0:0:1:: is just past 100::/64, still not assigned).
  '4000::1',
  '1fff:ffff::1',
  '::ffff:0:8.8.8.8',
  '100:0:0:1::1',
  // Embedded private IPv4.
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:a9fe:a9fe',
  '::127.0.0.1',
  '::10.0.0.1',
  '::0.0.0.2',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '2002:7f00:1::',
  '2002:a00:1::1',
  '2002:c0a8:101:1::1',
  // Not an address at all.
  '',
  'example.com',
  '127.1',
  '1.2.3.4.5',
  '::g',
];

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '1.0.0.0',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.0',
  '192.0.3.0',
  '192.88.98.255',
  '192.88.100.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.99.255',
  '198.51.101.0',
  '203.0.112.255',
  '203.0.114.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '2001:db7:ffff::1',
  '2001:db9::1',
  '2003::1',
  '3fff:ffff::1',
  // Embedded public IPv4 is judged by that address.
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '::8.8.8.8',
  '64:ff9b::8.8.8.8',
  '64:ff9b::101:101',
  '2002:808:808::1',
];

for (const ip of refused) {
  address(`refuses ${ip || '(empty)'}`, () => assert.is(isPublicAddress(ip), false));
}
for (const ip of allowed) {
  address(`allows ${ip}`, () => assert.is(isPublicAddress(ip), true));
}

address('WHATWG URL normalises every IPv4 spelling to dotted decimal', () => {
  for (const spelling of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '0x7f000001', '127.0.0.1.', '0x7F.0.0.1']) {
    assert.is(new URL(`http://${spelling}/`).hostname, '127.0.0.1', spelling);
  }
  assert.is(new URL('http://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]');
  assert.is(new URL('http://[0:0:0:0:0:0:0:1]/').hostname, '[::1]');
});

address('parseHostLiteral returns the canonical IP of a literal', () => {
  assert.is(parseHostLiteral('127.0.0.1'), '127.0.0.1');
  assert.is(parseHostLiteral('[::ffff:7f00:1]'), '::ffff:7f00:1');
  assert.is(parseHostLiteral('[0:0:0:0:0:0:0:1]'), '::1');
  assert.is(parseHostLiteral('::FFFF:127.0.0.1'), '::ffff:7f00:1');
  assert.is(parseHostLiteral('[2001:db8:0:0:1:0:0:1]'), '2001:db8::1:0:0:1');
  assert.is(parseHostLiteral('[2606:4700::1111]'), '2606:4700::1111');
  assert.is(parseHostLiteral('[1:2:3:4:5:6:7:8]'), '1:2:3:4:5:6:7:8');
  // Spellings a URL parser would already have normalised, met raw (e.g. in a CONNECT line).
  assert.is(parseHostLiteral('2130706433'), '127.0.0.1');
  assert.is(parseHostLiteral('0x7f.1'), '127.0.0.1');
  assert.is(parseHostLiteral('0177.0.0.1'), '127.0.0.1');
  assert.is(parseHostLiteral('127.1'), '127.0.0.1');
});

address('parseHostLiteral returns null for names', () => {
  for (const name of [
    'example.com',
    'localhost',
    'deadbeef',
    'public.test',
    '[example.com]',
    'evil.com@127.0.0.1',
    '',
  ]) {
    assert.is(parseHostLiteral(name), null, name);
  }
});

address.run();
