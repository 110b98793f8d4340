// The request a page is loaded with, as the customer gives it: `Name: value` header lines and
// Set-Cookie strings, parsed once here for the rules that refuse them and the render that sets them.
import { parse as parseDomain } from 'tldts';

/** Headers a caller may not set: the browser and the egress proxy own them. */
export const FORBIDDEN_HEADERS =
  /^(host|content-length|cookie|connection|proxy-.*|transfer-encoding|upgrade|keep-alive|te|trailer)$/i;
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*)$/;

/** A `Name: value` line split in two, or null when it is not one. */
export function parseHeaderLine(line: string): { name: string; value: string } | null {
  const match = HEADER_LINE.exec(line);
  return match ? { name: match[1], value: match[2].trim() } : null;
}

/** The attributes of a Set-Cookie string this service honours, or null when it has no name=value. */
export function parseSetCookie(text: string): {
  name: string;
  value: string;
  domain?: string;
  path?: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  expires?: number;
} | null {
  const [pair, ...attributes] = text.split(';').map((part) => part.trim());
  const eq = pair.indexOf('=');
  if (eq <= 0) return null;
  const cookie: ReturnType<typeof parseSetCookie> & object = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    secure: false,
    httpOnly: false,
  };
  for (const attribute of attributes) {
    const [key, ...rest] = attribute.split('=');
    const value = rest.join('=').trim();
    switch (key.trim().toLowerCase()) {
      case 'domain':
        cookie.domain = value.replace(/^\./, '').toLowerCase();
        break;
      case 'path':
        cookie.path = value;
        break;
      case 'secure':
        cookie.secure = true;
        break;
      case 'httponly':
        cookie.httpOnly = true;
        break;
      case 'samesite': {
        const same = value.toLowerCase();
        cookie.sameSite = same === 'strict' ? 'Strict' : same === 'none' ? 'None' : 'Lax';
        break;
      }
      case 'expires': {
        const at = Date.parse(value);
        if (Number.isFinite(at)) cookie.expires = Math.floor(at / 1000);
        break;
      }
      case 'max-age': {
        const seconds = Number(value);
        if (Number.isFinite(seconds)) cookie.expires = Math.floor(Date.now() / 1000 + seconds);
        break;
      }
    }
  }
  return cookie;
}

/**
 * A domain no site may set a cookie for (`co.uk`, `github.io`): a rule of the Public Suffix List,
 * its private part included, as Chromium reads it for cookies. A name the list does not know
 * (`localhost`) is not one.
 */
export function isPublicSuffix(domain: string): boolean {
  const parsed = parseDomain(domain, { allowPrivateDomains: true });
  return parsed.publicSuffix === domain && (parsed.isIcann === true || parsed.isPrivate === true);
}
