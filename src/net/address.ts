// Which IP addresses a render may reach: only public unicast ones, judged on the raw bytes.
import { isIP } from 'node:net';

interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

function parseIPv4(text: string): Uint8Array | null {
  if (isIP(text) !== 4) return null;
  return Uint8Array.from(text.split('.').map(Number));
}

function parseIPv6(text: string): Uint8Array | null {
  // A zone id (fe80::1%eth0) names an interface, not a different address.
  const address = text.split('%')[0];
  if (isIP(address) !== 6) return null;
  const words = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = parseIPv4(group) ?? [0, 0, 0, 0];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const [head, tail] = address.split('::');
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  const all = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

function cidr(text: string): Cidr {
  const [address, bits] = text.split('/');
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (!bytes) throw new Error(`bad CIDR ${text}`);
  return { bytes, bits: Number(bits) };
}

function inRange(bytes: Uint8Array, range: Cidr): boolean {
  if (bytes.length !== range.bytes.length) return false;
  for (let bit = 0; bit < range.bits; bit += 8) {
    const width = Math.min(8, range.bits - bit);
    const mask = (0xff << (8 - width)) & 0xff;
    if ((bytes[bit / 8] & mask) !== (range.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

const nonPublicV4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
].map(cidr);

const nonPublicV6 = [
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
  '2001:db8::/32',
  '100::/64',
  '2001::/23',
  // Local-use NAT64 (RFC 8215): the embedded IPv4 sits where each network chooses, and the
  // prefix is never globally reachable, so it is refused whole.
  '64:ff9b:1::/48',
].map(cidr);

// IPv6 forms that carry an IPv4 address: [range, offset of the 4 embedded bytes].
const embeddingV6: Array<[Cidr, number]> = [
  [cidr('::ffff:0:0/96'), 12], // IPv4-mapped
  [cidr('::/96'), 12], // IPv4-compatible (deprecated, but still routable by some stacks)
  [cidr('64:ff9b::/96'), 12], // well-known NAT64
  [cidr('2002::/16'), 2], // 6to4
];

// Only global unicast is assigned to the public internet; anything else in ::/0 is reserved.
const globalUnicastV6 = cidr('2000::/3');

function isPublicV4(bytes: Uint8Array): boolean {
  return !nonPublicV4.some((range) => inRange(bytes, range));
}

function isPublicV6(bytes: Uint8Array): boolean {
  if (nonPublicV6.some((range) => inRange(bytes, range))) return false;
  const embedding = embeddingV6.find(([range]) => inRange(bytes, range));
  if (embedding) return isPublicV4(bytes.subarray(embedding[1], embedding[1] + 4));
  return inRange(bytes, globalUnicastV6);
}

/** True when `ip` (IPv4 or IPv6 text, as from dns.lookup) is a public address a render may reach. */
export function isPublicAddress(ip: string): boolean {
  const v4 = parseIPv4(ip);
  if (v4) return isPublicV4(v4);
  const v6 = parseIPv6(ip);
  // Text that is no IP at all is never public: callers must not connect to it.
  return v6 ? isPublicV6(v6) : false;
}

function formatIPv6(bytes: Uint8Array): string {
  const words = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  // RFC 5952: compress the longest run of two or more zero words, the first one on a tie.
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; i++) {
    let length = 0;
    while (i + length < 8 && words[i + length] === 0) length++;
    if (length > best.length) best = { start: i, length };
  }
  const hex = words.map((word) => word.toString(16));
  if (best.start < 0) return hex.join(':');
  const left = hex.slice(0, best.start).join(':');
  const right = hex.slice(best.start + best.length).join(':');
  return `${left}::${right}`;
}

/** The canonical IP of a URL hostname that is an IP literal in any spelling, else null. */
export function parseHostLiteral(hostname: string): string | null {
  const bracketed = hostname.startsWith('[') && hostname.endsWith(']');
  const host = bracketed ? hostname.slice(1, -1) : hostname;
  const v6 = parseIPv6(host);
  if (v6) return formatIPv6(v6);
  if (bracketed) return null;
  if (isIP(host) === 4) return host;
  // Hostnames not yet normalised by WHATWG (CONNECT targets, raw input): let the URL parser
  // read decimal, octal, hex and short IPv4 spellings exactly as a browser would.
  if (!/^[0-9a-fx.]+$/i.test(host)) return null;
  try {
    const normalised = new URL(`http://${host}/`).hostname;
    return isIP(normalised) === 4 ? normalised : null;
  } catch {
    return null;
  }
}
