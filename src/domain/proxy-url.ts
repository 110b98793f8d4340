// The customer's own proxy (`proxy`, `proxy_bypass_hosts`), as the request gives it.

/** A host name `proxy_bypass_hosts` takes: example.com, or *.example.com for it and its subdomains. */
export const BYPASS_HOST = /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/i;

/** The customer's proxy URL, split; null when it is not `http(s)://[user:password@]host[:port]`. */
export function parseProxyUrl(text: string): { url: URL; username: string; password: string } | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.hostname === '' ||
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== ''
  )
    return null;
  return { url, username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}
