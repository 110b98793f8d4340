// Which proxy a render's traffic leaves through beyond the egress proxy (docs/options.md): the
// customer's `proxy`, or the operator's for `ip_country_code` (GEO_PROXIES); none for most renders.
import type { RenderOptions } from '../domain/options.ts';

/** A proxy the egress proxy chains to: `url` is http(s)://[user:password@]host[:port]. */
export interface UpstreamProxy {
  url: string;
  /** Host names (`*.example.com`: the domain and its subdomains) that skip the upstream proxy. */
  bypass?: readonly string[];
}

/** The upstream proxy `options` asks for, or undefined. */
export function upstreamProxyOf(
  options: Pick<RenderOptions, 'proxy' | 'ip_country_code' | 'proxy_bypass_hosts'>,
  geoProxies: Readonly<Record<string, string>>,
): UpstreamProxy | undefined {
  const url =
    options.proxy ?? (options.ip_country_code !== undefined ? geoProxies[options.ip_country_code] : undefined);
  if (options.ip_country_code !== undefined && url === undefined)
    throw new Error(`no proxy configured for ${options.ip_country_code} on this worker`);
  return url === undefined ? undefined : { url, bypass: options.proxy_bypass_hosts };
}

/** An upstream proxy as a connection needs it; the credentials never reach a log. */
export interface Upstream {
  secure: boolean;
  host: string;
  port: number;
  authorization?: string;
  bypass: readonly string[];
}

/** The parts of `proxy`'s URL a connection needs, its credentials as a Basic authorization. */
export function upstreamOf(proxy: UpstreamProxy): Upstream {
  const url = new URL(proxy.url);
  const secure = url.protocol === 'https:';
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    secure,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port || (secure ? 443 : 80)),
    ...(user || password ? { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } : {}),
    bypass: (proxy.bypass ?? []).map((host) => host.toLowerCase()),
  };
}

/** True when `host` is one of the bypass names (`*.example.com` also covers example.com). */
export function bypasses(upstream: Upstream, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return upstream.bypass.some((rule) => {
    if (!rule.startsWith('*.')) return name === rule;
    const domain = rule.slice(2);
    return name === domain || name.endsWith(`.${domain}`);
  });
}
